"""Regenerate COMMUNITY.md from funes_core/host/catalog.toml (tests/test_community.py checks they match).

Usage: ``uv run python scripts/gen_community.py`` (``--check`` exits 1 when the file is stale).
"""

from __future__ import annotations

import sys
from pathlib import Path

from _generated import write_or_check

from funes_core.host.catalog import load_catalog, render_community

TARGET = Path(__file__).resolve().parents[1] / "COMMUNITY.md"


def main(argv: list[str]) -> int:
    return write_or_check(TARGET, render_community(load_catalog()), argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Regenerate docs/plugins/requirements.md from funes_contracts.requirements.

Usage: ``uv run python scripts/gen_plugin_docs.py`` (``--check`` exits 1 when it is stale). The
contracts' own tests fail while the page and the manifest disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _generated import write_or_check

from funes_contracts.requirements import render_markdown

TARGET = Path(__file__).resolve().parents[1] / "docs" / "plugins" / "requirements.md"


def main(argv: list[str]) -> int:
    return write_or_check(TARGET, render_markdown(), argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Regenerate COMMUNITY.md from funes_core/host/catalog.toml (tests/test_community.py checks they match).

Usage: ``uv run python scripts/gen_community.py`` (``--check`` exits 1 when the file is stale).
"""

from __future__ import annotations

import sys
from pathlib import Path

from funes_core.host.catalog import load_catalog, render_community

TARGET = Path(__file__).resolve().parents[1] / "COMMUNITY.md"


def main(argv: list[str]) -> int:
    text = render_community(load_catalog())
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is stale: run `uv run python scripts/gen_community.py`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Regenerate docs/plugins/requirements.md from funes_contracts.requirements.

Usage: ``uv run python scripts/gen_plugin_docs.py`` (``--check`` exits 1 when it is stale). The
contracts' own tests fail while the page and the manifest disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

from funes_contracts.requirements import render_markdown

TARGET = Path(__file__).resolve().parents[1] / "docs" / "plugins" / "requirements.md"


def main(argv: list[str]) -> int:
    text = render_markdown()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is stale: run `uv run python scripts/gen_plugin_docs.py`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

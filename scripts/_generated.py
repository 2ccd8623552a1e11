"""What every ``scripts/gen_*.py`` does with the text it renders: write the file, or check it is current."""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(target: Path, text: str, argv: list[str]) -> int:
    """Write ``text`` to ``target``; with ``--check`` in ``argv``, only say (exit 1) when it differs."""
    if "--check" in argv:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print(f"{target} is stale: run `uv run python scripts/{Path(sys.argv[0]).name}`", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0

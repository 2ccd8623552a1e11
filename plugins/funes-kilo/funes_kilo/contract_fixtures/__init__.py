"""A real Kilo Code CLI session (SQLite, rebuilt from SQL), its reviewed golden and the kit's mutators.

Shipped inside the package so ``funes integrations check kilo`` runs the golden tests on the
installed plugin. ``cases/basic/kilo.sql`` holds the rows a real ``kilo run`` (@kilocode/cli 7.7.7,
against the fake model) wrote, paths renamed; Kilo's tables are OpenCode's, so the schema, the
builder and the SQL mutators (``make_earlier``, ``make_torn``, ``make_corrupt``, ``make_long``) are
funes-opencode's. ``python -m funes_kilo.contract_fixtures`` rebuilds every ``kilo.db``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from funes_opencode.contract_fixtures import build_db, make_corrupt, make_earlier, make_long, make_torn

__all__ = ["FIXTURES", "make_corrupt", "make_earlier", "make_long", "make_torn", "rebuild_fixtures"]

FIXTURES = Path(__file__).resolve().parent


def rebuild_fixtures(root: Path = FIXTURES) -> list[Path]:
    sources = sorted(root.rglob("kilo.sql"))
    return [build_db(s.read_text(encoding="utf-8"), s.with_name("kilo.db")) for s in sources]


if __name__ == "__main__":
    for path in rebuild_fixtures():
        sys.stdout.write(f"{path}\n")

"""A sample Crush database, its reviewed golden, a realistic config, and the kit's mutators.

Shipped inside the package so ``funes integrations check crush`` runs the golden tests on the
installed plugin. ``cases/basic/.crush/crush.db`` is built from ``crush.sql`` (the columns of
Crush's tables, written from its migrations, and one session) by ``python -m
funes_crush.contract_fixtures``: no real ``crush`` run wrote it (see the README). A session is
rows of a database, not JSON lines, so the kit's variants are made here in SQL.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

from funes_contracts.files import corrupt_after_first, sqlite_databases, sqlite_fixture, tear_newest_row

__all__ = ["make_corrupt", "make_earlier", "make_long", "make_torn", "rebuild"]

FIXTURES = Path(__file__).resolve().parent


def rebuild() -> list[Path]:
    """Every fixture database, rebuilt from ``crush.sql``."""
    script = (FIXTURES / "crush.sql").read_text(encoding="utf-8")
    return [
        sqlite_fixture(FIXTURES / where / ".crush" / "crush.db", script)
        for where in ("cases/basic", "home/app")
    ]


def _databases(folder: Path) -> Iterator[sqlite3.Connection]:
    return sqlite_databases(folder, "crush.db")


def make_earlier(folder: Path) -> bool:
    """Earlier, the later half of each session's messages did not exist yet."""
    done = False
    for conn in _databases(folder):
        ids = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY created_at, rowid")]
        if len(ids) >= 2:
            late = ids[len(ids) // 2 :]
            conn.execute(f"DELETE FROM messages WHERE id IN ({','.join('?' * len(late))})", late)
            done = True
    return done


def make_torn(folder: Path) -> bool:
    """The newest message caught half-written: its parts' JSON cut in half."""
    return tear_newest_row(folder, "crush.db", "messages", "parts", "created_at DESC, rowid DESC")


def make_corrupt(folder: Path) -> bool:
    """An unreadable message row (bytes that are not UTF-8) just after the first message."""
    return corrupt_after_first(
        folder,
        "crush.db",
        "SELECT id, session_id, created_at FROM messages ORDER BY created_at LIMIT 1",
        "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)"
        " VALUES (?, ?, 'user', CAST(x'7bc328e2' AS TEXT), ?, ?)",
    )


def make_long(folder: Path, filler: str, expected: Path) -> bool:
    """The first text part of each database made ``filler`` longer."""
    done = False
    for conn in _databases(folder):
        for message_id, raw in conn.execute("SELECT id, parts FROM messages ORDER BY created_at").fetchall():
            parts = json.loads(raw)
            texts = [p for p in parts if p.get("type") == "text"]
            if texts:
                texts[0]["data"]["text"] += filler
                changed = json.dumps(parts, ensure_ascii=False)
                conn.execute("UPDATE messages SET parts = ? WHERE id = ?", (changed, message_id))
                done = True
                break
    return done


if __name__ == "__main__":
    for path in rebuild():
        sys.stdout.write(f"{path}\n")

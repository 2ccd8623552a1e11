"""Hermes ``state.db`` files for tests: built from SQL, and altered the way the contract suite needs.

The SQL is what a reviewer reads; the database is what Hermes would leave on disk (WAL mode,
Hermes' columns). ``python -m funes_hermes.fixtures`` rebuilds every ``state.db`` of the
contract fixtures from the ``state.sql`` beside it; a test checks they are in step.

The contract suite derives three variants of each sample transcript; for JSON lines the kit does
it, for a database :func:`make_earlier`, :func:`make_torn` and :func:`make_corrupt` do, in SQL.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

from funes_contracts.files import golden_texts, sqlite_databases, sqlite_fixture

__all__ = [
    "FIXTURES",
    "SCHEMA",
    "build_db",
    "make_corrupt",
    "make_earlier",
    "make_torn",
    "rebuild_fixtures",
    "script_for",
]

FIXTURES = Path(__file__).resolve().parent / "contract_fixtures"
#: Hermes' ``sessions`` and ``messages`` tables, as hermes-agent 0.19 creates them.
SCHEMA = FIXTURES / "schema.sql"


def script_for(sql: str) -> str:
    """``sql`` as a complete script: Hermes' schema first, unless it creates its own tables."""
    if "CREATE TABLE" in sql.upper():
        return sql
    return SCHEMA.read_text(encoding="utf-8") + "\n" + sql


def build_db(sql: str, target: Path) -> Path:
    """Create ``target`` (replacing it) from ``sql`` run through :func:`script_for`; WAL mode, like Hermes."""
    return sqlite_fixture(target, script_for(sql))


def rebuild_fixtures(root: Path = FIXTURES) -> list[Path]:
    """Rebuild every ``state.db`` under ``root`` from the ``state.sql`` beside it."""
    return [
        build_db(source.read_text(encoding="utf-8"), source.with_name("state.db"))
        for source in sorted(root.rglob("state.sql"))
    ]


def _databases(folder: Path) -> Iterator[sqlite3.Connection]:
    return sqlite_databases(folder, "state.db")


def make_earlier(folder: Path) -> bool:
    """Hermes only ever appends rows: earlier, the later half of them was not there yet."""
    done = False
    for conn in _databases(folder):
        ids = [row[0] for row in conn.execute("SELECT id FROM messages ORDER BY id")]
        if len(ids) >= 2:
            conn.execute("DELETE FROM messages WHERE id >= ?", (ids[len(ids) // 2],))
            done = True
    return done


def make_torn(folder: Path) -> bool:
    """The session while Hermes is writing its newest row: that row is not there yet.

    SQLite commits a row whole or not at all, so a reader never sees half of one (a text cut in
    the middle is what the JSON-lines formats tear into, not this one): the torn state of a
    Hermes session is the session without the row being committed.
    """
    done = False
    for conn in _databases(folder):
        newest = conn.execute("SELECT MAX(id) FROM messages").fetchone()[0]
        if newest is None:
            continue
        conn.execute("DELETE FROM messages WHERE id = ?", (newest,))
        done = True
    return done


def make_corrupt(folder: Path) -> bool:
    """An unreadable row (text that is not UTF-8, as a damaged page gives) right after the first row."""
    done = False
    for conn in _databases(folder):
        ids = [row[0] for row in conn.execute("SELECT id FROM messages ORDER BY id")]
        if not ids:
            continue
        taken = set(ids)
        free = next(i for i in range(ids[0] + 1, ids[-1] + 2) if i not in taken)
        session = conn.execute("SELECT session_id FROM messages WHERE id = ?", (ids[0],)).fetchone()[0]
        conn.execute(
            "INSERT INTO messages (id, session_id, role, content, tool_calls, timestamp) "
            "VALUES (?, ?, 'assistant', CAST(x'c328e2' AS TEXT), CAST(x'5b7bff' AS TEXT), 4102444800)",
            (free, session),
        )
        done = True
    return done


if __name__ == "__main__":
    for path in rebuild_fixtures():
        sys.stdout.write(f"{path}\n")


def make_long(folder: Path, filler: str, expected: Path) -> bool:
    """The longest message text the golden keeps, with ``filler`` appended to its content."""
    kept = golden_texts(expected)
    done = False
    for conn in _databases(folder):
        rows = conn.execute("SELECT id, content FROM messages WHERE typeof(content) = 'text'").fetchall()
        usable = [(len(text), rid) for rid, text in rows if len(text) >= 8 and any(text in k for k in kept)]
        if not usable:
            continue
        conn.execute("UPDATE messages SET content = content || ? WHERE id = ?", (filler, max(usable)[1]))
        done = True
    return done

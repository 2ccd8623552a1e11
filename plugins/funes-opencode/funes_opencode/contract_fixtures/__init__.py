"""Sample OpenCode sessions (SQLite, built from SQL), their reviewed goldens and a realistic config.

Shipped inside the package so ``funes integrations check opencode`` runs the golden tests on the
installed plugin. OpenCode keeps sessions in a database, not JSON lines, so this package also
defines the kit's mutators (``make_earlier``, ``make_torn``, ``make_corrupt``, ``make_long``), in
SQL on the copied ``opencode.db``. ``python -m funes_opencode.contract_fixtures`` rebuilds every
``opencode.db`` from the ``opencode.sql`` beside it (OpenCode's tables from ``schema.sql`` first).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

from funes_contracts.files import corrupt_after_first, sqlite_databases, sqlite_fixture, tear_newest_row

__all__ = [
    "FIXTURES",
    "build_db",
    "make_corrupt",
    "make_earlier",
    "make_long",
    "make_torn",
    "rebuild_fixtures",
]

FIXTURES = Path(__file__).resolve().parent
SCHEMA = FIXTURES / "schema.sql"


def build_db(sql: str, target: Path) -> Path:
    """Create ``target`` (replacing it) from OpenCode's schema plus ``sql``; WAL mode, like OpenCode."""
    return sqlite_fixture(target, SCHEMA.read_text(encoding="utf-8") + "\n" + sql)


def rebuild_fixtures(root: Path = FIXTURES) -> list[Path]:
    return [
        build_db(s.read_text(encoding="utf-8"), s.with_name("opencode.db"))
        for s in sorted(root.rglob("opencode.sql"))
    ]


def _databases(folder: Path) -> Iterator[sqlite3.Connection]:
    return sqlite_databases(folder, "*.db")  # also the forks' (kilo.db)


def make_earlier(folder: Path) -> bool:
    """Earlier, the later half of each session's messages (and their parts) did not exist yet."""
    done = False
    for conn in _databases(folder):
        for (session,) in conn.execute("SELECT id FROM session").fetchall():
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM message WHERE session_id = ? ORDER BY time_created, id", (session,)
                )
            ]
            if len(ids) >= 2:
                late = ids[len(ids) // 2 :]
                marks = ",".join("?" * len(late))
                conn.execute(f"DELETE FROM part WHERE message_id IN ({marks})", late)
                conn.execute(f"DELETE FROM message WHERE id IN ({marks})", late)
                done = True
    return done


def make_torn(folder: Path) -> bool:
    """The newest part caught half-written: its JSON cut in half."""
    return tear_newest_row(folder, "*.db", "part", "data", "id DESC")


def make_corrupt(folder: Path) -> bool:
    """An unreadable message row (bytes that are not UTF-8) inserted after the first message."""
    return corrupt_after_first(
        folder,
        "*.db",  # also the forks' (kilo.db)
        "SELECT id, session_id, time_created FROM message ORDER BY time_created, id LIMIT 1",
        "INSERT INTO message VALUES (?, ?, ?, ?, CAST(x'7bc328e2' AS TEXT))",
    )


def make_long(folder: Path, filler: str, expected: Path) -> bool:
    """The first text part of each database made ``filler`` longer (the kit checks it comes through)."""
    done = False
    for conn in _databases(folder):
        for part_id, data in conn.execute("SELECT id, data FROM part ORDER BY id").fetchall():
            try:
                part = json.loads(data)
            except ValueError:
                continue
            if part.get("type") == "text" and not part.get("synthetic") and isinstance(part.get("text"), str):
                part["text"] += filler
                conn.execute(
                    "UPDATE part SET data = ? WHERE id = ?", (json.dumps(part, ensure_ascii=False), part_id)
                )
                done = True
                break
    return done


if __name__ == "__main__":
    for path in rebuild_fixtures():
        sys.stdout.write(f"{path}\n")

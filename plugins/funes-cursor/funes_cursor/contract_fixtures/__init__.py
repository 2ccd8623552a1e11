"""A sample Cursor chat store, its reviewed golden, and the kit's mutators for a SQLite store.

Shipped inside the package so ``funes integrations check cursor`` runs the golden tests on the
installed plugin. ``cases/basic/globalStorage/state.vscdb`` is made by :func:`build` from
``store.json`` (the rows, readable; ``python -m funes_cursor.contract_fixtures`` writes it again),
in the format public readers of real stores document (see the README): a ``cursorDiskKV`` table
with a chat in the header-and-bubble layout (a user question with multi-byte text, an answer
with its thinking, tool calls with their results, a bubble with no time, an empty "loading"
bubble), an older chat with its bubbles inline, a "New chat" never written to, plus Cursor's
``ItemTable`` of settings, not chats.

The store is a database, not JSON lines, so the kit's variants are made here (what each must
produce: docs/plugins/testing.md#awkward-inputs). A "record" is a bubble row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from funes_contracts.files import golden_texts, lengthen_value

__all__ = ["SOURCE", "TARGET", "build", "make_corrupt", "make_earlier", "make_long", "make_torn"]

_HERE = Path(__file__).parent
#: The readable rows of the fixture store, and the store :func:`build` makes of them.
SOURCE = _HERE / "store.json"
TARGET = _HERE / "cases" / "basic" / "globalStorage" / "state.vscdb"


def build(rows: dict[str, dict[str, Any]], target: Path) -> None:
    """Write a store holding ``rows`` (``{"cursorDiskKV": {key: value}, "ItemTable": {...}}``)."""
    target.unlink(missing_ok=True)
    with closing(sqlite3.connect(target)) as db:
        for table, items in rows.items():
            db.execute(f"CREATE TABLE {table} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
            db.executemany(
                f"INSERT INTO {table} VALUES (?, ?)",
                [(k, json.dumps(v, ensure_ascii=False).encode()) for k, v in items.items()],
            )
        db.commit()


def _stores(folder: Path) -> list[Path]:
    return sorted(folder.rglob("state.vscdb"))


def _rows(db: sqlite3.Connection, prefix: str) -> list[tuple[str, bytes]]:
    return db.execute(
        "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY key",
        (prefix, prefix[:-1] + ";"),
    ).fetchall()


def _chats(db: sqlite3.Connection) -> list[tuple[str, dict[str, Any]]]:
    return [(k.removeprefix("composerData:"), json.loads(v)) for k, v in _rows(db, "composerData:")]


def _set(db: sqlite3.Connection, key: str, value: Any) -> None:
    db.execute("UPDATE cursorDiskKV SET value = ? WHERE key = ?", (value, key))


def _each_chat(folder: Path) -> Iterator[tuple[sqlite3.Connection, str, dict[str, Any]]]:
    """Every chat of every store under ``folder``, with its open store; committed after each store."""
    for store in _stores(folder):
        with closing(sqlite3.connect(store)) as db:
            for composer_id, data in _chats(db):
                yield db, composer_id, data
            db.commit()


def make_earlier(folder: Path) -> bool:
    """Each chat as Cursor stored it earlier: its first half of bubbles, the rest not yet written."""
    done = False
    for store in _stores(folder):
        with closing(sqlite3.connect(store)) as db:
            for composer_id, data in _chats(db):
                key = (
                    "fullConversationHeadersOnly" if "fullConversationHeadersOnly" in data else "conversation"
                )
                items = data.get(key, [])
                if len(items) < 2:
                    continue
                keep, drop = items[: len(items) // 2], items[len(items) // 2 :]
                data[key] = keep
                _set(db, f"composerData:{composer_id}", json.dumps(data).encode())
                for header in drop if key == "fullConversationHeadersOnly" else []:
                    db.execute(
                        "DELETE FROM cursorDiskKV WHERE key = ?",
                        (f"bubbleId:{composer_id}:{header['bubbleId']}",),
                    )
                done = True
            db.commit()
    return done


def make_torn(folder: Path) -> bool:
    """Each chat's last stored bubble cut inside its text, as a row read while Cursor writes it."""
    done = False
    for db, composer_id, data in _each_chat(folder):
        headers = data.get("fullConversationHeadersOnly")
        if not headers:
            continue
        key = f"bubbleId:{composer_id}:{headers[-1]['bubbleId']}"
        row = db.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()
        text = bytes(row[0]).decode()
        needle = json.dumps(json.loads(text).get("text") or "", ensure_ascii=False)[1:-1]
        where = text.find(needle) if needle else -1
        if where >= 0:
            _set(db, key, text[: where + max(1, len(needle) // 2)].encode())
            done = True
    return done


def make_corrupt(folder: Path) -> bool:
    """A chat row that is not JSON, and a bubble header naming a row that is not JSON either."""
    bad = "0bad0000-0000-4000-8000-000000000000"
    done: set[sqlite3.Connection] = set()
    for db, composer_id, data in _each_chat(folder):
        headers = data.get("fullConversationHeadersOnly")
        if not headers:
            continue
        headers.insert(1, {"bubbleId": bad, "type": 2})
        _set(db, f"composerData:{composer_id}", json.dumps(data).encode())
        db.execute(
            "INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{composer_id}:{bad}", b"\xff{not json")
        )
        if db not in done:
            db.execute(
                "INSERT INTO cursorDiskKV VALUES ('composerData:0bad', ?)", (b'{"_v": 3, "composerId',)
            )
            done.add(db)
    return bool(done)


def make_long(folder: Path, filler: str, expected: Path) -> bool:
    """``filler`` appended to the longest bubble text the golden keeps."""
    kept = golden_texts(expected)
    for store in _stores(folder):
        with closing(sqlite3.connect(store)) as db:
            for key, value in _rows(db, "bubbleId:"):
                longer = lengthen_value(json.loads(value), filler, kept)
                if longer is not None:
                    _set(db, key, json.dumps(longer, ensure_ascii=False).encode())
                    db.commit()
                    return True
    return False

"""Converts Hermes sessions (rows of ``$HERMES_HOME/state.db``) into funes turns.

Hermes keeps every session of every platform in one SQLite database, written in WAL mode while
Hermes runs. funes only ever reads it, through a read-only connection, so a running Hermes is
never disturbed and a bug here can never damage the user's history.

The rules (see README.md for the full mapping):

* one row of ``messages`` is one turn and ``turn_uuid`` is its ``id``; rows are read in ``id``
  order, never by timestamp, and all of them whatever their ``active``/``compacted`` state, so
  a row keeps its id, and a growing session its earlier turns, forever;
* what the agent saw is ``content``; ``api_content`` (what was sent to the provider, with
  injected memory) is never read, so funes never stores its own recall results back;
* a row that cannot be read (text that is not UTF-8, a role that is not text) is skipped and
  touches nothing else; a torn value (a half-written ``tool_calls``) is kept verbatim.

"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from pathlib import Path
from typing import Any

from funes_core import (
    Block,
    Converter,
    SessionRef,
    Turn,
    clean_text,
    is_blank,
    parse_ts,
    safe_id,
    sqlite_readonly,
)
from funes_hermes.agent import HERMES, STATE_DB, state_dbs

__all__ = ["SESSION_ID", "HermesConverter"]

#: The session ids funes accepts: they name a spool file as they are.
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_EPOCH = "1970-01-01T00:00:00Z"
#: Hermes stores structured (multimodal) content as this prefix plus JSON.
_JSON_CONTENT = "\x00json:"
#: Columns a messages table must have to be Hermes'; the others are optional (older schemas).
_REQUIRED = ("id", "session_id", "role", "content")
_OPTIONAL = ("tool_call_id", "tool_calls", "tool_name", "timestamp", "reasoning", "reasoning_content")
_ROLES = frozenset({"user", "assistant", "tool"})


class _Unreadable(Exception):
    """A row whose text cannot be decoded: skipped whole."""


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    try:
        rows = conn.execute(f"PRAGMA table_info({table})").fetchall()
    except sqlite3.Error:
        return set()
    return {_decode(row[1]) or "" for row in rows}


def _decode(value: object) -> str | None:
    """A TEXT value as ``str`` (``None`` for NULL); raises :class:`_Unreadable` for invalid UTF-8."""
    if value is None:
        return None
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise _Unreadable from None
    if isinstance(value, int | float):
        return str(value)
    return str(value)


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _epoch(value: object) -> float | None:
    if isinstance(value, bytes):
        try:
            value = float(value.decode("ascii").strip())
        except (UnicodeDecodeError, ValueError):
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _ts(value: object) -> str | None:
    """Epoch seconds as RFC 3339 UTC with ``Z``; ``None`` when missing or not a time."""
    seconds = _epoch(value)
    return None if seconds is None else parse_ts(seconds, epoch="s")


def _texts(content: str | None) -> list[str]:
    """The texts of a ``content`` value: the string itself, or the text parts of structured content."""
    if content is None:
        return []
    if not content.startswith(_JSON_CONTENT):
        return [content]
    raw = content[len(_JSON_CONTENT) :]
    try:
        value = json.loads(raw)
    except ValueError:
        return [raw]
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return [_compact(value)]
    out: list[str] = []
    for part in value:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
        # other parts (images, audio) carry no text to remember
    return out


def _tool_uses(raw: str | None, names: dict[str, str]) -> list[Block]:
    """One tool_use block per OpenAI-style call; unparseable JSON is kept verbatim as one block."""
    if raw is None or is_blank(raw):
        return []
    try:
        value = json.loads(raw)
    except ValueError:
        return [Block("tool_use", raw)]  # torn or foreign: keep what was written
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return [Block("tool_use", raw)]
    blocks: list[Block] = []
    for call in value:
        if not isinstance(call, dict):
            blocks.append(Block("tool_use", clean_text(_compact(call))))
            continue
        inner = call.get("function")
        function: dict[str, Any] = inner if isinstance(inner, dict) else call
        arguments = function.get("arguments")
        if arguments is None:
            text = "{}"
        elif isinstance(arguments, str):
            text = arguments
        else:
            text = _compact(arguments)
        name = function.get("name") if isinstance(function.get("name"), str) else None
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        if call_id is None and isinstance(call.get("call_id"), str) and call.get("call_id"):
            call_id = call["call_id"]
        if call_id and name:
            names[call_id] = name
        blocks.append(
            Block(
                "tool_use",
                clean_text(text),
                tool_name=clean_text(name) if name else None,
                tool_use_id=clean_text(call_id) if call_id else None,
            )
        )
    return blocks


class HermesConverter(Converter, agent=HERMES):
    """Finds and converts the sessions Hermes keeps in ``state.db``."""

    contract_fixtures = "funes_hermes.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return state_dbs(home)  # every profile's, the one in effect first

    def sessions_in(self, path: Path) -> list[SessionRef]:
        if path.is_file():
            return self._sessions_of(path)
        if path.is_dir():
            refs: list[SessionRef] = []
            for db in sorted(p for p in path.rglob(STATE_DB) if p.is_file()):
                refs.extend(self._sessions_of(db))
            return refs
        return []

    def session(self, db: Path, session_id: str) -> SessionRef | None:
        """The ref of one session of ``db`` (what the per-turn hook converts), if it has rows."""
        return next((r for r in self._sessions_of(db, only=session_id) if r.session_id == session_id), None)

    def parent_of(self, db: Path, session_id: str) -> str | None:
        """The session this one continues (Hermes starts a new one when it compresses context)."""
        with sqlite_readonly(db) as conn:
            if conn is None or "parent_session_id" not in _columns(conn, "sessions"):
                return None
            try:
                row = conn.execute(
                    "SELECT parent_session_id FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()
                parent = _decode(row[0]) if row else None
            except (sqlite3.Error, _Unreadable):
                return None
        return parent if parent and SESSION_ID.fullmatch(parent) else None

    def _sessions_of(self, db: Path, only: str | None = None) -> list[SessionRef]:
        """One ref per session with rows in ``db``, in the order the sessions began (first row id)."""
        try:
            fallback = db.stat().st_mtime
        except OSError:
            return []
        with sqlite_readonly(db) as conn:
            if conn is None:
                return []
            columns = _columns(conn, "messages")
            if not all(c in columns for c in _REQUIRED):
                return []
            newest = (
                "MAX(CASE WHEN typeof(timestamp) IN ('integer', 'real') THEN timestamp END)"
                if "timestamp" in columns
                else "NULL"
            )
            query = f"SELECT session_id, MIN(id), {newest} FROM messages"
            params: tuple[str, ...] = ()
            if only is not None:
                query += " WHERE session_id = ?"
                params = (only,)
            query += " GROUP BY session_id ORDER BY MIN(id)"
            try:
                rows = conn.execute(query, params).fetchall()
            except sqlite3.Error:
                return []
        refs: list[SessionRef] = []
        for raw_id, _first, last in rows:
            try:
                session_id = _decode(raw_id)
            except _Unreadable:
                continue
            if session_id is None or not SESSION_ID.fullmatch(session_id):
                continue
            stamp = _epoch(last)
            refs.append(SessionRef(session_id, db, stamp if stamp is not None else fallback))
        return refs

    def convert(self, ref: SessionRef) -> list[Turn]:
        if not SESSION_ID.fullmatch(ref.session_id):
            return []
        with sqlite_readonly(ref.path) as conn:
            if conn is None:
                return []
            columns = _columns(conn, "messages")
            if not all(c in columns for c in _REQUIRED):
                return []
            wanted = [*_REQUIRED, *_OPTIONAL]
            select = ", ".join(c if c in columns else f"NULL AS {c}" for c in wanted)
            try:
                rows = conn.execute(
                    f"SELECT {select} FROM messages WHERE session_id = ? ORDER BY id", (ref.session_id,)
                ).fetchall()
            except sqlite3.Error:
                return []
            cwd = self._cwd(conn, ref.session_id)
        turns: list[Turn] = []
        names: dict[str, str] = {}
        last_ts = _EPOCH
        for row in rows:
            record = dict(zip(wanted, row, strict=True))
            try:
                built = self._turn(record, names)
            except _Unreadable:
                continue
            if built is None:
                continue
            role, blocks, ts = built
            last_ts = ts or last_ts
            turns.append(
                Turn(
                    session_id=safe_id(ref.session_id),
                    turn_uuid=str(record["id"]),
                    seq=len(turns),
                    ts=last_ts,
                    role=role,
                    harness=self.id,
                    blocks=tuple(blocks),
                    cwd=cwd,
                )
            )
        return turns

    @staticmethod
    def _cwd(conn: sqlite3.Connection, session_id: str) -> str | None:
        """The session's working directory; the column is missing from older Hermes schemas."""
        if "cwd" not in _columns(conn, "sessions"):
            return None
        try:
            row = conn.execute("SELECT cwd FROM sessions WHERE id = ?", (session_id,)).fetchone()
            cwd = _decode(row[0]) if row else None
        except (sqlite3.Error, _Unreadable):
            return None
        return clean_text(cwd) if cwd and cwd.strip() else None

    @staticmethod
    def _turn(record: dict[str, Any], names: dict[str, str]) -> tuple[str, list[Block], str | None] | None:
        """(role, blocks, ts) of one row, or ``None`` when it makes no turn."""
        if not isinstance(record["id"], int):
            return None
        role = _decode(record["role"])
        if role not in _ROLES:
            return None
        # Decode every field first: a row with one undecodable field is unreadable as a whole.
        content = _decode(record["content"])
        tool_calls = _decode(record["tool_calls"])
        call_id = _decode(record["tool_call_id"])
        tool_name = _decode(record["tool_name"])
        reasoning = _decode(record["reasoning_content"])
        if reasoning is None or is_blank(reasoning):
            reasoning = _decode(record["reasoning"])
        blocks: list[Block] = []
        if role == "user":
            blocks = [Block("text", clean_text(t)) for t in _texts(content)]
        elif role == "assistant":
            if reasoning is not None:
                blocks.append(Block("thinking", reasoning))
            blocks.extend(Block("text", clean_text(t)) for t in _texts(content))
            blocks.extend(_tool_uses(tool_calls, names))
        else:
            name = tool_name if tool_name else names.get(call_id or "")
            text = "\n".join(clean_text(t) for t in _texts(content))
            blocks = [Block("tool_result", text, tool_name=name or None, tool_use_id=call_id or None)]
        blocks = [b for b in blocks if not is_blank(b.text)]
        if not blocks:
            return None
        return role, blocks, _ts(record["timestamp"])

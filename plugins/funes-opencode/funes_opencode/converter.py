"""Converts OpenCode sessions (rows of ``opencode.db``) into funes turns.

OpenCode keeps every session in one SQLite database (WAL mode): ``session`` (id ``ses_…``, the
working ``directory``), ``message`` (id ``msg_…``, ``data`` JSON with ``role`` and ``time``) and
``part`` (id ``prt_…``, ``data`` JSON: the text, reasoning and tool calls of a message). funes
only reads it, through a read-only connection, so a running OpenCode is never disturbed.

The rules (README.md has the whole mapping):

* one message is one turn and ``turn_uuid`` is the message id; messages are read in OpenCode's
  own order (``time_created``, then id), parts in id order (OpenCode's ids sort by creation);
* ``text`` parts become text blocks, except those OpenCode marks ``synthetic`` or ``ignored`` (text
  it generated itself); ``reasoning`` becomes thinking; a ``tool`` part becomes a tool_use block
  (its input as compact JSON) followed, once the call finished, by a tool_result block (its output,
  or its error); ``file`` parts become a one-line text note naming the file; bookkeeping parts
  (``step-start``, ``step-finish``, ``snapshot``, ``patch``, ``compaction``, ``agent``…) are left out;
* an assistant message that is still being written (no ``time.completed``) and is the session's
  last message is left out until it completes, so a turn never changes once emitted;
* times are epoch milliseconds, rendered in UTC; the turn's ``cwd`` is the message's own
  ``path.cwd`` when it has one, else the session's ``directory``;
* a row that cannot be read (invalid JSON, text that is not UTF-8) is skipped alone.

Standard library only: the per-turn hook imports this module.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from funes_core import Block, Converter, SessionRef, Turn, compact_json, parse_ts, sqlite_readonly
from funes_opencode.agent import AGENT, databases

__all__ = ["SESSION_ID", "OpenCodeConverter"]

#: OpenCode's session ids (``ses_`` + base62); also what the hook accepts from the plugin.
SESSION_ID = re.compile(r"^ses_[A-Za-z0-9]+$")
_SKIPPED_PARTS = frozenset(
    {"step-start", "step-finish", "snapshot", "patch", "compaction", "agent", "retry", "subtask"}
)


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return str(value)


def _json(value: object) -> dict[str, Any] | None:
    raw = _text(value)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _ts(ms: object) -> str | None:
    return parse_ts(ms, epoch="ms") if isinstance(ms, int | float) and not isinstance(ms, bool) else None


def _obj(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _blocks(parts: list[dict[str, Any]]) -> list[Block]:
    blocks: list[Block] = []
    for part in parts:
        kind = part.get("type")
        if kind in _SKIPPED_PARTS:
            continue
        if kind == "text":
            if part.get("synthetic") or part.get("ignored") or not isinstance(part.get("text"), str):
                continue
            blocks.append(Block("text", part["text"]))
        elif kind == "reasoning" and isinstance(part.get("text"), str) and part["text"]:
            blocks.append(Block("thinking", part["text"]))
        elif kind == "tool":
            state = _obj(part.get("state"))
            name = part.get("tool") if isinstance(part.get("tool"), str) else None
            call = part.get("callID") if isinstance(part.get("callID"), str) else None
            blocks.append(Block("tool_use", compact_json(state.get("input", {})), name, call))
            status = state.get("status")
            if status == "completed":
                output = state.get("output")
                blocks.append(
                    Block(
                        "tool_result", output if isinstance(output, str) else compact_json(output), name, call
                    )
                )
            elif status == "error":
                error = state.get("error")
                blocks.append(
                    Block("tool_result", error if isinstance(error, str) else compact_json(error), name, call)
                )
        elif kind == "file":
            where = part.get("filename") or part.get("url") or ""
            blocks.append(Block("text", f"[file: {where}]"))
    return blocks


class OpenCodeConverter(Converter, agent=AGENT):
    """Finds OpenCode's sessions in its database(s) and converts them (module docstring)."""

    #: Sample databases (built from SQL), goldens and the mutators the kit uses on them.
    contract_fixtures = "funes_opencode.contract_fixtures"
    #: The database files' name stem (a fork of OpenCode keeps the same tables under its own name).
    db_stem = "opencode"

    def session_roots(self, home: Path) -> list[Path]:
        return databases(home)

    def sessions_in(self, path: Path) -> list[SessionRef]:
        pattern = f"{self.db_stem}*.db"
        candidates = [path] if path.is_file() else sorted(path.glob(pattern)) if path.is_dir() else []
        refs: list[SessionRef] = []
        for db in candidates:
            with sqlite_readonly(db) as conn:
                if conn is None:
                    continue
                try:
                    rows = conn.execute(
                        "SELECT s.id, MAX(COALESCE(m.time_updated, s.time_updated)) FROM session s "
                        "JOIN message m ON m.session_id = s.id GROUP BY s.id ORDER BY s.id"
                    ).fetchall()
                except sqlite3.Error:
                    continue
            for raw_id, updated in rows:
                session_id = _text(raw_id)
                if session_id and SESSION_ID.fullmatch(session_id):
                    when = updated / 1000 if isinstance(updated, int | float) else 0.0
                    refs.append(SessionRef(session_id, db, float(when)))
        return refs

    def session(self, db: Path, session_id: str) -> SessionRef | None:
        """The ref of one session of ``db`` (``None`` when it has no messages there)."""
        return next((r for r in self.sessions_in(db) if r.session_id == session_id), None)

    def convert(self, ref: SessionRef) -> list[Turn]:
        with sqlite_readonly(ref.path) as conn:
            if conn is None:
                return []
            try:
                row = conn.execute("SELECT directory FROM session WHERE id = ?", (ref.session_id,)).fetchone()
                messages = conn.execute(
                    "SELECT id, time_created, data FROM message WHERE session_id = ? "
                    "ORDER BY time_created, id",
                    (ref.session_id,),
                ).fetchall()
                part_rows = conn.execute(
                    "SELECT message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id",
                    (ref.session_id,),
                ).fetchall()
            except sqlite3.Error:
                return []
        directory = _text(row[0]) if row else None
        parts: dict[str, list[dict[str, Any]]] = {}
        for message_id, data in part_rows:
            key, part = _text(message_id), _json(data)
            if key is not None and part is not None:
                parts.setdefault(key, []).append(part)
        readable: list[tuple[str, object, dict[str, Any]]] = []
        for raw_id, created, data in messages:
            message_id, info = _text(raw_id), _json(data)
            if message_id and info is not None:
                readable.append((message_id, created, info))
        turns: list[Turn] = []
        parent: str | None = None
        for index, (message_id, created, info) in enumerate(readable):
            role = info.get("role")
            if role not in ("user", "assistant"):
                continue
            timing = _obj(info.get("time"))
            if role == "assistant" and not timing.get("completed") and index == len(readable) - 1:
                break  # still being written: it becomes a turn once it completes
            ts = _ts(timing.get("created", created)) or _ts(created)
            if ts is None:
                continue
            path = _obj(info.get("path"))
            cwd = path.get("cwd") if isinstance(path.get("cwd"), str) else directory
            turns.append(
                Turn(
                    session_id=ref.session_id,
                    turn_uuid=message_id,
                    seq=len(turns),
                    ts=ts,
                    role=role,
                    harness=self.id,
                    blocks=tuple(_blocks(parts.get(message_id, []))),
                    cwd=cwd,
                    parent_uuid=parent,
                )
            )
            parent = message_id
        return turns

"""Converts Crush sessions (``<project>/.crush/crush.db``, SQLite) into funes turns.

One database holds every session Crush ran in that project (``internal/db/migrations``)::

    sessions(id, parent_session_id, title, message_count, …, updated_at, created_at)
    messages(id, session_id, role, parts, model, created_at, updated_at, finished_at, …)

``parts`` is a JSON list of ``{"type", "data"}`` (``internal/message/message.go``): ``text``
``{text}``, ``reasoning`` ``{thinking}``, ``tool_call`` ``{id, name, input, finished}``,
``tool_result`` ``{tool_call_id, name, content, is_error}``, and ``finish``, ``image_url``,
``binary``, ``shell_command`` that carry no conversation text. Times are epoch milliseconds.

The mapping: one :class:`~funes_core.SessionRef` per session row; one turn per message with
readable parts, ``turn_uuid`` the message's ``id`` (Crush updates a message in place while it
streams, so its id is the stable thing), ``ts`` its ``created_at``, ``role`` its role (``system``
gives no turn). A message still streaming (no ``finished_at`` and no ``finish`` part) gives no
turn yet: it would change after being emitted. A row whose parts are not JSON gives no turn.
``cwd`` is the project folder, the one holding ``.crush/``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from funes_core import Block, Converter, SessionRef, Turn, clean_id, is_blank, parse_ts, sqlite_readonly
from funes_crush.agent import AGENT, DB_NAME

__all__ = ["CrushConverter"]

_EPOCH = "1970-01-01T00:00:00Z"
_ROLES = frozenset({"user", "assistant", "tool"})


def _decode(value: object) -> str | None:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) else None


def _parts(raw: object) -> list[dict[str, Any]] | None:
    text = _decode(raw)
    try:
        parts = json.loads(text) if text is not None else None
    except ValueError:
        return None
    if not isinstance(parts, list):
        return None
    return [p for p in parts if isinstance(p, dict) and isinstance(p.get("data"), dict)]


def _block(part: dict[str, Any]) -> Block | None:
    kind, data = part.get("type"), part["data"]
    if kind == "text" and isinstance(data.get("text"), str):
        return Block("text", data["text"])
    if kind == "reasoning" and isinstance(data.get("thinking"), str):
        return Block("thinking", data["thinking"])
    if kind == "tool_call" and isinstance(data.get("name"), str):
        args = data.get("input") if isinstance(data.get("input"), str) else ""
        return Block("tool_use", args or "{}", tool_name=data["name"], tool_use_id=clean_id(data.get("id")))
    if kind == "tool_result" and isinstance(data.get("content"), str):
        name = data.get("name") if isinstance(data.get("name"), str) else None
        return Block(
            "tool_result", data["content"], tool_name=name, tool_use_id=clean_id(data.get("tool_call_id"))
        )
    return None


class CrushConverter(Converter, agent=AGENT):
    """Finds the sessions in the ``.crush/crush.db`` of registered project folders (see above)."""

    contract_fixtures = "funes_crush.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        # Sessions live in each project, not under the HOME: users register them with --path.
        return []

    def retention(self, home: Path) -> str:
        return "Crush keeps sessions until you delete them (or the project's .crush folder)"

    def sessions_in(self, path: Path) -> list[SessionRef]:
        refs: list[SessionRef] = []
        for db in self.transcript_files(path, DB_NAME):
            with sqlite_readonly(db) as conn:
                if conn is None:
                    continue
                try:
                    rows = conn.execute(
                        "SELECT id, updated_at FROM sessions ORDER BY created_at, id"
                    ).fetchall()
                except sqlite3.Error:
                    continue
            for raw_id, updated in rows:
                session_id = clean_id(_decode(raw_id))
                if session_id:
                    mtime = updated / 1000 if isinstance(updated, int) and updated > 1e11 else updated
                    refs.append(
                        SessionRef(session_id, db, float(mtime) if isinstance(mtime, int | float) else 0.0)
                    )
        return refs

    def convert(self, ref: SessionRef) -> list[Turn]:
        with sqlite_readonly(ref.path) as conn:
            if conn is None:
                return []
            try:
                rows = conn.execute(
                    "SELECT id, session_id, role, parts, created_at, finished_at FROM messages"
                    " ORDER BY created_at, rowid"
                ).fetchall()
            except sqlite3.Error:
                return []
        cwd = str(ref.path.parent.parent)
        turns: list[Turn] = []
        for raw_id, raw_session, raw_role, raw_parts, created, finished in rows:
            if clean_id(_decode(raw_session)) != ref.session_id:
                continue
            role, uuid, parts = _decode(raw_role), clean_id(_decode(raw_id)), _parts(raw_parts)
            if role not in _ROLES or not uuid or parts is None:
                continue
            if finished is None and role == "assistant" and not any(p.get("type") == "finish" for p in parts):
                continue  # still streaming: it would change after being emitted
            blocks = tuple(b for b in map(_block, parts) if b is not None and not is_blank(b.text))
            if blocks:
                ts = parse_ts(created, epoch="ms") if isinstance(created, int) else None
                turns.append(
                    Turn(ref.session_id, uuid, len(turns), ts or _EPOCH, role, self.id, blocks, cwd=cwd)
                )
        return turns

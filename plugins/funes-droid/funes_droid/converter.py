"""Converts Factory Droid sessions (``~/.factory/sessions/<cwd>/<session>.jsonl``) into funes turns.

Droid appends one JSON record per line (verified with droid 0.215.0):

* the first is ``{"type": "session_start", "id": <session uuid>, "title", "cwd", "version", ...}``;
* a ``{"type": "message", "id", "parentId"?, "timestamp", "message": {"role", "content": [...]}}``
  is one message; its content parts are Anthropic's (``text``, ``thinking``, ``tool_use`` with
  ``id``/``name``/``input``, ``tool_result`` with ``tool_use_id``/``content``);
* other types (``agent_turn_outcome``, and whatever Droid adds next) carry no message.

The mapping:

* a message becomes one turn: ``turn_uuid`` its ``id``, ``role`` its role (a user message that
  only returns tool results stays ``user``, as Droid records it), ``ts`` its ``timestamp``;
  ``cwd`` is the ``session_start``'s;
* left out: Droid's own context injections (``visibility: "llm_only"``, ids ``context-…``: the
  system reminders it sends with the first prompt) and hook notices (a ``hookEventName``, which
  records that a hook ran, not what anyone said);
* ``parent_uuid`` is the ``parentId``, or, when that names a left-out record, the nearest kept
  ancestor (a first prompt's parent is its context injection);
* ``text``, ``thinking`` (its ``thinking`` text), ``tool_use`` (the input as compact JSON) and
  ``tool_result`` (a string, or its text parts joined with ``\\n``, named after the call with that
  id) become blocks, in order; images carry no text and are left out; blank blocks are dropped,
  then turns left with none.

Ids only come from the file, so a growing session keeps its earlier turns; a line that cannot be
read (torn while Droid writes it) is skipped alone. A repeated message id keeps its first turn,
and a repeat with other content becomes ``<id>@<n>``.

Standard library only: the per-turn hook imports this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from funes_core import (
    Converter,
    RecordTurns,
    SessionRef,
    Turn,
    anthropic_blocks,
    clean_id,
    parse_ts,
    read_json_lines,
)
from funes_droid.agent import AGENT

__all__ = ["DroidConverter"]

_EPOCH = "1970-01-01T00:00:00Z"


def _session_id(path: Path, records: list[dict[str, Any]]) -> str | None:
    """The ``session_start`` id, else the file stem (Droid names the file after the session)."""
    start = next((r for r in records if r.get("type") == "session_start"), None)
    if start is not None and clean_id(start.get("id")):
        return clean_id(start.get("id"))
    return clean_id(path.name.removesuffix(".jsonl"))


def _message(record: dict[str, Any]) -> dict[str, Any] | None:
    message = record.get("message")
    if record.get("type") != "message" or not isinstance(message, dict):
        return None
    return message


def _left_out(message: dict[str, Any]) -> bool:
    """Droid's own context injection, or the notice that a hook ran."""
    return message.get("visibility") == "llm_only" or "hookEventName" in message


class DroidConverter(Converter, agent=AGENT):
    """Finds Factory Droid's sessions and converts them (module docstring)."""

    #: The package holding sample sessions, goldens and a config (what `funes integrations check` uses).
    contract_fixtures = "funes_droid.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return [self.where("sessions", home)]

    def retention(self, home: Path) -> str:
        """Droid 0.215.0 never deletes a session by itself: no local setting expires them."""
        return (
            f"Factory Droid keeps sessions in {self.where('sessions', home)} until you delete them "
            "(nothing on this machine expires them)"
        )

    def sessions_in(self, path: Path) -> list[SessionRef]:
        def identify(candidate: Path) -> str | None:
            records = read_json_lines(candidate, limit=50).objects()
            if not any(r.get("type") == "session_start" for r in records[:1]):
                return None  # not Droid's
            if not any(_message(r) is not None for r in records):
                return None  # no message yet
            return _session_id(candidate, records)

        return self.refs_in(path, identify)

    def convert(self, ref: SessionRef) -> list[Turn]:
        records = read_json_lines(ref.path).objects()
        session_id = _session_id(ref.path, records) or "session"
        start = next((r for r in records if r.get("type") == "session_start"), {})
        cwd = start.get("cwd") if isinstance(start.get("cwd"), str) and start.get("cwd") else None
        parents: dict[str, str | None] = {}  # every message's id -> its parentId
        for record in records:
            if _message(record) is not None and clean_id(record.get("id")):
                parents.setdefault(str(clean_id(record.get("id"))), clean_id(record.get("parentId")))
        tool_names: dict[str, str] = {}
        kept: set[str] = set()
        turns = RecordTurns(session_id, self.id, cwd)
        last_ts = _EPOCH
        for position, record in enumerate(records, start=1):
            message = _message(record)
            if message is None or _left_out(message):
                continue
            role = message.get("role")
            if not isinstance(role, str) or not role.strip():
                continue
            ts = last_ts = parse_ts(record.get("timestamp")) or last_ts
            blocks = anthropic_blocks(message.get("content"), tool_names, clean_ids=True, bare_strings=False)
            uuid = clean_id(record.get("id")) or f"rec-{position}"
            parent = _kept_ancestor(clean_id(record.get("parentId")), parents, kept)
            if turns.add(uuid, ts, role, blocks, parent):
                kept.add(uuid)
        return turns.turns


def _kept_ancestor(parent: str | None, parents: dict[str, str | None], kept: set[str]) -> str | None:
    """``parent`` if it became a turn, else its nearest ancestor that did (``None``: none did)."""
    seen: set[str] = set()
    while parent is not None and parent not in kept and parent not in seen:
        seen.add(parent)
        parent = parents.get(parent)
    return parent if parent in kept else None

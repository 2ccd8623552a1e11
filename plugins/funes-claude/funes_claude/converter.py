"""Converts Claude Code transcripts into funes turns.

Claude Code appends one JSON record per line to
``~/.claude/projects/<cwd with every non-alphanumeric character as '-'>/<session-uuid>.jsonl``
and writes each subagent (a Task agent, or the summariser ``/compact`` starts) to its own file,
``<session-uuid>/subagents/agent-<id>.jsonl`` beside it (2.0 versions put ``agent-<id>.jsonl``
directly in the project folder). The mapping, record by record:

* only ``user`` and ``assistant`` records become turns; ``summary``, ``system`` (a compact
  boundary among them), ``file-history-snapshot``, ``progress``, ``queue-operation``,
  ``attachment`` and whatever Claude Code adds next yield none;
* ``turn_uuid`` is the record's ``uuid``, ``parent_uuid`` its ``parentUuid``, ``ts`` its
  ``timestamp`` in UTC, ``role`` the message's role (else the record type), ``cwd`` the first
  ``cwd`` in the file;
* ``message.content`` as a string is one text block; as a list, ``text``, ``thinking``,
  ``tool_use`` (the input as compact JSON in source key order) and ``tool_result`` (a string,
  or its text parts joined with ``\\n``, named after the ``tool_use`` with that id, the last one
  *before it* in the file winning) become blocks, in order; images and documents carry no text
  and are left out;
* blank blocks (only Unicode White_Space) are dropped, then turns left with no block;
* ``seq`` counts the turns kept, in file order.

Why ids stay put: Claude Code only ever appends to a transcript. ``/compact`` too appends (a
``compact_boundary`` system record, then the summary as a user record) and carries on in the
same file, so a turn's ``uuid`` and its position among the kept turns never change once
written; a line that cannot be read (torn while Claude Code is writing it, or corrupt) is
skipped and does not count. Nothing after a turn changes it either (a result is named after
the calls before it), so a re-converted turn is byte-for-byte what was emitted the first time.
A ``uuid`` that repeats (a record written twice) keeps its first
turn; a repeat with other content becomes ``<uuid>@<n>`` (the n-th occurrence), so nothing
the agent wrote is lost and nothing is duplicated.

Session ids: a main session's is its file stem (the session uuid Claude Code uses everywhere).
A subagent's is ``<parent session id>-<file stem>``, e.g.
``258c7280-ae70-4798-800f-63464d01a85d-agent-a881341``: its own thread, unique (agent ids are
only unique within their session) and linked to its parent by its prefix; its first turn's
``parent_uuid`` is, as recorded, the parent turn that spawned it (``null`` for a Task agent).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes_claude.agent import CLAUDE
from funes_core import (
    Converter,
    RecordTurns,
    SessionRef,
    Turn,
    anthropic_blocks,
    clean_id,
    parse_ts,
    read_json_lines,
    safe_id,
)

__all__ = ["ClaudeConverter", "session_id_for"]

_EPOCH = "1970-01-01T00:00:00Z"
_TURN_TYPES = ("user", "assistant")
#: Claude Code deletes transcripts older than this many days unless settings.json says otherwise.
DEFAULT_CLEANUP_DAYS = 30


def _is_turn_record(record: dict[str, Any]) -> bool:
    return record.get("type") in _TURN_TYPES and isinstance(record.get("message"), dict)


def session_id_for(path: Path, records: list[dict[str, Any]]) -> str:
    """The session id of the transcript at ``path`` (see the module docstring).

    A subagent file (stem ``agent-…``) is named after its parent: the folder layout
    ``<parent>/subagents/agent-….jsonl`` gives it, else the ``sessionId`` its records carry.
    """
    stem = path.name.removesuffix(".jsonl")
    if stem.startswith("agent-"):
        parent: str | None = None
        if path.parent.name == "subagents" and path.parent.parent.name:
            parent = path.parent.parent.name
        else:
            parent = next((r["sessionId"] for r in records if isinstance(r.get("sessionId"), str)), None)
        parent = clean_id(parent)
        if parent and parent != stem:
            return safe_id(f"{parent}-{stem}".replace(":", "-"))
    return clean_id(stem) or "session"


class ClaudeConverter(Converter, agent=CLAUDE):
    """Finds Claude Code's sessions under ``~/.claude/projects`` and converts them."""

    contract_fixtures = "funes_claude.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return [self.where("projects", home)]

    def retention(self, home: Path) -> str:
        """Claude Code deletes transcripts after ``cleanupPeriodDays`` (settings.json; 30 by default)."""
        settings = self.where("settings", home)
        try:
            value = json.loads(settings.read_bytes()).get("cleanupPeriodDays")
        except (OSError, ValueError, AttributeError):
            value = None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return f"Claude Code deletes transcripts after {value} days (cleanupPeriodDays in {settings})"
        return (
            f"Claude Code deletes transcripts after {DEFAULT_CLEANUP_DAYS} days (the default; "
            f"set cleanupPeriodDays in {settings} to keep them longer)"
        )

    def sessions_in(self, path: Path) -> list[SessionRef]:
        def identify(candidate: Path) -> str | None:
            head = read_json_lines(candidate, until=_is_turn_record).objects()  # up to the first message
            if not head or not _is_turn_record(head[-1]):
                return None  # not Claude Code's, or no message yet (a session that only started)
            return session_id_for(candidate, head)

        return self.refs_in(path, identify)

    def convert(self, ref: SessionRef) -> list[Turn]:
        records = read_json_lines(ref.path).objects()
        session_id = session_id_for(ref.path, records)
        cwd = next((r["cwd"] for r in records if isinstance(r.get("cwd"), str) and r["cwd"]), None)
        tool_names: dict[str, str] = {}  # call id -> name of the latest call seen so far
        turns = RecordTurns(session_id, self.id, cwd)
        last_ts = _EPOCH
        for position, record in enumerate(records, start=1):
            if not _is_turn_record(record):
                continue
            message: dict[str, Any] = record["message"]
            role = message.get("role")
            if not isinstance(role, str) or not role.strip():
                role = str(record["type"])
            ts = parse_ts(record.get("timestamp")) or last_ts
            last_ts = ts
            blocks = anthropic_blocks(message.get("content"), tool_names)
            uuid = clean_id(record.get("uuid")) or f"rec-{position}"
            turns.add(uuid, ts, role, blocks, clean_id(record.get("parentUuid")))
        return turns.turns

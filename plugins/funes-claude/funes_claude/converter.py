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
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from funes_core import Block, Capabilities, Converter, SessionRef, Turn, format_ts

__all__ = ["ClaudeConverter", "is_blank", "parse_ts", "session_id_for"]

_EPOCH = "1970-01-01T00:00:00Z"
#: The characters Unicode calls White_Space: what "blank" means in every funes converter.
_WHITE_SPACE = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_TURN_TYPES = ("user", "assistant")


def is_blank(text: str) -> bool:
    """Whether ``text`` holds only Unicode White_Space (or nothing)."""
    return all(char in _WHITE_SPACE for char in text)


def parse_ts(value: object) -> str | None:
    """A record's ``timestamp`` as RFC 3339 UTC with ``Z``; ``None`` when it is not a time.

    Claude Code writes ``2026-02-11T20:57:47.609Z``; an offset is converted, a time without
    one is taken as UTC, and a number is epoch milliseconds (seconds when it is too small to be
    milliseconds of this century).
    """
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            seconds = value / 1000 if abs(value) >= 1e11 else float(value)
            return format_ts(datetime.fromtimestamp(seconds, tz=UTC))
        if isinstance(value, str) and value.strip():
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return format_ts(moment)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def _clean_id(value: object) -> str | None:
    """An id usable in the turns format (a non-empty string without ``:``), or ``None``."""
    if not isinstance(value, str):
        return None
    text = value.strip().replace(":", "-")
    return text or None


def _text_or_none(value: object) -> str | None:
    """A non-empty string as it is (tool ids are stored verbatim), else ``None``."""
    return value if isinstance(value, str) and value else None


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _iter_records(path: Path) -> Iterator[dict[str, Any]]:
    """The readable JSON-object records of a JSON-lines file, in order.

    Each line is decoded on its own (a bad byte spoils only its line); a line that is not a JSON
    object (a torn last line, a corrupt record, a blank line) is skipped and does not count.
    """
    try:
        data = path.read_bytes()
    except OSError:
        return
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


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
        parent = _clean_id(parent)
        if parent and parent != stem:
            return f"{parent}-{stem}".replace(":", "-")
    return _clean_id(stem) or "session"


class ClaudeConverter(Converter):
    """Finds Claude Code's sessions under ``~/.claude/projects`` and converts them."""

    id = "claude"
    label = "Claude Code"
    contract_version = 1
    capabilities = Capabilities(discover=True, memory_binding=True)
    contract_fixtures = "funes_claude.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return [home / ".claude" / "projects"]

    def sessions_in(self, path: Path) -> list[SessionRef]:
        refs: list[SessionRef] = []
        for candidate in self.transcript_files(path):
            head: list[dict[str, Any]] = []
            for record in _iter_records(candidate):  # up to the first message, which proves it
                head.append(record)
                if _is_turn_record(record):
                    break
            if not head or not _is_turn_record(head[-1]):
                continue  # not Claude Code's, or no message yet (a session that only started)
            try:
                mtime = candidate.stat().st_mtime
            except OSError:
                continue
            refs.append(SessionRef(session_id_for(candidate, head), candidate, mtime))
        return refs

    def convert(self, ref: SessionRef) -> list[Turn]:
        records = list(_iter_records(ref.path))
        session_id = session_id_for(ref.path, records)
        cwd = next((r["cwd"] for r in records if isinstance(r.get("cwd"), str) and r["cwd"]), None)
        tool_names: dict[str, str] = {}  # call id -> name of the latest call seen so far
        turns: list[Turn] = []
        emitted: dict[str, set[tuple[str, tuple[Block, ...]]]] = {}  # uuid -> contents emitted
        occurrences: dict[str, int] = {}
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
            blocks = tuple(_blocks(message.get("content"), tool_names))
            uuid = _clean_id(record.get("uuid")) or f"rec-{position}"
            count = occurrences[uuid] = occurrences.get(uuid, 0) + 1
            if not blocks or (role, blocks) in emitted.get(uuid, set()):
                continue  # nothing to say, or the same record written again: already emitted
            emitted.setdefault(uuid, set()).add((role, blocks))
            if count > 1:
                uuid = f"{uuid}@{count}"
            turns.append(
                Turn(
                    session_id=session_id,
                    turn_uuid=uuid,
                    seq=len(turns),
                    ts=ts,
                    role=role,
                    harness=self.id,
                    blocks=blocks,
                    cwd=cwd,
                    parent_uuid=_clean_id(record.get("parentUuid")),
                )
            )
        return turns


def _result_text(content: object) -> str:
    """A tool result's text: the string, or the text parts of a list joined with ``\\n``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text")
        return "\n".join(t for t in texts if isinstance(t, str))
    if content is None:
        return ""
    return _compact(content)


def _blocks(content: object, tool_names: dict[str, str]) -> list[Block]:
    """The non-blank blocks of one ``message.content``, in order."""
    if isinstance(content, str):
        return [] if is_blank(content) else [Block("text", content)]
    blocks: list[Block] = []
    for part in content if isinstance(content, list) else []:
        block: Block | None = None
        if isinstance(part, str):
            block = Block("text", part)
        elif not isinstance(part, dict):
            continue
        elif part.get("type") == "text" and isinstance(part.get("text"), str):
            block = Block("text", part["text"])
        elif part.get("type") == "thinking" and isinstance(part.get("thinking"), str):
            block = Block("thinking", part["thinking"])
        elif part.get("type") == "tool_use":
            name = part.get("name") if isinstance(part.get("name"), str) else None
            call_id = _text_or_none(part.get("id"))
            if call_id and name:
                tool_names[call_id] = name  # before the blank check: an empty call still names
            block = Block("tool_use", _compact(part.get("input", {})), tool_name=name, tool_use_id=call_id)
        elif part.get("type") == "tool_result":
            call_id = _text_or_none(part.get("tool_use_id"))
            name = tool_names.get(call_id) if call_id else None
            text = _result_text(part.get("content"))
            block = Block("tool_result", text, tool_name=name, tool_use_id=call_id)
        if block is not None and not is_blank(block.text):
            blocks.append(block)
    return blocks

"""Converts pi sessions (``<agent dir>/sessions/--<cwd>--/<ts>_<uuid>.jsonl``) into funes turns.

A pi session file is JSON lines: a ``session`` header (id, ``cwd``), then entries that form a
tree through ``id``/``parentId``: ``message`` entries, and bookkeeping (``model_change``,
``thinking_level_change``, ``compaction``, ``label``, ...). Only ``message`` entries become
turns; every branch of the tree is kept, in file order, because the memory is verbatim.

The mapping (see the README for the full table):

* ``session_id`` is the file stem, ``turn_uuid`` the entry's ``id``, ``parent_uuid`` its
  ``parentId``, ``cwd`` the header's; ``ts`` is the entry's ``timestamp`` (ISO, or epoch
  milliseconds) in UTC, falling back to the message's own epoch-millisecond ``timestamp``;
* ``role`` is the message's role, except that ``toolResult`` becomes ``tool``;
* assistant content keeps its order: ``thinking``, ``text``, and ``toolCall`` (a ``tool_use``
  block of the arguments as compact JSON, with the call's name and id); a tool result is one
  ``tool_result`` block of its text parts, with ``toolName`` and ``toolCallId``.

Ids come only from the file (the entry id, else the position among readable records), so a
growing session keeps its old turns' ids, and a torn or corrupt line is skipped without
shifting anyone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes_core import (
    Block,
    Converter,
    SessionRef,
    Turn,
    clean_id,
    compact_json,
    is_blank,
    parse_ts,
    read_json_lines,
    safe_id,
)
from funes_pi.agent import PI
from funes_pi.paths import agent_dir, session_dirs

__all__ = ["PiConverter"]

_EPOCH = "1970-01-01T00:00:00Z"


def _decode(raw: bytes) -> dict[str, Any] | None:
    """One line as a JSON object, or ``None`` (blank, torn, corrupt, or not an object)."""
    if not raw.strip():
        return None
    try:
        record = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _is_pi_record(record: dict[str, Any]) -> bool:
    if record.get("type") == "session":
        return True
    message = record.get("message")
    return record.get("type") == "message" and isinstance(message, dict) and "role" in message


def _looks_like_pi_session(path: Path) -> bool:
    """Whether the first readable record of ``path`` is a pi header (or a pi message entry).

    Only the start of the file is read: discovery over hundreds of sessions stays cheap.
    """
    try:
        with path.open("rb") as fh:
            for number, raw in enumerate(fh):
                record = _decode(raw)
                if record is not None:
                    return _is_pi_record(record)
                if number >= 20:
                    return False
    except OSError:
        return False
    return False


def _text_parts(content: object) -> list[str]:
    """The texts of a pi content value: a plain string, or the ``text`` parts of a list."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        part["text"]
        for part in content
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
    ]


class PiConverter(Converter, agent=PI):
    """Finds and converts pi's sessions."""

    contract_fixtures = "funes_pi.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return session_dirs(home)

    def sessions_in(self, path: Path) -> list[SessionRef]:
        return self.refs_in(path, lambda f: self._session_id(f) if _looks_like_pi_session(f) else None)

    @staticmethod
    def _session_id(path: Path) -> str:
        """The file stem (pi's own session id is on the header, but the stem names the file)."""
        return clean_id(path.name.removesuffix(".jsonl")) or "session"

    def convert(self, ref: SessionRef) -> list[Turn]:
        records = read_json_lines(ref.path).records
        session_id = self._session_id(ref.path)
        header = next((r for _, r in records if r.get("type") == "session"), {})
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) and header.get("cwd") else None
        last_ts = parse_ts(header.get("timestamp"), epoch="ms") or _EPOCH
        tool_names: dict[str, str] = {}
        seen: set[str] = set()
        turns: list[Turn] = []
        for position, record in records:
            message = record.get("message")
            if record.get("type") != "message" or not isinstance(message, dict):
                continue
            role = message.get("role")
            if not isinstance(role, str) or not role.strip():
                continue
            stamp = record.get("timestamp")
            ts = last_ts = (
                parse_ts(stamp, epoch="ms") or parse_ts(message.get("timestamp"), epoch="ms") or last_ts
            )
            blocks = [b for b in self._blocks(message, tool_names) if not is_blank(b.text)]
            if not blocks:
                continue
            uuid = clean_id(record.get("id")) or f"rec-{position}"
            if uuid in seen:  # a repeated id: keep both turns, distinctly and stably
                uuid = safe_id(f"{uuid}@{position}")
            seen.add(uuid)
            turns.append(
                Turn(
                    session_id=session_id,
                    turn_uuid=uuid,
                    seq=len(turns),
                    ts=ts,
                    role="tool" if role == "toolResult" else role,
                    harness=self.id,
                    blocks=tuple(blocks),
                    cwd=cwd,
                    parent_uuid=clean_id(record.get("parentId")),
                )
            )
        return turns

    @staticmethod
    def _blocks(message: dict[str, Any], tool_names: dict[str, str]) -> list[Block]:
        """The blocks of one pi message, in order; ``tool_names`` maps call ids to tool names."""
        role = message.get("role")
        content = message.get("content")
        if role == "toolResult":
            call_id = clean_id(message.get("toolCallId"))
            name = message.get("toolName") if isinstance(message.get("toolName"), str) else None
            if name is None and call_id is not None:
                name = tool_names.get(call_id)
            text = "\n".join(_text_parts(content))
            return [Block("tool_result", text, tool_name=name, tool_use_id=call_id)]
        if role == "bashExecution":
            # A command the user ran with `!` in pi's editor, and what it printed.
            command, output = message.get("command"), message.get("output")
            found: list[Block] = []
            if isinstance(command, str):
                found.append(Block("tool_use", compact_json({"command": command}), tool_name="bash"))
            if isinstance(output, str):
                found.append(Block("tool_result", output, tool_name="bash"))
            return found
        if role in ("branchSummary", "compactionSummary"):
            summary = message.get("summary")
            return [Block("text", summary)] if isinstance(summary, str) else []
        if not isinstance(content, list):
            return [Block("text", text) for text in _text_parts(content)]
        blocks: list[Block] = []
        for part in content:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                blocks.append(Block("text", part["text"]))
            elif kind == "thinking" and isinstance(part.get("thinking"), str):
                blocks.append(Block("thinking", part["thinking"]))
            elif kind == "toolCall":
                arguments = part.get("arguments")
                text = (
                    arguments
                    if isinstance(arguments, str)
                    else compact_json({} if arguments is None else arguments)
                )
                name = part.get("name") if isinstance(part.get("name"), str) else None
                call_id = clean_id(part.get("id"))
                if call_id is not None and name is not None:
                    tool_names[call_id] = name
                blocks.append(Block("tool_use", text, tool_name=name, tool_use_id=call_id))
        return blocks

    def agent_found(self, home: Path) -> bool:
        """pi has been set up here when its agent folder or any of its session folders exists."""
        return agent_dir(home).is_dir() or any(root.is_dir() for root in self.session_roots(home))

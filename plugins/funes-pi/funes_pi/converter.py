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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from funes_core import Block, Capabilities, Converter, SessionRef, Turn, format_ts
from funes_pi.paths import agent_dir, session_dirs

__all__ = ["PiConverter", "parse_time"]

_EPOCH = "1970-01-01T00:00:00Z"


def parse_time(value: object) -> str | None:
    """A pi timestamp as RFC 3339 UTC with ``Z``: ISO 8601 (an offset is honoured, none means
    UTC) or epoch milliseconds (pi's ``message.timestamp``). ``None`` when unusable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return format_ts(datetime.fromtimestamp(value / 1000, tz=UTC))
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            moment = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "zZ" else text)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        try:
            return format_ts(moment)
        except (OverflowError, ValueError):
            return None
    return None


def _clean_id(value: object) -> str | None:
    """An id usable in the turns format (non-empty, no ``:``), or ``None``."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip().replace(":", "-")
    return text or None


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _decode(raw: bytes) -> dict[str, Any] | None:
    """One line as a JSON object, or ``None`` (blank, torn, corrupt, or not an object)."""
    if not raw.strip():
        return None
    try:
        record = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(position, record) for every readable JSON-object line; positions count only those.

    The file is read as bytes and each line decoded on its own, so a torn multi-byte character
    at the end (pi is still writing) spoils only that line.
    """
    try:
        data = path.read_bytes()
    except OSError:
        return []
    out: list[tuple[int, dict[str, Any]]] = []
    for raw in data.split(b"\n"):
        record = _decode(raw)
        if record is not None:
            out.append((len(out) + 1, record))
    return out


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


def _blank(text: str) -> bool:
    return not text.strip()


class PiConverter(Converter):
    """Finds and converts pi's sessions."""

    id = "pi"
    label = "pi"
    contract_version = 1
    capabilities = Capabilities(discover=True, memory_binding=True)
    contract_fixtures = "funes_pi.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return session_dirs(home)

    def sessions_in(self, path: Path) -> list[SessionRef]:
        refs: list[SessionRef] = []
        for candidate in self.transcript_files(path):
            if not _looks_like_pi_session(candidate):
                continue
            try:
                mtime = candidate.stat().st_mtime
            except OSError:
                continue
            refs.append(SessionRef(self._session_id(candidate), candidate, mtime))
        return refs

    @staticmethod
    def _session_id(path: Path) -> str:
        """The file stem (pi's own session id is on the header, but the stem names the file)."""
        return _clean_id(path.name.removesuffix(".jsonl")) or "session"

    def convert(self, ref: SessionRef) -> list[Turn]:
        records = _records(ref.path)
        session_id = self._session_id(ref.path)
        header = next((r for _, r in records if r.get("type") == "session"), {})
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) and header.get("cwd") else None
        last_ts = parse_time(header.get("timestamp")) or _EPOCH
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
            ts = parse_time(record.get("timestamp")) or parse_time(message.get("timestamp")) or last_ts
            last_ts = ts
            blocks = [b for b in self._blocks(message, tool_names) if not _blank(b.text)]
            if not blocks:
                continue
            uuid = _clean_id(record.get("id")) or f"rec-{position}"
            if uuid in seen:  # a repeated id: keep both turns, distinctly and stably
                uuid = f"{uuid}@{position}"
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
                    parent_uuid=_clean_id(record.get("parentId")),
                )
            )
        return turns

    @staticmethod
    def _blocks(message: dict[str, Any], tool_names: dict[str, str]) -> list[Block]:
        """The blocks of one pi message, in order; ``tool_names`` maps call ids to tool names."""
        role = message.get("role")
        content = message.get("content")
        if role == "toolResult":
            call_id = _clean_id(message.get("toolCallId"))
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
                found.append(Block("tool_use", _compact({"command": command}), tool_name="bash"))
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
                    else _compact({} if arguments is None else arguments)
                )
                name = part.get("name") if isinstance(part.get("name"), str) else None
                call_id = _clean_id(part.get("id"))
                if call_id is not None and name is not None:
                    tool_names[call_id] = name
                blocks.append(Block("tool_use", text, tool_name=name, tool_use_id=call_id))
        return blocks

    def agent_found(self, home: Path) -> bool:
        """pi has been set up here when its agent folder or any of its session folders exists."""
        return agent_dir(home).is_dir() or any(root.is_dir() for root in self.session_roots(home))

"""Converts echo sessions (``~/.echo/sessions/<id>.jsonl``) into funes turns.

The echo format is described in this distribution's README. The rules that matter to funes:

* one message record is one turn; ``seq`` counts the turns kept, in file order;
* a blank part is dropped, and a message left with no part is dropped;
* a line that is not a JSON object of a known type (a torn last line while echo is still
  writing, a corrupt record) is skipped, never fatal;
* ids come only from what is already in the file (the message ``id``, else the record's
  position among the readable records), so when echo appends to a session the earlier turns
  keep their ids, and a corrupt line does not shift anyone's id.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from funes_core import Block, Capabilities, Converter, SessionRef, Turn, format_ts

__all__ = ["EchoConverter", "parse_time"]

_EPOCH = "1970-01-01T00:00:00Z"


def parse_time(value: object) -> str | None:
    """An echo ``time`` (ISO 8601 with or without offset, or epoch milliseconds) as UTC ``…Z``.

    A time without an offset is taken as UTC; anything unparseable gives ``None``.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return format_ts(datetime.fromtimestamp(value / 1000, tz=UTC))
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return format_ts(moment)
    return None


def _clean_id(value: object) -> str | None:
    """An id usable in the turns format (non-empty, no ``:``), or ``None``."""
    if not isinstance(value, str | int) or isinstance(value, bool):
        return None
    text = str(value).strip().replace(":", "-")
    return text or None


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(position, record) for every readable JSON object line (position counts only those).

    Everything else (a torn last line, a corrupt record, a blank line) is skipped and does not
    count, so positions, and the ids made from them, never depend on unreadable lines.
    """
    try:
        data = path.read_bytes()
    except OSError:
        return []
    out: list[tuple[int, dict[str, Any]]] = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append((len(out) + 1, record))
    return out


class EchoConverter(Converter):
    """Finds and converts the sessions of the made-up agent "echo"."""

    id = "echo"
    label = "Echo"
    contract_version = 1
    capabilities = Capabilities(discover=True, memory_binding=True)
    contract_fixtures = "funes_echo.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return [home / ".echo" / "sessions"]

    def sessions_in(self, path: Path) -> list[SessionRef]:
        refs: list[SessionRef] = []
        for candidate in self.transcript_files(path):
            session_id = self._session_id(candidate)
            if session_id is None:
                continue
            refs.append(SessionRef(session_id, candidate, candidate.stat().st_mtime))
        return refs

    def _session_id(self, path: Path) -> str | None:
        """The header's id, else the file stem; ``None`` when the file is not an echo session."""
        records = _records(path)
        if not any(r.get("type") in ("session", "message") for _, r in records):
            return None
        header = next((r for _, r in records if r.get("type") == "session"), None)
        return (_clean_id(header.get("id")) if header else None) or _clean_id(
            path.name.removesuffix(".jsonl")
        )

    def convert(self, ref: SessionRef) -> list[Turn]:
        records = _records(ref.path)
        header = next((r for _, r in records if r.get("type") == "session"), {})
        session_id = (
            _clean_id(header.get("id")) or _clean_id(ref.path.name.removesuffix(".jsonl")) or "session"
        )
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) and header.get("cwd") else None
        last_ts = parse_time(header.get("started")) or _EPOCH
        tools: dict[str, str] = {}
        seen: set[str] = set()
        turns: list[Turn] = []
        for number, record in records:
            if record.get("type") != "message":
                continue
            role = record.get("role")
            parts = record.get("parts")
            if not isinstance(role, str) or not role.strip() or not isinstance(parts, list):
                continue
            ts = parse_time(record.get("time")) or last_ts
            last_ts = ts
            blocks = [b for b in (self._block(part, tools) for part in parts) if b is not None]
            if not blocks:
                continue
            uuid = _clean_id(record.get("id")) or f"rec-{number}"
            if uuid in seen:  # echo re-used an id: keep both turns, distinctly and stably
                uuid = f"{uuid}@{number}"
            seen.add(uuid)
            turns.append(
                Turn(
                    session_id=session_id,
                    turn_uuid=uuid,
                    seq=len(turns),
                    ts=ts,
                    role=role,
                    harness=self.id,
                    blocks=tuple(blocks),
                    cwd=cwd,
                    parent_uuid=_clean_id(record.get("reply_to")),
                )
            )
        return turns

    @staticmethod
    def _block(part: object, tools: dict[str, str]) -> Block | None:
        if not isinstance(part, dict):
            return None
        if isinstance(part.get("text"), str):
            kind, text, name, call_id = "text", part["text"], None, None
        elif isinstance(part.get("thinking"), str):
            kind, text, name, call_id = "thinking", part["thinking"], None, None
        elif isinstance(part.get("call"), dict):
            call = part["call"]
            kind = "tool_use"
            text = _compact(call.get("args", {}))
            name = call.get("tool") if isinstance(call.get("tool"), str) else None
            call_id = _clean_id(call.get("id"))
            if call_id and name:
                tools[call_id] = name
        elif isinstance(part.get("result"), dict):
            result = part["result"]
            output = result.get("output")
            kind = "tool_result"
            text = output if isinstance(output, str) else ("" if output is None else _compact(output))
            call_id = _clean_id(result.get("call_id"))
            name = tools.get(call_id) if call_id else None
        else:
            return None
        if not re.sub(r"\s+", "", text):
            return None  # blank: only whitespace
        return Block(block_type=kind, text=text, tool_name=name, tool_use_id=call_id)

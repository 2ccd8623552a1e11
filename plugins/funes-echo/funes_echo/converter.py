"""Converts echo sessions (``~/.echo/sessions/<id>.jsonl``) into funes turns.

The echo format is described in this distribution's README. The rules that matter to funes:

* one message record is one turn; ``seq`` counts the turns kept, in file order;
* a blank part is dropped, and a message left with no part is dropped;
* a line that is not a JSON object (a torn last line while echo is still writing, a corrupt
  record) is skipped, never fatal (:func:`funes_core.read_json_lines`);
* ids come only from what is already in the file (the message ``id``, else the record's
  position among the readable records), so when echo appends to a session the earlier turns
  keep their ids, and a corrupt line does not shift anyone's id;
* ``time`` is ISO 8601 (no offset means UTC) or epoch milliseconds (:func:`funes_core.parse_ts`).
"""

from __future__ import annotations

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
from funes_echo.agent import ECHO

__all__ = ["EchoConverter"]

_EPOCH = "1970-01-01T00:00:00Z"


class EchoConverter(Converter, agent=ECHO):
    """Finds and converts the sessions of the made-up agent "echo"."""

    contract_fixtures = "funes_echo.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return [self.where("sessions", home)]

    def sessions_in(self, path: Path) -> list[SessionRef]:
        def identify(candidate: Path) -> str | None:
            records = read_json_lines(candidate).objects()
            if not any(r.get("type") in ("session", "message") for r in records):
                return None
            return self._session_id(candidate, records)

        return self.refs_in(path, identify)

    @staticmethod
    def _session_id(path: Path, records: list[dict[str, Any]]) -> str:
        """The header's id, else the file stem."""
        header = next((r for r in records if r.get("type") == "session"), {})
        return clean_id(header.get("id")) or clean_id(path.name.removesuffix(".jsonl")) or "session"

    def convert(self, ref: SessionRef) -> list[Turn]:
        records = read_json_lines(ref.path).records
        header = next((r for _, r in records if r.get("type") == "session"), {})
        session_id = self._session_id(ref.path, [header])
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) and header.get("cwd") else None
        last_ts = parse_ts(header.get("started"), epoch="ms") or _EPOCH
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
            ts = last_ts = parse_ts(record.get("time"), epoch="ms") or last_ts
            blocks = [b for b in (self._block(part, tools) for part in parts) if b is not None]
            if not blocks:
                continue
            uuid = clean_id(record.get("id")) or f"rec-{number}"
            if uuid in seen:  # echo re-used an id: keep both turns, distinctly and stably
                uuid = safe_id(f"{uuid}@{number}")
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
                    parent_uuid=clean_id(record.get("reply_to")),
                )
            )
        return turns

    @staticmethod
    def _block(part: object, tools: dict[str, str]) -> Block | None:
        if not isinstance(part, dict):
            return None
        name: str | None = None
        call_id: str | None = None
        if isinstance(part.get("text"), str):
            kind, text = "text", part["text"]
        elif isinstance(part.get("thinking"), str):
            kind, text = "thinking", part["thinking"]
        elif isinstance(part.get("call"), dict):
            call = part["call"]
            kind, text = "tool_use", compact_json(call.get("args", {}))
            name = call.get("tool") if isinstance(call.get("tool"), str) else None
            call_id = clean_id(call.get("id"))
            if call_id and name:
                tools[call_id] = name
        elif isinstance(part.get("result"), dict):
            result = part["result"]
            output = result.get("output")
            kind = "tool_result"
            text = output if isinstance(output, str) else ("" if output is None else compact_json(output))
            call_id = clean_id(result.get("call_id"))
            name = tools.get(call_id) if call_id else None
        else:
            return None
        if is_blank(text):
            return None
        return Block(block_type=kind, text=text, tool_name=name, tool_use_id=call_id)

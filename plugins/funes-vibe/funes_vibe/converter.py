"""Converts Mistral Vibe sessions (``$VIBE_HOME/logs/session/<folder>/messages.jsonl``) into turns.

Vibe 2.26 (``vibe.core.session.session_logger``) keeps one folder per session,
``session_<YYYYmmdd_HHMMSS>_<short id>/``, holding ``meta.json`` (``session_id``, ``start_time``
ISO 8601, ``environment.working_directory``, ``origin_directory``) and ``messages.jsonl``: one
``LLMMessage.model_dump(exclude_none=True)`` per line, the system prompt left out::

    {"role": "user", "content": "Why does …?", "injected": false, "message_id": "5d0e…"}
    {"role": "assistant", "content": "", "injected": false, "message_id": "9a41…",
     "tool_calls": [{"id": "call_1", "index": 0, "type": "function",
                     "function": {"name": "funes_recall", "arguments": "{\\"query\\":\\"x\\"}"}}]}
    {"role": "tool", "content": "…", "name": "funes_recall", "tool_call_id": "call_1", "injected": false}

Vibe appends new messages, but re-writes the whole file when its history changed below the end
(compaction, /rewind), so a turn's id must not be its line number where the file gives a better
one. The mapping:

* ``session_id`` is meta.json's ``session_id``, else the folder's name; ``cwd`` is
  ``environment.working_directory``, else ``origin_directory``;
* ``turn_uuid`` is the line's ``message_id`` (Vibe gives every non-tool message a UUID), a tool
  result's ``<session_id>-<tool_call_id>``, else ``<session_id>-<n>`` with ``n`` counting
  readable lines only (a corrupt line shifts nobody);
* ``content`` (a string, or text parts) and ``reasoning_content`` give text and thinking blocks;
  each ``tool_calls`` entry a ``tool_use`` (``arguments`` verbatim); a ``tool`` line a
  ``tool_result`` named after ``name``;
* ``injected`` lines (context Vibe adds, not said by the user or the model) and ``system`` lines
  give no turn;
* ``ts`` is meta.json's ``start_time`` for every turn (Vibe keeps no time per message); a
  session without a readable meta.json gets the epoch, 1970-01-01.
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
    function_call,
    is_blank,
    parse_ts,
    read_json_lines,
)
from funes_vibe.agent import AGENT

__all__ = ["VibeConverter"]

_MESSAGES = "messages.jsonl"
_META = "meta.json"
_EPOCH = "1970-01-01T00:00:00Z"
_ROLES = frozenset({"user", "assistant", "tool"})


def _meta(path: Path) -> dict[str, Any]:
    try:
        data = json.loads((path.parent / _META).read_bytes().decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _session_id(path: Path, meta: dict[str, Any]) -> str:
    return clean_id(meta.get("session_id")) or clean_id(path.parent.name) or "session"


def _cwd(meta: dict[str, Any]) -> str | None:
    raw = meta.get("environment")
    env: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for value in (env.get("working_directory"), meta.get("origin_directory")):
        if isinstance(value, str) and value:
            return value
    return None


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return []


def _blocks(record: dict[str, Any]) -> list[Block]:
    """A message's blocks: thinking, text, tool calls; or a tool line's one result."""
    if record["role"] == "tool":
        text = "\n".join(_texts(record.get("content")))
        name = record.get("name") if isinstance(record.get("name"), str) else None
        return [Block("tool_result", text, tool_name=name, tool_use_id=clean_id(record.get("tool_call_id")))]
    blocks = [Block("thinking", t) for t in _texts(record.get("reasoning_content"))]
    blocks += [Block("text", t) for t in _texts(record.get("content"))]
    for call in filter(None, map(function_call, record.get("tool_calls") or [])):
        blocks.append(Block("tool_use", call.arguments, tool_name=call.name, tool_use_id=call.call_id))
    return blocks


class VibeConverter(Converter, agent=AGENT):
    """Finds ``vibe``'s sessions under ``$VIBE_HOME/logs/session`` and converts them (see above)."""

    contract_fixtures = "funes_vibe.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return [self.where("sessions", home)]

    def retention(self, home: Path) -> str:
        return "Mistral Vibe keeps sessions until you delete them (nothing expires on its own)"

    def sessions_in(self, path: Path) -> list[SessionRef]:
        def identify(candidate: Path) -> str | None:
            if candidate.name != _MESSAGES:
                return None
            if not read_json_lines(candidate, limit=20).objects():
                return None
            return _session_id(candidate, _meta(candidate))

        return self.refs_in(path, identify)

    def convert(self, ref: SessionRef) -> list[Turn]:
        meta = _meta(ref.path)
        session_id = _session_id(ref.path, meta)
        cwd = _cwd(meta)
        ts = parse_ts(meta.get("start_time")) or _EPOCH
        turns: list[Turn] = []
        seen: set[str] = set()
        readable = [r for _, r in read_json_lines(ref.path).records if isinstance(r.get("role"), str)]
        for n, record in enumerate(readable):
            if record["role"] not in _ROLES or record.get("injected") is True:
                continue
            blocks = tuple(b for b in _blocks(record) if not is_blank(b.text))
            if not blocks:
                continue
            call_id = clean_id(record.get("tool_call_id"))
            uuid = clean_id(record.get("message_id")) or (
                f"{session_id}-{call_id}" if record["role"] == "tool" and call_id else f"{session_id}-{n}"
            )
            if uuid in seen:  # a repeated id: keep both turns, distinctly and stably
                uuid = f"{uuid}@{n}"
            seen.add(uuid)
            turns.append(Turn(session_id, uuid, len(turns), ts, record["role"], self.id, blocks, cwd=cwd))
        return turns

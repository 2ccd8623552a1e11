"""Converts Continue CLI sessions (``$CONTINUE_GLOBAL_DIR/sessions/<uuid>.json``) into turns.

``cn`` keeps one JSON document per session, re-written whole after each exchange, and an index
beside them (``sessions.json``: ``sessionId``, ``dateCreated`` in epoch milliseconds,
``workspaceDirectory``)::

    {"sessionId": "6808c58b-…", "title": "…", "workspaceDirectory": "/work/app",
     "history": [
       {"message": {"role": "user", "content": "Why does …?"}, "contextItems": []},
       {"message": {"role": "assistant", "content": "", "toolCalls": [{"id": "call_1", "type": "function",
                    "function": {"name": "recall", "arguments": "{\\"query\\":\\"x\\"}"}}]},
        "toolCallStates": [{"toolCallId": "call_1", "status": "done",
                            "output": [{"content": "…", "name": "Tool Result"}]}]},
       {"message": {"role": "assistant", "content": "The tokenizer resets …"}}]}

The mapping:

* ``session_id`` is ``sessionId`` (a UUID), else the file name; ``cwd`` is ``workspaceDirectory``;
* one turn per readable ``history`` item (a JSON object whose ``message`` has a string ``role``):
  ``turn_uuid`` is ``<session_id>-<n>``, ``n`` counting readable items only, so a corrupt item
  shifts nobody, and an item never moves (``cn`` only appends to the history);
* ``content`` (a string, or a list of ``{"type": "text", "text"}`` parts) gives text blocks; each
  ``toolCalls`` entry a ``tool_use`` (the ``arguments`` string verbatim, named after the function);
* a tool call's result is a turn of its own (role ``tool``, ``<session_id>-<n>-r``, one
  ``tool_result`` per finished call), emitted only once every call of the item has finished
  (``status`` done, errored or canceled): until then the item's ``toolCallStates`` change, and a
  turn must never change once emitted;
* ``ts`` is the session's ``dateCreated`` from ``sessions.json`` for every turn (``cn`` keeps no
  time per message); a session missing from the index gets the epoch, 1970-01-01;
* a file that is not JSON (``cn`` is writing it) gives no turn; it is read again at the next index.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes_continue.agent import AGENT
from funes_core import (
    Block,
    Converter,
    SessionRef,
    Turn,
    clean_id,
    compact_json,
    function_call,
    is_blank,
    parse_ts,
    safe_id,
)

__all__ = ["ContinueConverter"]

_INDEX = "sessions.json"
_EPOCH = "1970-01-01T00:00:00Z"
_FINISHED = frozenset({"done", "errored", "canceled"})


def _document(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("history"), list) else None


def _created(path: Path, session_id: str) -> str | None:
    """The session's ``dateCreated`` from ``sessions.json`` beside it, as RFC 3339 UTC."""
    try:
        entries = json.loads((path.parent / _INDEX).read_bytes())
    except (OSError, ValueError):
        return None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("sessionId") == session_id:
            raw = entry.get("dateCreated")
            value = int(raw) if isinstance(raw, str) and raw.isdigit() else raw
            return parse_ts(value, epoch="ms") if isinstance(value, int | float) else None
    return None


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return []


def _output(state: dict[str, Any]) -> str:
    parts = state.get("output")
    if isinstance(parts, list):
        texts = [p.get("content") for p in parts if isinstance(p, dict)]
        return "\n".join(t if isinstance(t, str) else compact_json(t) for t in texts if t is not None)
    return "" if parts is None else compact_json(parts)


def _session_id(path: Path, doc: dict[str, Any]) -> str:
    return clean_id(doc.get("sessionId")) or clean_id(path.name.removesuffix(".json")) or "session"


class ContinueConverter(Converter, agent=AGENT):
    """Finds ``cn``'s sessions under ``$CONTINUE_GLOBAL_DIR/sessions`` and converts them (see above)."""

    contract_fixtures = "funes_continue.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return [self.where("sessions", home)]

    def retention(self, home: Path) -> str:
        return "Continue keeps sessions until you delete them (/clear deletes the current one)"

    def sessions_in(self, path: Path) -> list[SessionRef]:
        def identify(candidate: Path) -> str | None:
            if candidate.name == _INDEX:
                return None
            doc = _document(candidate)
            return _session_id(candidate, doc) if doc is not None and doc.get("history") else None

        return self.refs_in(path, identify, "*.json")

    def convert(self, ref: SessionRef) -> list[Turn]:
        doc = _document(ref.path)
        if doc is None:
            return []
        session_id = _session_id(ref.path, doc)
        cwd = doc.get("workspaceDirectory") if isinstance(doc.get("workspaceDirectory"), str) else None
        ts = _created(ref.path, str(doc.get("sessionId"))) or _EPOCH
        readable = [
            item
            for item in doc["history"]
            if isinstance(item, dict)
            and isinstance(item.get("message"), dict)
            and isinstance(item["message"].get("role"), str)
        ]
        turns: list[Turn] = []

        def add(uuid: str, role: str, blocks: list[Block]) -> None:
            kept = tuple(b for b in blocks if not is_blank(b.text))
            if kept:
                turns.append(
                    Turn(session_id, safe_id(uuid), len(turns), ts, role, self.id, kept, cwd=cwd or None)
                )

        for n, item in enumerate(readable):
            message = item["message"]
            blocks = [Block("text", text) for text in _texts(message.get("content"))]
            calls = message.get("toolCalls") if isinstance(message.get("toolCalls"), list) else []
            names: dict[str, str] = {}
            for call in filter(None, map(function_call, calls)):
                blocks.append(
                    Block("tool_use", call.arguments, tool_name=call.name, tool_use_id=call.call_id)
                )
                if call.call_id:
                    names[call.call_id] = call.name
            add(f"{session_id}-{n}", message["role"], blocks)
            states = [s for s in item.get("toolCallStates") or [] if isinstance(s, dict)]
            if states and all(s.get("status") in _FINISHED for s in states):
                results = [
                    Block(
                        "tool_result",
                        _output(state),
                        tool_name=names.get(clean_id(state.get("toolCallId")) or ""),
                        tool_use_id=clean_id(state.get("toolCallId")),
                    )
                    for state in states
                ]
                add(f"{session_id}-{n}-r", "tool", results)
        return turns

"""Converts OpenHands conversations (``$OPENHANDS_PERSISTENCE_DIR/conversations/<id>/``) into turns.

OpenHands 1.16 (the CLI on ``openhands-sdk`` 1.21) keeps one folder per conversation, named by its
UUID without dashes, holding ``base_state.json`` (``id``, ``workspace.working_dir``, the agent's
settings and statistics, re-written as the conversation runs) and ``events/``: one JSON document
per event, ``event-<NNNNN>-<event uuid>.json``, written once each and never changed::

    {"id": "9041…", "timestamp": "2026-12-04T22:00:54.415897", "source": "user", "kind": "MessageEvent",
     "llm_message": {"role": "user", "content": [{"type": "text", "text": "What did we …"}]}}
    {"id": "e852…", "kind": "ActionEvent", "source": "agent", "thought": [], "tool_name": "recall",
     "tool_call": {"id": "call_1", "name": "recall", "arguments": "{\\"query\\": …}"}, …}
    {"id": "8f54…", "kind": "ObservationEvent", "tool_name": "recall", "tool_call_id": "call_1",
     "observation": {"content": [{"type": "text", "text": "…"}], "is_error": false}}

The mapping:

* ``session_id`` is base_state.json's ``id`` (the dashed UUID), else the folder's name; ``cwd`` is
  ``workspace.working_dir``;
* events are read in the order of their ``NNNNN``; ``turn_uuid`` is the event's ``id`` (else
  ``<session_id>-<NNNNN>``), so a turn keeps its id however many events follow (an id written
  twice: :class:`~funes_core.RecordTurns`' rule);
* a ``MessageEvent`` gives a user or assistant turn (``reasoning_content`` and ``thinking_blocks``
  as thinking, ``content`` text parts as text); an ``ActionEvent`` an assistant turn (its
  ``thought`` and reasoning, then a ``tool_use`` of ``tool_call`` with ``arguments`` verbatim);
  an ``ObservationEvent``, ``UserRejectObservation`` or ``AgentErrorEvent`` a ``tool`` turn with
  one ``tool_result`` (the observation's text parts, the rejection reason, the error);
* the system prompt, state updates, condensations and everything else give no turn;
* ``ts`` is the event's ``timestamp``, which OpenHands writes in the machine's **local** time
  without an offset (``datetime.now().isoformat()``: ``Capabilities(local_time=True)``); an event
  without one gets the epoch, 1970-01-01.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from funes_core import Block, Converter, RecordTurns, SessionRef, Turn, clean_id, is_blank, parse_ts
from funes_openhands.agent import AGENT

__all__ = ["OpenhandsConverter"]

_STATE = "base_state.json"
_EVENT = re.compile(r"^event-(\d+)-.*\.json$")
_EPOCH = "1970-01-01T00:00:00Z"
_RESULTS = frozenset({"ObservationEvent", "UserRejectObservation", "AgentErrorEvent"})


def _document(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``, or ``{}`` for a file that is missing, torn or not an object."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _session_id(state_path: Path, state: dict[str, Any]) -> str:
    return clean_id(state.get("id")) or clean_id(state_path.parent.name) or "conversation"


def _cwd(state: dict[str, Any]) -> str | None:
    workspace = state.get("workspace")
    value = workspace.get("working_dir") if isinstance(workspace, dict) else None
    return value if isinstance(value, str) and value else None


def _texts(content: Any) -> list[str]:
    """The text of a string or of a list of ``{"type": "text", "text": …}`` parts."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return []


def _thinking(record: dict[str, Any]) -> list[Block]:
    blocks = [Block("thinking", t) for t in _texts(record.get("reasoning_content"))]
    for item in record.get("thinking_blocks") or []:
        if isinstance(item, dict) and isinstance(item.get("thinking"), str):
            blocks.append(Block("thinking", item["thinking"]))
    return blocks


def _turn_of(event: dict[str, Any]) -> tuple[str, list[Block]] | None:
    """The role and blocks of one event, or ``None`` for an event that is no turn."""
    kind = event.get("kind")
    if kind == "MessageEvent":
        message = event.get("llm_message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return None
        return message["role"], [
            *_thinking(message),
            *(Block("text", t) for t in _texts(message.get("content"))),
        ]
    if kind == "ActionEvent":
        blocks = [*_thinking(event), *(Block("text", t) for t in _texts(event.get("thought")))]
        call = event.get("tool_call")
        if isinstance(call, dict):
            arguments = call.get("arguments")
            name = call.get("name") if isinstance(call.get("name"), str) else event.get("tool_name")
            blocks.append(
                Block(
                    "tool_use",
                    arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False),
                    tool_name=name if isinstance(name, str) else None,
                    tool_use_id=clean_id(call.get("id")) or clean_id(event.get("tool_call_id")),
                )
            )
        return "assistant", blocks
    if kind in _RESULTS:
        observation = event.get("observation")
        if kind == "ObservationEvent" and isinstance(observation, dict):
            text = "\n".join(_texts(observation.get("content")))
        else:
            text = "\n".join(_texts(event.get("error") or event.get("rejection_reason")))
        name = event.get("tool_name") if isinstance(event.get("tool_name"), str) else None
        return "tool", [
            Block("tool_result", text, tool_name=name, tool_use_id=clean_id(event.get("tool_call_id")))
        ]
    return None


def _events(folder: Path) -> list[tuple[int, Path]]:
    """The conversation's event files in the order OpenHands wrote them."""
    try:
        names = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _EVENT.match(p.name))]
    except OSError:
        return []
    return sorted(names)


class OpenhandsConverter(Converter, agent=AGENT):
    """Finds OpenHands' conversations under ``conversations/`` and converts them (see above)."""

    contract_fixtures = "funes_openhands.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return [self.where("conversations", home)]

    def retention(self, home: Path) -> str:
        return "OpenHands keeps conversations until you delete them (nothing expires on its own)"

    def sessions_in(self, path: Path) -> list[SessionRef]:
        def identify(candidate: Path) -> str | None:
            if not (candidate.parent / "events").is_dir():
                return None
            return _session_id(candidate, _document(candidate))

        return self.refs_in(path, identify, _STATE)

    def convert(self, ref: SessionRef) -> list[Turn]:
        state = _document(ref.path)
        session_id = _session_id(ref.path, state)
        cwd = _cwd(state)
        turns = RecordTurns(session_id, self.id, cwd)
        for n, path in _events(ref.path.parent / "events"):
            event = _document(path)
            found = _turn_of(event)
            if found is not None:
                ts = parse_ts(event.get("timestamp"), naive="local") or _EPOCH
                blocks = (b for b in found[1] if not is_blank(b.text))
                turns.add(clean_id(event.get("id")) or f"{session_id}-{n}", ts, found[0], blocks)
        return turns.turns

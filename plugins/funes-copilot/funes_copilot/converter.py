"""Converts GitHub Copilot CLI sessions (``~/.copilot/session-state/<id>/events.jsonl``) into turns.

Copilot appends one JSON event per line, ``{"type", "data", "id", "timestamp", "parentId"}``,
and never rewrites one, so every event that carries conversation becomes one turn whose
``turn_uuid`` is the event's ``id``:

* ``user.message``: a user turn with ``data.content`` (what the user typed; Copilot's
  ``transformedContent``, with its injected date, is left out);
* ``assistant.message``: an assistant turn with ``data.reasoningText`` (thinking), ``data.content``
  (text) and one tool_use block per ``data.toolRequests`` entry;
* ``tool.execution_complete``: a ``tool`` turn with one tool_result block (``data.result.content``,
  or the error's message when the call failed), named after the request it answers.

The session's ``cwd`` comes from ``session.start`` (``data.context.cwd``). Everything else
(system prompt, hook runs, usage records, turn markers) is Copilot's bookkeeping and is left out.

Standard library only: the per-turn hook imports this module.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from funes_copilot.agent import AGENT
from funes_core import Block, Converter, SessionRef, Turn, compact_json, parse_ts

__all__ = ["EVENTS", "SESSION_ID", "CopilotConverter"]

EVENTS = "events.jsonl"
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _ts(value: object) -> str | None:
    return parse_ts(value) if isinstance(value, str) else None


def _events(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if (
            isinstance(event, dict)
            and isinstance(event.get("data"), dict)
            and isinstance(event.get("type"), str)
        ):
            found.append(event)
    return found


class CopilotConverter(Converter, agent=AGENT):
    """Finds the Copilot CLI's sessions and converts them (module docstring)."""

    contract_fixtures = "funes_copilot.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return [self.where("sessions", home)]

    def sessions_in(self, path: Path) -> list[SessionRef]:
        if path.is_file():
            files = [path] if path.name == EVENTS else []
        elif (path / EVENTS).is_file():
            files = [path / EVENTS]
        elif path.is_dir():
            files = sorted(p for p in path.glob(f"*/{EVENTS}") if p.is_file())
        else:
            return []
        refs = []
        for file in files:
            session_id = file.parent.name
            for event in _events(file)[:1]:
                if event["type"] == "session.start" and isinstance(event["data"].get("sessionId"), str):
                    session_id = event["data"]["sessionId"]
            if SESSION_ID.fullmatch(session_id):
                refs.append(SessionRef(session_id, file, file.stat().st_mtime))
        return refs

    def convert(self, ref: SessionRef) -> list[Turn]:
        turns: list[Turn] = []
        cwd: str | None = None
        names: dict[str, str] = {}
        for event in _events(ref.path):
            kind, data = event["type"], event["data"]
            if kind == "session.start":
                context = data.get("context") if isinstance(data.get("context"), dict) else {}
                cwd = context.get("cwd") if isinstance(context.get("cwd"), str) else cwd
                continue
            uuid, ts = event.get("id"), _ts(event.get("timestamp"))
            if not isinstance(uuid, str) or not uuid or ":" in uuid or ts is None:
                continue
            blocks: list[Block] = []
            if kind == "user.message" and isinstance(data.get("content"), str):
                role = "user"
                blocks.append(Block("text", data["content"]))
            elif kind == "assistant.message":
                role = "assistant"
                if isinstance(data.get("reasoningText"), str) and data["reasoningText"]:
                    blocks.append(Block("thinking", data["reasoningText"]))
                if isinstance(data.get("content"), str) and data["content"]:
                    blocks.append(Block("text", data["content"]))
                for request in data.get("toolRequests") or []:
                    if not isinstance(request, dict):
                        continue
                    call = request.get("toolCallId") if isinstance(request.get("toolCallId"), str) else None
                    name = request.get("name") if isinstance(request.get("name"), str) else None
                    if call and name:
                        names[call] = name
                    blocks.append(Block("tool_use", compact_json(request.get("arguments", {})), name, call))
            elif kind == "tool.execution_complete":
                role = "tool"
                call = data.get("toolCallId") if isinstance(data.get("toolCallId"), str) else None
                result = data.get("result") if isinstance(data.get("result"), dict) else {}
                error = data.get("error")
                if isinstance(result.get("content"), str):
                    text = result["content"]
                elif isinstance(error, dict) and isinstance(error.get("message"), str):
                    text = error["message"]
                elif isinstance(error, str):
                    text = error
                else:
                    text = compact_json(result)
                blocks.append(Block("tool_result", text, names.get(call or ""), call))
            else:
                continue
            parent = turns[-1].turn_uuid if turns else None
            turns.append(
                Turn(ref.session_id, uuid, len(turns), ts, role, self.id, tuple(blocks), cwd, parent)
            )
        return turns

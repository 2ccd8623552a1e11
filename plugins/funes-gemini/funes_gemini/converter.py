"""Converts Gemini CLI chats (``~/.gemini/tmp/<project>/chats/session-*.jsonl``) into funes turns.

A chat file is a **replay log** that Gemini appends to while it runs (its
``loadConversationRecord`` reads it the same way):

* the first line holds the metadata (``sessionId``, ``projectHash``, ``startTime``…);
* a line with an ``id`` is a message; when a line repeats an id, the later version replaces the
  earlier one in place (Gemini rewrites its answer once the tool calls it made have run);
* ``{"$set": {...}}`` updates the metadata, and a ``$set.messages`` array is a checkpoint that
  replaces every message so far;
* ``{"$rewindTo": id}`` drops that message and every later one.

Older Gemini versions wrote a whole ``session-*.json`` object with a ``messages`` array; it is
read the same way (it is one metadata record).

Mapping (README.md has all of it): a ``user`` message is a user turn, unless its text is
Gemini's own injected context (``<session_context>``, ``<hook_context>``) or it only carries
tool results (Gemini records them twice: in the user message and in the answer's ``toolCalls``;
funes keeps the latter); a ``gemini`` message gives an assistant turn for its thoughts and text
(none when both are empty) and one assistant turn per finished tool call (``turn_uuid`` =
the call's id), holding a tool_use and a tool_result block, so a turn never changes once emitted.
``info``/``error``/``warning`` messages are the CLI's own notices and are left out. The turns'
``cwd`` is the project's directory (``.project_root`` beside ``chats/``).

Standard library only: the per-turn hook imports this module.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from funes_core import Block, Converter, SessionRef, Turn, compact_json, parse_ts
from funes_gemini.agent import AGENT

__all__ = ["GeminiConverter", "replay"]

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]+$")
_INJECTED = ("<session_context>", "<hook_context>")
_FINISHED = frozenset({"success", "error", "cancelled"})


def replay(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The metadata and the live messages of a chat file, replayed as Gemini replays it.

    A line that is not a JSON object (a torn last line, a damaged record) is skipped alone.
    """
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}

    def add(items: object) -> None:
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                messages[item["id"]] = item

    stripped = text.strip()
    if stripped.startswith("{") and "\n{" not in stripped:
        # a legacy whole-object chat (pretty-printed JSON) or a one-line log
        try:
            record = json.loads(stripped)
        except ValueError:
            record = None
        if isinstance(record, dict) and isinstance(record.get("sessionId"), str):
            meta = {k: v for k, v in record.items() if k != "messages"}
            add(record.get("messages"))
            return meta, list(messages.values())
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if isinstance(record.get("$rewindTo"), str):
            keys = list(messages)
            cut = keys.index(record["$rewindTo"]) if record["$rewindTo"] in messages else 0
            for key in keys[cut:]:
                del messages[key]
        elif isinstance(record.get("id"), str):
            messages[record["id"]] = record
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):
                messages.clear()
                add(update["messages"])
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(record.get("sessionId"), str):
            meta.update({k: v for k, v in record.items() if k != "messages"})
            add(record.get("messages"))
    return meta, list(messages.values())


def _texts(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = [content] if isinstance(content, dict) else content if isinstance(content, list) else []
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought"):
            out.append(part["text"])
    return "".join(out)


def _only_tool_results(content: object) -> bool:
    parts = content if isinstance(content, list) else [content]
    return bool(parts) and all(isinstance(p, dict) and "functionResponse" in p for p in parts)


def _result_text(result: object) -> str:
    out = []
    for part in result if isinstance(result, list) else [result]:
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
            response = part["functionResponse"].get("response")
            if isinstance(response, dict) and isinstance(response.get("output"), str) and len(response) == 1:
                out.append(response["output"])
            else:
                out.append(compact_json(response))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif isinstance(part, str):
            out.append(part)
    return "\n".join(out)


def _ts(value: object) -> str | None:
    return parse_ts(value) if isinstance(value, str) else None


def _uuid(value: str) -> str:
    return value.replace(":", "-")


class GeminiConverter(Converter, agent=AGENT):
    """Finds the Gemini CLI's chats and converts them (module docstring)."""

    contract_fixtures = "funes_gemini.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        return [self.where("chats", home)]

    def sessions_in(self, path: Path) -> list[SessionRef]:
        if path.is_file():
            files = [path]
        elif path.is_dir():
            files = sorted(
                p for p in path.rglob("session-*.json*") if p.is_file() and p.suffix in (".json", ".jsonl")
            )
            files += sorted(p for p in path.rglob("chats/*/*.jsonl") if p.is_file() and p not in files)
        else:
            return []
        refs = []
        for file in files:
            if file.name.endswith(".funes.jsonl"):
                continue
            try:
                head = file.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            meta, messages = replay(head)
            session_id = meta.get("sessionId")
            if isinstance(session_id, str) and _SAFE_ID.fullmatch(session_id) and messages:
                refs.append(SessionRef(session_id, file, file.stat().st_mtime))
        return refs

    def convert(self, ref: SessionRef) -> list[Turn]:
        try:
            text = ref.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        meta, messages = replay(text)
        if meta.get("sessionId") != ref.session_id:
            return []
        root = ref.path.parent.parent / ".project_root"
        if ref.path.parent.name != "chats":  # a sub-agent's chat: chats/<parent>/<id>.jsonl
            root = ref.path.parent.parent.parent / ".project_root"
        try:
            cwd: str | None = root.read_text(encoding="utf-8").strip() or None
        except OSError:
            cwd = None
        turns: list[Turn] = []

        def emit(uuid: str, ts: str, role: str, blocks: list[Block]) -> None:
            parent = turns[-1].turn_uuid if turns else None
            turns.append(
                Turn(ref.session_id, _uuid(uuid), len(turns), ts, role, self.id, tuple(blocks), cwd, parent)
            )

        for message in messages:
            ts = _ts(message.get("timestamp"))
            if ts is None:
                continue
            kind, content = message.get("type"), message.get("content")
            if kind == "user":
                body = _texts(content)
                if not body.strip() or body.lstrip().startswith(_INJECTED) or _only_tool_results(content):
                    continue
                emit(message["id"], ts, "user", [Block("text", body)])
            elif kind == "gemini":
                blocks = []
                for thought in message.get("thoughts") or []:
                    if isinstance(thought, dict):
                        said = "\n".join(
                            x
                            for x in (thought.get("subject"), thought.get("description"))
                            if isinstance(x, str) and x
                        )
                        if said:
                            blocks.append(Block("thinking", said))
                body = _texts(content)
                if body:
                    blocks.append(Block("text", body))
                if blocks:
                    emit(message["id"], ts, "assistant", blocks)
                for call in message.get("toolCalls") or []:
                    if not isinstance(call, dict) or not isinstance(call.get("id"), str):
                        continue
                    if call.get("status") not in _FINISHED:
                        continue
                    name = call.get("name") if isinstance(call.get("name"), str) else None
                    args = compact_json(call.get("args", {}))
                    result = _result_text(call.get("result"))
                    call_ts = _ts(call.get("timestamp")) or ts
                    emit(
                        call["id"],
                        call_ts,
                        "assistant",
                        [
                            Block("tool_use", args, name, call["id"]),
                            Block("tool_result", result, name, call["id"]),
                        ],
                    )
        return turns

"""Converts Claude.ai's data export (``conversations.json``) into turns.

The export is one JSON array, a conversation per item, each with its messages in order::

    {"uuid": "0e7b6a5c-…", "name": "…", "created_at": "2026-11-30T09:14:01.118204Z", …,
     "chat_messages": [
       {"uuid": "1a2b…", "sender": "human", "created_at": "2026-11-30T09:14:03.512345Z",
        "text": "Why …?", "content": [{"type": "text", "text": "Why …?", "start_timestamp": …}],
        "attachments": [{"file_name": "tokenizer.py", "extracted_content": "def split…"}],
        "files": [{"file_name": "tokenizer.py"}], "parent_message_uuid": "0000…"},
       {"uuid": "…", "sender": "assistant", "content": [
          {"type": "thinking", "thinking": "…"}, {"type": "text", "text": "…"},
          {"type": "tool_use", "name": "web_search", "input": {"query": "…"}},
          {"type": "tool_result", "name": "web_search", "content": [{"type": "knowledge",
           "title": "…", "url": "…", "text": "…"}], "is_error": false}]}]}

The mapping:

* ``session_id`` is the conversation's ``uuid``; one turn per message with something to show:
  ``turn_uuid`` is the message's ``uuid`` (Anthropic's own, so a later export gives the same
  ids), ``seq`` counts the turns kept, ``parent_uuid`` is ``parent_message_uuid`` when it names
  a message of the conversation;
* ``role``: ``human`` is ``user``, ``assistant`` stays; ``ts`` is the message's ``created_at``;
* blocks, in the order of ``content``: ``text`` gives a text block, ``thinking`` a thinking
  block, ``tool_use`` a tool_use (its ``input`` as compact JSON, named by ``name``),
  ``tool_result`` a tool_result per item of its ``content`` (a search result's ``title``,
  ``url`` and ``text`` on three lines). Exports before ``content`` existed have only ``text``:
  then it gives the text block. Each attachment's ``extracted_content`` (a pasted or uploaded
  text file) is a text block after the message's own; a ``files`` entry (an image, a PDF) has no
  text in the export and gives none;
* a conversation or message that is not an object is skipped; a file cut short (an export still
  being unpacked) gives the conversations complete before the cut.

Standard library and the core's helpers only.
"""

from __future__ import annotations

import functools
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from funes_claudeai.agent import AGENT, EXPORT_NAME
from funes_core import (
    Block,
    Converter,
    SessionRef,
    Turn,
    clean_id,
    compact_json,
    export_problem,
    is_blank,
    parse_ts,
    read_json_array,
    safe_id,
)

__all__ = ["ClaudeaiConverter", "conversations"]

_EPOCH = "1970-01-01T00:00:00Z"
_ROLES = {"human": "user", "assistant": "assistant"}


def conversations(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """The readable Claude.ai conversations of an export file, ``(session_id, conversation)``, in order."""
    try:
        stat = path.stat()
    except OSError:
        return []
    return _parsed(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=2)
def _parsed(path: str, mtime_ns: int, size: int) -> list[tuple[str, dict[str, Any]]]:
    # Parsed once per version of the file: listing and converting its sessions share it.
    # A torn or wrong file is said once per version, in one line, on stderr (never stdout: a
    # converter's stdout may be what `funes integrations convert` pipes on).
    out: list[tuple[str, dict[str, Any]]] = []
    read = read_json_array(Path(path))
    for _, item in read:
        session_id = clean_id(item.get("uuid"))
        if session_id and isinstance(item.get("chat_messages"), list):
            out.append((safe_id(session_id), item))
    problem = export_problem(read, len(out), "Claude.ai conversations")
    if problem:
        print(f"funes: claudeai: {path}: {problem}", file=sys.stderr)
    return out


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and not is_blank(value) else None


def _result_texts(part: dict[str, Any]) -> list[str]:
    items = part.get("content")
    if isinstance(items, str):
        return [items] if _text(items) else []
    texts: list[str] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        lines = [item[k] for k in ("title", "url", "text") if _text(item.get(k))]
        if lines:
            texts.append("\n".join(lines))
    return texts


def _part_blocks(part: Any) -> list[Block]:
    if not isinstance(part, dict):
        return []
    kind = part.get("type")
    name = part.get("name") if isinstance(part.get("name"), str) else None
    call_id = clean_id(part.get("id"))
    if kind == "text" and _text(part.get("text")):
        return [Block(block_type="text", text=part["text"])]
    if kind == "thinking" and _text(part.get("thinking")):
        return [Block(block_type="thinking", text=part["thinking"])]
    if kind == "tool_use" and "input" in part:
        return [
            Block(
                block_type="tool_use", text=compact_json(part["input"]), tool_name=name, tool_use_id=call_id
            )
        ]
    if kind == "tool_result":
        use_id = clean_id(part.get("tool_use_id"))
        return [
            Block(block_type="tool_result", text=t, tool_name=name, tool_use_id=use_id)
            for t in _result_texts(part)
        ]
    return []


def _blocks(message: dict[str, Any]) -> list[Block]:
    content = message.get("content")
    blocks: list[Block] = []
    if isinstance(content, list) and content:
        for part in content:
            blocks.extend(_part_blocks(part))
    elif _text(message.get("text")):
        blocks.append(Block(block_type="text", text=message["text"]))
    attachments = message.get("attachments")
    for attachment in attachments if isinstance(attachments, list) else []:
        if isinstance(attachment, dict) and _text(attachment.get("extracted_content")):
            blocks.append(Block(block_type="text", text=attachment["extracted_content"]))
    return blocks


def export_files(path: Path) -> list[Path]:
    """``path`` itself when it is a file, else every ``conversations.json`` under it, sorted."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob(EXPORT_NAME) if p.is_file()) if path.is_dir() else []


class ClaudeaiConverter(Converter, agent=AGENT):
    """Converts the conversations of a Claude.ai data export registered with ``--path`` (module docstring)."""

    contract_fixtures = "funes_claudeai.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        # The export is wherever the user unpacked it: registered with --path.
        return []

    def retention(self, home: Path) -> str:
        return "Claude.ai keeps chats until you delete them; an export is a snapshot: register the newest one"

    def sessions_in(self, path: Path) -> list[SessionRef]:
        refs: list[SessionRef] = []
        for candidate in export_files(path):
            for session_id, conversation in conversations(candidate):
                updated = parse_ts(conversation.get("updated_at"))
                when = _epoch_seconds(updated) if updated else None
                refs.append(
                    SessionRef(session_id, candidate, when if when is not None else _mtime(candidate))
                )
        return refs

    def convert(self, ref: SessionRef) -> list[Turn]:
        found = next((c for s, c in conversations(ref.path) if s == ref.session_id), None)
        if found is None:
            return []
        messages = [m for m in found["chat_messages"] if isinstance(m, dict) and clean_id(m.get("uuid"))]
        known = {clean_id(m.get("uuid")) for m in messages}
        fallback = parse_ts(found.get("created_at")) or _EPOCH
        turns: list[Turn] = []
        for message in messages:
            blocks = _blocks(message)
            if not blocks:
                continue
            parent = clean_id(message.get("parent_message_uuid"))
            sender = message.get("sender")
            role = _ROLES.get(sender, sender) if isinstance(sender, str) and sender else "unknown"
            turns.append(
                Turn(
                    session_id=ref.session_id,
                    turn_uuid=safe_id(str(message["uuid"])),
                    seq=len(turns),
                    ts=parse_ts(message.get("created_at")) or (turns[-1].ts if turns else fallback),
                    role=role,
                    harness=self.id,
                    blocks=tuple(blocks),
                    parent_uuid=safe_id(parent) if parent in known and parent else None,
                )
            )
        return turns


def _epoch_seconds(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0

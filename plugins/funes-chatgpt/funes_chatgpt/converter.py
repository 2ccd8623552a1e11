"""Converts ChatGPT's data export (``conversations.json``) into turns.

The export is one JSON array, a conversation per item, newest first. A conversation's messages
are a tree, not a list: ``mapping`` maps each node id to ``{"id", "message", "parent",
"children"}``, a regenerated answer or an edited question being a second child of the same
parent, and ``current_node`` names the leaf of the branch the ChatGPT UI shows::

    {"id": "6750b3e1-…", "title": "…", "create_time": 1764770582.77, "update_time": …,
     "current_node": "d3e4…",
     "mapping": {"client-created-root": {"id": "client-created-root", "message": null,
                                         "parent": null, "children": ["aaa1…"]},
                 "aaa2…": {"id": "aaa2…", "parent": "aaa1…", "children": ["3f1e…", "8c7d…"],
                           "message": {"id": "aaa2…", "author": {"role": "user", "name": null},
                                       "create_time": 1764770583.27,
                                       "content": {"content_type": "text", "parts": ["Why …?"]},
                                       "metadata": {}, "recipient": "all"}}, …}}

The mapping:

* ``session_id`` is the conversation's ``id`` (``conversation_id`` in older exports);
* the turns are the messages on the path from the root to ``current_node``, in order: what the
  user saw. Answers on other branches (regenerated, or before an edit) are left out;
* one turn per message that has something to show: ``turn_uuid`` is the message ``id``
  (ChatGPT's own, so an export made later gives the same ids), ``seq`` counts the turns kept,
  ``parent_uuid`` the previous turn's id, ``role`` the author's ``role``;
* blocks by ``content_type``: ``text`` and ``multimodal_text`` give a text block per string part
  (an image part has no text and gives none); ``code`` (a call of ChatGPT's python or another
  tool, named by ``recipient``) a ``tool_use`` with the code verbatim; a ``tool`` author's
  ``execution_output`` or text a ``tool_result`` named by the author's ``name`` and linked to
  the call it answers; ``thoughts`` a ``thinking`` block per thought. Messages the UI hides
  (``metadata.is_visually_hidden_from_conversation``: the empty system prompt, custom
  instructions) and the "Thought for 7 seconds" recaps give nothing;
* ``ts`` is the message's ``create_time`` (epoch seconds, so UTC), else the conversation's;
* a conversation that is not an object, or a node that is not readable, is skipped; a file cut
  short (an export still being unpacked) gives the conversations complete before the cut.

Standard library and the core's helpers only.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from funes_chatgpt.agent import AGENT, EXPORT_NAME
from funes_core import (
    Block,
    Converter,
    SessionRef,
    Turn,
    clean_id,
    export_problem,
    is_blank,
    parse_ts,
    read_json_array,
    safe_id,
)

__all__ = ["ChatgptConverter", "conversations"]

_EPOCH = "1970-01-01T00:00:00Z"
#: Content a turn never shows: the "Thought for N seconds" line, the custom-instructions message.
_SILENT = frozenset({"reasoning_recap", "user_editable_context", "model_editable_context"})


def conversations(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """The readable ChatGPT conversations of an export file, ``(session_id, conversation)``, in file order."""
    try:
        stat = path.stat()
    except OSError:
        return []
    return _conversations(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=2)
def _conversations(path: str, mtime_ns: int, size: int) -> list[tuple[str, dict[str, Any]]]:
    # One parse per file version: sessions_in and every convert of a 100 MB export share it.
    # A torn or wrong file is said once per version, in one line, on stderr (never stdout: a
    # converter's stdout may be what `funes integrations convert` pipes on).
    found: list[tuple[str, dict[str, Any]]] = []
    read = read_json_array(Path(path))
    for _, item in read:
        session_id = clean_id(item.get("id")) or clean_id(item.get("conversation_id"))
        if session_id and isinstance(item.get("mapping"), dict):
            found.append((safe_id(session_id), item))
    problem = export_problem(read, len(found), "ChatGPT conversations")
    if problem:
        print(f"funes: chatgpt: {path}: {problem}", file=sys.stderr)
    return found


def _path_to(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages from the root to ``current_node`` (the branch shown), in order."""
    mapping: dict[str, Any] = conversation["mapping"]
    leaf = conversation.get("current_node")
    if not isinstance(leaf, str) or leaf not in mapping:
        return []
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = leaf
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            break
        message = node.get("message")
        if isinstance(message, dict):
            chain.append(message)
        node_id = node.get("parent")
    chain.reverse()
    return chain


def _strings(parts: Any) -> Iterator[str]:
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, str) and not is_blank(part):
                yield part


def _blocks(message: dict[str, Any], call: str | None) -> list[Block]:
    """The message's blocks; ``call`` is the id of the tool call a ``tool`` message answers."""
    content = message.get("content")
    if not isinstance(content, dict):
        return []
    kind = content.get("content_type")
    author = message.get("author") if isinstance(message.get("author"), dict) else {}
    name = author.get("name") if isinstance(author.get("name"), str) else None
    if author.get("role") == "tool":
        texts = list(_strings(content.get("parts")))
        if isinstance(content.get("text"), str) and not is_blank(content["text"]):
            texts.append(content["text"])
        return [Block(block_type="tool_result", text=t, tool_name=name, tool_use_id=call) for t in texts]
    if kind in ("text", "multimodal_text"):
        return [Block(block_type="text", text=t) for t in _strings(content.get("parts"))]
    if kind == "code" and isinstance(content.get("text"), str) and not is_blank(content["text"]):
        recipient = message.get("recipient")
        tool = recipient if isinstance(recipient, str) and recipient != "all" else None
        call_id = clean_id(message.get("id"))
        return [Block(block_type="tool_use", text=content["text"], tool_name=tool, tool_use_id=call_id)]
    if kind == "thoughts" and isinstance(content.get("thoughts"), list):
        return [
            Block(block_type="thinking", text=t["content"])
            for t in content["thoughts"]
            if isinstance(t, dict) and isinstance(t.get("content"), str) and not is_blank(t["content"])
        ]
    return []


def _hidden(message: dict[str, Any]) -> bool:
    metadata = message.get("metadata")
    content = message.get("content")
    kind = content.get("content_type") if isinstance(content, dict) else None
    return kind in _SILENT or (
        isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation") is True
    )


def _last_activity(conversation: dict[str, Any], path: Path) -> float:
    value = conversation.get("update_time")
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def export_files(path: Path) -> list[Path]:
    """``path`` itself when it is a file, else every ``conversations.json`` under it."""
    if path.is_file():
        return [path]
    found: list[Path] = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        if EXPORT_NAME in files:
            found.append(Path(root) / EXPORT_NAME)
    return sorted(found)


class ChatgptConverter(Converter, agent=AGENT):
    """Converts the conversations of a ChatGPT data export registered with ``--path`` (module docstring)."""

    contract_fixtures = "funes_chatgpt.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        # The export is wherever the user unpacked it: registered with --path.
        return []

    def retention(self, home: Path) -> str:
        return (
            "ChatGPT keeps chats until you delete them (a Temporary Chat is never exported); "
            "an export is a snapshot: register the newest one"
        )

    def sessions_in(self, path: Path) -> list[SessionRef]:
        refs: list[SessionRef] = []
        for candidate in export_files(path):
            for session_id, conversation in conversations(candidate):
                refs.append(SessionRef(session_id, candidate, _last_activity(conversation, candidate)))
        return refs

    def convert(self, ref: SessionRef) -> list[Turn]:
        found = next((c for s, c in conversations(ref.path) if s == ref.session_id), None)
        if found is None:
            return []
        fallback = parse_ts(found.get("create_time"), epoch="s") or _EPOCH
        turns: list[Turn] = []
        call: str | None = None  # the last tool call on the path: what a tool message answers
        for message in _path_to(found):
            turn_uuid = clean_id(message.get("id"))
            if turn_uuid is None:
                continue
            author = message.get("author")
            role = author.get("role") if isinstance(author, dict) else None
            blocks = [] if _hidden(message) else _blocks(message, call if role == "tool" else None)
            content = message.get("content")
            if isinstance(content, dict) and content.get("content_type") == "code":
                call = turn_uuid
            elif role != "tool":
                call = None
            if not blocks:
                continue
            ts = parse_ts(message.get("create_time"), epoch="s") or (turns[-1].ts if turns else fallback)
            turns.append(
                Turn(
                    session_id=ref.session_id,
                    turn_uuid=safe_id(turn_uuid),
                    seq=len(turns),
                    ts=ts,
                    role=role if isinstance(role, str) and role else "unknown",
                    harness=self.id,
                    blocks=tuple(blocks),
                    parent_uuid=turns[-1].turn_uuid if turns else None,
                )
            )
        return turns

"""Converts Cursor's chat store (``globalStorage/state.vscdb``, SQLite) into turns, read-only.

The store is a key-value table, ``cursorDiskKV(key TEXT UNIQUE, value BLOB)``, each value JSON.
A chat (a "composer": the Chat, Composer or Agent panel) is one ``composerData:<composerId>`` row,
its messages ("bubbles") one ``bubbleId:<composerId>:<bubbleId>`` row each::

    composerData:5d1e…  {"_v": 3, "composerId": "5d1e…", "name": "…", "createdAt": 1764770582771,
                          "lastUpdatedAt": 1764770650120,
                          "fullConversationHeadersOnly": [{"bubbleId": "b1…", "type": 1},
                                                          {"bubbleId": "b2…", "type": 2}, …]}
    bubbleId:5d1e…:b2…  {"_v": 2, "type": 2, "bubbleId": "b2…", "text": "…",
                          "thinking": {"text": "…"}, "createdAt": "2026-12-03T14:03:05.120Z",
                          "toolFormerData": {"name": "read_file", "toolCallId": "toolu_…",
                                             "rawArgs": "{\\"target_file\\": …}", "result": "…"}}

Older chats keep their bubbles inline, in ``conversation`` instead of the headers. The mapping:

* ``session_id`` is the ``composerId``; the turns are its bubbles in header order, one per bubble
  with something to show: ``turn_uuid`` is the ``bubbleId`` (Cursor's own), ``seq`` counts the
  turns kept, ``parent_uuid`` is the previous turn's id;
* ``role``: ``type`` 1 is ``user``, 2 is ``assistant``;
* blocks: ``thinking.text`` a thinking block, ``text`` a text block, ``toolFormerData`` a
  ``tool_use`` (its ``rawArgs`` verbatim, named by ``name``, id ``toolCallId``) and, once it has
  one, a ``tool_result`` (its ``result``) linked to it;
* ``ts``: the bubble's ``createdAt`` (an ISO time with ``Z``, or epoch ms), else its
  ``timingInfo.clientStartTime`` (epoch ms), else the previous turn's, else the chat's
  ``createdAt``. Many bubbles carry no time at all: they get the one before them;
* a bubble or chat whose value is not JSON (a row being written), a header naming a bubble not
  stored yet, is skipped; a file that is not SQLite, or has no ``cursorDiskKV``, holds no chats.

The store is opened read-only (``mode=ro``), never locked for writing, so a running Cursor is
never disturbed. Standard library and the core's helpers only.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from funes_core import Block, Converter, SessionRef, Turn, clean_id, is_blank, parse_ts, safe_id
from funes_cursor.agent import AGENT, STORE_NAME

__all__ = ["CursorConverter", "chats"]

_EPOCH = "1970-01-01T00:00:00Z"
_ROLES = {1: "user", 2: "assistant"}
_TABLE = "cursorDiskKV"


@contextmanager
def _store(path: Path) -> Iterator[sqlite3.Connection]:
    """The database at ``path``, read-only: ``mode=ro`` writes nothing and takes no write lock."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, timeout=5)) as db:
        yield db


def _json(value: Any) -> dict[str, Any] | None:
    """A stored value as a JSON object, or ``None`` (torn, not JSON, not an object)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        return None
    try:
        item = json.loads(value)
    except ValueError:
        return None
    return item if isinstance(item, dict) else None


def _problem(path: Path, exc: sqlite3.Error) -> str:
    if isinstance(exc, sqlite3.DatabaseError) and "not a database" in str(exc):
        return "not a SQLite database (Cursor's chats are in User/globalStorage/state.vscdb); nothing read"
    return f"cannot be read ({exc}); nothing read"


def chats(path: Path, *, named: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """The readable chats of a store, ``(composerId, composerData)``, in key order.

    ``named`` is whether the user named this file (not found in a folder): then a file that holds
    no Cursor chats is said in one line on stderr, as a file that is not SQLite always is.
    """
    found: list[tuple[str, dict[str, Any]]] = []
    try:
        with _store(path) as db:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if _TABLE not in tables:
                if named:
                    _say(path, "has no cursorDiskKV table: not Cursor's global chat store; nothing read")
                return []
            rows = db.execute(
                f"SELECT key, value FROM {_TABLE} WHERE key >= 'composerData:' AND key < 'composerData;' "
                "ORDER BY key"
            ).fetchall()
    except sqlite3.Error as exc:
        _say(path, _problem(path, exc))
        return []
    for key, value in rows:
        data = _json(value)
        composer_id = clean_id(str(key).removeprefix("composerData:"))
        if (
            data is not None
            and composer_id
            and (_listed(data, "fullConversationHeadersOnly") or _listed(data, "conversation"))
        ):
            found.append((composer_id, data))
    if named and not found:
        _say(path, "holds no Cursor chats (no readable composerData row); nothing read")
    return found


def _listed(data: dict[str, Any], key: str) -> bool:
    """Whether the chat has any bubble under ``key``: a "New chat" never written to is no session."""
    value = data.get(key)
    return isinstance(value, list) and bool(value)


def _say(path: Path, problem: str) -> None:
    # stderr, never stdout: `funes integrations convert` may pipe a converter's stdout on.
    print(f"funes: cursor: {path}: {problem}", file=sys.stderr)


def _bubbles(path: Path, composer_id: str, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The chat's bubbles in order: from the headers (read from the store) or the inline list."""
    headers = data.get("fullConversationHeadersOnly")
    if not isinstance(headers, list):
        inline = data.get("conversation")
        return [b for b in inline if isinstance(b, dict)] if isinstance(inline, list) else []
    prefix = f"bubbleId:{composer_id}:"
    try:
        with _store(path) as db:
            rows = db.execute(
                f"SELECT key, value FROM {_TABLE} WHERE key >= ? AND key < ?",
                (prefix, prefix[:-1] + ";"),
            ).fetchall()
    except sqlite3.Error:
        return []
    stored = {str(key)[len(prefix) :]: value for key, value in rows}
    out: list[dict[str, Any]] = []
    for header in headers:
        bubble_id = clean_id(header.get("bubbleId")) if isinstance(header, dict) else None
        bubble = _json(stored.get(bubble_id)) if bubble_id else None
        if bubble is not None:
            out.append({"bubbleId": bubble_id, "type": header.get("type"), **bubble})
    return out


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and not is_blank(value) else None


def _blocks(bubble: dict[str, Any]) -> list[Block]:
    blocks: list[Block] = []
    thinking = bubble.get("thinking")
    if isinstance(thinking, dict) and _text(thinking.get("text")):
        blocks.append(Block(block_type="thinking", text=thinking["text"]))
    if _text(bubble.get("text")):
        blocks.append(Block(block_type="text", text=bubble["text"]))
    tool = bubble.get("toolFormerData")
    if isinstance(tool, dict):
        name = tool.get("name") if isinstance(tool.get("name"), str) else None
        call_id = clean_id(tool.get("toolCallId"))
        args = tool.get("rawArgs")
        if _text(args):
            blocks.append(Block(block_type="tool_use", text=args, tool_name=name, tool_use_id=call_id))
        result = tool.get("result")
        if _text(result):
            blocks.append(Block(block_type="tool_result", text=result, tool_name=name, tool_use_id=call_id))
    return blocks


def _ts(bubble: dict[str, Any]) -> str | None:
    created = bubble.get("createdAt")
    ts = parse_ts(created, epoch="ms") if isinstance(created, int | float) else parse_ts(created)
    if ts:
        return ts
    timing = bubble.get("timingInfo")
    return parse_ts(timing.get("clientStartTime"), epoch="ms") if isinstance(timing, dict) else None


def store_files(path: Path) -> list[Path]:
    """``path`` itself when it is a file, else every ``state.vscdb`` under it, sorted."""
    if path.is_file():
        return [path]
    found: list[Path] = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        if STORE_NAME in files:
            found.append(Path(root) / STORE_NAME)
    return sorted(found)


def _last_activity(data: dict[str, Any], path: Path) -> float:
    for key in ("lastUpdatedAt", "createdAt"):
        value = data.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return float(value) / 1000
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


class CursorConverter(Converter, agent=AGENT):
    """Converts the chats of a Cursor chat store registered with ``--path`` (module docstring)."""

    contract_fixtures = "funes_cursor.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        # The store is registered with --path (its place differs per platform: see the README).
        return []

    def retention(self, home: Path) -> str:
        return "Cursor keeps chats until you delete them in its chat history; a reinstall may drop them"

    def sessions_in(self, path: Path) -> list[SessionRef]:
        named = path.is_file()
        return [
            SessionRef(safe_id(composer_id), candidate, _last_activity(data, candidate))
            for candidate in store_files(path)
            for composer_id, data in chats(candidate, named=named)
        ]

    def convert(self, ref: SessionRef) -> list[Turn]:
        # Composer ids are UUIDs, which safe_id keeps as they are; the scan is for any other id.
        found = next(((c, d) for c, d in chats(ref.path) if safe_id(c) == ref.session_id), None)
        if found is None:
            return []
        composer_id, data = found
        created = data.get("createdAt")
        fallback = parse_ts(created, epoch="ms") if isinstance(created, int | float) else None
        turns: list[Turn] = []
        for bubble in _bubbles(ref.path, composer_id, data):
            bubble_id = clean_id(bubble.get("bubbleId"))
            blocks = _blocks(bubble)
            if bubble_id is None or not blocks:
                continue
            kind = bubble.get("type")
            turns.append(
                Turn(
                    session_id=ref.session_id,
                    turn_uuid=safe_id(bubble_id),
                    seq=len(turns),
                    ts=_ts(bubble) or (turns[-1].ts if turns else fallback or _EPOCH),
                    role=_ROLES.get(kind, "unknown") if isinstance(kind, int) else "unknown",
                    harness=self.id,
                    blocks=tuple(blocks),
                    parent_uuid=turns[-1].turn_uuid if turns else None,
                )
            )
        return turns

"""Converts Codex rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl``) into turns.

A rollout is a JSON-lines file of envelopes ``{"timestamp", "type", "payload"}``. The mapping is
the one every funes Codex converter uses (behaviour reference §8.5), so a session converts to the
same turns whoever converts it:

* ``session_id`` is the ``payload.id`` of the first ``session_meta`` envelope, else the file stem;
  ``cwd`` comes from that ``session_meta``.
* Only ``response_item`` envelopes produce turns, one turn per item; ``seq`` counts the turns
  kept, in file order, and ``turn_uuid`` is ``<session_id>-<seq>``. Items never move within a
  rollout (Codex only appends), so a grown rollout re-emits its earlier turns unchanged, and a
  corrupt or torn line, which is skipped, shifts nobody.
* ``ts`` is the envelope's ``timestamp`` (the previous one when it is missing or unreadable).
* ``message`` → a turn with the item's ``role`` and one text block per ``input_text`` /
  ``output_text`` part (or the string ``content``); ``reasoning`` → an assistant turn with the
  ``summary_text`` parts joined by newlines as one thinking block (``encrypted_content`` is
  opaque and ignored); ``function_call`` / ``custom_tool_call`` → an assistant tool_use with the
  ``arguments`` / ``input`` verbatim (``{}`` when absent or empty); ``function_call_output`` /
  ``custom_tool_call_output`` → a ``tool`` turn whose tool_result is the ``output`` (a string as
  is, null as empty, anything else as compact JSON), named after the call with the same
  ``call_id``. Everything else (events, ``turn_context``, ``web_search_call``, …) is not a turn.

Three decisions go beyond the letter of §8.5, each documented in the README:

* **``developer`` and ``system`` messages are skipped.** Codex writes them itself at the start of
  every session (sandbox and approval policy, the skills list, collaboration mode): nobody in the
  conversation said them, they repeat nearly verbatim in every rollout and would crowd recall
  with boilerplate. This matches the Claude Code mapping, which keeps no injected attachment.
  User-role context Codex injects (``<environment_context>``) is kept, because telling it apart
  would mean guessing from its text.
* **MCP tool names keep their namespace.** Codex 0.171 splits an MCP tool into ``namespace``
  (``mcp__funes``) and ``name`` (``recall``); the tool is named ``mcp__funes__recall``, as
  Codex's own hooks name it, so recall tells two servers' ``search`` tools apart.
* **Raw reasoning is kept.** A ``reasoning`` item whose ``content`` holds ``reasoning_text``
  parts (open-weight models) yields a second thinking block after the summary.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes_codex.agent import CODEX
from funes_core import Block, Converter, SessionRef, Turn, clean_id, compact_json, is_blank, parse_ts, safe_id

__all__ = ["SKIPPED_ROLES", "CodexConverter"]

#: Message roles that are Codex's own instructions, not part of the conversation (see above).
SKIPPED_ROLES = frozenset({"developer", "system"})

_EPOCH = "1970-01-01T00:00:00Z"
_TEXT_PARTS = frozenset({"input_text", "output_text"})
_CALLS = {"function_call": "arguments", "custom_tool_call": "input"}
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


def _envelope(raw: bytes) -> dict[str, Any] | None:
    """One rollout line as an envelope (a JSON object with a string ``type``), else ``None``."""
    if not raw.strip():
        return None
    try:
        record = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    if isinstance(record, dict) and isinstance(record.get("type"), str):
        return record
    return None


def _envelopes(path: Path) -> list[dict[str, Any]]:
    """Every readable envelope of a rollout, in order; unreadable lines are skipped, never fatal."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    return [env for env in map(_envelope, data.split(b"\n")) if env is not None]


def _payload(env: dict[str, Any]) -> dict[str, Any] | None:
    payload = env.get("payload")
    return payload if isinstance(payload, dict) else None


def _identify(path: Path) -> str | None:
    """The session id of a rollout (see :class:`CodexConverter`), ``None`` when it is not one.

    Reads only as far as the first ``session_meta`` (the first line of every rollout), so
    discovering thousands of sessions stays cheap.
    """
    turns_seen = False
    try:
        with path.open("rb") as fh:
            for raw in fh:
                env = _envelope(raw)
                if env is None or _payload(env) is None:
                    continue
                if env["type"] == "session_meta":
                    found = clean_id(env["payload"].get("id"))
                    if found:
                        return found
                elif env["type"] == "response_item":
                    turns_seen = True
    except OSError:
        return None
    return clean_id(path.name.removesuffix(".jsonl")) if turns_seen else None


def _tool_name(payload: dict[str, Any]) -> str | None:
    name = payload.get("name")
    if not isinstance(name, str) or not name:
        return None
    namespace = payload.get("namespace")
    if isinstance(namespace, str) and namespace:
        return f"{namespace}__{name}"
    return name


def _call_id(payload: dict[str, Any]) -> str | None:
    value = payload.get("call_id")
    return value if isinstance(value, str) and value else None


class CodexConverter(Converter, agent=CODEX):
    """Finds Codex rollouts under ``$CODEX_HOME/sessions`` and converts them (module docstring)."""

    contract_fixtures = "funes_codex.contract_fixtures"

    def session_roots(self, home: Path) -> list[Path]:
        # `codex archive ID` moves a rollout, same name, into archived_sessions/: still the user's history.
        return [self.where("sessions", home), self.where("archived", home)]

    def sessions_in(self, path: Path) -> list[SessionRef]:
        # A file named explicitly (the hook's transcript_path) is read whatever its name.
        return self.refs_in(path, _identify, "rollout-*.jsonl")

    def convert(self, ref: SessionRef) -> list[Turn]:
        envelopes = _envelopes(ref.path)
        metas = [p for e in envelopes if e["type"] == "session_meta" and (p := _payload(e)) is not None]
        meta = metas[0] if metas else {}
        named = next((found for m in metas if (found := clean_id(m.get("id")))), None)
        session_id = named or clean_id(ref.path.name.removesuffix(".jsonl")) or "session"
        cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) and meta.get("cwd") else None
        last_ts = parse_ts(meta.get("timestamp"), verbatim_utc=True) or _EPOCH
        calls: dict[str, str] = {}
        turns: list[Turn] = []
        for env in envelopes:
            ts = parse_ts(env.get("timestamp"), verbatim_utc=True) or last_ts
            last_ts = ts
            payload = _payload(env)
            if env["type"] != "response_item" or payload is None:
                continue
            item = self._item(payload, calls)
            if item is None:
                continue
            role, blocks = item
            seq = len(turns)
            turns.append(
                Turn(
                    session_id=session_id,
                    turn_uuid=safe_id(f"{session_id}-{seq}"),
                    seq=seq,
                    ts=ts,
                    role=role,
                    harness=self.id,
                    blocks=tuple(blocks),
                    cwd=cwd,
                )
            )
        return turns

    @staticmethod
    def _item(payload: dict[str, Any], calls: dict[str, str]) -> tuple[str, list[Block]] | None:
        """The role and non-blank blocks of one response item; ``None`` when it is not a turn."""
        kind = payload.get("type")
        blocks: list[Block] = []
        if kind == "message":
            role = payload.get("role")
            if not isinstance(role, str) or not role.strip() or role in SKIPPED_ROLES:
                return None
            content = payload.get("content")
            if isinstance(content, str):
                blocks.append(Block("text", content))
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("type") in _TEXT_PARTS:
                        text = part.get("text")
                        if isinstance(text, str):
                            blocks.append(Block("text", text))
        elif kind == "reasoning":
            role = "assistant"
            for field, part_type in (("summary", "summary_text"), ("content", "reasoning_text")):
                parts = payload.get(field)
                texts = [
                    p["text"]
                    for p in (parts if isinstance(parts, list) else [])
                    if isinstance(p, dict) and p.get("type") == part_type and isinstance(p.get("text"), str)
                ]
                if texts:
                    blocks.append(Block("thinking", "\n".join(texts)))
        elif isinstance(kind, str) and kind in _CALLS:
            role = "assistant"
            raw = payload.get(_CALLS[kind])
            if isinstance(raw, str) and not is_blank(raw):
                text = raw
            else:  # absent or empty: the call still happened, with no arguments
                text = "{}" if raw is None or isinstance(raw, str) else compact_json(raw)
            name = _tool_name(payload)
            call_id = _call_id(payload)
            if call_id and name:
                calls[call_id] = name
            blocks.append(Block("tool_use", text, tool_name=name, tool_use_id=call_id))
        elif kind in _OUTPUTS:
            role = "tool"
            output = payload.get("output")
            text = output if isinstance(output, str) else ("" if output is None else compact_json(output))
            call_id = _call_id(payload)
            name = calls.get(call_id) if call_id else None
            blocks.append(Block("tool_result", text, tool_name=name, tool_use_id=call_id))
        else:
            return None
        kept = [b for b in blocks if not is_blank(b.text)]
        return (role, kept) if kept else None

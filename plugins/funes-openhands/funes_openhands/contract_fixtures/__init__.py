"""Sample OpenHands conversations, their reviewed goldens, and the kit's mutators: the contract fixtures.

Shipped inside the package so ``funes integrations check openhands`` runs the golden tests on the
installed plugin. ``cases/recorded/`` is a conversation OpenHands 1.16.0 wrote in a real headless
run against the kit's fake model (the system prompt, the user's message with multi-byte text, an
MCP ``recall`` call, its result, the answer); ``home/`` the same as a HOME; ``config-home/`` an
``mcp.json`` with a server of the user's own, as ``openhands mcp add`` writes it.

A conversation is a folder of JSON documents, one per event, not JSON lines, so the kit's variants
are made here (what each must produce: docs/plugins/testing.md#awkward-inputs). A "record" is one
event file; OpenHands writes each once, in the order of its number.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes_contracts.files import cut_documents, lengthen_documents

__all__ = ["make_corrupt", "make_earlier", "make_long", "make_torn"]


def _conversations(folder: Path) -> list[list[Path]]:
    """Each conversation's event files under ``folder``, in the order OpenHands wrote them."""
    return [
        sorted((state.parent / "events").glob("event-*.json"))
        for state in sorted(folder.rglob("base_state.json"))
    ]


def _load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _last_text(event: dict[str, Any]) -> str:
    """The last text of an event the converter keeps (a message's, a tool call's arguments, a result's)."""
    message = event.get("llm_message") or event.get("observation") or {}
    parts = [p.get("text", "") for p in message.get("content") or [] if isinstance(p, dict)]
    call = event.get("tool_call") or {}
    return next((t for t in reversed([*parts, call.get("arguments") or ""]) if t), "")


def make_earlier(folder: Path) -> bool:
    """Each conversation as it was after its first events: its later event files not yet written."""
    done = False
    for events in _conversations(folder):
        if len(events) >= 4:
            for path in events[len(events) // 2 + 1 :]:
                path.unlink()
            done = True
    return done


def make_torn(folder: Path) -> bool:
    """Each conversation's newest event file cut inside its text, as a reader sees it mid-write."""
    return cut_documents(
        ((events[-1], _load(events[-1])) for events in _conversations(folder) if events), _last_text
    )


def make_corrupt(folder: Path) -> bool:
    """An unreadable event file (invalid UTF-8, not JSON) between each conversation's first two events."""
    done = False
    for events in _conversations(folder):
        if len(events) >= 2:
            number = events[0].name.split("-")[1]
            (events[0].parent / f"event-{number}-ffffffff-unreadable.json").write_bytes(
                b'{"id": "\xff\xfe", "kind"'
            )
            done = True
    return done


def make_long(folder: Path, filler: str, expected: Path) -> bool:
    """``filler`` appended to the longest text of an event that the golden keeps."""
    documents = [(path, _load(path)) for events in _conversations(folder) for path in events]
    return lengthen_documents(documents, filler, expected, _write)

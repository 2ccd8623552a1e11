"""A sample Claude.ai data export, its reviewed golden, and the kit's mutators for a one-array export.

Shipped inside the package so ``funes integrations check claudeai`` runs the golden tests on the
installed plugin. ``cases/basic/export/`` is an unpacked export written by hand in the documented
format (see the README for where the format facts come from): two conversations, one with an
attached file's extracted text, extended thinking, a web search call and its result, multi-byte
text; the other from before ``content`` (``text`` only) and with a blank part; and the export's
other files (``users.json``, ``projects.json``), which are not conversations.

The export is one JSON document, not JSON lines, so the kit's variants are made here (what each
must produce: docs/plugins/testing.md#awkward-inputs). A "record" is an item of ``chat_messages``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes_contracts.files import cut_documents, json_documents, lengthen_documents

__all__ = ["make_corrupt", "make_earlier", "make_long", "make_torn"]


def _exports(folder: Path) -> list[tuple[Path, Any]]:
    return json_documents(folder, "conversations.json")


def _write(path: Path, data: list[Any]) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def make_earlier(folder: Path) -> bool:
    """Each conversation as an earlier export had it: the first half of its messages."""
    done = False
    for path, data in _exports(folder):
        for conversation in data:
            if len(conversation["chat_messages"]) >= 2:
                conversation["chat_messages"] = conversation["chat_messages"][
                    : len(conversation["chat_messages"]) // 2
                ]
                done = True
        _write(path, data)
    return done


def make_torn(folder: Path) -> bool:
    """Each export cut inside the last text of its last conversation, as an unzip in progress leaves it."""

    def last_text(data: Any) -> str:
        content = data[-1]["chat_messages"][-1].get("content", [])
        parts = [p.get("text", "") for p in content if p.get("type") == "text"]
        return next((p for p in reversed(parts) if p.strip()), "") if len(data) >= 2 else ""

    return cut_documents(_exports(folder), last_text)


def make_corrupt(folder: Path) -> bool:
    """Each export with an item that is no conversation after its first, and a message that is no object."""
    done = False
    for path, data in _exports(folder):
        data[0]["chat_messages"].insert(1, "not a message")
        data.insert(1, ["not", "a", "conversation"])
        _write(path, data)
        done = True
    return done


def make_long(folder: Path, filler: str, expected: Path) -> bool:
    """``filler`` appended to the longest text the golden keeps (in ``content``; ``text`` mirrors it)."""
    return lengthen_documents(_exports(folder), filler, expected, _write)

"""A sample ChatGPT data export, its reviewed golden, and the kit's mutators for a one-array export.

Shipped inside the package so ``funes integrations check chatgpt`` runs the golden tests on the
installed plugin. ``cases/basic/export/`` is an unpacked export written by hand in the documented
format (see the README for where the format facts come from): two conversations, newest first,
with a regenerated answer on a branch the UI no longer shows, a python tool call and its output,
an o3 answer with its thoughts and a "Thought for 7 seconds" recap, an image part, hidden
custom instructions, multi-byte text, and the export's other files (``user.json``,
``message_feedback.json``), which are not conversations.

The export is one JSON document, not JSON lines, so the kit's variants are made here (what each
must produce: docs/plugins/testing.md#awkward-inputs). A "record" is a message on the branch shown.
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
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _branch(conversation: dict[str, Any]) -> list[str]:
    """The node ids from the root to ``current_node``."""
    mapping = conversation["mapping"]
    chain: list[str] = []
    node: str | None = conversation["current_node"]
    while node is not None:
        chain.append(node)
        node = mapping[node]["parent"]
    return chain[::-1]


def make_earlier(folder: Path) -> bool:
    """Each conversation as an export made earlier had it: its branch cut at the middle message."""
    done = False
    for path, data in _exports(folder):
        for conversation in data:
            chain = _branch(conversation)
            if len(chain) < 4:
                continue
            keep = set(chain[: len(chain) // 2 + 1])
            leaf = chain[len(chain) // 2]
            mapping = conversation["mapping"]
            conversation["mapping"] = {
                k: {**v, "children": [c for c in v["children"] if c in keep]}
                for k, v in mapping.items()
                if k in keep
            }
            conversation["current_node"] = leaf
            done = True
        _write(path, data)
    return done


def make_torn(folder: Path) -> bool:
    """Each export cut inside the last text of its last conversation, as an unzip in progress leaves it."""

    def last_text(data: Any) -> str:
        message = data[-1]["mapping"][data[-1]["current_node"]]["message"]
        parts = [p for p in message["content"].get("parts", []) if isinstance(p, str) and p.strip()]
        return parts[-1] if len(data) >= 2 and parts else ""

    return cut_documents(_exports(folder), last_text)


def make_corrupt(folder: Path) -> bool:
    """Each export with an item that is no conversation after its first, and an unreadable node."""
    done = False
    for path, data in _exports(folder):
        first = data[0]
        first["mapping"]["0bad0000-0000-4000-8000-000000000000"] = "not a node"
        data.insert(1, "not a conversation")
        _write(path, data)
        done = True
    return done


def make_long(folder: Path, filler: str, expected: Path) -> bool:
    """``filler`` appended to the longest message text the golden keeps."""
    return lengthen_documents(_exports(folder), filler, expected, _write)

"""Sample Continue CLI sessions, their reviewed goldens, a realistic config, and the kit's mutators.

Shipped inside the package so ``funes integrations check continue`` runs the golden tests on the
installed plugin. ``cases/basic/`` is what ``cn`` 1.5.47 wrote in two real runs against the fake
model (an MCP tool call and its result; multi-byte text), with its ``sessions.json`` index;
``home/`` the same as a HOME; ``config-home/`` a ``config.yaml`` with the user's own model and
MCP server.

A session is one JSON document, not JSON lines, so the kit's variants are made here (what each
must produce: docs/plugins/testing.md#awkward-inputs). A "record" is an item of ``history``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes_contracts.files import lengthen_documents

__all__ = ["make_corrupt", "make_earlier", "make_long", "make_torn"]


def _sessions(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    found = []
    for path in sorted(folder.rglob("*.json")):
        if path.name == "sessions.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("history"), list):
            found.append((path, data))
    return found


def _write(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


def make_earlier(folder: Path) -> bool:
    """Each session as it was after its first exchanges: the first half of its history (cn appends)."""
    done = False
    for path, data in _sessions(folder):
        if len(data["history"]) >= 2:
            data["history"] = data["history"][: len(data["history"]) // 2]
            _write(path, data)
            done = True
    return done


def make_torn(folder: Path) -> bool:
    """Each session cut inside its last item's text, as a reader sees a file cn is re-writing."""
    done = False
    for path, data in _sessions(folder):
        text = path.read_text(encoding="utf-8")
        content = data["history"][-1].get("message", {}).get("content")
        where = text.rfind(json.dumps(content, ensure_ascii=False)[1:-1]) if isinstance(content, str) else -1
        if where < 0 or not content:
            continue
        path.write_text(text[: where + max(1, len(content) // 2)], encoding="utf-8")
        done = True
    return done


def make_corrupt(folder: Path) -> bool:
    """Each session with an unreadable history item (no message object) after its first."""
    done = False
    for path, data in _sessions(folder):
        data["history"].insert(1, {"message": "not an object", "contextItems": []})
        _write(path, data)
        done = True
    return done


def make_long(folder: Path, filler: str, expected: Path) -> bool:
    """``filler`` appended to the longest text of a session that the golden keeps."""
    return lengthen_documents(_sessions(folder), filler, expected, _write)

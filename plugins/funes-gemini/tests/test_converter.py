"""The Gemini chat replay rules, one by one (the golden case covers the common path)."""

from __future__ import annotations

import json
from pathlib import Path

from funes_gemini.converter import GeminiConverter, replay

SID = "5e1a2b3c-0000-4000-8000-00000000abcd"
HEAD = {"sessionId": SID, "projectHash": "ab", "startTime": "2026-03-02T08:00:00.000Z", "kind": "main"}


def user(mid: str, text: str, ts: str = "2026-03-02T08:00:01.000Z") -> dict[str, object]:
    return {"id": mid, "timestamp": ts, "type": "user", "content": [{"text": text}]}


def gemini(mid: str, text: str, **extra: object) -> dict[str, object]:
    return {"id": mid, "timestamp": "2026-03-02T08:00:02.000Z", "type": "gemini", "content": text, **extra}


def chat(tmp_path: Path, *records: object, name: str = "session-2026-03-02T08-00-5e1a2b3c.jsonl") -> Path:
    folder = tmp_path / "tmp" / "proj" / "chats"
    folder.mkdir(parents=True, exist_ok=True)
    (folder.parent / ".project_root").write_text("/home/dev/proj", encoding="utf-8")
    path = folder / name
    path.write_text("\n".join(json.dumps(r) for r in (HEAD, *records)) + "\n", encoding="utf-8")
    return path


def texts(path: Path) -> list[tuple[str, str, str]]:
    converter = GeminiConverter()
    (ref,) = converter.sessions_in(path)
    return [(t.turn_uuid, t.role, " | ".join(b.text for b in t.blocks)) for t in converter.convert(ref)]


def test_a_repeated_id_replaces_the_message_in_place(tmp_path: Path) -> None:
    path = chat(
        tmp_path, user("u1", "first"), gemini("g1", "draft"), user("u2", "second"), gemini("g1", "final")
    )
    assert texts(path) == [("u1", "user", "first"), ("g1", "assistant", "final"), ("u2", "user", "second")]


def test_rewind_drops_the_message_and_everything_after(tmp_path: Path) -> None:
    path = chat(
        tmp_path, user("u1", "keep"), user("u2", "drop"), gemini("g2", "drop too"), {"$rewindTo": "u2"}
    )
    assert texts(path) == [("u1", "user", "keep")]


def test_a_messages_checkpoint_replaces_all_before(tmp_path: Path) -> None:
    path = chat(
        tmp_path, user("u1", "old"), {"$set": {"messages": [user("u9", "restored")]}}, user("u2", "new")
    )
    assert texts(path) == [("u9", "user", "restored"), ("u2", "user", "new")]


def test_injected_context_and_tool_result_echoes_are_not_user_turns(tmp_path: Path) -> None:
    echo = {"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "x"}}}
    path = chat(
        tmp_path,
        user("u0", "<session_context>\nThis is the Gemini CLI."),
        user("u1", "real question"),
        {"id": "u2", "timestamp": "2026-03-02T08:00:03.000Z", "type": "user", "content": [echo]},
        {
            "id": "i1",
            "timestamp": "2026-03-02T08:00:04.000Z",
            "type": "info",
            "content": "Request cancelled.",
        },
    )
    assert texts(path) == [("u1", "user", "real question")]


def test_tool_calls_become_their_own_turns_once_finished(tmp_path: Path) -> None:
    done = {
        "id": "c1",
        "name": "read_file",
        "args": {"p": 1},
        "status": "success",
        "result": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "body"}}}],
    }
    running = {"id": "c2", "name": "run_shell_command", "args": {}, "status": "executing"}
    path = chat(tmp_path, user("u1", "q"), gemini("g1", "", toolCalls=[done, running]))
    assert texts(path) == [("u1", "user", "q"), ("c1", "assistant", '{"p":1} | body')]


def test_a_legacy_whole_object_chat(tmp_path: Path) -> None:
    folder = tmp_path / "tmp" / "0123abcd" / "chats"
    folder.mkdir(parents=True)
    path = folder / "session-2025-08-01T10-00-5e1a2b3c.json"
    path.write_text(json.dumps({**HEAD, "messages": [user("u1", "old format")]}, indent=2), encoding="utf-8")
    meta, messages = replay(path.read_text(encoding="utf-8"))
    assert meta["sessionId"] == SID and [m["id"] for m in messages] == ["u1"]
    assert texts(path) == [("u1", "user", "old format")]

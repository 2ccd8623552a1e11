"""Droid's session records, rule by rule (the golden case covers the common path), and the hook's lookup."""

from __future__ import annotations

import json
from pathlib import Path

from funes_droid.converter import DroidConverter
from funes_droid.hook import locate

SID = "0b1c2d3e-0000-4000-8000-00000000abcd"


def start(**extra: object) -> dict[str, object]:
    return {"type": "session_start", "id": SID, "title": "t", "version": 2, "cwd": "/home/dev/app", **extra}


def msg(
    mid: str, role: str, content: object, parent: str | None = None, **extra: object
) -> dict[str, object]:
    record: dict[str, object] = {
        "type": "message",
        "id": mid,
        "timestamp": "2026-03-02T08:00:01.000Z",
        "message": {"role": role, "content": content, **extra},
    }
    if parent is not None:
        record["parentId"] = parent
    return record


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def session(tmp_path: Path, *records: object, head: object = None) -> Path:
    folder = tmp_path / "sessions" / "-home-dev-app"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SID}.jsonl"
    lines = [json.dumps(r) for r in (head or start(), *records)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def turns(path: Path) -> list[tuple[str, str, str | None, str]]:
    converter = DroidConverter()
    (ref,) = converter.sessions_in(path)
    return [
        (t.turn_uuid, t.role, t.parent_uuid, " | ".join(b.text for b in t.blocks))
        for t in converter.convert(ref)
    ]


def test_context_injections_and_hook_notices_are_no_turns(tmp_path: Path) -> None:
    path = session(
        tmp_path,
        msg("h1", "user", [], visibility="user_only", hookEventName="SessionStart"),
        msg(
            "context-u1",
            "user",
            text("<system-reminder>Deferred tools: x</system-reminder>"),
            visibility="llm_only",
        ),
        msg("u1", "user", text("the question"), parent="context-u1"),
        msg("a1", "assistant", text("the answer"), parent="u1"),
        msg("h2", "user", text("hook said"), parent="a1", hookEventName="Stop"),
        {"type": "agent_turn_outcome", "turnId": "u1", "reason": "completed"},
    )
    assert turns(path) == [("u1", "user", None, "the question"), ("a1", "assistant", "u1", "the answer")]


def test_a_parent_that_was_left_out_gives_way_to_the_nearest_kept_ancestor(tmp_path: Path) -> None:
    path = session(
        tmp_path,
        msg("u1", "user", text("first")),
        msg("a1", "assistant", [{"type": "text", "text": "   "}], parent="u1"),
        msg("a2", "assistant", text("second"), parent="a1"),
    )
    assert turns(path) == [("u1", "user", None, "first"), ("a2", "assistant", "u1", "second")]


def test_tool_results_are_named_after_their_call_and_keep_only_text_parts(tmp_path: Path) -> None:
    call = {"type": "tool_use", "id": "call_1", "name": "funes___recall", "input": {"query": "q"}}
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}
    result = {"type": "tool_result", "tool_use_id": "call_1", "content": [*text("one"), image, *text("two")]}
    path = session(tmp_path, msg("a1", "assistant", [call]), msg("u2", "user", [result], parent="a1"))
    converter = DroidConverter()
    (ref,) = converter.sessions_in(path)
    use, res = converter.convert(ref)
    assert use.blocks[0].tool_name == res.blocks[0].tool_name == "funes___recall"
    assert (res.role, res.blocks[0].block_type, res.blocks[0].text) == ("user", "tool_result", "one\ntwo")


def test_thinking_is_read_from_its_thinking_text(tmp_path: Path) -> None:
    part = {"type": "thinking", "thinking": "hmm", "signature": "s"}
    path = session(tmp_path, msg("a1", "assistant", [part, *text("done")]))
    converter = DroidConverter()
    (ref,) = converter.sessions_in(path)
    (turn,) = converter.convert(ref)
    assert [(b.block_type, b.text) for b in turn.blocks] == [("thinking", "hmm"), ("text", "done")]


def test_a_repeated_message_keeps_its_first_turn_and_a_changed_repeat_is_its_own(tmp_path: Path) -> None:
    path = session(
        tmp_path,
        msg("u1", "user", text("same")),
        msg("u1", "user", text("same")),
        msg("u1", "user", text("changed")),
    )
    assert [t[0] for t in turns(path)] == ["u1", "u1@3"]


def test_the_session_id_and_cwd_come_from_session_start(tmp_path: Path) -> None:
    path = session(tmp_path, msg("u1", "user", text("q")), head=start(id="another-id", cwd="/srv/x"))
    converter = DroidConverter()
    (ref,) = converter.sessions_in(path)
    (turn,) = converter.convert(ref)
    assert (ref.session_id, turn.session_id, turn.cwd) == ("another-id", "another-id", "/srv/x")


def test_files_that_are_not_droid_sessions_are_passed_over(tmp_path: Path) -> None:
    session(tmp_path, msg("u1", "user", text("q")))
    folder = tmp_path / "sessions" / "-home-dev-app"
    (folder / "other.jsonl").write_text('{"type": "message", "role": "user"}\n', encoding="utf-8")
    (folder / "empty.jsonl").write_text(json.dumps(start(id="empty")) + "\n", encoding="utf-8")
    refs = DroidConverter().sessions_in(tmp_path / "sessions")
    assert [r.session_id for r in refs] == [SID]


def test_the_hook_reads_the_transcript_the_event_names_else_finds_the_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = session(home / ".factory", msg("u1", "user", text("q")))
    env = {"HOME": str(home)}
    named = locate({"transcript_path": str(path), "hook_event_name": "SessionEnd"}, env)
    assert named is not None and named.paths == (str(path),) and named.what == "SessionEnd"
    found = locate({"session_id": SID, "hook_event_name": "Stop"}, env)
    assert found is not None and found.paths == (str(path),)
    moved = locate({"session_id": SID}, {"HOME": str(tmp_path), "FACTORY_HOME_OVERRIDE": str(home)})
    assert moved is not None and moved.paths == (str(path),), "FACTORY_HOME_OVERRIDE moves the folder"
    assert locate({"session_id": "../etc"}, env) is None

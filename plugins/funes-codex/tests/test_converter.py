"""The Codex converter on small rollouts written here, and on a real rollout of Codex 0.171.0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from funes_codex.converter import SKIPPED_ROLES, CodexConverter
from funes_core import SessionRef, Turn, parse_line, parse_ts, turns_to_jsonl

SAMPLE = (
    Path(__file__).resolve().parents[3].parent
    / "shared"
    / "corpus"
    / "harness-samples"
    / "codex_rollout.jsonl"
)
SID = "019a0000-0000-7000-8000-000000000001"


def env(kind: str, payload: Any, ts: str | None = "2026-03-02T09:00:00.000Z") -> str:
    record: dict[str, Any] = {"type": kind, "payload": payload}
    if ts is not None:
        record = {"timestamp": ts, **record}
    return json.dumps(record, ensure_ascii=False)


def meta(sid: str = SID, cwd: str = "/src/app") -> str:
    return env("session_meta", {"id": sid, "cwd": cwd, "timestamp": "2026-03-02T08:59:59.000Z"})


def item(payload: dict[str, Any], ts: str = "2026-03-02T09:00:00.000Z") -> str:
    return env("response_item", payload, ts)


def convert(
    tmp_path: Path, *lines: str, name: str = f"rollout-2026-03-02T09-00-00-{SID}.jsonl"
) -> list[Turn]:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    refs = CodexConverter().sessions_in(path)
    assert len(refs) == 1
    return CodexConverter().convert(refs[0])


def test_one_turn_per_response_item_with_ids_from_the_session(tmp_path: Path) -> None:
    turns = convert(
        tmp_path,
        meta(),
        env("event_msg", {"type": "task_started"}),
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}),
        env("turn_context", {"cwd": "/elsewhere"}),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}),
    )
    assert [(t.turn_uuid, t.seq, t.role, t.cwd) for t in turns] == [
        (f"{SID}-0", 0, "user", "/src/app"),
        (f"{SID}-1", 1, "assistant", "/src/app"),
    ]
    assert all(t.harness == "codex" and t.parent_uuid is None for t in turns)


@pytest.mark.parametrize("role", sorted(SKIPPED_ROLES))
def test_codex_own_instructions_are_not_turns(tmp_path: Path, role: str) -> None:
    turns = convert(
        tmp_path,
        meta(),
        item({"type": "message", "role": role, "content": [{"type": "input_text", "text": "<permissions>"}]}),
        item({"type": "message", "role": "user", "content": "the question"}),
    )
    assert [(t.seq, t.role, t.blocks[0].text) for t in turns] == [(0, "user", "the question")]


def test_tool_calls_and_outputs(tmp_path: Path) -> None:
    turns = convert(
        tmp_path,
        meta(),
        item(
            {
                "type": "function_call",
                "name": "recall",
                "namespace": "mcp__funes",
                "arguments": '{"q": 1}',
                "call_id": "c1",
            }
        ),
        item(
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": [{"type": "input_text", "text": "a hit"}],
            }
        ),
        item(
            {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": "c2"}
        ),
        item({"type": "custom_tool_call_output", "call_id": "c2", "output": "Success."}),
        item({"type": "function_call_output", "call_id": "c3", "output": {"ok": True, "ü": "✓"}}),
        item({"type": "function_call", "name": "exec_command", "arguments": "", "call_id": "c4"}),
        item({"type": "function_call_output", "call_id": "c4", "output": None}),
    )
    blocks = [(t.role, b.block_type, b.text, b.tool_name, b.tool_use_id) for t in turns for b in t.blocks]
    assert blocks == [
        ("assistant", "tool_use", '{"q": 1}', "mcp__funes__recall", "c1"),
        ("tool", "tool_result", '[{"type":"input_text","text":"a hit"}]', "mcp__funes__recall", "c1"),
        ("assistant", "tool_use", "*** Begin Patch", "apply_patch", "c2"),
        ("tool", "tool_result", "Success.", "apply_patch", "c2"),
        ("tool", "tool_result", '{"ok":true,"ü":"✓"}', None, "c3"),
        ("assistant", "tool_use", "{}", "exec_command", "c4"),
    ]


def test_reasoning_summary_and_raw_reasoning(tmp_path: Path) -> None:
    turns = convert(
        tmp_path,
        meta(),
        item(
            {
                "type": "reasoning",
                "summary": [
                    {"type": "summary_text", "text": "**A**"},
                    {"type": "summary_text", "text": "**B**"},
                ],
                "encrypted_content": "gAAAA",
            }
        ),
        item({"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"}),
        item({"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "raw"}]}),
    )
    assert [[(b.block_type, b.text) for b in t.blocks] for t in turns] == [
        [("thinking", "**A**\n**B**")],
        [("thinking", "raw")],
    ]


def test_blank_parts_and_turns_are_dropped_without_using_a_seq(tmp_path: Path) -> None:
    turns = convert(
        tmp_path,
        meta(),
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": " \u3000\n"}]}),
        item({"type": "message", "role": "user", "content": [{"type": "input_image", "image_url": "data:"}]}),
        item(
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": "kept"},
                    {"type": "output_text", "text": "\t"},
                    {"type": "output_text", "text": "line\u2028separator"},
                ],
            }
        ),
    )
    assert [(t.seq, [b.text for b in t.blocks]) for t in turns] == [(0, ["kept", "line\u2028separator"])]
    line = turns_to_jsonl(turns)
    assert parse_line(line.split("\n")[0]) == turns[0], "U+2028 stays inside one line of the turns file"


def test_session_id_falls_back_to_the_file_stem_and_never_holds_a_colon(tmp_path: Path) -> None:
    no_meta = convert(
        tmp_path, item({"type": "message", "role": "user", "content": "x"}), name="rollout-a.jsonl"
    )
    assert no_meta[0].session_id == "rollout-a" and no_meta[0].cwd is None
    colon = convert(
        tmp_path,
        meta(sid="a:b"),
        item({"type": "message", "role": "user", "content": "x"}),
        name="rollout-b.jsonl",
    )
    assert colon[0].session_id == "a-b" and colon[0].turn_uuid == "a-b-0"


def test_timestamps(tmp_path: Path) -> None:
    turns = convert(
        tmp_path,
        meta(),
        item({"type": "message", "role": "user", "content": "one"}, ts="2026-03-02T10:00:00+01:00"),
        env("response_item", {"type": "message", "role": "user", "content": "two"}, ts=None),
        item({"type": "message", "role": "user", "content": "three"}, ts="not a time"),
        item({"type": "message", "role": "user", "content": "four"}, ts="2026-03-02T09:30:00.123456789Z"),
    )
    assert [t.ts for t in turns] == [
        "2026-03-02T09:00:00Z",
        "2026-03-02T09:00:00Z",
        "2026-03-02T09:00:00Z",
        "2026-03-02T09:30:00.123456789Z",
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-29T12:58:41.554Z", "2026-11-29T12:58:41.554Z"),
        ("2026-11-29T13:58:41+01:00", "2026-11-29T12:58:41Z"),
        ("2026-11-29T12:58:41", "2026-11-29T12:58:41Z"),
        ("2026-02-30T00:00:00Z", None),
        ("", None),
        (1795957121, "2026-11-29T12:58:41Z"),
        (None, None),
    ],
)
def test_parse_ts(value: object, expected: str | None) -> None:
    """Rollout times go through the core's parser, keeping Codex's own UTC text as written."""
    assert parse_ts(value, verbatim_utc=True) == expected


def test_sessions_in_a_folder_reads_only_rollouts(tmp_path: Path) -> None:
    day = tmp_path / "2026" / "03" / "02"
    day.mkdir(parents=True)
    (day / f"rollout-2026-03-02T09-00-00-{SID}.jsonl").write_text(meta() + "\n", encoding="utf-8")
    (day / "notes.jsonl").write_text(item({"type": "message", "role": "user", "content": "x"}) + "\n")
    (day / f"{SID}.funes.jsonl").write_text("{}\n", encoding="utf-8")
    refs = CodexConverter().sessions_in(tmp_path)
    assert [(r.session_id, r.path.name) for r in refs] == [(SID, f"rollout-2026-03-02T09-00-00-{SID}.jsonl")]
    assert CodexConverter().sessions_in(tmp_path / "missing") == []
    assert CodexConverter().sessions_in(day / "notes.jsonl")[0].session_id == "notes", "a named file is read"


def test_discover_honours_codex_home_only_for_the_process_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    elsewhere = tmp_path / "codex-home"
    (elsewhere / "sessions").mkdir(parents=True)
    (elsewhere / "sessions" / f"rollout-x-{SID}.jsonl").write_text(meta() + "\n", encoding="utf-8")
    monkeypatch.setenv("CODEX_HOME", str(elsewhere))
    monkeypatch.setenv("HOME", str(home))
    assert CodexConverter().session_roots(home) == [elsewhere / "sessions", elsewhere / "archived_sessions"]
    assert [r.session_id for r in CodexConverter().discover(home)] == [SID]
    other = tmp_path / "other-home"
    assert CodexConverter().session_roots(other) == [
        other / ".codex" / "sessions",
        other / ".codex" / "archived_sessions",
    ]


def test_discover_finds_archived_sessions(tmp_path: Path) -> None:
    """``codex archive ID`` moves a rollout, same name, into ``$CODEX_HOME/archived_sessions/``."""
    archived = tmp_path / ".codex" / "archived_sessions"
    archived.mkdir(parents=True)
    (archived / f"rollout-2026-03-02T08-54-03-{SID}.jsonl").write_text(meta() + "\n", encoding="utf-8")
    refs = CodexConverter().discover(tmp_path)
    assert [(r.session_id, r.path.parent.name) for r in refs] == [(SID, "archived_sessions")]


# -- the real rollout of Codex 0.171.0 ----------------------------------------------------------


@pytest.fixture
def sample() -> Path:
    if not SAMPLE.is_file():
        pytest.skip(f"{SAMPLE} is absent: the shared folder is not beside this checkout")
    return SAMPLE


def _convert_file(path: Path) -> list[Turn]:
    refs = CodexConverter().sessions_in(path)
    return [turn for ref in refs for turn in CodexConverter().convert(ref)]


def test_real_rollout_validates(sample: Path) -> None:
    turns = _convert_file(sample)
    assert turns
    for line in turns_to_jsonl(turns).split("\n"):
        if line:
            parse_line(line, path=str(sample))
    assert {t.session_id for t in turns} == {"01a22762-e11b-7130-b1e4-fdc7dc5fd268"}
    assert [t.seq for t in turns] == list(range(len(turns)))


def _said(sample: Path) -> list[str]:
    """Every text the conversation holds, read straight from the raw JSON (independently)."""
    texts: list[str] = []
    for raw in sample.read_text(encoding="utf-8").splitlines():
        record = json.loads(raw)
        if record.get("type") != "response_item":
            continue
        payload = record["payload"]
        kind = payload.get("type")
        if kind == "message" and payload.get("role") not in ("developer", "system"):
            texts += [
                part["text"]
                for part in payload["content"]
                if part.get("type") in ("input_text", "output_text")
            ]
        elif kind == "reasoning":
            texts += [part["text"] for part in payload.get("summary") or []]
        elif kind in ("function_call", "custom_tool_call"):
            texts.append(payload.get("arguments") or payload.get("input"))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = payload["output"]
            texts += [part["text"] for part in output] if isinstance(output, list) else [str(output)]
    return [text for text in texts if text.strip()]


def test_real_rollout_loses_nothing_the_conversation_said(sample: Path) -> None:
    converted = "\n".join(block.text for turn in _convert_file(sample) for block in turn.blocks)
    said = _said(sample)
    assert len(said) >= 5
    for text in said:
        assert text in converted or json.dumps(text, ensure_ascii=False)[1:-1] in converted, (
            f"missing from the turns: {text[:120]!r}"
        )
    raw = sample.read_text(encoding="utf-8")
    calls = raw.count('"type": "function_call"') + raw.count('"type":"function_call"')
    uses = [b for t in _convert_file(sample) for b in t.blocks if b.block_type == "tool_use"]
    assert len(uses) == calls


def test_real_rollout_ids_are_stable_across_runs_and_growth(sample: Path, tmp_path: Path) -> None:
    full = _convert_file(sample)
    assert turns_to_jsonl(full) == turns_to_jsonl(_convert_file(sample))
    lines = sample.read_bytes().split(b"\n")
    grown = tmp_path / sample.name
    for cut in range(1, len(lines)):
        grown.write_bytes(b"\n".join(lines[:cut]) + b"\n")
        earlier = _convert_file(grown)
        keys = [(t.session_id, t.turn_uuid, t.seq) for t in earlier]
        assert keys == [(t.session_id, t.turn_uuid, t.seq) for t in full[: len(earlier)]], f"cut after {cut}"
        assert turns_to_jsonl(earlier) == turns_to_jsonl(full[: len(earlier)])


def test_a_session_ref_for_a_missing_file_converts_to_nothing(tmp_path: Path) -> None:
    assert CodexConverter().convert(SessionRef(SID, tmp_path / "gone.jsonl", 0.0)) == []

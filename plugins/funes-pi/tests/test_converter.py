"""The pi converter on small hand-written sessions, on a real pi transcript, and where it looks."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from funes_core import Turn, parse_line, parse_ts, read_turns_file, turns_to_jsonl
from funes_pi import PiConverter
from funes_pi.paths import agent_dir, session_dirs

parse_time = partial(parse_ts, epoch="ms")  # pi's times: ISO 8601, or epoch milliseconds

#: The repository checkout holding this plugin, and the shared folder beside it.
REPO = Path(__file__).resolve().parents[3]
REAL_SESSION = REPO.parent / "shared" / "corpus" / "harness-samples" / "pi_session.jsonl"


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def _convert(path: Path) -> list[Turn]:
    converter = PiConverter()
    return [turn for ref in converter.sessions_in(path) for turn in converter.convert(ref)]


def _compact(turns: list[Turn]) -> list[dict[str, Any]]:
    """Each turn as a dict without the fields every turn of a test shares."""
    shared = ("session_id", "harness", "cwd")
    return [{k: v for k, v in t.to_json().items() if k not in shared} for t in turns]


HEADER = {
    "type": "session",
    "version": 3,
    "id": "0195-uuid",
    "timestamp": "2026-03-02T09:00:00.000Z",
    "cwd": "/w",
}


# -- goldens on small inputs -----------------------------------------------------------------------


GOLDENS: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "iso and epoch-millisecond timestamps": (
        [
            HEADER,
            {
                "type": "message",
                "id": "u1",
                "parentId": None,
                "timestamp": "2026-03-02T10:00:01.500+01:00",
                "message": {"role": "user", "content": "offset: converted to UTC"},
            },
            {
                "type": "message",
                "id": "a1",
                "parentId": "u1",
                "timestamp": 1772442003250,
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "epoch ms on the entry"}],
                },
            },
            {
                "type": "message",
                "id": "a2",
                "parentId": "a1",
                "message": {
                    "role": "assistant",
                    "content": "epoch ms on the message",
                    "timestamp": 1772442004000,
                },
            },
            {
                "type": "message",
                "id": "a3",
                "parentId": "a2",
                "timestamp": "2026-03-02T09:00:05",
                "message": {"role": "assistant", "content": "no offset: UTC"},
            },
        ],
        [
            {
                "turn_uuid": "u1",
                "seq": 0,
                "ts": "2026-03-02T09:00:01.500000Z",
                "role": "user",
                "blocks": [{"block_type": "text", "text": "offset: converted to UTC"}],
            },
            {
                "turn_uuid": "a1",
                "seq": 1,
                "ts": "2026-03-02T09:00:03.250000Z",
                "role": "assistant",
                "parent_uuid": "u1",
                "blocks": [{"block_type": "text", "text": "epoch ms on the entry"}],
            },
            {
                "turn_uuid": "a2",
                "seq": 2,
                "ts": "2026-03-02T09:00:04Z",
                "role": "assistant",
                "parent_uuid": "a1",
                "blocks": [{"block_type": "text", "text": "epoch ms on the message"}],
            },
            {
                "turn_uuid": "a3",
                "seq": 3,
                "ts": "2026-03-02T09:00:05Z",
                "role": "assistant",
                "parent_uuid": "a2",
                "blocks": [{"block_type": "text", "text": "no offset: UTC"}],
            },
        ],
    ),
    "a tool round trip with multibyte text": (
        [
            HEADER,
            {
                "type": "message",
                "id": "a1",
                "parentId": None,
                "timestamp": "2026-03-02T09:00:01Z",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "Größe prüfen — 確認 🐙"},
                        {"type": "text", "text": "Je regarde «ça»."},
                        {
                            "type": "toolCall",
                            "id": "call_1",
                            "name": "bash",
                            "arguments": {"command": "du -sh ./données"},
                        },
                    ],
                },
            },
            {
                "type": "message",
                "id": "t1",
                "parentId": "a1",
                "timestamp": "2026-03-02T09:00:02Z",
                "message": {
                    "role": "toolResult",
                    "toolCallId": "call_1",
                    "toolName": "bash",
                    "content": [
                        {"type": "text", "text": "4,0K\t./données"},
                        {"type": "text", "text": "exit 0 ✓"},
                    ],
                    "isError": False,
                },
            },
        ],
        [
            {
                "turn_uuid": "a1",
                "seq": 0,
                "ts": "2026-03-02T09:00:01Z",
                "role": "assistant",
                "blocks": [
                    {"block_type": "thinking", "text": "Größe prüfen — 確認 🐙"},
                    {"block_type": "text", "text": "Je regarde «ça»."},
                    {
                        "block_type": "tool_use",
                        "text": '{"command":"du -sh ./données"}',
                        "tool_name": "bash",
                        "tool_use_id": "call_1",
                    },
                ],
            },
            {
                "turn_uuid": "t1",
                "seq": 1,
                "ts": "2026-03-02T09:00:02Z",
                "role": "tool",
                "parent_uuid": "a1",
                "blocks": [
                    {
                        "block_type": "tool_result",
                        "text": "4,0K\t./données\nexit 0 ✓",
                        "tool_name": "bash",
                        "tool_use_id": "call_1",
                    }
                ],
            },
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_small_sessions_convert_exactly(tmp_path: Path, name: str) -> None:
    records, expected = GOLDENS[name]
    path = tmp_path / "2026-03-02T09-00-00-000Z_0195-uuid.jsonl"
    path.write_text("".join(_line(r) + "\n" for r in records), encoding="utf-8")
    turns = _convert(path)
    assert _compact(turns) == expected
    assert {t.session_id for t in turns} == {"2026-03-02T09-00-00-000Z_0195-uuid"}, "the file stem"
    assert {t.cwd for t in turns} == {"/w"}, "the header's cwd"


def test_a_truncated_last_line_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    whole: list[dict[str, Any]] = [
        HEADER,
        {
            "type": "message",
            "id": "u1",
            "timestamp": "2026-03-02T09:00:01Z",
            "message": {"role": "user", "content": "ça"},
        },
        {
            "type": "message",
            "id": "a1",
            "timestamp": "2026-03-02T09:00:02Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "日本語のこたえ"}]},
        },
    ]
    body = "".join(_line(r) + "\n" for r in whole).encode("utf-8")
    path = tmp_path / "s.jsonl"
    path.write_bytes(body)
    full = _convert(path)
    # Cut inside the last line's multi-byte text, with no final newline: pi is still writing.
    cut = body.rindex("のこ".encode()) + 1
    path.write_bytes(body[:cut])
    torn = _convert(path)
    assert [t.turn_uuid for t in torn] == ["u1"]
    assert torn == full[:1]


# -- the real pi transcript -----------------------------------------------------------------------


def _said(path: Path) -> dict[str, list[str]]:
    """What the raw transcript holds, counted straight from its JSON (independently of the converter)."""
    said: dict[str, list[str]] = {"text": [], "thinking": [], "tool_use": [], "tool_result": []}
    for raw in path.read_bytes().split(b"\n"):
        if not raw.strip():
            continue
        record = json.loads(raw)
        if record.get("type") != "message":
            continue
        message = record["message"]
        content = message.get("content")
        if message.get("role") == "toolResult":
            parts = (
                [content]
                if isinstance(content, str)
                else [p["text"] for p in content if p.get("type") == "text"]
            )
            said["tool_result"].append("\n".join(parts))
            continue
        for part in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            if part.get("type") == "text" and part["text"].strip():
                said["text"].append(part["text"])
            elif part.get("type") == "thinking" and part["thinking"].strip():
                said["thinking"].append(part["thinking"])
            elif part.get("type") == "toolCall":
                said["tool_use"].append(
                    json.dumps(part["arguments"], separators=(",", ":"), ensure_ascii=False)
                )
    return said


@pytest.fixture
def real_session() -> Path:
    if not REAL_SESSION.is_file():
        pytest.skip(f"the shared corpus is not beside this checkout ({REAL_SESSION} is missing)")
    return REAL_SESSION


def test_the_real_pi_session_validates(real_session: Path, tmp_path: Path) -> None:
    converter = PiConverter()
    [ref] = converter.sessions_in(real_session)
    turns = converter.convert(ref)
    assert turns, "the sample holds a whole session"
    for line in turns_to_jsonl(turns).split("\n"):
        if line:
            parse_line(line)
    [write] = converter.convert_into(ref, tmp_path / "out")
    assert read_turns_file(write.path).turns == turns
    assert [t.role for t in turns] == ["user", "assistant", "tool", "assistant"]
    assert {t.cwd for t in turns} == {"/tmp/agent-harness.eIWGM0/proj/pi"}


def test_nothing_the_agent_said_is_missing(real_session: Path) -> None:
    turns = _convert(real_session)
    converted: dict[str, list[str]] = {"text": [], "thinking": [], "tool_use": [], "tool_result": []}
    for turn in turns:
        for block in turn.blocks:
            converted[block.block_type].append(block.text)
    said = _said(real_session)
    assert converted == said
    assert sum(len(v) for v in said.values()) == 4, "the sample: a prompt, a call, its result, the answer"
    [call] = [b for t in turns for b in t.blocks if b.block_type == "tool_use"]
    [result] = [b for t in turns for b in t.blocks if b.block_type == "tool_result"]
    assert (call.tool_name, result.tool_name) == ("mcp__mem__recall", "mcp__mem__recall")
    assert call.tool_use_id == result.tool_use_id == "call_63e2ea6c5b8b4f738d87"


def test_ids_are_stable_across_runs_and_as_the_session_grows(real_session: Path, tmp_path: Path) -> None:
    full = _convert(real_session)
    assert _convert(real_session) == full
    lines = [line for line in real_session.read_bytes().split(b"\n") if line.strip()]
    grown = tmp_path / real_session.name
    for keep in range(1, len(lines) + 1):
        grown.write_bytes(b"".join(line + b"\n" for line in lines[:keep]))
        earlier = _convert(grown)
        assert earlier == full[: len(earlier)], f"after {keep} lines the turns are not a prefix"
    assert earlier == full


# -- where sessions are found ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-02T09:00:05.5Z", "2026-03-02T09:00:05.500000Z"),
        ("2026-03-02T09:00:05z", "2026-03-02T09:00:05Z"),
        ("2026-03-02T10:00:05+01:00", "2026-03-02T09:00:05Z"),
        ("2026-03-02T09:00:05", "2026-03-02T09:00:05Z"),
        (1772442005000, "2026-03-02T09:00:05Z"),
        (1772442005123.0, "2026-03-02T09:00:05.123000Z"),
        ("soon", None),
        ("", None),
        (None, None),
        (True, None),
        (10**20, None),
    ],
)
def test_parse_time(value: object, expected: str | None) -> None:
    assert parse_time(value) == expected


def test_sessions_in_a_folder_skips_turns_files_and_foreign_files(tmp_path: Path) -> None:
    folder = tmp_path / "--w--"
    folder.mkdir()
    (folder / "a.jsonl").write_text(_line(HEADER) + "\n", encoding="utf-8")
    (folder / "a.funes.jsonl").write_text('{"session_id":"x"}\n', encoding="utf-8")
    (folder / "other.jsonl").write_text('{"type":"event"}\n', encoding="utf-8")
    (folder / "empty.jsonl").write_bytes(b"")
    refs = PiConverter().sessions_in(tmp_path)
    assert [r.path.name for r in refs] == ["a.jsonl"]
    assert PiConverter().sessions_in(tmp_path / "missing") == []


def test_session_roots_follow_pis_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    assert PiConverter().session_roots(home) == [home / ".pi" / "agent" / "sessions"]
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/elsewhere/pi")
    assert agent_dir(home) == home / "elsewhere" / "pi"
    (home / "elsewhere" / "pi").mkdir(parents=True)
    (home / "elsewhere" / "pi" / "settings.json").write_text(
        '{"sessionDir": "~/pi-sessions"}', encoding="utf-8"
    )
    assert session_dirs(home) == [home / "pi-sessions", home / "elsewhere" / "pi" / "sessions"]
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "override"))
    assert session_dirs(home) == [tmp_path / "override", home / "elsewhere" / "pi" / "sessions"]


def test_discover_finds_sessions_in_the_session_dir_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    override = tmp_path / "sessions" / "--w--"
    override.mkdir(parents=True)
    (override / "s.jsonl").write_text(_line(HEADER) + "\n", encoding="utf-8")
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "sessions"))
    converter = PiConverter()
    assert [r.session_id for r in converter.discover(home)] == ["s"]
    assert converter.agent_found(home)
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR")
    assert converter.agent_found(home) is False

"""The Claude Code converter's own rules, beyond the contract's goldens.

The golden files under ``contract_fixtures/cases`` pin the whole output; these tests name the
individual rules (so a failure says which one broke) and cover what a golden cannot: growth
line by line, ``/compact`` appending to a live session, torn and undecodable lines.
"""

from __future__ import annotations

import json
import os
import shutil
from importlib import resources
from pathlib import Path

import pytest

from funes_claude.converter import ClaudeConverter, session_id_for
from funes_core import SessionRef, Turn, is_blank, parse_line, parse_ts, turns_to_jsonl

FIXTURES = Path(str(resources.files("funes_claude.contract_fixtures")))
CASES = sorted(p for p in (FIXTURES / "cases").iterdir() if p.is_dir())
BASIC = FIXTURES / "cases" / "basic" / "5d1c7a3e-2b4f-4c8e-9a61-0f3b8d2e7c45.jsonl"
COMPACTED = FIXTURES / "cases" / "compacted" / "9e8f4b21-7c3a-4d5e-8f60-1a2b3c4d5e6f.jsonl"
SUBAGENTS = FIXTURES / "cases" / "subagents"


def convert(path: Path) -> list[Turn]:
    converter = ClaudeConverter()
    return [turn for ref in converter.sessions_in(path) for turn in converter.convert(ref)]


def keys(turns: list[Turn]) -> list[tuple[str, str, int]]:
    return [(t.session_id, t.turn_uuid, t.seq) for t in turns]


def by_uuid(turns: list[Turn]) -> dict[str, Turn]:
    return {t.turn_uuid: t for t in turns}


def test_message_records_become_turns_and_nothing_else_does() -> None:
    turns = convert(BASIC)
    records = [json.loads(line) for line in BASIC.read_text(encoding="utf-8").splitlines()]
    messages = {r["uuid"] for r in records if r.get("type") in ("user", "assistant")}
    others = {r.get("uuid") for r in records if r.get("type") not in ("user", "assistant")} - {None}
    assert {t.turn_uuid for t in turns} <= messages
    assert not {t.turn_uuid for t in turns} & others, "attachment, progress, system records yield no turns"
    assert [t.seq for t in turns] == list(range(len(turns)))
    assert {t.harness for t in turns} == {"claude"}
    assert {t.cwd for t in turns} == {"/home/dev/src/tidepool"}


def test_blocks_follow_the_claude_code_mapping() -> None:
    turns = by_uuid(convert(BASIC))
    first = turns["5d1c7a3e-0000-4000-8000-000000000001"]
    assert [b.block_type for b in first.blocks] == ["text"], "string content is one text block"
    assert "漢字" in first.blocks[0].text and "🐙" in first.blocks[0].text
    thinking = turns["5d1c7a3e-0000-4000-8000-000000000002"].blocks
    assert [b.block_type for b in thinking] == ["thinking"]
    call = turns["5d1c7a3e-0000-4000-8000-000000000004"].blocks[0]
    assert (call.block_type, call.tool_name, call.tool_use_id) == ("tool_use", "Read", "toolu_01Read")
    assert call.text == '{"limit":40,"file_path":"tests/test_flush.py","offset":1}', "compact, source order"
    result = turns["5d1c7a3e-0000-4000-8000-000000000005"].blocks[0]
    assert (result.block_type, result.tool_name) == ("tool_result", "Read")
    assert result.tool_use_id == "toolu_01Read"
    joined = turns["5d1c7a3e-0000-4000-8000-000000000007"].blocks[0]
    assert joined.text == (
        "F\nFAILED tests/test_flush.py::test_flush_under_load - TimeoutError\n1 failed in 2.04s"
    ), "text parts joined with a newline, the image left out"
    assert joined.tool_name == "Bash", "a result is named after its call"


def test_blank_blocks_and_turns_left_empty_are_dropped() -> None:
    turns = by_uuid(convert(BASIC))
    assert "5d1c7a3e-0000-4000-8000-000000000008" not in turns, "only '\\n\\n'"
    assert "5d1c7a3e-0000-4000-8000-000000000010" not in turns, "an empty tool result"
    mixed = turns["5d1c7a3e-0000-4000-8000-000000000009"].blocks
    assert [b.block_type for b in mixed] == ["text", "tool_use"], "the blank text part went"
    assert mixed[1].text == "{}", "a call without input"
    with_document = turns["5d1c7a3e-0000-4000-8000-000000000011"].blocks
    assert [b.text for b in with_document] == ["Good. Use 10 s on ARM and keep 2 s elsewhere."]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-10T08:00:00.512Z", "2026-03-10T08:00:00.512000Z"),
        ("2026-03-10T08:00:04Z", "2026-03-10T08:00:04Z"),
        ("2026-03-10T10:00:03.250+02:00", "2026-03-10T08:00:03.250000Z"),
        ("2026-03-13T12:00:06.000-05:00", "2026-03-13T17:00:06Z"),
        ("2026-03-13T12:00:00", "2026-03-13T12:00:00Z"),
        (1773403201500, "2026-03-13T12:00:01.500000Z"),
        (1773403201, "2026-03-13T12:00:01Z"),
        ("not a time", None),
        ("", None),
        (True, None),
        (None, None),
        ("2026-02-30T00:00:00Z", None),
    ],
)
def test_timestamps_become_utc_z(value: object, expected: str | None) -> None:
    assert parse_ts(value) == expected


def test_blank_means_unicode_white_space_only() -> None:
    assert is_blank("") and is_blank(" \t\n\r\x0b\x0c\xa0\u2003\u3000\u2028\x85")
    assert not is_blank("\u200b"), "a zero-width space is not White_Space: it is kept"
    assert not is_blank(" x ")


def test_subagents_are_their_own_sessions_named_after_their_parent() -> None:
    turns = convert(SUBAGENTS)
    sessions = {t.session_id for t in turns}
    parent = "3c1d8e7f-6a5b-4c3d-9e2f-7a8b9c0d1e2f"
    assert sessions == {parent, f"{parent}-agent-a4f2e91"}
    sub = [t for t in turns if t.session_id != parent]
    assert [t.seq for t in sub] == [0, 1, 2, 3]
    assert sub[0].parent_uuid is None, "a Task agent starts its own thread"


def test_session_ids_for_every_layout(tmp_path: Path) -> None:
    nested = tmp_path / "proj" / "abc" / "subagents" / "agent-x1.jsonl"
    assert session_id_for(nested, []) == "abc-agent-x1"
    beside = tmp_path / "proj" / "agent-x2.jsonl"
    assert session_id_for(beside, [{"type": "summary"}, {"sessionId": "p:1"}]) == "p-1-agent-x2"
    assert session_id_for(beside, []) == "agent-x2", "no parent to name: the stem"
    assert session_id_for(tmp_path / "9e8f.jsonl", [{"sessionId": "other"}]) == "9e8f", "main: the stem"


def test_sessions_in_skips_what_is_not_a_claude_transcript(tmp_path: Path) -> None:
    shutil.copy(BASIC, tmp_path / BASIC.name)
    (tmp_path / "only-summary.jsonl").write_text('{"type":"summary","summary":"x","leafUuid":"y"}\n')
    (tmp_path / "x.funes.jsonl").write_text(BASIC.read_text(encoding="utf-8"))
    (tmp_path / "notes.jsonl").write_text('{"type":"user","text":"no message object"}\n')
    refs = ClaudeConverter().sessions_in(tmp_path)
    assert [r.path.name for r in refs] == [BASIC.name]
    assert ClaudeConverter().sessions_in(tmp_path / "missing") == []


def test_discover_finds_sessions_and_subagents_newest_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "home", home)
    refs = ClaudeConverter().discover(home)
    names = [r.session_id for r in refs]
    assert len(names) == 4 and "3c1d8e7f-6a5b-4c3d-9e2f-7a8b9c0d1e2f-agent-a4f2e91" in names
    for number, ref in enumerate(refs):
        os.utime(ref.path, (1_000_000 + number, 1_000_000 + number))
    assert [r.session_id for r in ClaudeConverter().discover(home)] == names[::-1]


# -- growth, /compact, torn and undecodable lines --------------------------------------------------


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_prefix_of_every_transcript_keeps_its_ids_and_seqs(case: Path, tmp_path: Path) -> None:
    for source in sorted(case.rglob("*.jsonl")):
        if source.name == "expected.funes.jsonl":
            continue
        full = convert(source)
        lines = _lines(source)
        grown = tmp_path / source.relative_to(case)
        grown.parent.mkdir(parents=True, exist_ok=True)
        for cut in range(len(lines) + 1):
            grown.write_bytes(b"".join(lines[:cut]))
            earlier = convert(grown)
            assert keys(earlier) == keys(full)[: len(earlier)], f"{source.name} cut after line {cut}"
            assert earlier == full[: len(earlier)], "the turns already emitted are re-emitted unchanged"
            if cut < len(lines):  # the next line half written: nothing changes
                grown.write_bytes(b"".join(lines[:cut]) + lines[cut][: len(lines[cut]) // 2])
                assert keys(convert(grown)) == keys(earlier)


def test_compact_appends_and_earlier_turns_keep_their_ids(tmp_path: Path) -> None:
    lines = _lines(COMPACTED)
    boundary = next(i for i, line in enumerate(lines) if b'"compact_boundary"' in line)
    live = tmp_path / COMPACTED.name
    live.write_bytes(b"".join(lines[:boundary]))
    before = convert(live)
    live.write_bytes(b"".join(lines))
    after = convert(live)
    assert after[: len(before)] == before
    summary = after[len(before)]
    assert summary.turn_uuid == "9e8f4b21-0000-4000-8000-000000000005" and summary.seq == len(before)
    assert summary.blocks[0].text.startswith("This session is being continued")


def test_a_repeated_uuid_is_one_turn_or_a_suffixed_new_turn() -> None:
    turns = convert(FIXTURES / "cases" / "edge" / "0f0e0d0c-0b0a-4908-8706-050403020100.jsonl")
    uuids = [t.turn_uuid for t in turns]
    assert uuids.count("0f0e0d0c-0000-4000-8000-000000000003") == 1
    assert "0f0e0d0c-0000-4000-8000-000000000003@3" in uuids
    assert uuids[0] == "rec-2", "no uuid: the position among readable records"


def test_undecodable_bytes_spoil_only_their_line(tmp_path: Path) -> None:
    lines = _lines(BASIC)
    bad = lines[2].replace("Ünïcödé".encode(), b"\xff\xfe")
    path = tmp_path / BASIC.name
    path.write_bytes(b"".join([*lines[:2], bad, *lines[3:]]))
    turns = convert(path)
    assert keys(turns) == keys(convert(BASIC))
    assert "\ufffd" in turns[0].blocks[0].text


def test_garbage_lines_anywhere_change_nothing(tmp_path: Path) -> None:
    lines = _lines(BASIC)
    path = tmp_path / BASIC.name
    noisy: list[bytes] = []
    for line in lines:
        noisy += [line, b"\n", b"{not json\n", b"[1, 2]\n", b'"a string"\n']
    path.write_bytes(b"".join(noisy))
    assert turns_to_jsonl(convert(path)) == turns_to_jsonl(convert(BASIC))


def test_every_turn_validates_against_the_turns_format() -> None:
    for case in CASES:
        for turn in convert(case):
            assert parse_line(turns_to_jsonl([turn])) == turn


def test_an_unreadable_file_converts_to_nothing(tmp_path: Path) -> None:
    ref = SessionRef("gone", tmp_path / "gone.jsonl", 0.0)
    assert ClaudeConverter().convert(ref) == []


def test_a_result_is_named_after_the_latest_call_before_it() -> None:
    turns = convert(FIXTURES / "cases" / "edge" / "0f0e0d0c-0b0a-4908-8706-050403020100.jsonl")
    results = [(t.turn_uuid, b.tool_name) for t in turns for b in t.blocks if b.tool_use_id == "toolu_04Late"]
    assert results == [
        ("0f0e0d0c-0000-4000-8000-000000000005", None),  # before any call with that id
        ("0f0e0d0c-0000-4000-8000-000000000006", "Query"),
        ("0f0e0d0c-0000-4000-8000-000000000007", "QueryAgain"),
        ("0f0e0d0c-0000-4000-8000-000000000012", "QueryAgain"),  # two calls with one id: the last
    ]


def test_a_uuid_written_three_times_emits_each_content_once(tmp_path: Path) -> None:
    def record(text: str) -> str:
        message = {"role": "user", "content": text}
        return json.dumps(
            {"type": "user", "uuid": "u1", "timestamp": "2026-03-01T00:00:00Z", "message": message}
        )

    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([record("a"), record("b"), record("b"), record("a"), record("c")]) + "\n")
    assert [(t.turn_uuid, t.blocks[0].text, t.seq) for t in convert(path)] == [
        ("u1", "a", 0),
        ("u1@2", "b", 1),
        ("u1@5", "c", 2),
    ]


def test_retention_says_how_long_claude_code_keeps_transcripts(tmp_path: Path) -> None:
    """``cleanupPeriodDays`` (30 by default): install says it, because funes' copy then outlives it."""
    from funes_claude import ClaudeConverter

    settings = tmp_path / ".claude" / "settings.json"
    converter = ClaudeConverter()
    assert converter.retention(tmp_path) == (
        f"Claude Code deletes transcripts after 30 days (the default; set cleanupPeriodDays in {settings} "
        "to keep them longer)"
    )
    settings.parent.mkdir()
    settings.write_text('{"cleanupPeriodDays": 90, "theme": "dark"}', encoding="utf-8")
    assert converter.retention(tmp_path) == (
        f"Claude Code deletes transcripts after 90 days (cleanupPeriodDays in {settings})"
    )
    for broken in ("{not json", "[1, 2]", '{"cleanupPeriodDays": "90"}', '{"cleanupPeriodDays": true}'):
        settings.write_text(broken, encoding="utf-8")
        assert "after 30 days (the default" in converter.retention(tmp_path), broken

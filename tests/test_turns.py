"""The turns format: one accept/reject case per rule, asserting the exact message and line."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from funes_core.turns.format import (
    Block,
    Turn,
    TurnsFormatError,
    decode_taint,
    load_schema,
    parse_line,
    read_turns_file,
    turns_to_jsonl,
    write_turns_file,
)

GOOD: dict[str, Any] = {
    "session_id": "s1",
    "turn_uuid": "t1",
    "seq": 0,
    "ts": "2026-03-02T09:14:03Z",
    "role": "user",
    "harness": "claude",
    "blocks": [{"block_type": "text", "text": "hello"}],
}


def with_(**changes: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if value is _DROP:
            out.pop(key, None)
        else:
            out[key] = value
    return out


_DROP = object()

REJECT_CASES = [
    pytest.param(
        with_(
            blocks=[
                {"block_type": "text", "text": "a"},
                {"block_type": "text", "text": "b"},
                {"block_type": "image", "text": "x"},
            ]
        ),
        "blocks[2].block_type: 'image' is not one of text, thinking, tool_use, tool_result",
        id="bad-block-type",
    ),
    pytest.param(with_(session_id="a:b"), "session_id: 'a:b' must not contain ':'", id="colon-session"),
    pytest.param(with_(turn_uuid="x:1"), "turn_uuid: 'x:1' must not contain ':'", id="colon-turn"),
    pytest.param(
        with_(ts="2026-03-02T09:14:03+01:00"),
        "ts: '2026-03-02T09:14:03+01:00' is not an RFC 3339 UTC timestamp ending in 'Z'",
        id="non-utc-ts",
    ),
    pytest.param(
        with_(ts="2026-02-30T09:14:03Z"),
        "ts: '2026-02-30T09:14:03Z' is not a real date and time",
        id="bad-date",
    ),
    pytest.param(with_(harness="Claude Code"), "harness: 'Claude Code' must match [a-z0-9_-]+", id="harness"),
    pytest.param(with_(format=3), "format: unknown format 3 (this funes reads 1, 2)", id="unknown-format"),
    pytest.param(with_(extra=1), "extra: unknown field", id="unknown-turn-field"),
    pytest.param(
        with_(blocks=[{"block_type": "text", "text": "a", "colour": "red"}]),
        "blocks[0].colour: unknown field",
        id="unknown-block-field",
    ),
    pytest.param(with_(session_id=_DROP), "session_id: missing required field", id="missing-field"),
    pytest.param(
        with_(blocks=[{"block_type": "text"}]),
        "blocks[0].text: missing required field",
        id="missing-block-text",
    ),
    pytest.param(with_(seq="3"), "seq: expected an integer, got '3'", id="wrong-type"),
    pytest.param(with_(seq=True), "seq: expected an integer, got true", id="bool-is-not-int"),
    pytest.param(with_(seq=-1), "seq: must be >= 0, got -1", id="negative-seq"),
    pytest.param(
        with_(workdir="-home-u"),
        "workdir: is computed by funes and must not appear in a turns file",
        id="owned",
    ),
    pytest.param(
        with_(taint="external"), 'taint: is a format 2 field: add "format": 2 to the turn', id="taint-needs-2"
    ),
]


@pytest.mark.parametrize(("obj", "message"), REJECT_CASES)
def test_reject_names_file_line_field(tmp_path: Path, obj: dict[str, Any], message: str) -> None:
    path = tmp_path / "a.funes.jsonl"
    good = json.dumps(GOOD)
    path.write_text(
        "\n".join([good, good.replace('"t1"', '"t2"').replace('"seq": 0', '"seq": 1'), json.dumps(obj)])
        + "\n"
    )
    with pytest.raises(TurnsFormatError) as info:
        read_turns_file(path, display="exports/a.funes.jsonl")
    assert str(info.value) == f"exports/a.funes.jsonl:3: {message}"
    assert info.value.line == 3


def test_not_json_and_not_object(tmp_path: Path) -> None:
    path = tmp_path / "x.funes.jsonl"
    path.write_text(json.dumps(GOOD) + "\n{oops\n")
    with pytest.raises(TurnsFormatError, match=r"x\.funes\.jsonl:2: not valid JSON"):
        read_turns_file(path, display="x.funes.jsonl")
    path.write_text("[1, 2]\n")
    with pytest.raises(TurnsFormatError, match=r":1: expected a JSON object, got list"):
        read_turns_file(path)


def test_not_utf8_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "x.funes.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n\xff\xfe\n")
    with pytest.raises(TurnsFormatError, match="not UTF-8"):
        read_turns_file(path)


ACCEPT_CASES = [
    pytest.param(GOOD, id="minimal"),
    pytest.param(with_(ts="2026-03-02T09:14:03.500000Z"), id="fractional-ts"),
    pytest.param(with_(blocks=[]), id="empty-blocks"),
    pytest.param(with_(cwd="/home/u/x", parent_uuid="t0"), id="optional-fields"),
    pytest.param(with_(parent_uuid=None), id="null-parent"),
    pytest.param(with_(format=1), id="explicit-format-1"),
    pytest.param(with_(format=2, taint="external"), id="format-2-taint"),
    pytest.param(with_(harness="my_agent-2"), id="harness-charset"),
    pytest.param(
        with_(blocks=[{"block_type": "tool_use", "text": "{}", "tool_name": "Bash", "tool_use_id": "u1"}]),
        id="tool-fields",
    ),
]


@pytest.mark.parametrize("obj", ACCEPT_CASES)
def test_accept(obj: dict[str, Any]) -> None:
    turn = parse_line(json.dumps(obj))
    assert turn.session_id == obj["session_id"]
    # The published schema agrees with the validator on every accepted case.
    jsonschema.validate(obj, load_schema())


@pytest.mark.parametrize(("obj", "message"), [c for c in REJECT_CASES if c.id != "bad-date"])
def test_published_schema_rejects_what_funes_rejects(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(obj, load_schema())


def test_unknown_taint_decodes_external_with_warning(tmp_path: Path) -> None:
    path = tmp_path / "t.funes.jsonl"
    path.write_text(json.dumps(with_(format=2, taint="trusted")) + "\n")
    parsed = read_turns_file(path, display="t.funes.jsonl")
    assert parsed.turns[0].taint == "external"
    assert parsed.warnings == ["t.funes.jsonl:1: taint: unknown value 'trusted' read as 'external'"]
    assert decode_taint("internal") == "internal"
    assert decode_taint("INTERNAL") == "external"
    assert decode_taint(None) == "external"


def test_absent_taint_is_internal() -> None:
    assert parse_line(json.dumps(GOOD)).taint == "internal"


def test_dense_seq_and_duplicates_are_warnings(tmp_path: Path) -> None:
    rows = [with_(seq=0), with_(turn_uuid="t2", seq=2), with_(turn_uuid="t3", seq=2)]
    path = tmp_path / "g.funes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    parsed = read_turns_file(path, display="g.funes.jsonl")
    assert len(parsed.turns) == 3
    assert "g.funes.jsonl: session s1: seq 2 is used by turns t2 and t3" in parsed.warnings
    assert "g.funes.jsonl: session s1: seq is not dense: jumps from 0 to 2" in parsed.warnings


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "b.funes.jsonl"
    path.write_text("\n" + json.dumps(GOOD) + "\n\n")
    assert len(read_turns_file(path).turns) == 1


def test_lone_surrogate_becomes_replacement_char() -> None:
    raw = json.dumps(with_(blocks=[{"block_type": "text", "text": "a\ud800b"}]))
    turn = parse_line(raw)
    assert turn.blocks[0].text == "a\ufffdb"
    turn.blocks[0].text.encode("utf-8")


def test_write_is_atomic_and_stamps_mtime(tmp_path: Path) -> None:
    turn = parse_line(json.dumps(GOOD))
    target = tmp_path / "spool" / "s1.funes.jsonl"
    write_turns_file(target, [turn], mtime=1_700_000_000)
    assert target.stat().st_mtime == 1_700_000_000
    assert [p.name for p in target.parent.iterdir()] == ["s1.funes.jsonl"]
    assert read_turns_file(target).turns == [turn]


# -- round trip -------------------------------------------------------------------------------------

_ids = st.text(st.characters(blacklist_characters=":", blacklist_categories=("Cs",)), min_size=1, max_size=20)
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
_blocks = st.builds(
    Block,
    block_type=st.sampled_from(["text", "thinking", "tool_use", "tool_result"]),
    text=_text,
    tool_name=st.none() | st.text(max_size=10),
    tool_use_id=st.none() | st.text(max_size=10),
)
_ts = st.datetimes(min_value=datetime(1970, 1, 1), timezones=st.just(UTC)).map(
    lambda d: d.strftime("%Y-%m-%dT%H:%M:%S") + (f".{d.microsecond:06d}" if d.microsecond else "") + "Z"
)
valid_turns = st.builds(
    Turn,
    session_id=_ids,
    turn_uuid=_ids,
    seq=st.integers(min_value=0, max_value=10**9),
    ts=_ts,
    role=st.sampled_from(["user", "assistant", "tool", "system"]),
    harness=st.from_regex(r"[a-z0-9_-]{1,12}", fullmatch=True),
    blocks=st.lists(_blocks, max_size=4).map(tuple),
    cwd=st.none() | st.text(max_size=30),
    parent_uuid=st.none() | _ids,
    taint=st.sampled_from(["internal", "external"]),
)


@given(valid_turns)
def test_any_valid_turn_round_trips(turn: Turn) -> None:
    line = turns_to_jsonl([turn])
    parsed = parse_line(line)
    expected_format = 2 if turn.taint == "external" else 1
    assert parsed == dataclasses.replace(turn, format=expected_format)

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
    MAX_BLOCKS,
    MAX_LINE_BYTES,
    Block,
    Turn,
    TurnsFormatError,
    decode_taint,
    is_safe_id,
    load_schema,
    parse_line,
    read_turns_file,
    safe_id,
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
    *(
        pytest.param(
            with_(session_id=value),
            f"session_id: {shown} is not a valid session id: printable characters but white space and ':', "
            "not starting with '-', 512 at most",
            id=f"session_id-{label}",
        )
        for label, value, shown in (
            ("colon", "a:b", "'a:b'"),
            ("newline", "a\nb", "'a\\nb'"),
            ("trailing-newline", "ab\n", "'ab\\n'"),
            ("space", "a b", "'a b'"),
            ("nbsp", "a\u00a0b", "'a\\xa0b'"),
            ("option", "-rf", "'-rf'"),
            ("escape", "a\x1b[2J", "'a\\x1b[2J'"),
            ("c1", "a\x9bb", "'a\\x9bb'"),
            ("empty", "", "''"),
            ("long", "a" * 513, "'" + "a" * 59 + "… (515 chars)"),
            # not printable in Unicode: refused by funes beyond what a JSON Schema pattern can say
            ("bidi", "notes/\u202egnp.md", "'notes/\\u202egnp.md'"),
            ("zero-width", "a\u200bb", "'a\\u200bb'"),
            ("tag", "a\U000e0041b", "'a\\U000e0041b'"),
        )
    ),
    pytest.param(
        with_(turn_uuid="x:1"),
        "turn_uuid: 'x:1' must not contain ':' (ids use letters, digits and . _ @ -)",
        id="colon-turn",
    ),
    *(
        pytest.param(
            with_(**{name: value}),
            f"{name}: {shown} is not a valid id: letters, digits and . _ @ -, starting with a letter or "
            "digit, 128 at most",
            id=f"{name}-{label}",
        )
        for name in ("turn_uuid", "parent_uuid")
        for label, value, shown in (
            ("newline", "a\nb", "'a\\nb'"),
            ("trailing-newline", "ab\n", "'ab\\n'"),
            ("shell", "x$(id)", "'x$(id)'"),
            ("space", "a b", "'a b'"),
            ("option", "-rf", "'-rf'"),
            ("dot", ".hidden", "'.hidden'"),
            ("slash", "../up", "'../up'"),
            ("escape", "a\x1b[2J", "'a\\x1b[2J'"),
            ("unicode", "sessión", "'sessión'"),
            ("empty", "", "''"),
            ("long", "a" * 129, "'" + "a" * 59 + "… (131 chars)"),
        )
    ),
    pytest.param(
        with_(harness="claude\n"), "harness: 'claude\\n' must match [a-z0-9_-]+", id="harness-newline"
    ),
    pytest.param(
        with_(ts="2026-03-02T09:14:03Z\n"),
        "ts: '2026-03-02T09:14:03Z\\n' is not an RFC 3339 UTC timestamp ending in 'Z'",
        id="ts-newline",
    ),
    pytest.param(
        with_(seq=2**53), "seq: must be at most 9007199254740991, got 9007199254740992", id="seq-2^53"
    ),
    pytest.param(
        with_(seq=2**63), "seq: must be at most 9007199254740991, got 9223372036854775808", id="seq-2^63"
    ),
    pytest.param(with_(role="r" * 65), "role: is 65 characters long; at most 64 are allowed", id="long-role"),
    pytest.param(
        with_(cwd="/" * 4097), "cwd: is 4,097 characters long; at most 4,096 are allowed", id="long-cwd"
    ),
    pytest.param(
        with_(blocks=[{"block_type": "tool_use", "text": "x", "tool_name": "t" * 257}]),
        "blocks[0].tool_name: is 257 characters long; at most 256 are allowed",
        id="long-tool-name",
    ),
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
    pytest.param(
        {**GOOD, "bad\x1b[2J\nname": 1},
        "'bad\\x1b[2J\\nname': unknown field",
        id="unknown-field-name-with-controls",
    ),
    pytest.param(
        {**GOOD, "x" * 5000: 1},
        f"'{'x' * 59}… (5,002 chars): unknown field",
        id="unknown-field-name-5000-chars",
    ),
    pytest.param(
        {**GOOD, "ghp_" + "Zq8" * 12: 1},
        "[REDACTED:github_token]: unknown field",
        id="unknown-field-name-is-a-token",
    ),
    pytest.param(
        with_(blocks=[{"block_type": "text", "text": "a", "a\u202eb": "red"}]),
        "blocks[0].'a\\u202eb': unknown field",
        id="unknown-block-field-name-bidi",
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


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"session_id": "a\tb"}', "not valid JSON: invalid control character at column 18"),
        ('{"session_id": "abc', "not valid JSON: unterminated string starting at column 16"),
        ('{"a": 1} x', "not valid JSON: extra data at column 10"),
        ('{"a" 1}', "not valid JSON: expecting ':' delimiter at column 6"),
        ('{"a": "\\q"}', "not valid JSON: invalid \\escape at column 8"),
        ("{", "not valid JSON: expecting property name enclosed in double quotes at column 2"),
        ("\ufeff{}", "not valid JSON: unexpected UTF-8 BOM (decode using utf-8-sig) at column 1"),
        ("[" * 100_000 + "]" * 100_000, "not valid JSON: nested too deeply"),
    ],
)
def test_json_errors_say_where_once(tmp_path: Path, line: str, message: str) -> None:
    """Python's messages that end in "at" get the column once ("at column 17", never "at at")."""
    path = tmp_path / "j.funes.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(TurnsFormatError) as info:
        read_turns_file(path, display="j.funes.jsonl")
    assert str(info.value) == f"j.funes.jsonl:2: {message}"
    assert "at at" not in str(info.value)


def test_not_utf8_names_the_line_and_the_file_offset(tmp_path: Path) -> None:
    """The offset is the file's, not the decoder's chunk's (it was 4,526 for a byte at 86,446)."""
    good = [json.dumps({**GOOD, "turn_uuid": f"t{i}", "seq": i}) for i in range(500)]
    bad = json.dumps(
        {**GOOD, "turn_uuid": "t500", "seq": 500, "blocks": [{"block_type": "text", "text": "café"}]}
    )
    data = ("\n".join(good) + "\n").encode() + bad.encode().replace(b"\\u00e9", b"\xe9") + b"\n"
    offset = data.index(b"\xe9")
    path = tmp_path / "x.funes.jsonl"
    path.write_bytes(data)
    with pytest.raises(TurnsFormatError) as info:
        read_turns_file(path, display="x.funes.jsonl")
    column = offset - data.rindex(b"\n", 0, offset)
    assert str(info.value) == (
        f"x.funes.jsonl:501: not UTF-8 text (invalid continuation byte at byte {offset:,} of the file, "
        f"byte {column} of the line)"
    )
    assert info.value.line == 501


def test_a_quoted_value_is_redacted_escaped_and_short(tmp_path: Path) -> None:
    """Refusals persist in state.json and status (read by agents over MCP): no secret may ride along."""
    token = "ghp_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    cases = {
        "obj": with_(
            blocks=[{"block_type": "text", "text": {"env": {"GITHUB_TOKEN": token}, "pad": "x" * 5000}}]
        ),
        "role": with_(role={"r": token}),
        "harness": with_(harness="Claude " + token),
        "ts": with_(ts="2026-01-01 " + token),
        "sid": with_(session_id=token + "\x1b[2J:"),
    }
    for name, obj in cases.items():
        path = tmp_path / f"{name}.funes.jsonl"
        path.write_text(json.dumps(obj) + "\n")
        with pytest.raises(TurnsFormatError) as info:
            read_turns_file(path)
        message = str(info.value)
        assert token not in message, name
        assert "\x1b" not in message and "\n" not in message, name
        assert len(message) < len(str(path)) + 160, (name, message)
    path = tmp_path / "taint.funes.jsonl"
    path.write_text(json.dumps(with_(format=2, taint="weird " + token)) + "\n")
    warning = read_turns_file(path).warnings[0]
    assert token not in warning and "[REDACTED:github_token]" in warning


def test_lone_surrogates_are_cleaned_in_text_fields_and_refused_in_ids() -> None:
    """They are legal JSON escapes but cannot be encoded (chunk ids, the store): never a crash."""
    raw = json.dumps(
        with_(
            role="us\udc00er",
            cwd="/tmp/\ud800",
            blocks=[{"block_type": "tool_use", "text": "x", "tool_name": "T\ud800", "tool_use_id": "\udfff"}],
        )
    )
    turn = parse_line(raw)
    assert (turn.role, turn.cwd) == ("us\ufffder", "/tmp/\ufffd")
    assert (turn.blocks[0].tool_name, turn.blocks[0].tool_use_id) == ("T\ufffd", "\ufffd")
    for name in ("session_id", "turn_uuid", "parent_uuid"):
        with pytest.raises(TurnsFormatError, match=f"{name}: .* is not a valid (session )?id"):
            parse_line(json.dumps(with_(**{name: "s\ud800"})))


def test_a_turn_keeps_its_first_thousand_blocks_and_says_how_many_more(tmp_path: Path) -> None:
    blocks = [{"block_type": "text", "text": f"b{i}"} for i in range(MAX_BLOCKS + 234)]
    turn = parse_line(json.dumps(with_(blocks=blocks)))
    assert len(turn.blocks) == MAX_BLOCKS + 1
    assert turn.blocks[MAX_BLOCKS - 1].text == f"b{MAX_BLOCKS - 1}"
    assert turn.blocks[-1] == Block(
        "text", "[… funes left out 234 more blocks of this turn: a turn keeps 1,000 …]"
    )


def test_a_line_over_the_cap_is_read_with_its_long_strings_cut(tmp_path: Path) -> None:
    """A 20 MB tool output is kept (its first 256 KiB and a marker), not refused, not held whole."""
    big = '0123456789abcdé\\"\n' * 1_100_000  # ~20 MB of JSON-escaped text, multi-byte too
    obj = with_(blocks=[{"block_type": "tool_result", "text": big}, {"block_type": "text", "text": "after"}])
    line = json.dumps(obj, ensure_ascii=False)
    assert len(line.encode()) > MAX_LINE_BYTES
    path = tmp_path / "big.funes.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + line + "\n" + json.dumps(with_(turn_uuid="t9", seq=1)) + "\n")
    parsed = read_turns_file(path)
    assert len(parsed.turns) == 3
    cut = parsed.turns[1].blocks[0].text
    head, _, marker = cut.partition("[… funes left out ")
    assert big.startswith(head)
    raw = lambda text: len(json.dumps(text, ensure_ascii=False).encode()) - 2  # noqa: E731 (JSON bytes)
    assert 256 * 1024 - 6 <= raw(head) <= 256 * 1024
    left = raw(big) - raw(head)
    assert marker == f"{left:,} bytes of this value: a turns-file line is read up to 16 MiB …]"
    assert parsed.turns[1].blocks[1].text == "after"


def test_a_line_over_the_cap_even_when_cut_is_refused(tmp_path: Path) -> None:
    blocks = [{"block_type": "text", "text": "x"}] * 700_000  # 17 MB of tiny blocks
    path = tmp_path / "many.funes.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(with_(blocks=blocks)) + "\n")
    with pytest.raises(TurnsFormatError) as info:
        read_turns_file(path, display="many.funes.jsonl")
    assert str(info.value) == (
        "many.funes.jsonl:2: line is over 16 MiB even with every string in it cut to 256 KiB "
        "(split the turn into several)"
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("8d41b7e2-0c3f-4a9b-b5d6-7e2a1f9c3084", "8d41b7e2-0c3f-4a9b-b5d6-7e2a1f9c3084"),
        ("abc@2", "abc@2"),
        ("a b:c", "a-b-c-"),
        ("../../etc/passwd", "etc-passwd-"),
        ("x$(id)", "x-id-"),
        ("séance", "s-ance-"),
        ("-rf", "rf-"),
        ("", "id-"),
    ],
)
def test_safe_id_is_identity_on_legal_ids_and_stable_elsewhere(raw: str, expected: str) -> None:
    out = safe_id(raw)
    assert is_safe_id(out)
    assert out.startswith(expected)
    assert safe_id(raw) == out
    if expected != raw:
        assert len(out) == len(expected) + 12
    assert safe_id("a b") != safe_id("a\tb")  # same slug, different ids


ACCEPT_CASES = [
    pytest.param(GOOD, id="minimal"),
    pytest.param(with_(ts="2026-03-02T09:14:03.500000Z"), id="fractional-ts"),
    pytest.param(with_(blocks=[]), id="empty-blocks"),
    pytest.param(with_(cwd="/home/u/x", parent_uuid="t0"), id="optional-fields"),
    pytest.param(with_(seq=2**53 - 1), id="largest-seq"),
    # A session may be named after a document (the notes source): printable, one word, no ':'.
    *(
        pytest.param(with_(session_id=value), id=f"session-{label}")
        for label, value in (
            ("path", "notes/daily/2026-03-01.md"),
            ("percent", "notes/My%20Notes%20(draft).md"),
            ("unicode", "notes/sessión-日记.md"),
            ("dot", ".hidden"),
            ("shell", "x$(id)"),
            ("longest", "a" * 512),
        )
    ),
    pytest.param(
        with_(
            session_id="8d41b7e2-0c3f-4a9b-b5d6-7e2a1f9c3084",
            turn_uuid="8d41b7e2-0c3f-4a9b-b5d6-7e2a1f9c3084@2026-03-02T091403.500Z",
            parent_uuid="20250101_120000_abc.def",
        ),
        id="id-charset",
    ),
    pytest.param(with_(session_id="a" * 128), id="longest-id"),
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


_PYTHON_ONLY = {"bad-date", "session_id-bidi", "session_id-zero-width", "session_id-tag"}


@pytest.mark.parametrize(("obj", "message"), [c for c in REJECT_CASES if c.id not in _PYTHON_ONLY])
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

_ids = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._@-]{0,19}\Z")
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

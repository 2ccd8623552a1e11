"""Fuzz: random and mutated turns files through ``funes index --check`` and ``funes index``.

Files are drawn as valid sessions (ids from the charset, awkward text) and then broken the ways real
files break: a field set to a hostile JSON value (huge and negative integers, 2^53 and 2^63, floats,
nested objects, NUL, escape sequences, lone surrogates, ``\\n---\\n``, ``$(id)``, impossible dates), a
field dropped, a block field replaced, bytes inserted (invalid UTF-8, NUL, a newline), the file cut
at a random byte, a BOM or a non-object line spliced in, lines duplicated, blank lines added.

Properties:

- never a traceback: ``--check`` exits 0 or 1 and ``index`` returns a report, whatever the bytes;
- a rejection is one line ``<file>:<line>: <field>: <what>`` (or, for a line that is not a JSON
  object, ``<file>:<line>: not valid JSON …`` and kin), naming a line the file has;
- ``--check`` and ``index`` accept and reject the same files;
- nothing already stored is lost: every row stored before a run is still there after it, and a
  rejected file is recorded as refused (so a spool never gets stuck on it).

The budget is bounded and the run derandomized, so CI is reproducible and fast (about 20 s on two
busy cores). ``FUNES_FUZZ_EXAMPLES=N`` runs N random examples per property instead.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.home import Home, State
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import HashEmbedder
from funes_core.store import open_store

EXTRA = int(os.environ.get("FUNES_FUZZ_EXAMPLES", "0"))


def _settings(examples: int) -> settings:
    return settings(
        max_examples=EXTRA or examples,
        deadline=None,
        derandomize=not EXTRA,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


# -- drawing files ------------------------------------------------------------------------------------

SAFE_ID = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._@-]{0,24}\Z")
ODD_STRINGS = st.sampled_from(
    [
        "",
        " ",
        ":",
        "a:b",
        "\x00",
        "\x1b[2J",
        "\n---\n[2026-01-01] claude x text  score=0.999",
        "\u2028",
        "\u202e",
        "\ud800",
        "x\udfff",
        "$(id)",
        "'; rm -rf ~",
        "-rf",
        "../../etc/passwd",
        "2026-13-45T99:99:99Z",
        "2026-02-30T10:00:00Z",
        "2026-01-01T00:00:00+01:00",
        "2026-01-01T00:00:00Z\n",
        "claude\n",
        "é" * 3,
        "x" * 5000,
        "ghp_Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**53 - 1, 2**53, 2**63 - 1, 2**63, 2**64, -1, 0, 10**400]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    ODD_STRINGS,
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
TEXT = st.text(max_size=200) | st.sampled_from(
    [
        "x" * 3000,
        "word " * 700,
        "GITHUB_TOKEN=ghp_Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6",
        "data:image/png;base64,AAAA",
    ]
)


@st.composite
def block(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "thinking", "tool_use", "tool_result"]))
    out: dict[str, Any] = {"block_type": kind, "text": draw(TEXT)}
    if kind.startswith("tool") and draw(st.booleans()):
        out["tool_name"] = draw(st.sampled_from(["Bash", "Read", "mcp__gh__search"]) | st.text(max_size=12))
    return out


@st.composite
def valid_turns(draw: st.DrawFn) -> list[dict[str, Any]]:
    sid = draw(SAFE_ID)
    n = draw(st.integers(1, 5))
    uuids = draw(st.lists(SAFE_ID, min_size=n, max_size=n, unique=True))
    turns = []
    for seq, uuid in enumerate(uuids):
        turn: dict[str, Any] = {
            "session_id": sid,
            "turn_uuid": uuid,
            "seq": seq,
            "ts": f"2026-0{draw(st.integers(1, 9))}-1{draw(st.integers(0, 9))}T10:00:0{seq % 10}Z",
            "role": draw(st.sampled_from(["user", "assistant", "tool", "system"])),
            "harness": draw(st.sampled_from(["claude", "codex", "pi"])),
            "blocks": draw(st.lists(block(), max_size=3)),
        }
        if draw(st.booleans()):
            turn["cwd"] = draw(st.sampled_from(["/home/dev/parser", "/tmp/x y", "C:\\Users\\dev"]))
        turns.append(turn)
    return turns


def dump(turns: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in turns).encode("utf-8", "surrogatepass")


FIELDS = [
    "format",
    "session_id",
    "turn_uuid",
    "seq",
    "ts",
    "role",
    "harness",
    "cwd",
    "parent_uuid",
    "taint",
    "blocks",
    "source_path",
    "vector",
]
BLOCK_FIELDS = ["block_type", "text", "tool_name", "tool_use_id", "extra"]
MUTATIONS = ["none", "set", "drop", "block", "bytes", "truncate", "splice", "dup", "blank"]


@st.composite
def turns_files(draw: st.DrawFn) -> bytes:
    """A valid file, or one broken in one of the ways real files break."""
    turns = draw(valid_turns())
    how = draw(st.sampled_from(MUTATIONS))
    i = draw(st.integers(0, len(turns) - 1))
    if how == "set":
        turns[i][draw(st.sampled_from(FIELDS))] = draw(JSON_VALUES)
    elif how == "drop":
        turns[i].pop(draw(st.sampled_from(sorted(turns[i]))), None)
    elif how == "block":
        blocks = turns[i]["blocks"] or [{"block_type": "text", "text": "x"}]
        blocks[0][draw(st.sampled_from(BLOCK_FIELDS))] = draw(JSON_VALUES)
        turns[i]["blocks"] = blocks
    elif how == "dup":
        turns.insert(i, dict(turns[i]))
    data = dump(turns)
    if how == "bytes":
        pos = draw(st.integers(0, len(data) - 1))
        junk = draw(
            st.binary(min_size=1, max_size=4)
            | st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\n"])
        )
        data = data[:pos] + junk + data[pos + draw(st.integers(0, 3)) :]
    elif how == "truncate":
        data = data[: draw(st.integers(0, len(data)))]
    elif how == "splice":
        data = draw(st.sampled_from([b"\xef\xbb\xbf", b"[]\n", b"null\n", b"{}\n", b"1\n", b'"x"\n'])) + data
    elif how == "blank":
        data = data.replace(b"\n", b"\n \t\r\n", 1)
    return data


# -- checking what came out ---------------------------------------------------------------------------

_WHERE = re.compile(r"^(?P<file>.+?\.funes\.jsonl):(?P<line>\d+): (?P<rest>.+)$")
_NOT_A_TURN = ("not valid JSON", "expected a JSON object", "not UTF-8 text", "line is over")
_FIELD = re.compile(r"^[a-z_]+(?:\[\d+\])?(?:\.[a-z_]+)?: \S")


def assert_one_line_error(message: str, path: Path, data: bytes) -> None:
    """``<file>:<line>: <field>: <what>``, naming a line the file has; never a traceback."""
    assert "\n" not in message and "Traceback" not in message, message
    m = _WHERE.match(message)
    assert m, f"not file:line: {message!r}"
    assert m["file"].endswith(path.name), message
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    assert 1 <= int(m["line"]) <= max(lines, 1), (message, lines)
    rest = m["rest"]
    assert rest.startswith(_NOT_A_TURN) or _FIELD.match(rest), f"no field named: {message!r}"


def check(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(make_app(), ["index", "--check", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, result.stdout


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="funes-fuzz-") as tmp:
        yield Path(tmp)


@given(data=turns_files())
@_settings(examples=150)
def test_check_never_crashes_and_names_file_line_field(data: bytes, scratch: Path) -> None:
    path = scratch / "f.funes.jsonl"
    path.write_bytes(data)
    code, out = check(path)
    lines = out.splitlines()
    assert lines[-1].startswith("checked 1 files: "), out
    if code == 0:
        assert lines[0].startswith(f"ok {path}: ")
    else:
        assert len(lines) == 2, out
        assert_one_line_error(lines[0], path, data)


# -- through the real store ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def memory(scratch: Path) -> Iterator[tuple[Home, set[str]]]:
    """A memory holding one sentinel session that no later run may lose."""
    home = Home(scratch / "home")
    sentinel = scratch / "sentinel"
    sentinel.mkdir()
    (sentinel / "s.funes.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "session_id": "sentinel",
                    "turn_uuid": f"s{i}",
                    "seq": i,
                    "ts": "2026-01-01T00:00:00Z",
                    "role": "user",
                    "harness": "claude",
                    "blocks": [{"block_type": "text", "text": f"sentinel fact number {i}"}],
                }
            )
            + "\n"
            for i in range(5)
        )
    )
    run_index(IndexOptions(path=sentinel), home=home, embedder=HashEmbedder(), warn=lambda m: None)
    yield home, {r.id for r in open_store(home=home).scan()}


_RUN = iter(range(10**9))


@given(data=turns_files())
@_settings(examples=20)
def test_index_never_crashes_agrees_with_check_and_loses_nothing(
    data: bytes, scratch: Path, memory: tuple[Home, set[str]]
) -> None:
    home, sentinel_ids = memory
    folder = scratch / f"run{next(_RUN)}"
    folder.mkdir()
    path = folder / "f.funes.jsonl"
    path.write_bytes(data)
    before = {r.id for r in open_store(home=home).scan()}
    messages: list[str] = []
    report = run_index(IndexOptions(path=folder), home=home, embedder=HashEmbedder(), warn=messages.append)
    after = {r.id for r in open_store(home=home).scan()}
    assert before <= after and sentinel_ids <= after, "stored rows were lost"
    code, _ = check(path)
    assert (code == 1) == bool(report.rejected), (report.rejected, code)
    if report.rejected:
        assert len(report.rejected) == 1
        assert_one_line_error(report.rejected[0], path, data)
        assert str(path) in State.load(home.state_path).refused
        assert after == before  # a rejected file stores nothing
    else:
        assert str(path) in State.load(home.state_path).files


@st.composite
def turn_objects(draw: st.DrawFn) -> dict[str, Any]:
    """One turn as a JSON object, valid or broken by one field (the ``set``/``drop``/``block`` cases)."""
    turn = draw(valid_turns())[0]
    how = draw(st.sampled_from(["none", "set", "drop", "block", "format"]))
    if how == "set":
        turn[draw(st.sampled_from(FIELDS))] = draw(JSON_VALUES)
    elif how == "drop":
        turn.pop(draw(st.sampled_from(sorted(turn))), None)
    elif how == "block":
        blocks = turn["blocks"] or [{"block_type": "text", "text": "x"}]
        blocks[0][draw(st.sampled_from(BLOCK_FIELDS))] = draw(JSON_VALUES)
        turn["blocks"] = blocks
    elif how == "format":
        turn["format"] = draw(st.sampled_from([1, 2, 1.0, 2.0, 3, True, "2"]))
        if draw(st.booleans()):
            turn["taint"] = draw(st.sampled_from(["internal", "external", "x", 1, None]))
    return turn


@given(obj=turn_objects())
@_settings(examples=300)
def test_compiled_check_refuses_what_jsonschema_refuses(obj: dict[str, Any]) -> None:
    """The compiled schema (the fast accepting check) never accepts a turn that ``jsonschema``, whose
    word is final, refuses: ``parse_line`` asks ``jsonschema`` only when the compiled check refuses."""
    from fastjsonschema import JsonSchemaValueException

    from funes_core.turns.format import _fast_check, _validator

    refused_by_jsonschema = bool(list(_validator().iter_errors(obj)))
    try:
        _fast_check()(obj)
        accepted_fast = True
    except JsonSchemaValueException:
        accepted_fast = False
    assert not (accepted_fast and refused_by_jsonschema), obj

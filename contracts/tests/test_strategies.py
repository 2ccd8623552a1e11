"""The exported hypothesis strategies draw valid turns, and the turns format round-trips them."""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path

from hypothesis import given, settings

from funes_contracts.strategies import harness_ids, session_ids, timestamps, turns
from funes_core.turns.format import is_utc_ts, parse_line, read_turns_file, turns_to_jsonl, write_turns_file


@given(turns())
def test_turns_validate_and_round_trip(session: list) -> None:  # type: ignore[type-arg]
    text = turns_to_jsonl(session)
    # split on "\n" only: str.splitlines() also splits on U+2028, which JSON keeps raw in strings.
    assert [parse_line(line) for line in text.split("\n") if line] == session


@given(turns(min_size=1))
def test_turns_are_one_dense_session(session: list) -> None:  # type: ignore[type-arg]
    assert [t.seq for t in session] == list(range(len(session)))
    assert len({t.turn_uuid for t in session}) == len(session)
    assert len({t.session_id for t in session}) == 1
    moments = [datetime.fromisoformat(t.ts.replace("Z", "+00:00")) for t in session]
    assert moments == sorted(moments)


@settings(max_examples=25)
@given(turns(session_id="s1", harness="echo", max_size=6))
def test_atomic_writer_round_trips(session: list) -> None:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_turns_file(Path(tmp) / "s1.funes.jsonl", session)
        assert read_turns_file(path).turns == session
        assert [p.name for p in Path(tmp).iterdir()] == ["s1.funes.jsonl"]


@given(harness_ids(), session_ids(), timestamps())
def test_scalar_strategies(harness: str, session_id: str, ts: str) -> None:
    assert harness and ":" not in session_id and is_utc_ts(ts)

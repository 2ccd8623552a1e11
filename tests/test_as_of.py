"""``--as-of``: recall asked as of another moment (the clock for time words and freshness), its bad inputs,
and the same flag through the CLI and the MCP ``recall`` tool."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.ingest.chunking import chunk_turn
from funes_core.models.embed import HashEmbedder
from funes_core.read.common import VerbError, parse_as_of
from funes_core.read.handle import Memory
from funes_core.read.recall import Leg, RecallArgs
from funes_core.read.recall import run as recall_run
from funes_core.store.reference import MemoryStore
from funes_core.turns.format import Block, Turn

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "sessions"
NOW = datetime(2026, 6, 1, 12, 30, tzinfo=UTC)


# -- parsing ------------------------------------------------------------------------------------------


def test_a_day_means_the_end_of_that_day_in_utc() -> None:
    moment = parse_as_of("2026-03-01", NOW)
    assert moment == datetime(2026, 3, 2, tzinfo=UTC) - timedelta(microseconds=1)


def test_today_is_capped_at_now() -> None:
    assert parse_as_of("2026-06-01", NOW) == NOW


def test_a_time_zone_offset_is_converted_to_utc_and_no_offset_means_utc() -> None:
    assert parse_as_of("2026-03-01T09:00+02:00", NOW) == datetime(2026, 3, 1, 7, tzinfo=UTC)
    assert parse_as_of("2026-03-01T09:00:00-05:30", NOW) == datetime(2026, 3, 1, 14, 30, tzinfo=UTC)
    assert parse_as_of("2026-03-01T09:00Z", NOW) == datetime(2026, 3, 1, 9, tzinfo=UTC)
    assert parse_as_of("2026-03-01 09:00", NOW) == datetime(2026, 3, 1, 9, tzinfo=UTC)
    # An offset that moves the moment across midnight moves its day too.
    assert parse_as_of("2026-03-01T23:30-02:00", NOW) == datetime(2026, 3, 2, 1, 30, tzinfo=UTC)


def test_nothing_means_now() -> None:
    assert parse_as_of(None, NOW) is None
    assert parse_as_of("", NOW) is None


@pytest.mark.parametrize("value", ["2026-06-02", "2031-01-01", "2026-06-01T12:31Z", "2026-06-01T14:00+01:00"])
def test_a_future_moment_is_refused(value: str) -> None:
    with pytest.raises(VerbError, match=r"^--as-of: '.*' is in the future \(it is 2026-06-01 12:30 UTC\)"):
        parse_as_of(value, NOW)


@pytest.mark.parametrize(
    "value",
    ["nonsense", "2026-13-01", "2026-02-30", "01/03/2026", "2026-03-01T09:00 Europe/Paris", "yesterday"],
)
def test_an_unparseable_moment_is_refused_in_one_line(value: str) -> None:
    with pytest.raises(VerbError) as info:
        parse_as_of(value, NOW)
    message = str(info.value)
    assert message.startswith(f"--as-of: {value!r} is not a date or time (YYYY-MM-DD")
    assert "\n" not in message


# -- what it does to a recall -------------------------------------------------------------------------


def _memory(*turns: Turn) -> Memory:
    emb = HashEmbedder()
    store = MemoryStore("mem")
    for t in turns:
        chunks, _ = chunk_turn(t)
        vectors = emb.embed_documents([c.text for c in chunks])
        store.add(
            [
                c.to_row(workdir="-w", repo="", source_path="x", vector=v)
                for c, v in zip(chunks, vectors, strict=True)
            ]
        )
    return Memory.of(store, emb, label="mem")


def _turn(sid: str, text: str, ts: str) -> Turn:
    return Turn(
        session_id=sid,
        turn_uuid=f"{sid}-0",
        seq=0,
        ts=ts,
        role="assistant",
        harness="claude",
        blocks=(Block("text", text),),
    )


FIXES = (
    _turn("early", "lazy_html lazy_html: the LiveView tests need lazy_html", "2026-02-05T21:00:00Z"),
    _turn("eve", "added lazy_html to the test deps", "2026-02-11T22:45:00Z"),
    _turn("later", "lazy_html removed again, the tests no longer need it", "2026-03-20T10:00:00Z"),
    _turn("misc", "a long note on other things, " * 5 + "lazy_html", "2026-01-02T10:00:00Z"),
)


def _sessions(text: str) -> list[str]:
    return [line.split("/")[1].split()[0] for line in text.splitlines() if line.startswith("[")]


def test_time_words_are_read_against_the_as_of_moment() -> None:
    mem = _memory(*FIXES)
    words = {"query": "lazy_html yesterday", "neighbors": 0, "legs": (Leg.TEXT,)}
    asked_then = recall_run(mem, RecallArgs(**words, as_of="2026-02-12T09:00Z"), now=NOW)
    assert _sessions(asked_then)[0] == "eve"  # "yesterday" is 11 February, as asked on the 12th
    asked_now = recall_run(mem, RecallArgs(**words), now=NOW)
    assert _sessions(asked_now)[0] == "early"  # 31 May holds nothing: the words decide


def test_passages_of_later_days_are_left_out_and_the_output_says_so() -> None:
    mem = _memory(*FIXES)
    text = recall_run(mem, RecallArgs("lazy_html", neighbors=0, as_of="2026-02-12"), now=NOW)
    assert sorted(_sessions(text)) == ["early", "eve", "misc"]
    assert text.rstrip().endswith("as of 2026-02-12 23:59:59 UTC: passages of later days left out")
    assert "later" in _sessions(recall_run(mem, RecallArgs("lazy_html", neighbors=0), now=NOW))
    # An explicit --until before the moment stands; one after it is cut to the moment's day.
    early = recall_run(
        mem, RecallArgs("lazy_html", neighbors=0, as_of="2026-02-12", until="2026-02-06"), now=NOW
    )
    assert _sessions(early) == ["early", "misc"]
    wide = recall_run(
        mem, RecallArgs("lazy_html", neighbors=0, as_of="2026-02-12", until="2026-12-31"), now=NOW
    )
    assert sorted(_sessions(wide)) == ["early", "eve", "misc"]
    nothing = recall_run(mem, RecallArgs("lazy_html", as_of="2025-01-01"), now=NOW)
    assert nothing.startswith("no results\n") and "as of 2025-01-01 23:59:59 UTC" in nothing


def test_freshness_is_read_against_the_as_of_moment() -> None:
    mem = _memory(_turn("week", "checkpoint starvation fixed", "2026-02-05T12:00:00Z"))
    args = {
        "query": "checkpoint starvation",
        "neighbors": 0,
        "profile": "recent",
        "as_of": "2026-02-12T12:00Z",
    }
    week_old = json.loads(recall_run(mem, RecallArgs(**args), as_json=True, now=NOW))
    plain = json.loads(recall_run(mem, RecallArgs(**{**args, "half_life": 0}), as_json=True, now=NOW))
    # The recent profile's half-life is 7 days: a passage 7 days before the moment keeps half its score.
    assert week_old["hits"][0]["score"] == pytest.approx(plain["hits"][0]["score"] / 2, rel=1e-4)
    assert week_old["params"]["as_of"] == "2026-02-12T12:00:00+00:00"
    assert week_old["params"]["filters"]["until"] == "2026-02-12"
    assert (
        json.loads(recall_run(mem, RecallArgs("checkpoint"), as_json=True, now=NOW))["params"]["as_of"]
        is None
    )


def test_since_after_the_as_of_day_is_refused() -> None:
    mem = _memory(*FIXES)
    with pytest.raises(VerbError, match=r"^--since 2026-03-01 is after --as-of 2026-02-12$"):
        recall_run(mem, RecallArgs("lazy_html", as_of="2026-02-12", since="2026-03-01"), now=NOW)


# -- the two faces ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_as_of_through_the_cli_and_the_mcp_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example sessions are of 2 March (storage), 5 March (ARM build) and 9 March 2026 (flaky flush)."""
    from funes_core.faces.mcp import make_server

    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    runner = CliRunner()
    assert runner.invoke(make_app(), ["index", str(EXAMPLES), "--wait"]).exit_code == 0

    argv = [
        "recall",
        "what did we change",
        "--neighbors",
        "0",
        "-k",
        "25",
        "--as-of",
        "2026-03-05T20:00+01:00",
    ]
    cli = runner.invoke(make_app(), argv)
    assert cli.exit_code == 0, cli.output
    days = {line[1:11] for line in cli.stdout.splitlines() if line.startswith("[20")}
    assert days and max(days) <= "2026-03-05"
    assert "as of 2026-03-05 19:00:00 UTC" in cli.stdout

    bad = runner.invoke(make_app(), ["recall", "flush", "--as-of", "next tuesday"])
    assert bad.exit_code != 0
    assert "--as-of: 'next tuesday' is not a date or time" in bad.output
    future = runner.invoke(make_app(), ["recall", "flush", "--as-of", f"{date.today().year + 5}-01-01"])
    assert future.exit_code != 0 and "is in the future" in future.output

    async def session() -> tuple[Any, Any]:
        async with Client(make_server()) as client:
            args = {"query": "what did we change", "neighbors": 0, "k": 25, "as_of": "2026-03-05T20:00+01:00"}
            good = await client.call_tool("recall", args)
            wrong = await client.call_tool("recall", {"query": "flush", "as_of": "2026-02-30"})
            return good, wrong

    good, wrong = anyio.run(session)
    text = "".join(c.text for c in good.content if getattr(c, "type", "") == "text")
    assert not good.is_error and text == cli.stdout
    wrong_text = "".join(c.text for c in wrong.content if getattr(c, "type", "") == "text")
    assert wrong.is_error and "--as-of: '2026-02-30' is not a date or time" in wrong_text

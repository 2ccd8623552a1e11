"""``funes stats`` and the telemetry behind it: numbers only, local, bounded, repaired when corrupt."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from funes_core import telemetry
from funes_core.faces.cli.app import make_app
from funes_core.home import Home

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "sessions"


@pytest.fixture
def stats_on(funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FUNES_STATS", "on")
    return funes_home.root / "stats"


def events(folder: Path) -> list[dict[str, Any]]:
    path = folder / "events.jsonl"
    return (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    )


def cli(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(), args)
    return result.exit_code, result.stdout, result.stderr


# -- recording ------------------------------------------------------------------------------------


def test_a_measurement_records_numbers_and_drops_text(stats_on: Path) -> None:
    with telemetry.measure("recall", face="mcp"):
        telemetry.add(hits=3, triggers=True, tokens=12.5, note="secret text", nan=float("nan"), query="q")
    (event,) = events(stats_on)
    assert event["kind"] == "recall" and event["face"] == "mcp" and event["ok"] is True
    assert event["hits"] == 3 and event["triggers"] == 1 and event["tokens"] == 12.5
    assert "note" not in event and "nan" not in event and "query" not in event
    assert isinstance(event["ms"], float) and isinstance(event["at"], float)
    assert (stats_on.stat().st_mode & 0o777) == 0o700
    assert ((stats_on / "events.jsonl").stat().st_mode & 0o777) == 0o600


def test_add_outside_a_measurement_does_nothing(stats_on: Path) -> None:
    telemetry.add(hits=3)
    assert not stats_on.exists()


def test_a_failed_call_is_recorded_as_not_ok_and_the_error_passes(stats_on: Path) -> None:
    with pytest.raises(KeyError), telemetry.measure("get", face="cli"):
        raise KeyError("boom")
    assert [(e["kind"], e["ok"]) for e in events(stats_on)] == [("get", False)]


def test_unrecorded_errors_leave_no_event(stats_on: Path) -> None:
    with pytest.raises(TimeoutError), telemetry.measure("index", face="cli", unrecorded=(TimeoutError,)):
        raise TimeoutError
    assert events(stats_on) == []


def test_queries_are_kept_only_when_turned_on_and_forgotten_when_turned_off(stats_on: Path) -> None:
    telemetry.write_settings(stats_on, telemetry.Settings(queries=True))
    with telemetry.measure("recall", face="cli"):
        telemetry.add(query="why did the ARM build break", hits=1)
    assert events(stats_on)[0]["query"] == "why did the ARM build break"
    code, out, _ = cli(["stats", "--queries", "off"])
    assert code == 0 and "removed 1 recorded queries" in out
    assert "query" not in events(stats_on)[0]
    with telemetry.measure("recall", face="cli"):
        telemetry.add(query="not kept")
    assert all("query" not in e for e in events(stats_on))


@pytest.mark.parametrize("how", ["setting", "environment"])
def test_recording_can_be_turned_off(stats_on: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    if how == "setting":
        assert cli(["stats", "--record", "off"])[0] == 0
    else:
        monkeypatch.setenv("FUNES_STATS", "off")
    with telemetry.measure("recall", face="cli"):
        telemetry.add(hits=1)
    assert events(stats_on) == []


def test_unreadable_settings_record_nothing(stats_on: Path) -> None:
    stats_on.mkdir(parents=True)
    (stats_on / "settings.json").write_text("{not json", encoding="utf-8")
    with telemetry.measure("recall", face="cli"):
        pass
    assert events(stats_on) == []


def test_the_log_is_bounded_and_rotated(stats_on: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(telemetry, "MAX_BYTES", 2000)

    def burst() -> None:
        for _ in range(40):
            with telemetry.measure("recall", face="cli"):
                telemetry.add(hits=8, triggers=0)

    threads = [threading.Thread(target=burst) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    current, older = stats_on / "events.jsonl", stats_on / "events.1.jsonl"
    assert older.is_file(), "the log was never rotated"
    assert current.stat().st_size <= 2000 + 200 and older.stat().st_size <= 2000 + 800
    loaded, _ = telemetry.load(stats_on)  # every kept line is still a whole event
    assert 0 < len(loaded) < 160


# -- reading: funes stats --------------------------------------------------------------------------


def test_stats_on_a_fresh_home(stats_on: Path) -> None:
    code, out, err = cli(["stats"])
    assert code == 0, err
    assert "nothing recorded yet" in out
    assert "recalls: 0 (cli 0, mcp 0, ask 0)" in out
    assert "query text: off" in out


def test_stats_summarises_recalls_by_face_latency_budget_triggers_and_index(stats_on: Path) -> None:
    rows = [
        ("cli", 10.0, {"hits": 8, "triggers": 1}),
        ("cli", 20.0, {"hits": 6, "triggers": 0, "budget": 1500, "tokens": 1200}),
        ("mcp", 30.0, {"hits": 8, "triggers": 0, "budget": 800, "tokens": 700}),
        ("ask", 400.0, {"hits": 8, "triggers": 2}),
    ]
    stats_on.mkdir(parents=True)
    lines = [
        json.dumps({"v": 1, "at": 1_780_000_000 + i, "kind": "recall", "face": f, "ms": ms, "ok": True, **x})
        for i, (f, ms, x) in enumerate(rows)
    ]
    lines.append(
        json.dumps({"v": 1, "at": 1_780_000_100, "kind": "recall", "face": "cli", "ms": 5, "ok": False})
    )
    lines.append(json.dumps({"v": 1, "at": 1_780_000_200, "kind": "get", "face": "mcp", "ms": 3, "ok": True}))
    index = {"kind": "index", "face": "cli", "ok": True, "files": 3, "chunks": 30, "embedded": 20}
    lines.append(json.dumps({"v": 1, "at": 1_780_000_300, "ms": 2000, **index}))
    idle = {"kind": "index", "face": "cli", "ok": True, "files": 0, "chunks": 0, "embedded": 0}
    lines.append(json.dumps({"v": 1, "at": 1_780_000_400, "ms": 900, **idle}))
    (stats_on / "events.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    code, out, err = cli(["stats"])
    assert code == 0, err
    assert "recalls: 5 (cli 3, mcp 1, ask 1); 1 failed" in out
    assert "latency: p50 20 ms, p95 400 ms" in out  # nearest rank over the 4 answered recalls
    assert "hits returned: 30 (7.5 per recall)" in out
    assert "budget used: 1900 of 2300 tokens (83%) over 2 budgeted recalls" in out
    assert "triggers fired: 3 (in 2 recalls)" in out
    assert "get: 1 (mcp 1)" in out
    assert "index runs: 2 (1 found something new)" in out
    assert "3 files, 30 chunks stored, 20 embedded in 2.0 s (15.0 chunks/s; embeddings 10.0/s)" in out

    code, out, _ = cli(["stats", "--json"])
    doc = json.loads(out)
    assert doc["recalls"]["by_face"] == {"cli": 3, "mcp": 1, "ask": 1}
    assert doc["recalls"]["latency_ms"] == {"p50": 20.0, "p95": 400.0}
    assert doc["index"]["chunks_per_second"] == 15.0
    assert doc["queries"] == {}


def test_a_corrupt_stats_file_is_set_aside_with_a_note_and_started_afresh(stats_on: Path) -> None:
    stats_on.mkdir(parents=True)
    good = json.dumps({"v": 1, "at": 1.0, "kind": "recall", "face": "cli", "ms": 1, "ok": True})
    (stats_on / "events.jsonl").write_text(good + "\n{torn line\n", encoding="utf-8")
    code, out, err = cli(["stats"])
    assert (code, out) == (1, "")
    assert err.count("\n") == 1
    assert err.startswith(f"funes: {stats_on / 'events.jsonl'} is corrupt (line 2: ")
    assert "moved it aside to events.jsonl.corrupt-" in err and err.rstrip().endswith("started afresh")
    assert not (stats_on / "events.jsonl").exists()
    assert len(list(stats_on.glob("events.jsonl.corrupt-*"))) == 1
    code, out, _ = cli(["stats"])
    assert code == 0 and "nothing recorded yet" in out


def test_non_utf8_stats_and_corrupt_settings_are_set_aside(stats_on: Path) -> None:
    stats_on.mkdir(parents=True)
    (stats_on / "events.1.jsonl").write_bytes(b"\xff\xfe\x00garbage\n")
    (stats_on / "settings.json").write_text('{"record": "maybe"}', encoding="utf-8")
    code, _, err = cli(["stats"])
    assert code == 1
    assert "events.1.jsonl is corrupt (not UTF-8 text" in err
    assert "settings.json is corrupt (record and queries must be true or false)" in err
    assert cli(["stats"])[0] == 0


def test_reset_clears_the_figures_but_keeps_the_settings(stats_on: Path) -> None:
    telemetry.write_settings(stats_on, telemetry.Settings(queries=True))
    with telemetry.measure("recall", face="cli"):
        telemetry.add(hits=1)
    code, out, _ = cli(["stats", "--reset"])
    assert code == 0 and "stats reset" in out and "recalls: 0" in out
    assert not (stats_on / "events.jsonl").exists()
    assert telemetry.read_settings(stats_on).queries is True


# -- the faces record --------------------------------------------------------------------------------


def test_cli_recall_and_index_are_recorded(stats_on: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    # --wait: the embeddings are computed in this process (a background worker would record its
    # commits whenever it gets to them)
    assert cli(["index", str(EXAMPLES), "--wait"])[0] == 0
    assert cli(["recall", "ARM build", "--budget", "400"])[0] == 0
    assert cli(["get", "nope"])[0] == 1
    kinds = [(e["kind"], e["face"], e["ok"]) for e in events(stats_on)]
    assert kinds == [("index", "cli", True)] * 2 + [("recall", "cli", True), ("get", "cli", False)]
    stored, embedded, recall = events(stats_on)[:3]
    assert (stored["files"], stored["chunks"], stored["embedded"]) == (3, 31, 0)
    assert (embedded.get("files", 0), embedded.get("chunks", 0), embedded["embedded"]) == (0, 0, 31)
    assert recall["budget"] == 400 and 0 < recall["tokens"] <= 400 and recall["hits"] >= 1
    assert "query" not in recall


def test_mcp_tools_are_recorded(stats_on: Path, funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    from funes_core.faces.mcp import _Memories, tool_for
    from funes_core.read import recall

    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    assert cli(["index", str(EXAMPLES), "--wait"])[0] == 0
    tool = tool_for(recall.VERB, _Memories(None, funes_home))
    assert "→ get" in tool(query="ARM build", k=2)
    assert [(e["kind"], e["face"], e["hits"]) for e in events(stats_on)[2:]] == [("recall", "mcp", 2)]

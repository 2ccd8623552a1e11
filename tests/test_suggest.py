"""``funes suggest``: identifiers that recur across sessions, ranked by (df - 1) × ln(N / df)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.faces.cli.suggest import choose
from funes_core.home import Home
from funes_core.read.suggest import identifiers, suggest
from funes_core.store.base import Row
from funes_core.store.reference import MemoryStore
from funes_core.turns.format import Block, Turn, write_turns_file


def row(session: str, seq: int, text: str, *, block_type: str = "text", harness: str = "claude") -> Row:
    return Row(
        id=f"{session}-{seq}-{block_type}",
        text=text,
        session_id=session,
        turn_uuid=f"{session}-t{seq}",
        seq=seq,
        ts=f"2026-03-0{min(seq + 1, 9)}T10:00:00Z",
        role="assistant",
        harness=harness,
        block_type=block_type,
        block_idx=0,
        split_idx=0,
        workdir="-home-dev-src-tidepool",
    )


def store_of(rows: list[Row]) -> MemoryStore:
    store = MemoryStore("local")
    store.add(rows)
    return store


# -- shapes ---------------------------------------------------------------------------------------


def test_identifier_shapes() -> None:
    text = (
        "Set FLUSH_TIMEOUT in tidepool/store.py, call read_turns_file and ConverterContract.run, "
        "then buildArm64Image with --no-verify for TIDE-142."
    )
    assert list(identifiers(text)) == [
        ("FLUSH_TIMEOUT", "CONSTANT"),
        ("tidepool/store.py", "path"),
        ("read_turns_file", "snake_case"),
        ("ConverterContract", "CamelCase"),
        ("buildArm64Image", "camelCase"),
        ("--no-verify", "flag"),
        ("TIDE-142", "ticket"),
    ]


def test_what_is_not_a_keyword() -> None:
    text = (
        "The Parser works. See https://github.com/acme/tidepool/blob/main/README.md and /home/dev/x.py; "
        "commit 3f2a9c1e5b7d4e21 uuid 8d41b7e2-0c3f-4a9b-b5d6-7e2a1f9c3084, a_b, --x, v1_2_3_4_5_6."
    )
    assert list(identifiers(text)) == []


def test_a_path_is_one_name_not_its_parts() -> None:
    assert list(identifiers("edit tests/test_read_turns.py now")) == [("tests/test_read_turns.py", "path")]


# -- the statistic --------------------------------------------------------------------------------


def test_ranking_follows_the_documented_statistic() -> None:
    rows = [row(f"s{i}", 0, "we talked about the weather") for i in range(10)]
    rows += [row(f"s{i}", 1, "tidepool_core again") for i in range(10)]  # in every session
    rows += [row("s0", 2, "ONCE_ONLY here")]  # one session
    rows += [row(f"s{i}", 3, "FLUSH_TIMEOUT matters") for i in range(3)]  # 3 of 10
    rows += [row(f"s{i}", 4, "ReadingStore ReadingStore") for i in range(2)]  # 2 of 10, 4 mentions
    rows += [row(f"s{i}", 5, "journal_mode") for i in range(2)]  # 2 of 10, 2 mentions
    found, total = suggest(store_of(rows))
    assert total == 10
    assert [(s.keyword, s.sessions, s.mentions) for s in found] == [
        ("FLUSH_TIMEOUT", 3, 3),
        ("ReadingStore", 2, 4),
        ("journal_mode", 2, 2),
    ]
    assert found[0].score == pytest.approx(2 * math.log(10 / 3))
    assert found[1].score == found[2].score == pytest.approx(math.log(5))


def test_the_first_mention_is_the_passage_shown() -> None:
    rows = [row("b", 3, "later FLUSH_TIMEOUT"), row("a", 0, "first FLUSH_TIMEOUT"), row("c", 1, "nothing")]
    (found,), _ = suggest(store_of(rows))
    assert (found.row.session_id, found.row.seq) == ("a", 0)


def test_tool_calls_count_by_their_values_and_results_not_at_all() -> None:
    call = '[tool_use Edit] {"file_path": "tidepool/store.py", "old_string": "x", "new_string": "y"}'
    rows = [row(f"s{i}", 0, call, block_type="tool_use") for i in range(2)]
    rows += [
        row(f"s{i}", 1, "[tool_result Bash] LOG_LEVEL_DEBUG", block_type="tool_result") for i in range(2)
    ]
    rows += [row(f"s{i}", 2, "status is in_progress, next tool_use") for i in range(2)]
    rows += [row("s2", 0, "unrelated"), row("s3", 0, "unrelated")]
    found, total = suggest(store_of(rows))
    assert total == 4
    assert [s.keyword for s in found] == ["tidepool/store.py"]


def test_live_triggers_and_trigger_notes_are_left_out() -> None:
    rows = [row(f"s{i}", 0, "FLUSH_TIMEOUT and READ_TIMEOUT") for i in range(2)]
    rows += [row("funes-triggers", 0, "trigger SOME_NOTE: x", harness="note"), row("s9", 0, "plain")]
    rows += [row("funes-triggers", 1, "trigger SOME_NOTE: y", harness="note")]
    found, total = suggest(store_of(rows), exclude=["flush_timeout"])
    assert total == 3
    assert [s.keyword for s in found] == ["READ_TIMEOUT"]


# -- the command -----------------------------------------------------------------------------------


def _memory(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four small sessions where FLUSH_TIMEOUT and ReadingStore recur, indexed with the hash embedder."""
    from funes_core.ingest.engine import IndexOptions, run_index
    from funes_core.models.embed import HashEmbedder

    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    texts = {
        "a": "Set FLUSH_TIMEOUT to 30 s in the ReadingStore.",
        "b": "The ReadingStore drops readings when FLUSH_TIMEOUT is above 60 s.",
        "c": "FLUSH_TIMEOUT stays at 30 s for the north buoys.",
        "d": "Lunch plans only.",
    }
    turns = [
        Turn(sid, f"{sid}-0", 0, f"2026-03-0{i + 1}T10:00:00Z", "user", "claude", (Block("text", text),))
        for i, (sid, text) in enumerate(texts.items())
    ]
    folder = home.root.parent / "turns"
    folder.mkdir(parents=True)
    write_turns_file(folder / "four.funes.jsonl", turns)
    run_index(IndexOptions(path=folder), home=home, embedder=HashEmbedder(), warn=lambda m: None)


def cli(args: list[str], answer: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(), args, input=answer)
    return result.exit_code, result.stdout, result.stderr


def test_suggest_shows_the_passage_and_the_statistic(
    funes_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    _memory(funes_home, monkeypatch)
    code, out, err = cli(["suggest"])
    assert code == 0, err
    lines = out.splitlines()
    label = funes_home.root / "memory"
    assert lines[0] == f"2 keyword triggers suggested from 4 sessions in {label} (no model involved)"
    # With 4 sessions, 2 of them (ln 2 = 0.69) beats 3 of them (2 ln 4/3 = 0.58): the peak is at N/e.
    assert lines[1] == "1. ReadingStore  CamelCase · 2 of 4 sessions · 2 mentions · score 0.69"
    assert lines[2] == "   first: [2026-03-01T10:00:00Z] claude -/a text"
    assert lines[3] == "   Set FLUSH_TIMEOUT to 30 s in the ReadingStore."
    assert lines[4].strip().startswith("→ get a --from 0 --to 3 --memory ")
    score = 2 * math.log(4 / 3)
    assert lines[5] == f"2. FLUSH_TIMEOUT  CONSTANT · 3 of 4 sessions · 3 mentions · score {score:.2f}"
    doc = json.loads(cli(["suggest", "--json", "-n", "1"])[1])
    assert doc["statistic"] == "(df - 1) * ln(N / df)" and doc["sessions"] == 4
    assert [s["keyword"] for s in doc["suggestions"]] == ["ReadingStore"]


def test_suggest_on_an_empty_or_missing_memory_is_one_line(funes_home: Home, tmp_path: Path) -> None:
    code, out, err = cli(["suggest"])
    assert (code, out) == (1, "")
    assert err.startswith("funes: no index yet") and err.count("\n") == 1
    empty = MemoryStore("x")
    assert empty.count() == 0
    from funes_core.read.common import VerbError
    from funes_core.read.handle import Memory
    from funes_core.read.suggest import SuggestArgs, run

    memory = Memory.of(empty, embedder=None, label="local")  # type: ignore[arg-type]
    with pytest.raises(VerbError, match=r"^local is empty: nothing to suggest from; index sessions first"):
        run(memory, SuggestArgs())


def test_apply_needs_a_terminal_or_yes(funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    _memory(funes_home, monkeypatch)
    code, out, err = cli(["suggest", "--apply"])
    assert (code, out) == (1, "")
    assert err.startswith("funes: --apply asks which suggestions to add, and there is no terminal; add --yes")
    assert cli(["suggest", "--yes"])[2] == "funes: --yes only goes with --apply\n"
    assert cli(["suggest", "--apply", "--yes", "--memory", "/elsewhere"])[0] == 1


def test_apply_yes_remembers_them_all_with_a_hint_to_the_first_mention(
    funes_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    _memory(funes_home, monkeypatch)
    code, out, err = cli(["suggest", "--apply", "--yes"])
    assert code == 0, err
    assert out.splitlines()[-2:] == ["remembered trigger ReadingStore", "remembered trigger FLUSH_TIMEOUT"]
    code, out, _ = cli(["triggers", "--json"])
    hints = {t["keyword"]: t["hint"] for t in json.loads(out)["triggers"]}
    assert hints["FLUSH_TIMEOUT"].startswith("in 3 sessions; first on 2026-03-01: Set FLUSH_TIMEOUT to 30 s")
    assert hints["FLUSH_TIMEOUT"].endswith(f"(get a --from 0 --to 3 --memory {funes_home.root / 'memory'})")
    code, out, _ = cli(["suggest"])
    assert code == 0 and "no suggestions" in out, "live triggers are not suggested again"


def test_apply_at_a_terminal_asks_which(funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    _memory(funes_home, monkeypatch)

    class Tty:
        @staticmethod
        def isatty() -> bool:
            return True

    monkeypatch.setattr("funes_core.faces.cli.suggest.sys", type("S", (), {"stdin": Tty, "stderr": Tty}))
    code, out, err = cli(["suggest", "--apply"], answer="7\n2\n")
    assert code == 0, err
    assert "answer with numbers from 1 to 2" in err
    assert out.splitlines()[-1] == "remembered trigger FLUSH_TIMEOUT"
    code, out, _ = cli(["triggers", "--json"])
    assert [t["keyword"] for t in json.loads(out)["triggers"]] == ["FLUSH_TIMEOUT"]


@pytest.mark.parametrize(
    ("answer", "picked"),
    [("", []), ("none", []), ("all", [0, 1, 2, 3]), ("1 3", [0, 2]), ("2,4", [1, 3]), ("2-4 2", [1, 2, 3])],
)
def test_choose(answer: str, picked: list[int]) -> None:
    assert choose(answer, 4) == picked


@pytest.mark.parametrize("answer", ["0", "5", "x", "3-1", "1-"])
def test_choose_refuses(answer: str) -> None:
    assert choose(answer, 4) is None

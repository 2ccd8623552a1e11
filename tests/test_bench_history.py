"""The whole-history benchmark's parts (``bench/_history.py``, ``bench/_crowd.py``) on tiny inputs."""

from __future__ import annotations

import io
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console
from rich.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

import _common  # noqa: E402
import _crowd  # noqa: E402
import _history  # noqa: E402
import quality  # noqa: E402
from test_bench import SAMPLE  # noqa: E402

from funes_core.models.embed import HashEmbedder  # noqa: E402
from funes_core.read.recall import RecallParams, recall, render_recall  # noqa: E402
from funes_core.store import open_store  # noqa: E402
from funes_core.turns.format import read_turns_file, write_turns_file  # noqa: E402

NOW = datetime(2026, 2, 12, 9, tzinfo=UTC)


def _has_crowd_commit() -> bool:
    probe = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{_crowd.CROWD_COMMIT}^{{commit}}"], capture_output=True
    )
    return probe.returncode == 0


def test_the_hits_an_agent_reads_off_the_get_lines_are_the_hits(tmp_path: Path) -> None:
    emb = HashEmbedder()
    with Progress(console=Console(file=io.StringIO())) as progress:
        home = quality.build_memory(SAMPLE, _common.TextOptions(), emb, progress, cache=tmp_path)
    store = open_store(home=home)
    result = recall(store, "Pixel pottery dog", RecallParams(k=5, neighbors=1), embed_query=emb.embed_query)
    assert len(result.hits) >= 3
    text = render_recall(result, str(home.root / "memory"))
    assert _history.parse_get_lines(text) == [(h.row.session_id, h.row.seq) for h in result.hits]


def test_session_figures() -> None:
    q = _history.Q("q", "?", ("a#D2:1",), frozenset({"a-s2"}), "4")
    keys = ["a#D1:1", "a#D1:2", "a#D2:1"]
    sessions = ["a-s1", "a-s1", "a-s2"]
    got = _history.figures(q, keys, sessions, deep=True)
    assert got["hit@1"] == 0.0 and got["hit@5"] == 1.0  # second session in order of first hits
    assert got["found@25"] == 1.0 and got["found@50"] == 1.0
    assert got["r@5"] == 1.0 and got["ndcg@10"] == pytest.approx(0.5)
    assert "found@50" not in _history.figures(q, keys, sessions, deep=False)
    missed = _history.figures(q, keys[:2], sessions[:2], deep=True)
    assert missed["hit@5"] == 0.0 and missed["found@50"] == 0.0


@pytest.mark.skipif(not _has_crowd_commit(), reason="the crowd's commit is not in this clone (shallow?)")
def test_the_crowd_is_deterministic_valid_and_of_both_kinds(tmp_path: Path) -> None:
    sessions = _crowd.crowd(6, NOW, [SAMPLE])
    assert sessions == _crowd.crowd(6, NOW, [SAMPLE])
    assert [s[0].session_id for s in sessions] == [f"crowd-{i:05d}" for i in range(6)]
    code, chat = sessions[0], sessions[1]
    assert [t.blocks[0].block_type for t in code] == ["text", "tool_use", "tool_result", "text"]
    assert code[2].blocks[0].text.startswith("diff --git")
    assert chat[0].blocks[0].text == "Ada: I adopted a greyhound called Pixel last week."
    assert sessions[3][0].blocks[0].text.startswith("Bo: I started pottery")  # LoCoMo's sessions in turn
    for turns in sessions:
        assert all(NOW - timedelta(days=_crowd.SPREAD_DAYS + 1) < _ts(t.ts) < NOW for t in turns)
        path = write_turns_file(tmp_path / f"{turns[0].session_id}.funes.jsonl", turns)
        assert read_turns_file(path).turns == turns


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.slow
def test_a_case_in_process_embedded_and_owed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_history, "WHOLE", tmp_path)
    emb = HashEmbedder()
    sessions = _common.convert_conversation(SAMPLE, _common.TextOptions())
    with Progress(console=Console(file=io.StringIO())) as progress:
        home, owed = _history._build(sessions, emb, progress, "t-", "tiny")  # type: ignore[arg-type]
        assert open_store(home=owed).count() == open_store(home=home).count() == 5
        case = _history.Case(
            "tiny", [_history.Part(home, owed, _history._locomo_questions([SAMPLE]))], NOW,
            _history._locomo_key, 2, 5, ("2", "4"),
        )  # fmt: skip
        rows = _history.run_case(case, emb, progress, mcp=False, legs=True, candidates=30)  # type: ignore[arg-type]
    ablations = [f"in process, {name}" for name, _ in _history.ABLATIONS]
    assert sorted(rows) == sorted(
        [
            "in process, BM25 leg alone",
            "in process, default",
            "in process, default, owed",
            "in process, vector leg alone",
            *ablations,
        ]
    )
    default = rows["in process, default"].summary(case.groups)
    assert default["questions"] == 2 and default["found@50"] == 1.0
    titles = [
        t
        for t, _, _ in _history.tables({"tiny": {k: v.summary(case.groups) for k, v in rows.items()}}, [case])
    ]
    assert titles[0].startswith("Whole history") and titles[-1] == "Whole history: by category"

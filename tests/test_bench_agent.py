"""The agent-session benchmark: its questions are well formed and its conversion is pinned.

The transcripts live in the shared material beside the checkout (``shared/corpus``), not in the
project; the tests that convert them skip, saying why, where it is absent. The pin: the same
transcript files must give the same turns and ids (the sha256 of every converted session is in
``bench/agent_sessions/benchmark.json``), or every evidence id in the questions would silently
point at nothing.
"""

from __future__ import annotations

import io
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console
from rich.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import _agent  # noqa: E402
import quality  # noqa: E402

from funes_core.models.embed import HashEmbedder  # noqa: E402
from funes_core.read.recall import RecallParams, recall  # noqa: E402
from funes_core.store import open_store  # noqa: E402
from funes_core.turns.format import Block, Turn, turns_to_jsonl  # noqa: E402


def _corpus() -> Path | None:
    try:
        root = _agent.find_corpus()
    except SystemExit:
        return None
    manifest = _agent.load_manifest()
    return root if all(not _agent.check_files(root, s) for s in manifest.sources) else None


CORPUS = _corpus()
needs_corpus = pytest.mark.skipif(
    CORPUS is None, reason="the shared corpus (shared/corpus beside the checkout) is absent or differs"
)


def test_questions_are_well_formed() -> None:
    questions = _agent.load_questions()
    assert len(questions) >= 150
    assert len({q.id for q in questions}) == len(questions)
    kinds = Counter(q.kind for q in questions)
    assert set(kinds) == set(_agent.KINDS) and min(kinds.values()) >= 20
    splits = Counter(q.split for q in questions)
    assert splits["dev"] >= 60 and splits["test"] >= 60
    for q in questions:
        assert q.text.strip() and q.evidence
        assert len(set(q.evidence)) == len(q.evidence), q.id
        if q.kind in ("multi-session", "superseded"):
            assert len(q.evidence) >= 2, q.id
        if q.kind == "multi-session":
            assert len({e.split("/")[0] for e in q.evidence}) >= 2, q.id


def test_split_depends_on_the_id_only() -> None:
    assert {_agent.split_of(f"ex-{i:02d}") for i in range(1, 40)} == {"dev", "test"}
    assert _agent.split_of("ex-01") == _agent.split_of("ex-01")


def test_manifest_names_its_sources_and_now() -> None:
    manifest = _agent.load_manifest()
    assert manifest.now == datetime(2026, 2, 12, 9, 0, tzinfo=UTC)
    for source in manifest.sources:
        assert source.licence.startswith("MIT") and source.origin and source.files and source.sessions


@needs_corpus
def test_conversion_gives_the_pinned_turns_and_ids() -> None:
    assert CORPUS is not None
    manifest = _agent.load_manifest()
    for source in manifest.sources:
        sessions = _agent.convert_source(CORPUS, source)
        got = {turns[0].session_id: _agent.session_digest(turns) for turns in sessions}
        assert got == source.sessions, source.corpus
        again = _agent.convert_source(CORPUS, source)
        assert [turns_to_jsonl(s) for s in again] == [turns_to_jsonl(s) for s in sessions]
    every = _agent.convert_all(CORPUS, manifest)
    assert _agent.evidence_problems(_agent.load_questions(), every) == []
    assert len(every) == 13 and sum(len(s) for s in every) == 1769


def test_a_changed_transcript_is_refused(tmp_path: Path) -> None:
    source = _agent.Source("x", "claude", "o", "MIT", {"a.jsonl": "0" * 64}, {})
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a.jsonl").write_text("{}\n")
    assert _agent.check_files(tmp_path, source) == ["x/a.jsonl: changed (sha256 differs from the manifest)"]
    manifest = _agent.Manifest(datetime(2026, 1, 1, tzinfo=UTC), (source,))
    with pytest.raises(SystemExit, match="differ from"):
        _agent.convert_all(tmp_path, manifest)


def _turn(session: str, uuid: str, seq: int, ts: str, text: str) -> Turn:
    return Turn(session, uuid, seq, ts, "assistant", "claude", (Block("text", text),))


def test_agent_scoring_on_a_tiny_memory(tmp_path: Path) -> None:
    """Index through the real pipeline (test embedder), ask through recall(), score per kind."""
    sessions = [
        [
            _turn("s1", "u1", 0, "2026-02-10T21:00:00Z", "we chose LangGraph over VoltAgent"),
            _turn("s1", "u2", 1, "2026-02-10T21:01:00Z", "the migration needs a table rewrite on SQLite"),
        ],
        [_turn("s2", "v1", 0, "2026-02-11T21:00:00Z", "switched from LangGraph to the Agents SDK")],
    ]
    emb = HashEmbedder()
    with Progress(console=Console(file=io.StringIO())) as progress:
        home = quality.build_cached(sessions, emb, progress, tmp_path, "", "agent")
    store = open_store(home=home)
    assert quality.turn_texts(store, quality.agent_key)["s1/u2"].startswith("the migration")
    questions = [
        _agent.AgentQuestion("ex-01", "exact", "SQLite table rewrite migration", ("s1/u2",)),
        _agent.AgentQuestion("su-01", "superseded", "which agent framework", ("s2/v1", "s1/u1")),
    ]
    scores = quality.Scores()
    for q in questions:
        result = recall(store, q.text, RecallParams(k=5, neighbors=0), embed_query=emb.embed_query)
        ranked = [quality.agent_key(h.row) for h in result.hits]
        scores.add(q.id, q.evidence, ranked, ordered=q.kind == "superseded")
    assert scores.per_question["ex-01"]["r@5"] == 1.0
    assert "current first" in scores.per_question["su-01"]
    assert "current first" not in scores.per_question["ex-01"]
    summary = quality.summarize_agent({"hybrid": scores}, questions)
    assert summary["hybrid"]["exact r@10"] == 1.0
    titles = [t for t, _, _ in quality.agent_tables(summary, Counter(q.kind for q in questions))]
    assert titles[0].startswith("Agent sessions") and len(titles) == 4


def test_current_first_counts_a_missing_old_passage_as_below() -> None:
    scores = quality.Scores()
    scores.add("a", ("new", "old"), ["new", "x"], ordered=True)
    scores.add("b", ("new", "old"), ["old", "new"], ordered=True)
    scores.add("c", ("new", "old"), ["old"], ordered=True)
    assert [scores.per_question[k]["current first"] for k in "abc"] == [1.0, 0.0, 0.0]

"""The benchmark scripts' converters and metrics on a tiny LoCoMo-shaped input, so that they don't rot."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console
from rich.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import _common  # noqa: E402
import quality  # noqa: E402
import speed  # noqa: E402

from funes_core.models.embed import HashEmbedder  # noqa: E402
from funes_core.read.recall import RecallParams, recall  # noqa: E402
from funes_core.store import open_store  # noqa: E402
from funes_core.turns.format import read_turns_file, write_turns_file  # noqa: E402

SAMPLE: dict[str, Any] = {
    "sample_id": "conv-t1",
    "conversation": {
        "speaker_a": "Ada",
        "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ada", "dia_id": "D1:1", "text": "I adopted a greyhound called Pixel last week."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! What does Pixel like?"},
            {
                "speaker": "Ada",
                "dia_id": "D1:3",
                "text": "Long walks on the beach.",
                "img_url": ["https://example.invalid/x.jpg"],
                "blip_caption": "a photo of a dog on a beach",
            },
        ],
        "session_2_date_time": "10:37 am on 27 June, 2023",
        "session_2": [
            {"speaker": "Bo", "dia_id": "D2:1", "text": "I started pottery classes on Tuesdays."},
            {"speaker": "Ada", "dia_id": "D2:2", "text": "Pottery sounds calming."},
        ],
    },
    "qa": [
        {
            "question": "What is the name of Ada's dog?",
            "answer": "Pixel",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {
            "question": "When does Bo go to pottery classes?",
            "answer": "Tuesdays",
            "evidence": ["D2:1; D1:02"],
            "category": 2,
        },
        {"question": "What did Bo bake?", "evidence": ["D9:9"], "category": 5, "adversarial_answer": "bread"},
        {"question": "Broken evidence", "answer": "x", "evidence": ["D", "D7"], "category": 1},
    ],
}


def test_dia_ids_round_trip_and_evidence_is_normalised() -> None:
    assert _common.turn_uuid_of("D12:3") == "D12-3"
    assert _common.dia_id_of("D12-3") == "D12:3"
    assert _common.normalize_evidence(["D8:6; D9:17", "D30:05", "D", "D:11:26", "D8:6"]) == [
        "D8:6",
        "D9:17",
        "D30:5",
        "D11:26",
    ]
    assert _common.parse_locomo_date("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00+00:00"


def test_conversion_makes_valid_turns_files(tmp_path: Path) -> None:
    sessions = _common.convert_conversation(SAMPLE, _common.TextOptions())
    assert [s[0].session_id for s in sessions] == ["conv-t1-s1", "conv-t1-s2"]
    first = sessions[0]
    assert [t.turn_uuid for t in first] == ["D1-1", "D1-2", "D1-3"]
    assert [t.seq for t in first] == [0, 1, 2]
    assert first[0].ts == "2023-05-08T13:56:00Z" and first[1].ts == "2023-05-08T13:56:30Z"
    assert first[0].role == "Ada" and first[0].harness == "locomo"
    assert first[0].blocks[0].text == "Ada: I adopted a greyhound called Pixel last week."
    assert first[2].blocks[0].text.endswith("[shared a photo: a photo of a dog on a beach]")
    plain = _common.convert_conversation(SAMPLE, _common.TextOptions(speaker=False, caption=False, date=True))
    assert plain[0][2].blocks[0].text == "(1:56 pm on 8 May, 2023) Long walks on the beach."
    ctx = _common.convert_conversation(SAMPLE, _common.TextOptions(context=1))
    assert ctx[0][1].blocks[0].text.startswith("Ada: I adopted") and "Bo: Lovely" in ctx[0][1].blocks[0].text
    for turns in sessions:  # the written files pass the turns format's own validation
        path = write_turns_file(tmp_path / f"{turns[0].session_id}.funes.jsonl", turns)
        assert read_turns_file(path).turns == turns


def test_questions_keep_only_resolvable_evidence() -> None:
    qs = _common.questions_of(SAMPLE)
    assert [(q.index, q.category, q.evidence) for q in qs] == [(0, 4, ("D1:1",)), (1, 2, ("D2:1", "D1:2"))]


def test_metrics() -> None:
    ranked = ["D1:1", "D1:2", "D1:3"]
    assert _common.recall_at(ranked, ["D1:2", "D2:1"], 2) == 0.5
    assert _common.recall_at(ranked, ["D1:3"], 2) == 0.0
    assert _common.ndcg_at(ranked, ["D1:1"], 10) == pytest.approx(1.0)
    assert _common.ndcg_at(ranked, ["D1:2"], 10) == pytest.approx(1 / np.log2(3))
    assert _common.dedupe(["a", "b", "a"]) == ["a", "b"]
    med, p95 = _common.median_p95([1.0, 2.0, 3.0, 4.0, 100.0])
    assert med == 3.0 and p95 == 100.0


@pytest.mark.slow
def test_quality_pipeline_on_a_tiny_conversation(tmp_path: Path) -> None:
    """Index through the real pipeline (test embedder), ask through recall(), score, summarise."""
    emb = HashEmbedder()
    with Progress(console=Console(file=io.StringIO())) as progress:
        home = quality.build_memory(SAMPLE, _common.TextOptions(), emb, progress, cache=tmp_path)
        again = quality.build_memory(SAMPLE, _common.TextOptions(), emb, progress, cache=tmp_path)
    assert again == home and (home.root.parent / "done.json").exists()
    store = open_store(home=home)
    assert store.count() == 5
    texts = quality.turn_texts(store, quality.locomo_key)
    assert texts["D2:1"] == "Bo: I started pottery classes on Tuesdays."
    qs = _common.questions_of(SAMPLE)
    scores = quality.Scores()
    for q in qs:
        hits = recall(store, q.text, RecallParams(k=5, neighbors=0), embed_query=emb.embed_query)
        scores.add(quality.qid(q), q.evidence, [_common.dia_id_of(h.row.turn_uuid) for h in hits.hits])
    assert scores.per_question["conv-t1#0"]["r@5"] == 1.0
    summary = quality.summarize({"hybrid": scores}, qs)
    assert 0.0 <= summary["hybrid"]["r@10"] <= 1.0
    titles = [t for t, _, _ in quality.tables(summary, dict.fromkeys(_common.CATEGORIES, 1))]
    assert titles[0].startswith("LoCoMo: turn-level retrieval")
    ranked = quality.run_bm25s(texts, [(quality.qid(q), q.text) for q in qs])
    if ranked is not None:
        assert ranked["conv-t1#1"][0] == "D2:1"


def test_speed_corpus_rows_vary_text_and_vector() -> None:
    bases = [
        ("Ada: the greyhound likes long walks", "text", ""),
        ("[tool_use Bash] make test", "tool_use", "Bash"),
    ]
    vectors = np.stack(HashEmbedder().embed_documents([t for t, _, _ in bases]))
    rows = speed.generate_rows(90, bases, vectors)
    assert len({r.id for r in rows}) == 90
    assert rows[0].text == bases[0][0] and rows[1].tool_name == "Bash"
    assert rows[2].text != rows[0].text or not np.allclose(rows[2].vector, rows[0].vector)
    cos = float(np.dot(rows[2].vector, vectors[0]))
    assert 0.7 < cos < 0.99
    assert {r.harness for r in rows} <= set(speed.HARNESSES)
    assert rows[0].session_id != rows[-1].session_id and rows[-1].ts > rows[0].ts


@pytest.mark.skipif(
    not (quality.MEMFAS_VENV / "bin" / "python").exists(), reason="agent-memfas venv not built"
)
def test_memfas_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quality, "CACHE", tmp_path)
    docs = {
        "c": {
            "docs": [["D1:1", "Ada: greyhound Pixel"], ["D1:2", "Bo: pottery"]],
            "questions": [["c#0", "Who is Pixel?"]],
        }
    }
    out = quality.run_memfas(docs, Console(file=io.StringIO()))
    assert out is not None
    _version, ranked = out
    assert ranked["or"]["c#0"] == ["D1:1"]
    assert ranked["as-is"]["c#0"] == []  # FTS5's implicit AND: "Who", "is" are in no document


def test_index_rss_inputs_are_valid_turns_files(tmp_path: Path) -> None:
    """bench/index_rss.py's generated transcripts are what they claim: valid, deterministic, sized."""
    import index_rss

    long = tmp_path / "long.funes.jsonl"
    turns = index_rss.write_long(long, 0.2)
    assert abs(long.stat().st_size - 0.2 * 1024 * 1024) < 60_000
    assert len(read_turns_file(long).turns) == turns
    again = tmp_path / "again.funes.jsonl"
    index_rss.write_long(again, 0.2)
    assert again.read_bytes() == long.read_bytes()
    line = tmp_path / "line.funes.jsonl"
    index_rss.write_line(line, 0.1)
    assert len(read_turns_file(line).turns) == 1
    blocks = tmp_path / "blocks.funes.jsonl"
    index_rss.write_blocks(blocks, 2_000)
    assert len(read_turns_file(blocks).turns[0].blocks) == 1_001  # a turn keeps 1,000, plus the marker


def test_first_runs_generated_history_is_the_same_every_time_and_converts(tmp_path: Path) -> None:
    """``first_run.py --turns N``: the same bytes on every run (one seed), about N turns in sessions
    of 10-11, as Claude Code transcripts funes' own converter reads."""
    import first_run

    one = first_run.build_generated_home(300, root=tmp_path / "a")
    two = first_run.build_generated_home(300, root=tmp_path / "b")
    files_one = sorted(p.relative_to(one) for p in one.rglob("*.jsonl"))
    assert files_one == sorted(p.relative_to(two) for p in two.rglob("*.jsonl"))
    assert all((one / f).read_bytes() == (two / f).read_bytes() for f in files_one)
    lines = [line for f in files_one for line in (one / f).read_text().splitlines()]
    assert len(lines) == 300 and 27 <= len(files_one) <= 30

    from funes_claude.converter import ClaudeConverter

    converter = ClaudeConverter()
    refs = converter.discover(one)
    assert len(refs) == len(files_one)
    turns = [t for ref in refs for t in converter.convert(ref)]
    assert len(turns) >= 300 and {b.block_type for t in turns for b in t.blocks} >= {"text", "tool_use"}

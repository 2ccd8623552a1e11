"""The vector index past the threshold: IVF_PQ with exact re-ranking, rebuilt as the rows grow."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest

from funes_contracts.store import STAMP, make_row
from funes_core.read.recall import DEFAULT_CANDIDATES
from funes_core.store import lance
from funes_core.store.base import Filters, Row
from funes_core.store.lance import LanceStore

# Builds IVF_PQ indexes over thousands of rows: the slowest file of the fast lane (173 s at load 10).
pytestmark = pytest.mark.slow


def _clustered(n: int, seed: int = 7) -> np.ndarray:
    """Unit vectors around 40 topics (real embeddings cluster; uniform noise would not)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, STAMP.dim)).astype(np.float32)
    out = centres[rng.integers(0, 40, n)] + 0.6 * rng.standard_normal((n, STAMP.dim)).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def _rows(vectors: np.ndarray, start: int = 0) -> list[Row]:
    """Rows ``r<start>``..., every 97th of them in repo ``rare`` (a narrow filter)."""
    return [
        make_row(
            f"r{i}", f"passage {i}", repo="rare" if i % 97 == 0 else "common", vector=list(map(float, v))
        )
        for i, v in enumerate(vectors, start)
    ]


def _store(tmp_path: Path, vectors: np.ndarray, *, ann_min_rows: int) -> LanceStore:
    store = LanceStore(tmp_path / "m", ann_min_rows=ann_min_rows, read_consistency_interval=None)
    store.stamp_model(STAMP)
    store.add(_rows(vectors))
    return store


def _vector_indexes(store: LanceStore) -> list[tuple[str, str]]:
    return [(ix.name, ix.index_type) for ix in store._tbl().list_indices() if ix.columns == ["vector"]]


def test_the_index_finds_what_exact_search_finds_with_exact_scores(tmp_path: Path) -> None:
    vectors = _clustered(3000)
    store = _store(tmp_path, vectors, ann_min_rows=2000)
    store.optimize()
    assert _vector_indexes(store) == [("vector_ivfpq_p1", "IvfPq")]
    queries = _clustered(20, seed=8)
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    recall = []
    for q, truth in zip(queries, exact, strict=True):
        hits = store.vector_search(list(map(float, q)), DEFAULT_CANDIDATES)  # what recall asks for
        recall.append(len({h.row.id for h in hits[:10]} & {f"r{i}" for i in truth}) / 10)
        for hit in hits:  # re-ranked on the stored vectors: the score is the exact cosine
            assert hit.score == pytest.approx(float(vectors[int(hit.row.id[1:])] @ q), abs=1e-4)
    assert np.mean(recall) >= 0.95


def test_the_partition_rule() -> None:
    per = lance.ANN_ROWS_PER_PARTITION
    assert lance._ann_outgrown(None, 20_000)  # no index yet
    assert lance._ann_outgrown(0, 20_000)  # an index of an older scheme (IVF_HNSW_SQ)
    assert not lance._ann_outgrown(4, 20_000)
    assert not lance._ann_outgrown(4, 16 * per - 1)
    assert lance._ann_outgrown(4, 16 * per)


def test_an_older_index_is_replaced_and_growth_rebuilds_with_more_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lancedb.index import HnswSq

    monkeypatch.setattr(lance, "ANN_ROWS_PER_PARTITION", 256)
    vectors = _clustered(2400)
    store = _store(tmp_path, vectors[:600], ann_min_rows=500)
    store._tbl().create_index("vector", config=HnswSq(distance_type="cosine", num_partitions=1), replace=True)
    assert _vector_indexes(store) == [("vector_idx", "IvfHnswSq")]
    store.optimize()
    assert _vector_indexes(store) == [("vector_ivfpq_p2", "IvfPq")]
    store.add(
        [make_row(f"r{i}", f"passage {i}", vector=list(map(float, vectors[i]))) for i in range(600, 1500)]
    )
    store.optimize()  # 1500 rows: 5 partitions' worth, not yet 4 x 2
    assert _vector_indexes(store) == [("vector_ivfpq_p2", "IvfPq")]
    store.add(
        [make_row(f"r{i}", f"passage {i}", vector=list(map(float, vectors[i]))) for i in range(1500, 2400)]
    )
    store.optimize()  # 2400 rows: 9 partitions' worth >= 4 x 2
    assert _vector_indexes(store) == [("vector_ivfpq_p9", "IvfPq")]
    hit = store.vector_search(list(map(float, vectors[2000])), 1)[0]
    assert hit.row.id == "r2000"


def test_a_narrow_filter_still_gets_its_k_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lance, "ANN_ROWS_PER_PARTITION", 100)  # 30 partitions ...
    monkeypatch.setattr(lance, "ANN_MIN_PROBES", 1)  # ... of which one is probed first
    monkeypatch.setattr(lance, "ANN_PROBE_SHARE", 0.0)
    vectors = _clustered(3000)
    store = _store(tmp_path, vectors, ann_min_rows=2000)
    store.optimize()
    assert _vector_indexes(store) == [("vector_ivfpq_p30", "IvfPq")]
    rare = np.array([i for i in range(3000) if i % 97 == 0])  # 31 rows across the partitions
    for seed in range(5):
        query = _clustered(1, seed=seed + 20)[0]
        hits = store.vector_search(list(map(float, query)), 10, Filters(repo="rare"))
        assert len(hits) == 10
        assert {h.row.id for h in hits} <= {f"r{i}" for i in rare}


def _plan_figures(plan: str, name: str) -> list[int]:
    return [int(m) for m in re.findall(rf"\b{name}=(\d+)", plan)]


def test_an_unfiltered_query_probes_its_partitions_only_and_finds_appended_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lance, "ANN_ROWS_PER_PARTITION", 100)  # 30 partitions ...
    monkeypatch.setattr(lance, "ANN_MIN_PROBES", 3)  # ... of which 3 are probed
    monkeypatch.setattr(lance, "ANN_PROBE_SHARE", 0.0)
    vectors = _clustered(3000)
    store = _store(tmp_path, vectors, ann_min_rows=2000)
    store.optimize()
    table = store._tbl()
    for i in (5, 500, 2500):
        plan = store._vector_query(table, vectors[i], DEFAULT_CANDIDATES, None).analyze_plan()
        # Unlimited probing (what a filter gets) went on to 11 of the 30 partitions here, and
        # through all of them at 1M rows.
        assert _plan_figures(plan, "partitions_searched") == [3]
    later = _clustered(40, seed=30)
    for at in range(0, 30, 10):  # small appends, each folded in by optimize
        store.add(_rows(later[at : at + 10], start=3000 + at))
        store.optimize()
    store.add(_rows(later[30:], start=3030))  # and rows no index holds yet
    for i in (5, 15, 25, 35):
        assert store.vector_search(list(map(float, later[i])), 10)[0].row.id == f"r{3000 + i}"


def test_session_windows_are_read_through_the_session_index(tmp_path: Path) -> None:
    rows = [
        make_row(f"{sid}-{seq}", f"turn {seq}", session_id=sid, seq=seq)
        for sid in ("s1", "s2", "o'b", "s4")
        for seq in range(6)
    ]
    store = LanceStore(tmp_path / "m", read_consistency_interval=None)
    store.stamp_model(STAMP)
    store.add(rows)
    store.optimize()  # builds the session_id BTREE index
    windows = {"s1": (1, 2), "o'b": (4, 9), "missing": (0, 3)}
    plan = (
        store._tbl().search().where(lance.windows_sql(windows)).select(["id"]).limit(None).explain_plan(True)
    )
    assert "session_id_idx" in plan  # the index answers, the table is not scanned for the sessions
    got = [(r.session_id, r.seq) for r in store.session_windows(windows)]
    assert got == [("o'b", 4), ("o'b", 5), ("s1", 1), ("s1", 2)]


def test_rows_still_owed_their_vector_do_not_count_towards_the_index(tmp_path: Path) -> None:
    vectors = _clustered(1500)
    store = _store(tmp_path, vectors, ann_min_rows=2000)
    store.add([make_row(f"owed{i}", f"owed passage {i}") for i in range(1000)])  # 2500 rows, 1500 vectors
    store.optimize()
    assert _vector_indexes(store) == []
    store.set_vectors({f"owed{i}": list(map(float, v)) for i, v in enumerate(_clustered(600, seed=9))})
    store.optimize()  # 2100 rows with a vector
    assert _vector_indexes(store) == [("vector_ivfpq_p1", "IvfPq")]


def _fetched_columns(plan: str) -> list[str]:
    """The columns of the plan's last read, the outermost: the one that takes the hits' rows by row
    id (a re-ranked vector query takes the candidates' vectors before it)."""
    taken = re.findall(r"LanceRead: .*?projection=\[([^\]]*)\], source=stream\(_rowid\)", plan)
    assert taken, plan
    return [c.strip() for c in taken[0].split(",")]


def test_the_candidate_legs_read_only_what_ranking_needs(tmp_path: Path) -> None:
    """Each column a leg returns is read once per candidate (a random access at 1M rows): the
    candidate legs take the rank fields (and the text leg the vector's validity, for ``owed``)."""
    vectors = _clustered(300)
    store = _store(tmp_path, vectors, ann_min_rows=200)
    store.optimize()
    table, query = store._tbl(), vectors[5]
    slim = _fetched_columns(store._vector_query(table, query, 30, None, full=False).explain_plan(True))
    assert slim == ["id", "session_id", "seq", "ts"]
    full = _fetched_columns(store._vector_query(table, query, 30, None).explain_plan(True))
    assert len(full) == len(lance.COLUMNS) - 1  # every row column but the vector
    slim = _fetched_columns(store._text_query(table, "passage", 30, None, full=False).explain_plan(True))
    assert slim == ["id", "session_id", "seq", "ts", "vector"]
    # and they find what the full legs find
    for whole, candidate in (
        (store.vector_search(query, 30), store.vector_candidates(query, 30)),
        (store.text_search("passage 7", 30), store.text_candidates("passage 7", 30)),
    ):
        assert [(h.row.id, h.score, h.row.seq, h.row.ts) for h in candidate] == [
            (h.row.id, h.score, h.row.seq, h.row.ts) for h in whole
        ]
        assert all(h.row.text == "" for h in candidate)


def test_a_query_of_another_dimension_is_refused_without_reading_the_schema_first(tmp_path: Path) -> None:
    """LanceDB checks the query's dimension itself; the store reads the schema only to say so."""
    store = _store(tmp_path, _clustered(50), ann_min_rows=1000)
    reads: list[int] = []
    dim = store._vector_dim
    store._vector_dim = lambda t: (reads.append(1), dim(t))[1]  # type: ignore[method-assign]
    assert store.vector_search(_clustered(1)[0], 3)
    assert store.vector_candidates(_clustered(1)[0], 3)
    assert reads == []
    for wrong in (np.ones(STAMP.dim + 1, dtype=np.float32), np.zeros(STAMP.dim - 1, dtype=np.float32)):
        with pytest.raises(ValueError, match=f"this memory holds {STAMP.dim}-d vectors"):
            store.vector_search(wrong, 3)
    assert store.vector_search(np.zeros(STAMP.dim, dtype=np.float32), 3) == []


def test_a_date_filter_is_answered_by_the_ts_index_and_a_narrow_one_compares_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Empty date windows search nothing; narrow ones are exact (every row in the window compared,
    the index left aside: exactly what exact search finds); wide ones go through the index."""
    from datetime import date

    monkeypatch.setattr(lance, "ANN_ROWS_PER_PARTITION", 100)
    monkeypatch.setattr(lance, "EXACT_MAX_ROWS", 500)
    vectors = _clustered(3000)
    store = LanceStore(tmp_path / "m", ann_min_rows=2000, read_consistency_interval=None)
    store.stamp_model(STAMP)
    days = [1 + (i * 7) % 30 for i in range(3000)]  # 100 rows a day, March 1-30
    store.add(
        [
            make_row(f"r{i}", f"passage {i}", ts=f"2026-03-{d:02d}T12:00:00Z", vector=list(map(float, v)))
            for i, (v, d) in enumerate(zip(vectors, days, strict=True))
        ]
    )
    store.optimize()
    table = store._tbl()
    assert any(ix.columns == ["ts"] for ix in table.list_indices())
    where = lance.filters_sql(Filters(since=date(2026, 3, 2), until=date(2026, 3, 3)))
    assert "ts_idx" in table.search().where(where).select(["id"]).limit(None).explain_plan(True)
    queries: list[bool] = []
    build = store._vector_query
    spy = lambda *a, **kw: (queries.append(kw["exact"]), build(*a, **kw))[1]  # noqa: E731
    monkeypatch.setattr(store, "_vector_query", spy)
    query = _clustered(1, seed=30)[0]
    for first, last, exact in ((2, 3, True), (1, 20, False)):  # 200 rows, 2000 rows
        window = Filters(since=date(2026, 3, first), until=date(2026, 3, last))
        inside = [i for i, d in enumerate(days) if first <= d <= last]
        truth = {f"r{i}" for i in sorted(inside, key=lambda i: -float(vectors[i] @ query))[:10]}
        hits = store.vector_candidates(query, 10, window)
        assert queries[-1] is exact
        assert len(hits) == 10 and {h.row.id for h in hits} <= {f"r{i}" for i in inside}
        if exact:
            assert {h.row.id for h in hits} == truth
    assert store.vector_search(query, 10, Filters(since=date(2026, 4, 1))) == []  # nothing that day
    assert len(queries) == 2  # the empty window ran no vector query


def test_segments_added_by_optimize_are_folded_into_one_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each optimize that finds new vectors adds a segment every query then searches; past
    ``ANN_FOLD_AFTER`` the index is built again as one, and the appended rows are still found."""
    monkeypatch.setattr(lance, "ANN_ROWS_PER_PARTITION", 500)
    monkeypatch.setattr(lance, "ANN_FOLD_AFTER", 2)
    vectors = _clustered(3000)
    store = _store(tmp_path, vectors, ann_min_rows=2000)
    store.optimize()
    table = store._tbl()
    assert store._ann_segments(table) == 1
    later = _clustered(40, seed=31)
    seen, fragments = [], []
    for at in range(0, 40, 10):
        store.add(_rows(later[at : at + 10], start=3000 + at))
        store.optimize()
        seen.append(store._ann_segments(table))
        fragments.append(table.stats()["fragment_stats"]["num_fragments"])
    # Never more than the limit, and folded at least once (without the fold: 1, 2, 3, 4).
    assert max(seen) <= 2 and any(b < a for a, b in itertools.pairwise(seen))
    # The fragments the old segments kept apart are compacted with the fold, not one append later.
    assert max(fragments) <= 2
    assert _vector_indexes(store) == [("vector_ivfpq_p6", "IvfPq")]  # same partitions: not a growth rebuild
    for i in (5, 15, 25, 35):
        assert store.vector_search(list(map(float, later[i])), 10)[0].row.id == f"r{3000 + i}"


def test_optimize_leaves_folding_to_a_caller_that_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lance, "ANN_ROWS_PER_PARTITION", 500)
    monkeypatch.setattr(lance, "ANN_FOLD_AFTER", 2)
    vectors = _clustered(3000)
    store = _store(tmp_path, vectors, ann_min_rows=2000)
    store.optimize()
    later = _clustered(40, seed=31)
    for at in range(0, 40, 10):
        store.add(_rows(later[at : at + 10], start=3000 + at))
        store.optimize(fold=False)
    assert store._ann_segments(store._tbl()) > 2

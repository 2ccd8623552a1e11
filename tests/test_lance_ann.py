"""The vector index past the threshold: IVF_PQ with exact re-ranking, rebuilt as the rows grow."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from funes_contracts.store import STAMP, make_row
from funes_core.read.recall import DEFAULT_CANDIDATES
from funes_core.store import lance
from funes_core.store.base import Filters, Row
from funes_core.store.lance import LanceStore


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

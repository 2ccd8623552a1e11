"""The in-memory reference store: the simplest backend that passes ``StoreContract``.

It exists for tests and as readable executable documentation of the Store semantics (filters,
dedup, owed embeddings, BM25, cosine) that a new backend must reproduce. Pure Python + numpy;
nothing persists. Thread-safe (one lock), so tests can read while another thread writes.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from funes_core.models.vectors import ModelMismatchError, ModelStamp, Vector
from funes_core.store.base import Filters, Hit, Row, SessionFacet, StoreStats, candidate_row, facets_of

__all__ = ["BM25_B", "BM25_K1", "MemoryStore", "tokenize"]

BM25_K1 = 1.2
BM25_B = 0.75
_WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Lowercased words (runs of letters, digits and ``_``): the BM25 vocabulary."""
    return _WORD.findall(text.lower())


def _as_vector(vector: Vector, dim: int | None) -> Vector:
    arr = np.asarray(vector, dtype=np.float32).reshape(-1)
    if dim is not None and arr.shape[0] != dim:
        raise ValueError(f"vector has {arr.shape[0]} dimensions; this memory holds {dim}-d vectors")
    return arr


def _as_candidates(hits: list[Hit]) -> list[Hit]:
    return [replace(h, row=candidate_row(h.row.id, h.row.session_id, h.row.seq, h.row.ts)) for h in hits]


class MemoryStore:
    """Rows in a dict, BM25 computed at query time over the whole corpus, cosine by brute force."""

    def __init__(self, label: str = "in-memory") -> None:
        self.label = label
        self._rows: dict[str, Row] = {}
        self._terms: dict[str, Counter[str]] = {}
        self._lengths: dict[str, int] = {}
        self._stamp: ModelStamp | None = None
        self._lock = threading.RLock()

    # -- model ----------------------------------------------------------------------------
    def model_stamp(self) -> ModelStamp | None:
        return self._stamp

    def stamp_model(self, stamp: ModelStamp) -> None:
        with self._lock:
            if self._stamp is None:
                self._stamp = stamp
            elif self._stamp != stamp:
                raise ModelMismatchError(self.label, self._stamp, stamp)

    def _dim(self) -> int | None:
        return self._stamp.dim if self._stamp else None

    # -- writes ---------------------------------------------------------------------------
    def add(self, rows: Sequence[Row]) -> int:
        with self._lock:
            prepared: dict[str, Row] = {}
            for row in rows:
                if row.id in self._rows or row.id in prepared:
                    continue
                vector = None if row.vector is None else _as_vector(row.vector, self._dim())
                prepared[row.id] = row.with_vector(vector)
            # validated first, then applied: a bad row leaves the store untouched (atomic)
            for row_id, row in prepared.items():
                self._rows[row_id] = row
                terms = tokenize(row.text)
                self._terms[row_id] = Counter(terms)
                self._lengths[row_id] = len(terms)
            return len(prepared)

    def set_vectors(self, vectors: Mapping[str, Vector]) -> None:
        with self._lock:
            updates = {
                row_id: _as_vector(vec, self._dim())
                for row_id, vec in vectors.items()
                if row_id in self._rows and self._rows[row_id].vector is None
            }
            for row_id, vec in updates.items():
                self._rows[row_id] = self._rows[row_id].with_vector(vec)

    def optimize(self) -> None:
        """Nothing to compact."""

    def needs_upkeep(self) -> bool:
        """Never: every read scans the rows anyway."""
        return False

    def owed_count(self) -> int:
        with self._lock:
            return sum(1 for r in self._rows.values() if r.vector is None)

    # -- reads ----------------------------------------------------------------------------
    def _filtered(self, filters: Filters | None) -> list[Row]:
        with self._lock:
            rows = list(self._rows.values())
        if filters is None or filters.empty:
            return rows
        return [r for r in rows if filters.matches(r)]

    def existing_ids(self, ids: Iterable[str]) -> set[str]:
        with self._lock:
            return {i for i in ids if i in self._rows}

    def owed(self, limit: int) -> list[Row]:
        with self._lock:
            pending = [r for r in self._rows.values() if r.vector is None]
        pending.sort(key=lambda r: (r.ts, r.id))
        return pending[: max(0, limit)]

    def vector_search(self, vector: Vector, k: int, filters: Filters | None = None) -> list[Hit]:
        query = _as_vector(vector, self._dim())
        qnorm = float(np.linalg.norm(query))
        if qnorm == 0.0 or k <= 0:
            return []
        scored: list[tuple[float, str, Row]] = []
        for row in self._filtered(filters):
            if row.vector is None:
                continue
            denom = qnorm * float(np.linalg.norm(row.vector))
            score = float(np.dot(query, row.vector)) / denom if denom else 0.0
            scored.append((score, row.id, row))
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [Hit(row.with_vector(None), score) for score, _, row in scored[:k]]

    def text_search(self, query: str, k: int, filters: Filters | None = None) -> list[Hit]:
        """Okapi BM25 (k1=1.2, b=0.75), idf ``ln(1 + (N - df + 0.5) / (df + 0.5))`` over all rows."""
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or k <= 0:
            return []
        with self._lock:
            n_docs = len(self._rows)
            if n_docs == 0:
                return []
            avgdl = sum(self._lengths.values()) / n_docs or 1.0
            df = {t: sum(1 for c in self._terms.values() if t in c) for t in terms}
            idf = {t: math.log(1.0 + (n_docs - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
            scored: list[tuple[float, str, Row]] = []
            for row in self._filtered(filters):
                counts = self._terms[row.id]
                norm = BM25_K1 * (1.0 - BM25_B + BM25_B * self._lengths[row.id] / avgdl)
                score = 0.0
                for t in terms:
                    tf = counts.get(t, 0)
                    if tf:
                        score += idf[t] * tf * (BM25_K1 + 1.0) / (tf + norm)
                if score > 0.0:
                    scored.append((score, row.id, row))
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [Hit(row.with_vector(None), score, row.vector is None) for score, _, row in scored[:k]]

    # -- the optional CandidateSearch: the same hits, rows holding only what ranking reads --
    def vector_candidates(self, vector: Vector, k: int, filters: Filters | None = None) -> list[Hit]:
        return _as_candidates(self.vector_search(vector, k, filters))

    def text_candidates(self, query: str, k: int, filters: Filters | None = None) -> list[Hit]:
        return _as_candidates(self.text_search(query, k, filters))

    def session_rows(
        self, session_id: str, seq_from: int | None = None, seq_to: int | None = None
    ) -> list[Row]:
        rows = [
            r.with_vector(None)
            for r in self._filtered(Filters(session_id=session_id))
            if (seq_from is None or r.seq >= seq_from) and (seq_to is None or r.seq <= seq_to)
        ]
        rows.sort(key=lambda r: (r.seq, r.block_idx, r.split_idx))
        return rows

    def session_windows(self, windows: Mapping[str, tuple[int, int]]) -> list[Row]:
        rows = [
            r.with_vector(None)
            for r in self._rows.values()
            if r.session_id in windows and windows[r.session_id][0] <= r.seq <= windows[r.session_id][1]
        ]
        rows.sort(key=lambda r: (r.session_id, r.seq, r.block_idx, r.split_idx))
        return rows

    def session_vectors(self, session_id: str) -> dict[str, Vector]:
        return {
            r.id: r.vector for r in self._filtered(Filters(session_id=session_id)) if r.vector is not None
        }

    def scan(self, filters: Filters | None = None) -> list[Row]:
        return [r.with_vector(None) for r in self._filtered(filters)]

    def session_facets(self, filters: Filters | None = None) -> list[SessionFacet]:
        return facets_of(self.scan(filters))

    def count(self, filters: Filters | None = None) -> int:
        return len(self._filtered(filters))

    def stats(self) -> StoreStats:
        rows = self._filtered(None)
        return StoreStats(
            chunks=len(rows),
            sessions=len({r.session_id for r in rows}),
            owed=self.owed_count(),
            harnesses=dict(Counter(r.harness for r in rows)),
            disk_bytes=0,
        )

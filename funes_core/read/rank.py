"""Fusion and the ranking signals of ``recall``: how the legs' candidates become one ranking.

The legs (:mod:`funes_core.read.legs`) return candidates on different scales; this module fuses them
(:func:`fuse_relative`, the default, or reciprocal-rank :func:`fuse`), then applies the signals, each
measured in ``bench/quality.py`` and ``docs/benchmarks.md``: the window legs of a time expression
(:func:`with_window`), turn context (:func:`with_context`), session evidence (:func:`with_sessions`),
an optional reranker (:func:`rerank`) and freshness (:func:`freshness`). Each takes and returns a
list of ``(row, score)`` best first, so each can be switched off alone for an ablation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from funes_core.read.legs import Leg, Legs, Searchable, SessionReads, window_filters

if TYPE_CHECKING:
    from funes_core.models.base import Reranker
    from funes_core.models.vectors import Vector
    from funes_core.read.recall import RecallParams
    from funes_core.read.when import Window
    from funes_core.store.base import Hit, Row


#: The reciprocal-rank constant: a rank-r row adds weight / (RRF_K + r), r counted from 0.
RRF_K = 60


@dataclass(frozen=True, slots=True)
class Profile:
    """Fusion weights of the two legs and the default freshness half-life (days; 0 = off)."""

    name: str
    vector_weight: float
    text_weight: float
    half_life: float


#: ``balanced`` is the default. Relevance, not age, ranks by default: an old decision that answers
#: the question must not lose to a fresh passage that merely mentions it. ``recent`` is for
#: "what was I doing lately" questions.
PROFILES: dict[str, Profile] = {
    "balanced": Profile("balanced", 1.0, 1.0, 0.0),
    "semantic": Profile("semantic", 2.0, 1.0, 0.0),
    "lexical": Profile("lexical", 1.0, 2.0, 0.0),
    "recent": Profile("recent", 1.0, 1.0, 7.0),
}


@dataclass(frozen=True, slots=True)
class RerankCost:
    """What reranking cost one recall (``--json`` shows it; ``bench/`` reports it)."""

    model: str
    pool: int
    ms: float
    #: False when the reranker did not answer in time (the fused order was kept).
    applied: bool = True


#: Candidates a reranker scores at least, and per hit asked for: a deep pool, not just the top k.
RERANK_POOL_MIN = 40
RERANK_POOL_PER_HIT = 4


def rerank_pool_size(k: int) -> int:
    return max(RERANK_POOL_MIN, RERANK_POOL_PER_HIT * k)


def rerank(
    reranker: Reranker, query: str, fused: list[tuple[Row, float]], k: int, timeout: float
) -> tuple[list[tuple[Row, float]], RerankCost, str | None]:
    """Reorder the deep pool by the reranker's scores; on a timeout keep the fused order, with a note.

    Scores become ``sigmoid(logit)`` so they read like the fused ones (0..1). The reranker runs in
    a worker thread: one that hangs costs this recall ``timeout`` seconds, never the answer.
    """
    import threading
    import time

    pool = fused[: rerank_pool_size(k)]
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["scores"] = reranker.score(query, [row.text for row, _ in pool])
        # Broad on purpose: a failing reranker must cost the ranking, never the recall.
        except Exception as exc:
            box["error"] = f"{type(exc).__name__}: {exc}"

    start = time.perf_counter()
    worker = threading.Thread(target=work, name="funes-rerank", daemon=True)
    worker.start()
    worker.join(timeout)
    ms = round(1000 * (time.perf_counter() - start), 1)
    scores = box.get("scores")
    if worker.is_alive() or scores is None or len(scores) != len(pool):
        if worker.is_alive():
            why = f"did not answer within {timeout:g} s"
        else:
            why = (
                box.get("error") or f"returned {0 if scores is None else len(scores)} scores for {len(pool)}"
            )
        note = f"note: reranker {reranker.model} {why}; showing the fused order"
        return fused, RerankCost(reranker.model, len(pool), ms, applied=False), note
    rescored = [(row, 1.0 / (1.0 + math.exp(-float(s)))) for (row, _), s in zip(pool, scores, strict=True)]
    rescored.sort(key=lambda pair: -pair[1])
    return rescored, RerankCost(reranker.model, len(pool), ms), None


def _parse_ts(ts: str) -> datetime | None:
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def freshness(ts: str, half_life: float, now: datetime) -> float:
    """``0.5 ** (age_days / half_life)``; 1 when disabled, unparsable, or in the future."""
    if half_life <= 0:
        return 1.0
    when = _parse_ts(ts)
    if when is None:
        return 1.0
    age_days = max((now - when).total_seconds() / 86400.0, 0.0)
    return math.pow(0.5, age_days / half_life)


def _possible_weight(total: float, blind: float) -> float:
    """The weight of the legs that can see a row the vector leg cannot (its embedding is owed)."""
    return total - blind if 0.0 < blind < total else total


def fuse(
    legs: Sequence[tuple[float, Sequence[Hit]]], *, blind_weight: float = 0.0
) -> list[tuple[Row, float]]:
    """Weighted reciprocal-rank fusion, normalised so a row ranked first by every leg scores 1.0.

    Rows are keyed by chunk id; within a leg, equal scores share a rank. Ties keep the order in
    which rows were first seen (vector leg first), so the result is deterministic. A row whose
    embedding is still owed (:attr:`Hit.vector_owed`) is normalised by the weight of the legs
    that can see it (all but ``blind_weight``, the vector leg's), as :func:`fuse_relative` does.
    """
    total_weight = sum(w for w, _ in legs) or 1.0
    scores: dict[str, float] = {}
    rows: dict[str, Row] = {}
    owed: set[str] = set()
    for weight, hits in legs:
        rank, previous = 0, None
        for position, hit in enumerate(hits):
            # Rows a leg scores equally share its best rank: equally relevant passages must tie,
            # so that only freshness (when asked for) decides between them.
            if previous is None or hit.score != previous:
                rank, previous = position, hit.score
            rows.setdefault(hit.row.id, hit.row)
            scores[hit.row.id] = scores.get(hit.row.id, 0.0) + weight / (RRF_K + rank)
            if hit.vector_owed:
                owed.add(hit.row.id)
    blind_best = _possible_weight(total_weight, blind_weight) / RRF_K
    best = {rid: blind_best if rid in owed else total_weight / RRF_K for rid in scores}
    order = sorted(scores, key=lambda rid: -scores[rid] / best[rid])
    return [(rows[rid], scores[rid] / best[rid]) for rid in order]


def fuse_relative(
    legs: Sequence[tuple[float, Sequence[Hit]]], *, blind_weight: float = 0.0
) -> list[tuple[Row, float]]:
    """Weighted relative-score fusion: each leg's scores min-max rescaled to [0, 1], weighed, added.

    Within a leg the best candidate counts 1 and the worst 0 (all 1 when the leg scores them
    equally, e.g. a single candidate); a row's score is the weighted sum over the legs that found
    it divided by the sum of weights, so a row ranked first by every leg scores 1.0 and equally
    scored rows tie. Ties keep the order in which rows were first seen (vector leg first).

    A row whose embedding is still owed (:attr:`Hit.vector_owed`: stored a moment ago, or waiting
    for the background worker) cannot be found by the vector leg, whose weight is
    ``blind_weight``; its sum is divided by the weight of the legs that can see it instead. Else a
    keyword match that is not embedded yet would rank below the vector leg's best, however weak
    that one is. A fully embedded memory has no such row: nothing changes for it.
    """
    total_weight = sum(w for w, _ in legs) or 1.0
    possible = _possible_weight(total_weight, blind_weight)
    scores: dict[str, float] = {}
    rows: dict[str, Row] = {}
    owed: set[str] = set()
    for weight, hits in legs:
        if not hits:
            continue
        values = [h.score for h in hits]
        lo, hi = min(values), max(values)
        span = hi - lo
        for hit in hits:
            norm = (hit.score - lo) / span if span > 0 else 1.0
            rows.setdefault(hit.row.id, hit.row)
            scores[hit.row.id] = scores.get(hit.row.id, 0.0) + weight * norm
            if hit.vector_owed:
                owed.add(hit.row.id)
    fused = {rid: score / (possible if rid in owed else total_weight) for rid, score in scores.items()}
    order = sorted(fused, key=lambda rid: -fused[rid])
    return [(rows[rid], fused[rid]) for rid in order]


def with_window(
    legs_of: Legs,
    query: str,
    fused: list[tuple[Row, float]],
    params: RecallParams,
    profile: Profile,
    window: Window,
    vector: Vector | None,
) -> list[tuple[Row, float]]:
    """Add the window legs: each leg searched again, pre-filtered to the window's days and kept to
    its exact span, fused by relative score, and ``window_weight`` × that score added to a passage's.

    The unfiltered ranking stays underneath, so a passage of another time that answers better still
    ranks, and a time expression read wrongly costs little; but among the passages that match the
    words, those of the named time come first, and ones the unfiltered legs' candidates missed are
    brought in. Two more searches, only for a query that names a time.
    """
    filters = window_filters(params.filters, window)
    if filters is None:
        return fused
    legs: list[tuple[float, Sequence[Hit]]] = []
    if vector is not None:
        found = legs_of.vector(vector, params.candidates, filters)
        legs.append((profile.vector_weight, [h for h in found if window.contains(h.row.ts)]))
    if Leg.TEXT in params.legs:
        found = legs_of.text(query, params.candidates, filters)
        legs.append((profile.text_weight, [h for h in found if window.contains(h.row.ts)]))
    bonus = fuse_relative(legs, blind_weight=profile.vector_weight if vector is not None else 0.0)
    if not bonus:
        return fused
    rows = {row.id: row for row, _ in fused}
    scores = {row.id: score for row, score in fused}
    for row, score in bonus:
        rows.setdefault(row.id, row)
        scores[row.id] = scores.get(row.id, 0.0) + params.window_weight * score
    order = sorted(scores, key=lambda rid: -scores[rid])  # stable: ties keep the fused order
    return [(rows[rid], scores[rid]) for rid in order]


def with_context(
    store: Searchable | SessionReads, fused: list[tuple[Row, float]], params: RecallParams
) -> list[tuple[Row, float]]:
    """Pass a share of each leading passage's score to the turns just after and before it.

    Why: the words of a question are often in the turn that *asks* or *announces* ("what movies do
    you like?", "let me check the migration") and the answer is the next turn, which the fused
    ranking misses. Among the first ``context_head`` fused passages, each gives ``successor`` × its score
    to every chunk of the next turn of its session and ``predecessor`` × its score to every chunk
    of the turn before; a chunk adds the largest share it is given to its own score (one store read).
    """
    head = fused[: params.context_head]
    if not head:
        return fused
    reads = store if isinstance(store, SessionReads) else SessionReads(store)
    wide = 1 + params.neighbors  # the neighbours of the turns next to a leading passage too
    windows: dict[str, tuple[int, int]] = {}
    for row, _ in head:
        lo, hi = windows.get(row.session_id, (row.seq, row.seq))
        windows[row.session_id] = (max(min(lo, row.seq - wide), 0), max(hi, row.seq + wide))
    by_turn: dict[tuple[str, int], list[Row]] = {}
    for r in reads.windows(windows):
        by_turn.setdefault((r.session_id, r.seq), []).append(r)
    rows = {row.id: row for row, _ in fused}
    scores = {row.id: score for row, score in fused}
    given: dict[str, float] = {}
    for row, score in head:
        for offset, share in ((1, params.successor), (-1, params.predecessor)):
            if share <= 0:
                continue
            for other in by_turn.get((row.session_id, row.seq + offset), ()):
                rows.setdefault(other.id, other)
                given[other.id] = max(given.get(other.id, 0.0), share * score)
    for rid, extra in given.items():
        scores[rid] = scores.get(rid, 0.0) + extra
    order = sorted(scores, key=lambda rid: -scores[rid])  # stable: ties keep the fused order
    return [(rows[rid], scores[rid]) for rid in order]


def with_sessions(fused: list[tuple[Row, float]], weight: float, head: int) -> list[tuple[Row, float]]:
    """Raise the sessions whose passages cluster among the leading ``head``: each of them gains
    ``weight`` × the best score of its session's *other* leading passages.

    Why: in a whole history one session usually holds the answer, and the question's words are
    spread over several of its turns; a passage that matches alone in a session about other
    things is more often a coincidence. A passage alone in its session gains nothing.
    """
    lead = fused[:head]
    by_session: dict[str, list[float]] = {}
    for row, score in lead:
        by_session.setdefault(row.session_id, []).append(score)
    scores = {row.id: score for row, score in fused}
    rows = {row.id: row for row, _ in fused}
    for row, score in lead:
        others = sorted(by_session[row.session_id], reverse=True)
        others.remove(score)
        if others:
            scores[row.id] = score + weight * others[0]
    order = sorted(scores, key=lambda rid: -scores[rid])  # stable: ties keep the fused order
    return [(rows[rid], scores[rid]) for rid in order]

"""Recall: hybrid search over the memory, with provenance, freshness, neighbours and a token budget.

The pipeline: embed the query; run a vector leg and a BM25 leg, each *pre-filtered* and each
returning ``candidates`` rows; fuse them by weighted relative score; weigh by freshness; keep the
top ``k``; attach each hit's neighbouring chunks. Nothing is summarised or rewritten: every hit is
a stored chunk, verbatim.

Why relative-score fusion: BM25 scores and cosine similarities live on different scales, so each
leg's scores are first rescaled to [0, 1] over its own candidates (best 1, worst 0) and only then
weighed and added; neither leg can drown the other by its units. Unlike reciprocal-rank fusion
(:func:`fuse`, still available as ``RecallParams(fusion="rrf")``), it keeps *how much* better a
row is than the next: with RRF's constant 60 a row at rank 29 of both legs outscores the row
ranked first by one leg, so passages that are mediocre in both legs pushed the one clear keyword
or meaning match out of the top hits. On LoCoMo (``bench/quality.py``) relative fusion raised
turn-level recall@10 from 0.606 to 0.628 and recall@5 from 0.476 to 0.536 with the same
candidates (``docs/benchmarks.md``). Rows whose embedding is still owed are found by the BM25 leg
alone, which is what makes a session indexed a second ago recallable before the (slow, CPU)
embedding catches up.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum

from funes_core.store.base import Filters, Hit, Row, Store, Vector

__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_FUSION",
    "DEFAULT_K",
    "DEFAULT_NEIGHBORS",
    "FUSIONS",
    "LEVELS",
    "PROFILES",
    "RRF_K",
    "Profile",
    "RecallHit",
    "RecallParams",
    "RecallResult",
    "freshness",
    "fuse",
    "fuse_relative",
    "recall",
]

DEFAULT_K = 8
DEFAULT_CANDIDATES = 30
DEFAULT_NEIGHBORS = 1
#: The reciprocal-rank constant: a rank-r row adds weight / (RRF_K + r), r counted from 0.
RRF_K = 60
#: How the legs are fused: ``relative`` (the default, :func:`fuse_relative`) or ``rrf`` (:func:`fuse`).
FUSIONS = ("relative", "rrf")
DEFAULT_FUSION = "relative"
#: Neighbour previews are cut at this many characters.
NEIGHBOR_PREVIEW = 160

#: Token budgets of the named curation levels (``--level``).
LEVELS: dict[str, int] = {"minimal": 300, "lean": 800, "balanced": 1500, "rich": 3000, "full": 5000}


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


class Leg(Enum):
    VECTOR = "vector"
    TEXT = "text"


@dataclass(frozen=True, slots=True)
class RecallParams:
    """Everything that shapes one recall. ``half_life`` ``None`` means the profile's default."""

    k: int = DEFAULT_K
    candidates: int = DEFAULT_CANDIDATES
    neighbors: int = DEFAULT_NEIGHBORS
    filters: Filters = field(default_factory=Filters)
    profile: str = "balanced"
    half_life: float | None = None
    budget: int | None = None
    legs: tuple[Leg, ...] = (Leg.VECTOR, Leg.TEXT)
    fusion: str = DEFAULT_FUSION

    def __post_init__(self) -> None:
        if self.fusion not in FUSIONS:
            raise ValueError(f"unknown fusion {self.fusion!r}; choose one of {', '.join(FUSIONS)}")
        if self.k < 1:
            raise ValueError("k must be at least 1")
        if self.candidates < 1:
            raise ValueError("candidates must be at least 1")
        if self.neighbors < 0:
            raise ValueError("neighbors must be 0 or more")
        if self.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.profile!r}; choose one of {', '.join(PROFILES)}")
        if self.half_life is not None and self.half_life < 0:
            raise ValueError("half-life must be 0 (off) or a positive number of days")
        if self.budget is not None and self.budget < 1:
            raise ValueError("budget must be a positive number of tokens")

    @property
    def effective_half_life(self) -> float:
        return PROFILES[self.profile].half_life if self.half_life is None else self.half_life


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One passage: the stored row, its final score, and its neighbouring chunks."""

    row: Row
    score: float
    neighbors: tuple[Row, ...] = ()


@dataclass(frozen=True, slots=True)
class RecallResult:
    query: str
    params: RecallParams
    hits: tuple[RecallHit, ...]
    #: Live keyword triggers named by the query: (keyword, hint), newest first.
    triggers: tuple[tuple[str, str], ...] = ()


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


def fuse(legs: Sequence[tuple[float, Sequence[Hit]]]) -> list[tuple[Row, float]]:
    """Weighted reciprocal-rank fusion, normalised so a row ranked first by every leg scores 1.0.

    Rows are keyed by chunk id; within a leg, equal scores share a rank. Ties keep the order in
    which rows were first seen (vector leg first), so the result is deterministic.
    """
    total_weight = sum(w for w, _ in legs) or 1.0
    best = total_weight / RRF_K
    scores: dict[str, float] = {}
    rows: dict[str, Row] = {}
    for weight, hits in legs:
        rank, previous = 0, None
        for position, hit in enumerate(hits):
            # Rows a leg scores equally share its best rank: equally relevant passages must tie,
            # so that only freshness (when asked for) decides between them.
            if previous is None or hit.score != previous:
                rank, previous = position, hit.score
            rows.setdefault(hit.row.id, hit.row)
            scores[hit.row.id] = scores.get(hit.row.id, 0.0) + weight / (RRF_K + rank)
    order = sorted(scores, key=lambda rid: -scores[rid])
    return [(rows[rid], scores[rid] / best) for rid in order]


def fuse_relative(legs: Sequence[tuple[float, Sequence[Hit]]]) -> list[tuple[Row, float]]:
    """Weighted relative-score fusion: each leg's scores min-max rescaled to [0, 1], weighed, added.

    Within a leg the best candidate counts 1 and the worst 0 (all 1 when the leg scores them
    equally, e.g. a single candidate); a row's score is the weighted sum over the legs that found
    it divided by the sum of weights, so a row ranked first by every leg scores 1.0 and equally
    scored rows tie. Ties keep the order in which rows were first seen (vector leg first).
    """
    total_weight = sum(w for w, _ in legs) or 1.0
    scores: dict[str, float] = {}
    rows: dict[str, Row] = {}
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
    order = sorted(scores, key=lambda rid: -scores[rid])
    return [(rows[rid], scores[rid] / total_weight) for rid in order]


def _neighbors(store: Store, hits: Sequence[tuple[Row, float]], window: int) -> dict[str, tuple[Row, ...]]:
    """For each hit, the chunks of its session within ±window seq, other turns only (one store read)."""
    if window <= 0 or not hits:
        return {}
    spans: dict[str, tuple[int, int]] = {}
    for row, _ in hits:
        lo, hi = spans.get(row.session_id, (row.seq, row.seq))
        spans[row.session_id] = (min(lo, row.seq), max(hi, row.seq))
    windows = {sid: (max(lo - window, 0), hi + window) for sid, (lo, hi) in spans.items()}
    by_session: dict[str, list[Row]] = {}
    for r in store.session_windows(windows):
        by_session.setdefault(r.session_id, []).append(r)
    return {
        hit.id: tuple(
            r
            for r in by_session.get(hit.session_id, ())
            if abs(r.seq - hit.seq) <= window and r.turn_uuid != hit.turn_uuid
        )
        for hit, _ in hits
    }


def recall(
    store: Store,
    query: str,
    params: RecallParams,
    *,
    embed_query: Callable[[str], Vector] | None,
    now: datetime | None = None,
) -> RecallResult:
    """Run one recall. ``embed_query`` may be ``None`` for a BM25-only recall (no model needed)."""
    query = " ".join(query.split())
    if not query:
        raise ValueError("the query is empty")
    profile = PROFILES[params.profile]
    legs: list[tuple[float, Sequence[Hit]]] = []
    if Leg.VECTOR in params.legs and embed_query is not None:
        vector = embed_query(query)
        legs.append((profile.vector_weight, store.vector_search(vector, params.candidates, params.filters)))
    if Leg.TEXT in params.legs:
        legs.append((profile.text_weight, store.text_search(query, params.candidates, params.filters)))
    fused = fuse_relative(legs) if params.fusion == "relative" else fuse(legs)
    moment = now or datetime.now(UTC)
    half_life = params.effective_half_life
    weighed = [(row, score * freshness(row.ts, half_life, moment)) for row, score in fused]
    weighed.sort(key=lambda pair: -pair[1])  # stable: equal scores keep fused order
    top = weighed[: params.k]
    neighbours = _neighbors(store, top, params.neighbors)
    hits = tuple(RecallHit(row, score, neighbours.get(row.id, ())) for row, score in top)
    return RecallResult(query=query, params=params, hits=hits)


_WORD = re.compile(r"\w+", re.UNICODE)


def query_words(query: str) -> set[str]:
    """Lower-cased whole words of a query (unicode-aware), for trigger matching."""
    return {w.casefold() for w in _WORD.findall(query)}

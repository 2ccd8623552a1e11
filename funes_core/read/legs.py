"""The candidate legs of ``recall``: the searches a recall runs, and what they read around the hits.

A recall searches two legs, each *pre-filtered* and each returning ``candidates`` rows: the vector
leg (cosine similarity over the embeddings) and the BM25 leg (the full-text index). This module is
what those searches are (:class:`Legs`: a store's full searches or its candidate ones,
:class:`Pool`: several memories read as one), how deep they go (:func:`scaled_depth`), which words
of a query are identifiers the vector leg cannot see (:func:`query_identifiers`), and the session
reads done once per recall (:class:`SessionReads`: turn context, whole rows, neighbours). How the
legs' answers are fused and ranked is :mod:`funes_core.read.rank`'s job.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from enum import Enum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from funes_core.models.vectors import Vector
    from funes_core.read.when import Window
    from funes_core.store.base import Filters, Hit, Row, Store


#: Chunks up to which :func:`scaled_depth` leaves the candidates as asked.
DEPTH_BASE_CHUNKS = 10_000
#: Most candidates per leg :func:`scaled_depth` asks for.
DEPTH_MAX = 200


#: What counts as an identifier in a query: a ``--flag``, a ``snake_case`` or ``@attribute`` name, a
#: ``camelCase``/``PascalCase`` name with an inner capital, a path or ``file.ext``, a ``CONSTANT_NAME``
#: (capitals holding an underscore or a digit), a ``name/arity``, a versioned name (``spotter-0p7.1``),
#: a hex hash (letters and digits both). Plain words and capitalised names (``Caroline``) are not, nor
#: are acronyms (``JSON``, ``SSE``, ``API``: words the vector leg reads as well as the keyword leg) or
#: English words spelt in hex letters (``feedbac``, ``defaced``). On LoCoMo 15 of 1,982 questions name
#: one (``YouTube``, ``McGee``), on the agent sessions 36 of the 50 ``exact`` questions and 22 of the
#: 120 others.
_IDENTIFIER = re.compile(
    r"""(?x)
    (?:^|(?<=[\s(\[{"'`]))
    (?P<tok>
        --?[A-Za-z][\w-]+
      | [@$]?[A-Za-z0-9_]\w*_\w+
      | [A-Za-z]+[a-z0-9]*[A-Z][A-Za-z0-9]*[a-z0-9][A-Za-z0-9]*
      | [\w.-]*[/\\][\w./\\-]+
      | \w+\.\w{1,5}\b
      | [A-Z][A-Z0-9]*[_0-9][A-Z0-9_]*\b
      | \w*\d\w*[-.][\w.-]+
      | [A-Za-z]+-\w*\d[\w.-]*
      | (?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b
    )"""
)


def query_identifiers(query: str) -> tuple[str, ...]:
    """The identifiers a query names (:data:`_IDENTIFIER`), without trailing punctuation."""
    found = (m.group("tok").rstrip(".,?!:;") for m in _IDENTIFIER.finditer(query))
    return tuple(dict.fromkeys(t for t in found if len(t) >= 3))


class Leg(Enum):
    VECTOR = "vector"
    TEXT = "text"


class Searchable(Protocol):
    """What :func:`recall` reads from a memory: a store, or several pooled (:func:`recall_many`)."""

    def vector_search(self, vector: Vector, k: int, filters: Filters | None = None) -> list[Hit]: ...

    def text_search(self, query: str, k: int, filters: Filters | None = None) -> list[Hit]: ...

    def session_windows(self, windows: Mapping[str, tuple[int, int]]) -> list[Row]: ...


def scaled_depth(candidates: int, growth: float, store: Searchable) -> int:
    """Candidates per leg for a memory of this size: ``candidates`` up to :data:`DEPTH_BASE_CHUNKS`
    chunks, then ``candidates × (1 + growth × log10(chunks / DEPTH_BASE_CHUNKS))``, at most
    :data:`DEPTH_MAX` (and never fewer than asked). A store that cannot count (several memories
    pooled) keeps ``candidates``. Why: in a whole history the answer competes with hundreds of
    sessions about other things, and a fixed 30 candidates is a smaller share of it each month.
    """
    count = getattr(store, "count", None)
    if growth <= 0 or count is None:
        return candidates
    chunks = int(count())
    if chunks <= DEPTH_BASE_CHUNKS:
        return candidates
    scaled = round(candidates * (1.0 + growth * math.log10(chunks / DEPTH_BASE_CHUNKS)))
    return max(candidates, min(DEPTH_MAX, scaled))


def window_filters(filters: Filters, window: Window) -> Filters | None:
    """``filters`` narrowed to the days ``window`` touches; ``None`` when nothing can pass both."""
    first, last = window.start.date(), (window.end - timedelta(microseconds=1)).date()
    since = max(first, filters.since) if filters.since else first
    until = min(last, filters.until) if filters.until else last
    return None if since > until else replace(filters, since=since, until=until)


class SessionReads:
    """Session windows read once per recall: the turn-context read also serves the neighbours.

    Each read at 1M chunks costs a query through the ``session_id`` index (~25 ms on 2 busy
    cores). The context step reads its windows widened by the neighbour window, so the neighbours
    of the hits it ranked (the leading passages and the turns next to them) are already here;
    only sessions whose window was not read go to the store.
    """

    def __init__(self, store: Searchable) -> None:
        self.store = store
        self.read: dict[str, tuple[int, int, list[Row]]] = {}
        #: every row read so far, by id (whole rows: what a candidate row is resolved to)
        self.by_id: dict[str, Row] = {}

    def windows(self, windows: Mapping[str, tuple[int, int]]) -> list[Row]:
        """The rows of ``windows`` (any others of a session read wider may come along, in order)."""
        missing = {
            sid: (lo, hi)
            for sid, (lo, hi) in windows.items()
            if sid not in self.read or not (self.read[sid][0] <= lo and hi <= self.read[sid][1])
        }
        fresh: dict[str, list[Row]] = {}
        for r in self.store.session_windows(missing) if missing else ():
            fresh.setdefault(r.session_id, []).append(r)
            self.by_id[r.id] = r
        for sid, (lo, hi) in missing.items():
            self.read[sid] = (lo, hi, fresh.get(sid, []))
        return [r for sid in sorted(windows) for r in self.read[sid][2]]


def hit_windows(hits: Sequence[tuple[Row, float]], window: int) -> dict[str, tuple[int, int]]:
    """Per session, the seq span of its hits widened by ``window`` on each side."""
    spans: dict[str, tuple[int, int]] = {}
    for row, _ in hits:
        lo, hi = spans.get(row.session_id, (row.seq, row.seq))
        spans[row.session_id] = (min(lo, row.seq), max(hi, row.seq))
    return {sid: (max(lo - window, 0), hi + window) for sid, (lo, hi) in spans.items()}


def whole_rows(
    reads: SessionReads, hits: Sequence[tuple[Row, float]], window: int
) -> list[tuple[Row, float]]:
    """The hits with their whole rows in place of candidate rows (:class:`CandidateSearch`).

    Read through the neighbours' windows (which hold each hit), so :func:`neighbors_of` finds them
    read already; usually nothing is read at all, the turn-context read held them. A hit whose row
    is gone (purged between the search and this read) is left out, as any read after it would.
    """
    reads.windows(hit_windows(hits, window))
    return [(reads.by_id[row.id], score) for row, score in hits if row.id in reads.by_id]


def neighbors_of(
    store: Searchable | SessionReads, hits: Sequence[tuple[Row, float]], window: int
) -> dict[str, tuple[Row, ...]]:
    """For each hit, the chunks of its session within ±window seq, other turns only (one store read)."""
    if window <= 0 or not hits:
        return {}
    reads = store if isinstance(store, SessionReads) else SessionReads(store)
    by_session: dict[str, list[Row]] = {}
    for r in reads.windows(hit_windows(hits, window)):
        by_session.setdefault(r.session_id, []).append(r)
    return {
        hit.id: tuple(
            r
            for r in by_session.get(hit.session_id, ())
            if abs(r.seq - hit.seq) <= window and r.turn_uuid != hit.turn_uuid
        )
        for hit, _ in hits
    }


@dataclass(frozen=True, slots=True)
class Legs:
    """The two searches a recall runs: a store's full ones, or its candidate ones (only what ranking
    reads; the hits' whole rows are read at the end, see :class:`~funes_core.store.base.CandidateSearch`)."""

    vector: Callable[[Vector, int, Filters | None], list[Hit]]
    text: Callable[[str, int, Filters | None], list[Hit]]
    #: the rows of the hits are candidate rows, to be read whole
    candidates: bool

    @classmethod
    def of(cls, store: Searchable, *, whole: bool) -> Legs:
        """The candidate legs when the store has them, unless ``whole`` rows are needed at once."""
        from funes_core.store.base import CandidateSearch

        if not whole and isinstance(store, CandidateSearch):
            return cls(store.vector_candidates, store.text_candidates, candidates=True)
        return cls(store.vector_search, store.text_search, candidates=False)


class Pool:
    """Several memories read as one :class:`Searchable`; remembers which memory each chunk came from.

    A search asks every memory for ``k`` and returns the union, best first (a stable sort, so
    equal scores keep the memories' order and each memory's own order); a chunk returned by
    several memories is kept once, as the memory listed first returned it. Session windows are the
    union of every memory's rows in those windows (a pushed session is in both), one row per chunk.
    """

    def __init__(self, members: Sequence[tuple[str, Store]]) -> None:
        self.members = list(members)
        self._rank = {label: i for i, (label, _store) in enumerate(self.members)}
        #: chunk id -> label of the first-listed memory seen holding it, and its row there (the
        #: same chunk, but an ``--taint external`` remote marks its copy external)
        self.origin: dict[str, str] = {}
        self.rows: dict[str, Row] = {}

    def _claim(self, label: str, row: Row) -> None:
        held = self.origin.get(row.id)
        if held is None or self._rank[label] < self._rank[held]:
            self.origin[row.id] = label
            self.rows[row.id] = row

    def _pooled(self, search: Callable[[Store], list[Hit]]) -> list[Hit]:
        found: dict[str, Hit] = {}
        for label, store in self.members:
            for hit in search(store):
                self._claim(label, hit.row)
                found.setdefault(hit.row.id, hit)
        return sorted(found.values(), key=lambda h: -h.score)

    def vector_search(self, vector: Vector, k: int, filters: Filters | None = None) -> list[Hit]:
        return self._pooled(lambda store: store.vector_search(vector, k, filters))

    def text_search(self, query: str, k: int, filters: Filters | None = None) -> list[Hit]:
        return self._pooled(lambda store: store.text_search(query, k, filters))

    def session_windows(self, windows: Mapping[str, tuple[int, int]]) -> list[Row]:
        rows: dict[str, Row] = {}
        for label, store in self.members:
            for row in store.session_windows(windows):
                self._claim(label, row)
                rows.setdefault(row.id, row)
        return sorted(rows.values(), key=lambda r: (r.session_id, r.seq, r.block_idx, r.split_idx))

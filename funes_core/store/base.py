"""The Store protocol: what the rest of funes needs from a place that keeps chunks.

Two implementations pass one shared suite (``funes_contracts.StoreContract``): the LanceDB
store (the default, embedded, on disk) and an in-memory reference store (tests, and the simplest
conforming backend for anyone writing a new one).

Rows are append-only: a row's text and provenance are never changed. The one thing a row may
gain after it is written is its embedding, because text is stored (and searchable by BM25)
before the slow CPU embedding catches up.

Three capabilities are optional, for stores where reads cost per column or per call (LanceDB at a
million chunks): :class:`CandidateSearch` (search legs that return only what ranking reads),
:class:`SessionFacets` (one line per session read from a few columns, without the text) and
:class:`Versioned` (a data version, so that repeated reads can be kept until it changes). A
store without them works unchanged; funes then takes the plain path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Protocol, runtime_checkable

from funes_core.models.vectors import ModelStamp, Vector

__all__ = [
    "FACET_FIELDS",
    "RANK_FIELDS",
    "CandidateSearch",
    "Filters",
    "Hit",
    "Row",
    "SessionFacet",
    "SessionFacets",
    "Store",
    "StoreStats",
    "Versioned",
    "candidate_row",
    "facets_of",
]


@dataclass(frozen=True, slots=True)
class Row:
    """One stored chunk with its full provenance. ``vector`` is ``None`` while its embedding is owed."""

    id: str
    text: str
    session_id: str
    turn_uuid: str
    seq: int
    ts: str
    role: str
    harness: str
    block_type: str
    block_idx: int
    split_idx: int
    workdir: str = ""
    repo: str = ""
    parent_uuid: str | None = None
    tool_name: str | None = None
    source_path: str = ""
    taint: str = "internal"
    vector: Vector | None = field(default=None, compare=False, repr=False)

    def with_vector(self, vector: Vector | None) -> Row:
        return replace(self, vector=vector)


#: The fields of a row that recall's ranking reads: fusion keys by ``id``, date windows and
#: freshness read ``ts``, turn context and neighbours read ``session_id`` and ``seq``.
RANK_FIELDS: tuple[str, ...] = ("id", "session_id", "seq", "ts")


def candidate_row(id: str, session_id: str, seq: int, ts: str) -> Row:
    """A row holding only :data:`RANK_FIELDS` (text and the other fields empty): a search candidate
    whose whole row is read only if it makes the final hits (see :class:`CandidateSearch`)."""
    return Row(
        id=id,
        text="",
        session_id=session_id,
        turn_uuid="",
        seq=seq,
        ts=ts,
        role="",
        harness="",
        block_type="",
        block_idx=0,
        split_idx=0,
    )


@dataclass(frozen=True, slots=True)
class Filters:
    """Pre-filters applied *before* ranking, so a filtered-out row never takes a top-k slot.

    ``since``/``until`` are inclusive calendar days (UTC) compared with each row's ``ts``.
    ``harness`` ``claude`` also matches rows stored by older versions as ``claude_code``.
    """

    harness: str | None = None
    role: str | None = None
    block_type: str | None = None
    repo: str | None = None
    since: date | None = None
    until: date | None = None
    session_id: str | None = None

    @property
    def ts_lower(self) -> str | None:
        """Smallest ``ts`` string that passes ``since`` (ts strings sort chronologically)."""
        return self.since.isoformat() if self.since else None

    @property
    def ts_upper(self) -> str | None:
        """``ts`` strings strictly below this pass ``until`` (the day after, exclusive)."""
        return (self.until + timedelta(days=1)).isoformat() if self.until else None

    def harness_values(self) -> tuple[str, ...]:
        if self.harness is None:
            return ()
        return ("claude", "claude_code") if self.harness in ("claude", "claude_code") else (self.harness,)

    def matches(self, row: Row) -> bool:
        """The reference semantics every store must reproduce."""
        if self.harness is not None and row.harness not in self.harness_values():
            return False
        if self.role is not None and row.role != self.role:
            return False
        if self.block_type is not None and row.block_type != self.block_type:
            return False
        if self.repo is not None and self.repo not in row.repo.split():
            return False
        if self.session_id is not None and row.session_id != self.session_id:
            return False
        lower, upper = self.ts_lower, self.ts_upper
        if lower is not None and row.ts < lower:
            return False
        return not (upper is not None and row.ts >= upper)

    @property
    def empty(self) -> bool:
        return all(
            v is None
            for v in (
                self.harness,
                self.role,
                self.block_type,
                self.repo,
                self.since,
                self.until,
                self.session_id,
            )
        )


@dataclass(frozen=True, slots=True)
class Hit:
    """A row found by one search leg; ``score`` is leg-specific (higher is better).

    ``vector_owed`` (keyword leg): the row has no embedding yet, so the vector leg cannot find it;
    recall then ranks it by the legs that can (a store that does not say leaves it ``False``).
    """

    row: Row
    score: float
    vector_owed: bool = False


@dataclass(frozen=True, slots=True)
class StoreStats:
    """Counts for ``funes status``."""

    chunks: int
    sessions: int
    owed: int
    harnesses: Mapping[str, int]
    disk_bytes: int


@runtime_checkable
class Store(Protocol):
    """What funes needs from a chunk store. Readers never lock; one writer at a time (see index)."""

    #: How the memory is named in output hints (``--memory <label>``).
    label: str

    def model_stamp(self) -> ModelStamp | None:
        """The stamp of the model that built this memory, or ``None`` for an empty, unstamped one."""
        ...

    def stamp_model(self, stamp: ModelStamp) -> None:
        """Record the model; raises :class:`ModelMismatchError` if another one is recorded."""
        ...

    def add(self, rows: Sequence[Row]) -> int:
        """Append rows whose id is not stored yet (dedup by id, atomic); return how many were new."""
        ...

    def existing_ids(self, ids: Iterable[str]) -> set[str]:
        """Which of ``ids`` are stored already."""
        ...

    def owed(self, limit: int) -> list[Row]:
        """Up to ``limit`` rows still without a vector, oldest ``ts`` first (then id)."""
        ...

    def set_vectors(self, vectors: Mapping[str, Vector]) -> None:
        """Give owed rows their embedding. Rows that already have one keep it."""
        ...

    def vector_search(self, vector: Vector, k: int, filters: Filters | None = None) -> list[Hit]:
        """Nearest rows by cosine similarity (score), pre-filtered; rows without vectors never match."""
        ...

    def text_search(self, query: str, k: int, filters: Filters | None = None) -> list[Hit]:
        """BM25 full-text search (score = BM25), pre-filtered; finds rows whose embedding is still owed."""
        ...

    def session_rows(
        self, session_id: str, seq_from: int | None = None, seq_to: int | None = None
    ) -> list[Row]:
        """A session's rows with ``seq_from <= seq <= seq_to``, ordered by (seq, block_idx, split_idx)."""
        ...

    def session_windows(self, windows: Mapping[str, tuple[int, int]]) -> list[Row]:
        """Rows of several sessions at once: for each session id, those with ``lo <= seq <= hi``.

        One read for all of a recall's hits (neighbours), ordered by (session_id, seq, block_idx,
        split_idx); vectors not loaded.
        """
        ...

    def session_vectors(self, session_id: str) -> dict[str, Vector]:
        """Chunk id -> vector for every row of the session that has one (owed rows are absent).

        ``scan`` and ``session_rows`` never load vectors (they would multiply a read's memory
        by ~2 KB a row for verbs that only print text). ``sketch`` is the one read verb that
        needs them, for the rows of one session, so it asks for exactly those.
        """
        ...

    def scan(self, filters: Filters | None = None) -> list[Row]:
        """Every row passing ``filters`` (vectors not loaded), in no particular order."""
        ...

    def count(self, filters: Filters | None = None) -> int:
        """Number of rows passing ``filters``."""
        ...

    def stats(self) -> StoreStats:
        """Counts for ``funes status``."""
        ...

    def owed_count(self) -> int:
        """How many rows are still without a vector.

        Exact, and not cheap: LanceDB reads the whole vector column to answer it (seconds at a
        million rows). Ask where someone wants the number (``status``, the worker deciding what is
        left), not on a hook's path: an indexer knows how many rows it just stored without one.
        """
        ...

    def optimize(self) -> None:
        """Compact and refresh indexes after bulk writes (a no-op where meaningless)."""
        ...

    def needs_upkeep(self) -> bool:
        """Whether so many rows or fragments sit outside the indexes that reads are slowing down.

        A writer that leaves :meth:`optimize` to someone else (a hook's indexer, to the background
        worker) asks this after its write and optimizes itself when it is true, so appends nobody
        optimized (a worker that cannot run) never pile up. Cheap: index statistics only.
        """
        ...


@runtime_checkable
class CandidateSearch(Protocol):
    """Optional for a :class:`Store`: search legs that return only what ranking reads.

    Why: on a large table each column a search returns is read once per candidate (a random
    access into the data files), and a recall keeps a handful of its ~60 candidates. With these
    methods recall ranks on candidates whose rows are :func:`candidate_row` s (only
    :data:`RANK_FIELDS`), then reads the whole rows of the hits it keeps through
    :meth:`Store.session_windows`, the read it does for turn context and neighbours anyway
    (the window around a hit holds the hit). Same hits, scores, order and ``vector_owed`` as
    :meth:`Store.vector_search` / :meth:`Store.text_search` (the contract suite checks it).

    A store without them loses nothing but the saving: recall then searches with the full legs.
    """

    def vector_candidates(self, vector: Vector, k: int, filters: Filters | None = None) -> list[Hit]:
        """:meth:`Store.vector_search`, each hit's row a :func:`candidate_row`."""
        ...

    def text_candidates(self, query: str, k: int, filters: Filters | None = None) -> list[Hit]:
        """:meth:`Store.text_search`, each hit's row a :func:`candidate_row`."""
        ...


@dataclass(frozen=True, slots=True)
class SessionFacet:
    """One session as a timeline lists it, without its text: what its rows' small columns say.

    The facets are those of its first row in reading order (seq, turn_uuid, block_idx, split_idx),
    as ``sessions`` has always shown them; the opening request is not here (it needs the text).
    """

    session_id: str
    #: The ``ts`` of its first row.
    start_ts: str
    #: The latest ``ts`` of any of its rows.
    end_ts: str
    harness: str
    repo: str
    workdir: str
    #: Distinct (seq, turn_uuid) pairs.
    turns: int
    #: Its lowest and highest seq (where its opening request is looked for).
    first_seq: int
    last_seq: int


#: The columns :class:`SessionFacet` is read from.
FACET_FIELDS: tuple[str, ...] = (
    "session_id",
    "seq",
    "turn_uuid",
    "block_idx",
    "split_idx",
    "ts",
    "harness",
    "repo",
    "workdir",
)


def facets_of(rows: Iterable[Row]) -> list[SessionFacet]:
    """The reference semantics of :meth:`SessionFacets.session_facets`: one facet per session of
    ``rows``, oldest first by (start_ts, session_id)."""
    by_session: dict[str, list[Row]] = {}
    for row in rows:
        by_session.setdefault(row.session_id, []).append(row)
    out = []
    for session_id, members in by_session.items():
        members.sort(key=lambda r: (r.seq, r.turn_uuid, r.block_idx, r.split_idx))
        first = members[0]
        out.append(
            SessionFacet(
                session_id=session_id,
                start_ts=first.ts,
                end_ts=max(r.ts for r in members),
                harness=first.harness,
                repo=first.repo,
                workdir=first.workdir,
                turns=len({(r.seq, r.turn_uuid) for r in members}),
                first_seq=first.seq,
                last_seq=members[-1].seq,
            )
        )
    out.sort(key=lambda f: (f.start_ts, f.session_id))
    return out


@runtime_checkable
class SessionFacets(Protocol):
    """Optional for a :class:`Store`: every session summarised from a few small columns.

    Why: a timeline of sessions needs their facets, spans and turn counts, not their text; reading
    every row whole to count them was 9.5 s at 100k chunks (the viewer's first page). A store whose
    reads cost per column answers from :data:`FACET_FIELDS` alone. Same result as
    :func:`facets_of` over :meth:`Store.scan` (the contract suite checks it); without it, funes
    computes that.
    """

    def session_facets(self, filters: Filters | None = None) -> list[SessionFacet]:
        """One facet per session of the rows passing ``filters``, oldest first (see :func:`facets_of`)."""
        ...


@runtime_checkable
class Versioned(Protocol):
    """Optional for a :class:`Store`: a cheap value that changes whenever the stored rows may have.

    Why: some reads are repeated on every recall though their rows rarely change (the live keyword
    triggers: a scan of the notes session, ~5 ms at 1M chunks); with this they are kept until the
    value changes. It must change with every write, another process's included, as the store's
    reads see them. A store without it is simply read every time.
    """

    def data_version(self) -> int | None:
        """The current version, or ``None`` when it cannot tell (nothing may then be kept)."""
        ...

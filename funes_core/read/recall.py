"""``recall``: hybrid search over the memory, with provenance, freshness, neighbours and a token budget.

Its parameters (:class:`RecallArgs`, :class:`RecallParams`) and its query (:func:`recall`, the pipeline
below) live here; the CLI and the MCP server both call :func:`run`, so both print the same bytes. The
pipeline's parts have modules of their own: the candidate legs (:mod:`funes_core.read.legs`), fusion
and the ranking signals (:mod:`funes_core.read.rank`), time expressions (:mod:`funes_core.read.when`)
and the agent text (:mod:`funes_core.read.recall_text`: byte-stable, pinned by golden tests); their
public names are re-exported here, so ``from funes_core.read.recall import render_recall`` still works.

The pipeline: embed the query; run a vector leg and a BM25 leg, each *pre-filtered* and each
returning ``candidates`` rows; fuse them by weighted relative score (the keyword leg weighed up for
a query that names an identifier, :func:`query_identifiers`); when the query names a time
("yesterday", "in early October"), search both legs again within that window and add their fused
score (:func:`with_window`); pass a share of the leading passages' scores to the turns just
after and before them (:func:`with_context`); for a query that names no time, raise the sessions
whose passages cluster among the leading ones (:func:`with_sessions`); weigh by freshness; keep the
top ``k``; attach each hit's neighbouring chunks. Nothing is summarised or rewritten: every hit is
a stored chunk, verbatim. The two refinements were measured on LoCoMo and on the agent-session benchmark
(``bench/quality.py``): together they raised turn-level recall@10 from 0.628 to 0.700 on LoCoMo
(categories 1–4) and from 0.548 to 0.607 on agent sessions, recall@5 with them.

Why relative-score fusion: BM25 scores and cosine similarities live on different scales, so each
leg's scores are first rescaled to [0, 1] over its own candidates (best 1, worst 0) and only then
weighed and added; neither leg can drown the other by its units. Unlike reciprocal-rank fusion
(:func:`fuse`, still available as ``RecallParams(fusion="rrf")``), it keeps *how much* better a
row is than the next: with RRF's constant 60 a row at rank 29 of both legs outscores the row
ranked first by one leg, so passages that are mediocre in both legs pushed the one clear keyword
or meaning match out of the top hits. On LoCoMo (``bench/quality.py``) relative fusion raised
turn-level recall@10 from 0.606 to 0.628 and recall@5 from 0.476 to 0.536 with the same
candidates (``docs/benchmarks.md``). Rows whose embedding is still owed are found by the BM25 leg
alone, which is what makes a session indexed a second ago (or a history the background worker is
still embedding) recallable before the (slow, CPU) embedding catches up; such a row is fused by
the weight of the legs that can see it (:attr:`Hit.vector_owed`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Annotated, Required, TypedDict, Unpack

from funes_core.read.common import (
    AsOf,
    HarnessFilter,
    Param,
    RepoFilter,
    Since,
    Until,
    Verb,
    VerbError,
    parse_as_of,
    parse_day,
)
from funes_core.read.legs import (
    DEPTH_BASE_CHUNKS,
    DEPTH_MAX,
    Leg,
    Legs,
    Pool,
    Searchable,
    SessionReads,
    neighbors_of,
    query_identifiers,
    scaled_depth,
    whole_rows,
)
from funes_core.read.rank import (
    PROFILES,
    RRF_K,
    Profile,
    RerankCost,
    freshness,
    fuse,
    fuse_relative,
    rerank,
    rerank_pool_size,
    with_context,
    with_sessions,
    with_window,
)
from funes_core.read.recall_text import (
    EXTERNAL_NOTE,
    NEIGHBOR_PREVIEW,
    NO_RESULTS,
    Packed,
    pack_to_budget,
    recall_json,
    render_recall,
    with_notes,
)
from funes_core.read.when import query_window

if TYPE_CHECKING:
    from funes_core.models.base import Reranker
    from funes_core.models.vectors import Vector
    from funes_core.read.handle import Readable
    from funes_core.store.base import Filters, Hit, Row, Store

__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_FUSION",
    "DEFAULT_K",
    "DEFAULT_NEIGHBORS",
    "DEPTH_BASE_CHUNKS",
    "DEPTH_MAX",
    "EXTERNAL_NOTE",
    "FUSIONS",
    "LEVELS",
    "MAX_QUERY_CHARS",
    "NEIGHBOR_PREVIEW",
    "NO_RESULTS",
    "PROFILES",
    "RRF_K",
    "VERB",
    "Leg",
    "Packed",
    "Profile",
    "RecallArgs",
    "RecallHit",
    "RecallHow",
    "RecallParams",
    "RecallResult",
    "RerankCost",
    "Searchable",
    "freshness",
    "fuse",
    "fuse_relative",
    "make_filters",
    "pack_to_budget",
    "query_identifiers",
    "recall",
    "recall_json",
    "recall_many",
    "render_recall",
    "run",
    "scaled_depth",
    "search",
]

DEFAULT_K = 8
DEFAULT_CANDIDATES = 30
DEFAULT_NEIGHBORS = 1
#: How the legs are fused: ``relative`` (the default, :func:`fuse_relative`) or ``rrf`` (:func:`fuse`).
FUSIONS = ("relative", "rrf")
DEFAULT_FUSION = "relative"
#: Defaults of the ranking refinements (see ``RecallParams`` and ``docs/benchmarks.md``).
DEFAULT_WINDOW_WEIGHT = 1.0
DEFAULT_SUCCESSOR = 0.35
DEFAULT_PREDECESSOR = 0.35
DEFAULT_CONTEXT_HEAD = 20
DEFAULT_EXACT_WEIGHT = 1.0
DEFAULT_SESSION_WEIGHT = 0.0
DEFAULT_DEPTH_GROWTH = 0.0
#: Longest query searched, in characters; a longer one (a pasted log, a whole file) is cut at the
#: last space before this, and the output says so. The embedding model reads at most 256 tokens
#: anyway, and a query's cost grows with its length: see ``bench/bad_queries.py``.
MAX_QUERY_CHARS = 500
#: A query must hold at least one letter or digit: punctuation, symbols and emoji alone name
#: nothing that either leg can match.
_WORDISH = re.compile(r"[^\W_]")


#: Token budgets of the named curation levels (``--level``).
LEVELS: dict[str, int] = {"minimal": 300, "lean": 800, "balanced": 1500, "rich": 3000, "full": 5000}


def _no_filters() -> Filters:
    from funes_core.store.base import Filters

    return Filters()


@dataclass(frozen=True, slots=True)
class RecallParams:
    """Everything that shapes the search. ``half_life`` ``None`` means the profile's default.

    How many of the hits are *shown* (a token budget) is not a search parameter: it is the
    text's business (:class:`RecallArgs`, :func:`pack_to_budget`).
    """

    k: int = DEFAULT_K
    candidates: int = DEFAULT_CANDIDATES
    neighbors: int = DEFAULT_NEIGHBORS
    filters: Filters = field(default_factory=_no_filters)
    profile: str = "balanced"
    half_life: float | None = None
    legs: tuple[Leg, ...] = (Leg.VECTOR, Leg.TEXT)
    fusion: str = DEFAULT_FUSION
    #: Read time expressions in the query ("yesterday", "in early October") as a window of ``ts``
    #: whose passages earn a bonus (:mod:`funes_core.read.when`).
    dates: bool = True
    #: Weight of the window legs' relative score, added to a passage's fused score.
    window_weight: float = DEFAULT_WINDOW_WEIGHT
    #: Share of a passage's score passed on to the turn after it (successor context) and to the
    #: turn before it (predecessor context); 0 turns either off.
    successor: float = DEFAULT_SUCCESSOR
    predecessor: float = DEFAULT_PREDECESSOR
    #: How many of the leading fused passages pass context on (independent of ``k``, so that the
    #: ranking of the first hits does not depend on how many are asked for).
    context_head: int = DEFAULT_CONTEXT_HEAD
    #: The keyword leg's weight is multiplied by this for a query that names an identifier
    #: (:func:`query_identifiers`): the vector leg cannot see ``spotter-0p7.1``; 1 turns it off.
    exact_weight: float = DEFAULT_EXACT_WEIGHT
    #: Share of the best score of a session's *other* leading passages added to each of them
    #: (:func:`with_sessions`), for a query that names no time; 0 turns it off.
    session_weight: float = DEFAULT_SESSION_WEIGHT
    #: Candidates per leg grow with the memory: ``candidates`` up to 10,000 chunks, then times
    #: ``1 + depth_growth × log10(chunks / 10,000)`` (:func:`scaled_depth`); 0 turns it off.
    depth_growth: float = DEFAULT_DEPTH_GROWTH

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

    @property
    def effective_half_life(self) -> float:
        return PROFILES[self.profile].half_life if self.half_life is None else self.half_life


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One passage: the stored row, its final score, and its neighbouring chunks."""

    row: Row
    score: float
    neighbors: tuple[Row, ...] = ()
    #: The memory it came from, when several were searched (``--memory local,team``); ``None``
    #: for a one-memory recall, whose text stays exactly as before.
    memory: str | None = None


@dataclass(frozen=True, slots=True)
class RecallResult:
    query: str
    params: RecallParams
    hits: tuple[RecallHit, ...]
    #: Live keyword triggers named by the query: (keyword, hint), newest first.
    triggers: tuple[tuple[str, str], ...] = ()
    #: Characters cut off the end of an over-long query (:data:`MAX_QUERY_CHARS`); 0 if none.
    cut: int = 0
    #: One-line notes shown after the hits (a reranker that timed out, ...).
    notes: tuple[str, ...] = ()
    rerank: RerankCost | None = None
    #: The moment the question was asked as of (``--as-of``); ``None`` for now.
    as_of: datetime | None = None


def recall(
    store: Searchable,
    query: str,
    params: RecallParams,
    *,
    embed_query: Callable[[str], Vector] | None,
    now: datetime | None = None,
    reranker: Reranker | None = None,
    rerank_timeout: float = 5.0,
) -> RecallResult:
    """Run one recall. ``embed_query`` may be ``None`` for a BM25-only recall (no model needed).

    With a ``reranker``, each leg fetches at least the rerank pool, and the pool's order comes from
    the reranker (off by default; see :func:`rerank`).
    """
    query = " ".join(query.split())
    if not query:
        raise ValueError("the query is empty")
    if not _WORDISH.search(query):
        raise ValueError("the query has no words to look for (only punctuation, symbols or emoji)")
    query, cut = _cut(query)
    profile = PROFILES[params.profile]
    legs: list[tuple[float, Sequence[Hit]]] = []
    vector: Vector | None = None
    idents = query_identifiers(query) if params.exact_weight != 1.0 else ()
    text_weight = profile.text_weight * (params.exact_weight if idents else 1.0)
    candidates = scaled_depth(params.candidates, params.depth_growth, store)
    depth = max(candidates, rerank_pool_size(params.k)) if reranker is not None else candidates
    # A reranker reads the pool's text: the legs then return whole rows.
    search = Legs.of(store, whole=reranker is not None)
    if Leg.VECTOR in params.legs and embed_query is not None:
        vector = embed_query(query)
        legs.append((profile.vector_weight, search.vector(vector, depth, params.filters)))
    if Leg.TEXT in params.legs:
        legs.append((text_weight, search.text(query, depth, params.filters)))
    blind = profile.vector_weight if vector is not None else 0.0
    fused = (
        fuse_relative(legs, blind_weight=blind)
        if params.fusion == "relative"
        else fuse(legs, blind_weight=blind)
    )
    cost: RerankCost | None = None
    notes: tuple[str, ...] = ()
    if reranker is not None and fused:
        fused, cost, note = rerank(reranker, query, fused, params.k, rerank_timeout)
        notes = (note,) if note else ()
    moment = now or datetime.now(UTC)
    window = query_window(query, moment) if params.dates else None
    if window is not None:
        fused = with_window(search, query, fused, params, profile, window, vector)
    reads = SessionReads(store)
    if params.successor > 0 or params.predecessor > 0:
        fused = with_context(reads, fused, params)
    # A named time already ranks the sessions of that time first (the window legs); a second,
    # time-blind vote for whichever session clusters would lift another time's session above it.
    if params.session_weight > 0 and window is None:
        fused = with_sessions(fused, params.session_weight, params.context_head)
    half_life = params.effective_half_life
    weighed = [(row, score * freshness(row.ts, half_life, moment)) for row, score in fused]
    weighed.sort(key=lambda pair: -pair[1])  # stable: equal scores keep fused order
    top = weighed[: params.k]
    if search.candidates:
        top = whole_rows(reads, top, params.neighbors)
    neighbours = neighbors_of(reads, top, params.neighbors)
    hits = tuple(RecallHit(row, score, neighbours.get(row.id, ())) for row, score in top)
    return RecallResult(query=query, params=params, hits=hits, cut=cut, notes=notes, rerank=cost)


def _cut(query: str) -> tuple[str, int]:
    """``query`` cut to :data:`MAX_QUERY_CHARS` at its last space (mid-word if it has none)."""
    if len(query) <= MAX_QUERY_CHARS:
        return query, 0
    head = query[: MAX_QUERY_CHARS + 1]
    head = head.rsplit(" ", 1)[0] if " " in head else head[:MAX_QUERY_CHARS]
    return head, len(query) - len(head)


class RecallHow(TypedDict, total=False):
    """The keywords of :func:`recall` after its query and params, which :func:`recall_many` passes on."""

    embed_query: Required[Callable[[str], Vector] | None]
    now: datetime | None
    reranker: Reranker | None
    rerank_timeout: float


def recall_many(
    members: Sequence[tuple[str, Store]], query: str, params: RecallParams, **how: Unpack[RecallHow]
) -> RecallResult:
    """One recall over several memories, ranked as one list by :func:`recall` itself.

    The memories are searched as one store (:class:`Pool`), so everything :func:`recall` does
    (both legs, the date-window legs, the reranker, turn context, freshness, neighbours) applies
    across them with no second code path to drift: with one memory and an empty one, the ranking
    is exactly the one-memory ranking. The fusion, documented in docs/sharing.md: each leg's
    candidates from every memory are **pooled first** (``candidates`` per memory), then the usual
    relative-score fusion rescales each leg over the whole pool, so a memory's best BM25 match is
    not given 1.0 just because its memory is small. Cosine similarities are comparable across memories (one
    model, checked by the stamp); BM25 scores carry each memory's own term statistics, which the
    pooled rescaling tempers but does not remove. A chunk held by several memories (pushed from
    here, read back from the remote) counts once, from the memory listed first.
    """
    pool = Pool(members)
    result = recall(pool, query, params, **how)
    hits = tuple(
        replace(hit, row=pool.rows[hit.row.id], memory=pool.origin[hit.row.id]) for hit in result.hits
    )
    return replace(result, hits=hits)


# -- the verb: its arguments, its text ----------------------------------------------------------------

BLOCK_TYPES = ("text", "thinking", "tool_use", "tool_result")


@dataclass(frozen=True, slots=True)
class RecallArgs:
    """``funes recall`` / the MCP ``recall`` tool: the search, its filters and the output's budget."""

    query: Annotated[str, Param("What to look for, in words or identifiers.", min_length=1, words=True)]
    k: Annotated[int, Param("How many passages to return.", ("-k", "--k"), ge=1, le=100)] = DEFAULT_K
    candidates: Annotated[int, Param("Candidates per search leg.", ("--candidates",), ge=1, le=500)] = (
        DEFAULT_CANDIDATES
    )
    neighbors: Annotated[
        int, Param("Neighbouring turns (±seq) previewed under each hit.", ("--neighbors",), ge=0, le=10)
    ] = DEFAULT_NEIGHBORS
    harness: HarnessFilter = None
    role: Annotated[str | None, Param("Only this role: user, assistant, tool.", ("--role",))] = None
    block_type: Annotated[
        str | None,
        Param(
            "Only this block type: text, thinking, tool_use, tool_result.", ("--type",), choices=BLOCK_TYPES
        ),
    ] = None
    repo: RepoFilter = None
    since: Since = None
    until: Until = None
    as_of: AsOf = None
    half_life: Annotated[
        float | None,
        Param("Freshness half-life in days; 0 disables (default: the profile's).", ("--half-life",), ge=0),
    ] = None
    profile: Annotated[
        str,
        Param(
            "Fusion weights: balanced, semantic, lexical or recent.", ("--profile",), choices=tuple(PROFILES)
        ),
    ] = "balanced"
    fusion: Annotated[
        str,
        Param(
            "How the two legs combine: relative (scores rescaled per leg, the default) or rrf.",
            ("--fusion",),
            choices=FUSIONS,
        ),
    ] = DEFAULT_FUSION
    budget: Annotated[int | None, Param("Token budget for the whole answer.", ("--budget",), ge=1)] = None
    level: Annotated[
        str | None,
        Param(
            "Named budget: minimal 300, lean 800, balanced 1500, rich 3000, full 5000.",
            ("--level",),
            choices=tuple(LEVELS),
        ),
    ] = None
    legs: tuple[Leg, ...] = field(default=(Leg.VECTOR, Leg.TEXT), metadata={"face": False})

    def token_budget(self) -> int | None:
        """The budget asked for, by number or by level; ``None`` when the output is not packed."""
        if self.budget is not None and self.level is not None:
            raise VerbError("give --budget or --level, not both")
        if self.level is not None:
            if self.level not in LEVELS:
                raise VerbError(f"--level: {self.level!r} is not one of {', '.join(LEVELS)}")
            return LEVELS[self.level]
        if self.budget is not None and self.budget < 1:
            raise VerbError("--budget must be a positive number of tokens")
        return self.budget


def make_filters(
    *,
    harness: str | None = None,
    role: str | None = None,
    block_type: str | None = None,
    repo: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> Filters:
    """The recall filters from the verb's strings; a bad day or block type is a :class:`VerbError`."""
    from funes_core.store.base import Filters

    lo, hi = parse_day(since, "--since"), parse_day(until, "--until")
    if lo and hi and lo > hi:
        raise VerbError(f"--since {lo} is after --until {hi}")
    if block_type is not None and block_type not in BLOCK_TYPES:
        raise VerbError(f"--type: {block_type!r} is not one of {', '.join(BLOCK_TYPES)}")
    return Filters(
        harness=harness or None,
        role=role or None,
        block_type=block_type or None,
        repo=repo or None,
        since=lo,
        until=hi,
    )


def search(
    memory: Readable, args: RecallArgs, *, now: datetime | None = None
) -> tuple[RecallResult, list[str]]:
    """The recall ``args`` ask for, with the live triggers the query names (what :func:`run` renders).

    Also returns the notes about memories of a set that could not be read (printed before the hits).
    """
    from funes_core.models.registry import rerank_timeout
    from funes_core.read.triggers import fired

    as_of = parse_as_of(args.as_of, now or datetime.now(UTC))
    filters = make_filters(
        harness=args.harness,
        role=args.role,
        block_type=args.block_type,
        repo=args.repo,
        since=args.since,
        until=args.until,
    )
    if as_of is not None:  # as if asked then: what was said on later days is not there yet
        day = as_of.date()
        if filters.since is not None and filters.since > day:
            raise VerbError(f"--since {filters.since} is after --as-of {day}")
        filters = replace(filters, until=min(filters.until or day, day))
        now = as_of
    try:
        params = RecallParams(
            k=args.k,
            candidates=args.candidates,
            neighbors=args.neighbors,
            filters=filters,
            profile=args.profile,
            half_life=args.half_life,
            legs=args.legs,
            fusion=args.fusion,
        )
    except ValueError as exc:
        raise VerbError(str(exc)) from None
    if not " ".join(args.query.split()):
        raise VerbError("the query is empty: say what to look for")
    notes: list[str] = []
    embed = memory.embed_query if Leg.VECTOR in args.legs else None
    unavailable: str | None = None
    try:
        members = memory.open(notes)
        store = members[0][1]
        reranker, unavailable = memory.reranker()
        # A set's hits name their memory; the reranker (the lead's) orders a set's pool too.
        rank = partial(recall_many, members) if memory.pooled else partial(recall, store)
        result = rank(
            args.query, params, embed_query=embed, now=now, reranker=reranker, rerank_timeout=rerank_timeout()
        )
    except ValueError as exc:  # a query with nothing to search: a message, never a traceback
        raise VerbError(f"{exc}: say what to look for") from None
    as_of_note = (f"as of {as_of:%Y-%m-%d %H:%M:%S} UTC: passages of later days left out",) if as_of else ()
    result = replace(
        result,
        triggers=fired(store, args.query),
        notes=result.notes + ((unavailable,) if unavailable else ()) + as_of_note,
        as_of=as_of,
    )
    return result, notes


def run(memory: Readable, args: RecallArgs, *, as_json: bool = False, now: datetime | None = None) -> str:
    """``funes recall`` / the MCP ``recall`` tool: search, trigger lines first, packed if asked.

    The figures of the run (hits shown, triggers fired, tokens against the budget) go to
    :func:`funes_core.telemetry.add`, which keeps them only inside a face's measurement.
    """
    from funes_core import telemetry

    budget = args.token_budget()
    result, notes = search(memory, args, now=now)
    telemetry.add(query=result.query, hits=len(result.hits), triggers=len(result.triggers))
    head = "".join(f"note: {n}\n" for n in notes)
    if budget is None:
        if as_json:
            return with_notes(recall_json(result, memory.label), notes)
        return head + render_recall(result, memory.label)
    packed = pack_to_budget(result, memory.label, budget, memory.count_tokens)
    telemetry.add(hits=len(packed.shown), budget=budget, tokens=packed.tokens)
    if as_json:
        return with_notes(
            recall_json(result, memory.label, packed.shown, packed.left_out, budget=budget), notes
        )
    return head + packed.text


RECALL_HELP = """\
Search the memory: hybrid (BM25 + vectors) recall of verbatim passages with provenance.

The words of QUERY are joined with spaces. Each hit shows when and where it was said, a `→ get`
line to read around it, the whole passage, and a preview of neighbouring turns. Filters apply
before ranking. --budget/--level pack the best hits into a token budget without cutting any.
"""

VERB = Verb(
    name="recall",
    args=RecallArgs,
    run=run,
    many=True,
    cli_help=RECALL_HELP,
    tool_help=(
        "Search the user's past coding sessions and return the best matching passages, verbatim, "
        "with provenance (time, agent, project, session, turn) and neighbouring lines. Call it when "
        "the user refers to earlier work ('like we did last week', 'the fix for X'), before "
        "re-deriving a decision, command or fix that may already exist, and before claiming "
        "something was never done or discussed. Hybrid search: exact words (identifiers, error "
        "messages) and meaning (paraphrases) both work. Results are the top k only - a foothold, "
        "not an exhaustive list: follow a hit's '→ get' line to read around it. Lines starting "
        "'trigger' are notes the user pinned to a keyword in your query."
    ),
)

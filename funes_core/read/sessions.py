"""``sessions``: one entry per session, oldest first, with its opening request.

Its parameters (:class:`SessionsArgs`), its query (:func:`list_sessions`) and its text
(:func:`format_sessions`, :func:`sessions_json`) live here; the CLI and the MCP server both call
:func:`run`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from funes_core.read.common import (
    MAX_OUTPUT_CHARS,
    HarnessFilter,
    Param,
    RepoFilter,
    Since,
    StoreReading,
    Until,
    Verb,
    VerbError,
    collapse,
    dump,
    opening_unit,
    parse_day,
    units_of,
)
from funes_core.safetext import one_line

if TYPE_CHECKING:
    from funes_core.store.base import Filters, Row, SessionFacet, Store

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "OPENING_CHARS",
    "OPENING_WINDOW",
    "VERB",
    "SessionSummary",
    "SessionsArgs",
    "SessionsResult",
    "facets",
    "format_sessions",
    "list_sessions",
    "openings",
    "page_of",
    "run",
    "sessions_json",
    "text",
]

#: ``sessions`` page size: default and ceiling (above it, the page is clamped).
DEFAULT_LIMIT = 50
MAX_LIMIT = 200
#: The opening prompt shown by ``sessions`` is cut at this many characters (then ``…``).
OPENING_CHARS = 120
#: Seqs read from each session's first one to find its opening request: one read for a page of
#: sessions; a session whose first seqs hold no user request is then read whole.
OPENING_WINDOW = 8


@dataclass(frozen=True, slots=True)
class SessionsArgs:
    repo: RepoFilter = None
    harness: HarnessFilter = None
    since: Since = None
    until: Until = None
    limit: Annotated[int, Param("Sessions to show (1-200; more is clamped to 200).", ("--limit",), ge=1)] = (
        DEFAULT_LIMIT
    )
    offset: Annotated[int, Param("Skip this many of the most recent matches.", ("--offset",), ge=0)] = 0


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One session as ``sessions`` lists it. Facets are those of its first turn."""

    session_id: str
    #: The ``ts`` of the session's first turn (lowest seq), printed date-only.
    start_ts: str
    harness: str
    repo: str
    workdir: str
    turns: int
    #: The opening prompt, whitespace collapsed and cut at 120 characters (trailing space dropped,
    #: then ``…``); ``None`` when the session has no non-scaffolding text block.
    opening: str | None
    #: The latest ``ts`` of any of its turns (the end of its time span).
    end_ts: str = ""

    @property
    def date(self) -> str:
        return self.start_ts[:10]

    @property
    def where(self) -> str:
        """The repo facet when one resolved, else the workdir, else ``-`` (fields stay positional)."""
        return self.repo or self.workdir or "-"


@dataclass(frozen=True, slots=True)
class SessionsResult:
    """A page of matching sessions, oldest first, before the 40,000-character cap."""

    #: How many sessions match the filters.
    total: int
    offset: int
    limit: int
    #: The page: the ``limit`` sessions just older than the ``offset`` most recent, oldest first.
    sessions: tuple[SessionSummary, ...]
    #: The memory holds no rows at all (as opposed to: no row passes the filters).
    memory_empty: bool


def _opening(rows: Iterable[Row]) -> str | None:
    """The opening request of a session's rows, whitespace collapsed and cut."""
    unit = opening_unit(units_of(rows))
    if unit is None:
        return None
    flat = collapse(unit.text)
    return flat if len(flat) <= OPENING_CHARS else flat[:OPENING_CHARS].rstrip() + "…"


def _summary(facet: SessionFacet, opening: str | None) -> SessionSummary:
    return SessionSummary(
        session_id=facet.session_id,
        start_ts=facet.start_ts,
        harness=facet.harness,
        repo=facet.repo,
        workdir=facet.workdir,
        turns=facet.turns,
        opening=opening,
        end_ts=facet.end_ts,
    )


def facets(store: Store, filters: Filters | None = None) -> list[SessionFacet]:
    """Every session of the rows passing ``filters``, oldest first, without reading their text.

    Through the store's :class:`~funes_core.store.base.SessionFacets` when it has it (LanceDB:
    a few columns grouped in Arrow), else computed from a scan. Public so that a long-lived reader
    (the web viewer) can keep the list per data version and page through it.
    """
    from funes_core.store.base import SessionFacets, facets_of

    if isinstance(store, SessionFacets):
        return store.session_facets(filters)
    return facets_of(store.scan(filters))


def openings(store: Store, found: Sequence[SessionFacet]) -> list[SessionSummary]:
    """``found`` with their opening requests: the first :data:`OPENING_WINDOW` seqs of every one
    in one read, then whole the few sessions whose opening is not among them.

    The opening is the first non-scaffolding user text block (else the first non-scaffolding text
    of any role), so a user request found in a session's first seqs is its opening; without one
    there, only the whole session can say.
    """
    if not found:
        return []
    windows = {f.session_id: (f.first_seq, f.first_seq + OPENING_WINDOW) for f in found}
    by_session: dict[str, list[Row]] = {}
    for row in store.session_windows(windows):
        by_session.setdefault(row.session_id, []).append(row)
    out = []
    for f in found:
        rows = by_session.get(f.session_id, [])
        unit = opening_unit(units_of(rows))
        if (unit is None or unit.role != "user") and f.last_seq > f.first_seq + OPENING_WINDOW:
            rows = store.session_rows(f.session_id)
        out.append(_summary(f, _opening(rows)))
    return out


def list_sessions(store: Store, args: SessionsArgs) -> SessionsResult:
    """Enumerate sessions, oldest first by (start ts, session_id).

    ``harness`` and ``repo`` filter rows in the store (``claude`` also matches ``claude_code``),
    so a session that moved between repos counts only its turns in the asked repo.
    ``since``/``until`` (inclusive, ``YYYY-MM-DD``) compare the session's *start* date, so they
    are applied after aggregating: a long session that started before ``since`` is not listed
    from its middle.

    Paging counts back from the newest: ``offset`` skips that many of the most recent matches,
    then ``limit`` (1-200; above 200 is clamped, 0 or less is an error) keeps the next-most-recent
    ones, printed oldest first. So the first page answers "what was I doing lately", and
    ``--offset <offset+shown>`` walks back in time.
    """
    from funes_core.store.base import Filters

    if args.limit < 1:
        raise VerbError(f"--limit must be at least 1 (got {args.limit})")
    if args.offset < 0:
        raise VerbError(f"--offset must be 0 or more (got {args.offset})")
    page_of([], args)  # the date range's refusals, before any read
    # "" (an unset MCP field) = no filter
    filters = Filters(harness=args.harness or None, repo=args.repo or None)
    found = facets(store, None if filters.empty else filters)
    memory_empty = not found and (filters.empty or store.count() == 0)
    total, page = page_of(found, args)
    return SessionsResult(
        total, args.offset, min(args.limit, MAX_LIMIT), tuple(openings(store, page)), memory_empty
    )


def page_of(found: Sequence[SessionFacet], args: SessionsArgs) -> tuple[int, list[SessionFacet]]:
    """``(matches, page)``: the page ``args`` ask for out of ``found`` (oldest first, as
    :func:`facets` orders them, already filtered by harness and repo): the date range on each
    session's start day, then the offset counted back from the newest and the clamped limit."""
    limit = min(args.limit, MAX_LIMIT)
    lo, hi = parse_day(args.since, "--since"), parse_day(args.until, "--until")
    if lo is not None and hi is not None and lo > hi:
        raise VerbError(f"--since {lo} is after --until {hi}")
    low, high = lo.isoformat() if lo else None, hi.isoformat() if hi else None
    matches = [
        f
        for f in found
        if (low is None or f.start_ts[:10] >= low) and (high is None or f.start_ts[:10] <= high)
    ]
    end = max(len(matches) - args.offset, 0)
    return len(matches), matches[max(end - limit, 0) : end]


def _session_text(s: SessionSummary) -> str:
    where, sid = one_line(s.where), one_line(s.session_id)
    head = f"[{one_line(s.date)}] {one_line(s.harness)} {where} {s.turns} turns {sid}\n"
    return head + (f"  {one_line(s.opening)}\n" if s.opening is not None else "")


def _page(result: SessionsResult) -> tuple[SessionSummary, ...]:
    """The page's most recent sessions whose two lines fit :data:`MAX_OUTPUT_CHARS` (at least one)."""
    used = 0
    keep = 0
    for s in reversed(result.sessions):
        size = len(_session_text(s))
        if keep and used + size > MAX_OUTPUT_CHARS:
            break
        used += size
        keep += 1
    return result.sessions[len(result.sessions) - keep :]


def _trailer(result: SessionsResult, shown: int) -> str:
    if shown == result.total:
        return f"{result.total} sessions"
    older = result.total - result.offset - shown
    if older > 0:
        return (
            f"{shown} of {result.total} sessions — {older} older: continue with --offset "
            f"{result.offset + shown}, or narrow with --repo/--since/--until"
        )
    return f"{shown} of {result.total} sessions — the oldest match reached"


def _message(result: SessionsResult, label: str) -> str | None:
    if result.memory_empty:
        return f"no sessions in {one_line(label)}"
    if not result.total:
        return f"no session in {one_line(label)} matches"
    return None


def format_sessions(result: SessionsResult, label: str) -> str:
    """Two lines per session, oldest first, then ``---`` and one of three trailers (see §3.3).

    Counts are printed as is (``1 turns``, ``1 sessions``): the wording is the contract. An offset
    past every match prints no session and ``0 of <total> sessions — the oldest match reached``.
    """
    message = _message(result, label)
    if message is not None:
        return message + "\n"
    page = _page(result)
    return "".join(_session_text(s) for s in page) + "---\n" + _trailer(result, len(page)) + "\n"


def sessions_json(result: SessionsResult, label: str) -> str:
    """``funes sessions --json``: the sessions the text shows, oldest first."""
    page = _page(result) if result.total else ()
    doc = {
        "memory": label,
        "total": result.total,
        "offset": result.offset,
        "limit": result.limit,
        "older": max(result.total - result.offset - len(page), 0),
        "sessions": [
            {
                "session_id": s.session_id,
                "date": s.date,
                "start_ts": s.start_ts,
                "harness": s.harness,
                "repo": s.repo,
                "workdir": s.workdir,
                "turns": s.turns,
                "opening": s.opening,
            }
            for s in page
        ],
        "message": _message(result, label),
    }
    return dump(doc)


#: ``text`` over an open store, ``run`` over a memory: the agent text or the ``--json`` document.
STEPS: StoreReading[SessionsArgs, SessionsResult] = StoreReading(
    lambda store, _label, args: list_sessions(store, args), format_sessions, sessions_json
)
text, run = STEPS.text, STEPS.run

VERB = Verb(
    name="sessions",
    args=SessionsArgs,
    run=run,
    cli_help="List sessions, oldest first, with their opening request.",
    tool_help=(
        "List past sessions, oldest first: date, agent, project, number of turns, id and the opening "
        "request. Use it to find a session by when or where it happened, then read it with get or "
        "sketch. Pages with limit/offset; offset counts back from the most recent."
    ),
)

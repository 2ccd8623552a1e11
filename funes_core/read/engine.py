"""The read verbs (get, sessions, scan, sketch) as pure functions over a :class:`Store`.

Each verb returns a result object and prints nothing; :mod:`funes_core.read.render` turns results
into the byte-stable agent text (and the ``--json`` documents), so the CLI and the MCP server
print identical bytes. Readers never take the store lock: the memory is append-only, so a read
that races a writer sees either the old rows or the new ones, never a torn row.

Everything here works on *units*: one unit is one whole block of one turn, its splits stitched
back together (:func:`funes_core.ingest.chunking.stitch`). Stored text is already rendered
(``[tool_use Bash] …``) and is never re-rendered. A user asking to read a session wants blocks,
not the 1,200-character pieces the embedder needed.

Errors a caller made (an unknown session, a bad parameter) raise :class:`ReadError`, whose
message is the one line to show (``no session <id> in <label>``). Results that are merely empty
(a range outside the session, no match) are not errors: they render as their documented
messages.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Literal

import numpy as np
import numpy.typing as npt

from funes_core.ingest.chunking import stitch
from funes_core.store.base import Filters, Row, Store, Vector

__all__ = [
    "DEFAULT_CONTEXT",
    "DEFAULT_LIMIT",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_SPAN",
    "DEFAULT_UNITS",
    "MAX_HITS",
    "MAX_LIMIT",
    "MAX_OUTPUT_CHARS",
    "MAX_SKETCH_CHARS",
    "MAX_UNITS",
    "MIN_UNIT_CHARS",
    "NEAR_DUPLICATE",
    "OPENING_CHARS",
    "SCAFFOLDING_PREFIXES",
    "SPLIT_GAP",
    "TOOL_PREVIEW_CHARS",
    "GetResult",
    "ReadError",
    "ScanHit",
    "ScanMore",
    "ScanResult",
    "SessionSummary",
    "SessionsResult",
    "SketchPlace",
    "SketchResult",
    "TurnView",
    "Unit",
    "collapse",
    "find_literal",
    "get_turns",
    "is_scaffolding",
    "list_sessions",
    "scan_session",
    "sketch_session",
    "turns_of",
    "units_of",
]

#: Every read verb's text output stops before it would pass this many characters (code points).
MAX_OUTPUT_CHARS = 40_000
#: ``get`` without ``--to`` reads this many seqs from ``--from``.
DEFAULT_SPAN = 20
#: ``sessions`` page size: default and ceiling.
DEFAULT_LIMIT = 50
MAX_LIMIT = 200
#: The opening prompt shown by ``sessions`` is cut at this many characters (then ``…``).
OPENING_CHARS = 120
#: ``scan`` characters of context each side of a hit, and the most hits one call lists.
DEFAULT_CONTEXT = 100
MAX_HITS = 200
#: ``sketch`` defaults and clamps: at most 40 places, at least 240 characters per place, at most
#: 40,000 characters in all; tool results are previewed at no more than 2,000 characters.
DEFAULT_UNITS = 8
DEFAULT_MAX_CHARS = 8000
MAX_UNITS = 40
MIN_UNIT_CHARS = 240
MAX_SKETCH_CHARS = 40_000
TOOL_PREVIEW_CHARS = 2000
#: Two units whose vectors have at least this cosine are near-duplicates and share one place.
#: Ours: the reference does not publish its constant.
NEAR_DUPLICATE = 0.95
#: A residual below this norm adds nothing the chosen places do not already span.
_SPANNED = 1e-6

#: Joins two stored splits of one block whose neighbour between them is missing (a row lost to
#: ``scrub``): stitching them would silently glue distant text together, so the gap is shown.
SPLIT_GAP = "\n…\n"

#: Text the harness injects into a *user* turn, which is never the user's ask: slash-command
#: echoes and their output (Claude Code ``<command-name>``, ``<local-command-stdout>``), the
#: ``Caveat:`` preface of those, system reminders, hook output, IDE context, bash-mode echoes,
#: interruption markers and compaction summaries (Claude Code); environment context, user
#: instructions, AGENTS.md preambles and turn-aborted markers (Codex). Matched as prefixes of the
#: block's text with leading whitespace removed. Reference open question 6 leaves the list to us.
SCAFFOLDING_PREFIXES: tuple[str, ...] = (
    "<command-",
    "<local-command-",
    "<system-reminder>",
    "Caveat:",
    "<user-prompt-submit-hook>",
    "<ide_opened_file>",
    "<ide_selection>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "[Request interrupted by user",
    "This session is being continued from a previous conversation",
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<turn_aborted>",
    "# AGENTS.md instructions",
)


class ReadError(ValueError):
    """A read the caller got wrong (unknown session, bad parameter); ``str()`` is the message."""


# -- units and turns ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unit:
    """One whole block of one turn: its splits stitched back, with the turn's provenance."""

    session_id: str
    turn_uuid: str
    seq: int
    ts: str
    role: str
    harness: str
    block_idx: int
    block_type: str
    tool_name: str | None
    taint: str
    text: str
    #: The stored rows this unit was stitched from, in split order.
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TurnView:
    """One turn as ``get`` prints it: its units in block order."""

    seq: int
    turn_uuid: str
    ts: str
    role: str
    harness: str
    units: tuple[Unit, ...]


def _join_splits(rows: Sequence[Row]) -> str:
    text = rows[0].text
    for prev, row in itertools.pairwise(rows):
        text = stitch(text, row.text) if row.split_idx == prev.split_idx + 1 else text + SPLIT_GAP + row.text
    return text


def units_of(rows: Iterable[Row]) -> list[Unit]:
    """Stitch rows into units, in reading order (seq, turn_uuid, block_idx).

    Rows are grouped by (seq, turn_uuid, block_idx) and ordered by split_idx. A duplicated
    (block, split) pair (the same chunk id stored twice, which ``doctor`` repairs) is read once.
    """
    groups: dict[tuple[int, str, int], dict[int, Row]] = {}
    for row in rows:
        groups.setdefault((row.seq, row.turn_uuid, row.block_idx), {}).setdefault(row.split_idx, row)
    units: list[Unit] = []
    for key in sorted(groups):
        splits = [groups[key][i] for i in sorted(groups[key])]
        first = splits[0]
        units.append(
            Unit(
                session_id=first.session_id,
                turn_uuid=first.turn_uuid,
                seq=first.seq,
                ts=first.ts,
                role=first.role,
                harness=first.harness,
                block_idx=first.block_idx,
                block_type=first.block_type,
                tool_name=first.tool_name,
                taint=first.taint,
                text=_join_splits(splits),
                chunk_ids=tuple(r.id for r in splits),
            )
        )
    return units


def turns_of(units: Iterable[Unit]) -> list[TurnView]:
    """Group units (already in reading order) into turns keyed by (seq, turn_uuid)."""
    grouped: dict[tuple[int, str], list[Unit]] = {}
    for unit in units:
        grouped.setdefault((unit.seq, unit.turn_uuid), []).append(unit)
    turns: list[TurnView] = []
    for (seq, turn_uuid), members in sorted(grouped.items()):
        head = members[0]
        turns.append(TurnView(seq, turn_uuid, head.ts, head.role, head.harness, tuple(members)))
    return turns


def _turn_keys(rows: Iterable[Row]) -> set[tuple[int, str]]:
    return {(r.seq, r.turn_uuid) for r in rows}


def _session(store: Store, label: str, session_id: str) -> list[Row]:
    """All of a session's rows (text only), or :class:`ReadError` when the memory has none."""
    rows = store.session_rows(session_id)
    if not rows:
        raise ReadError(f"no session {session_id} in {label}")
    return rows


def _check_seq(name: str, value: int | None) -> None:
    if value is not None and value < 0:
        raise ReadError(f"{name} must be 0 or more (got {value})")


def _check_window(seq_from: int | None, seq_to: int | None) -> None:
    _check_seq("--from", seq_from)
    _check_seq("--to", seq_to)
    if seq_from is not None and seq_to is not None and seq_from > seq_to:
        raise ReadError(f"--from {seq_from} is after --to {seq_to}")


def _in_window(rows: Iterable[Row], seq_from: int | None, seq_to: int | None) -> list[Row]:
    return [
        r for r in rows if (seq_from is None or r.seq >= seq_from) and (seq_to is None or r.seq <= seq_to)
    ]


def collapse(text: str) -> str:
    """Whitespace runs (newlines included) become one space; ends trimmed."""
    return " ".join(text.split())


def is_scaffolding(text: str) -> bool:
    """Whether a user text block is harness-injected (see :data:`SCAFFOLDING_PREFIXES`) or blank."""
    head = text.lstrip()
    return not head or head.startswith(SCAFFOLDING_PREFIXES)


def _injected(unit: Unit) -> bool:
    """A user text block the harness wrote (scaffolding): never an ask, never a sketch place."""
    return unit.role == "user" and unit.block_type == "text" and is_scaffolding(unit.text)


def _opening_unit(units: Sequence[Unit]) -> Unit | None:
    """The opening ask: the first user text block that is not scaffolding.

    Data whose producer has no ``user`` role (or whose user turns are all scaffolding) falls back
    to the first non-scaffolding text block of any role. Scaffolding is never a fallback: an
    echoed ``<command-name>`` says nothing about what the session was for.
    """
    texts = [u for u in units if u.block_type == "text" and not is_scaffolding(u.text)]
    for unit in texts:
        if unit.role == "user":
            return unit
    return texts[0] if texts else None


# -- get ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GetResult:
    """The turns of ``session_id`` with ``seq_from <= seq <= seq_to`` (all of them: the 40,000
    character cap is a property of the text, applied by the renderer)."""

    session_id: str
    seq_from: int
    seq_to: int
    #: Turns the whole session holds (distinct (seq, turn_uuid)).
    total: int
    turns: tuple[TurnView, ...]


def get_turns(
    store: Store, label: str, session_id: str, *, seq_from: int | None = None, seq_to: int | None = None
) -> GetResult:
    """Read turns by seq. Without ``seq_from`` it starts at 0; without ``seq_to`` it reads
    :data:`DEFAULT_SPAN` seqs (``--from 40`` reads 40-59).

    Turns are addressed by seq only, never by turn_uuid: seqs are dense and ordered, so a window
    and its continuation (``--from <last+1>``) are plain arithmetic for an agent.
    """
    _check_window(seq_from, seq_to)
    start = 0 if seq_from is None else seq_from
    end = start + DEFAULT_SPAN - 1 if seq_to is None else seq_to
    rows = _session(store, label, session_id)
    turns = turns_of(units_of(_in_window(rows, start, end)))
    return GetResult(session_id, start, end, len(_turn_keys(rows)), tuple(turns))


# -- sessions ----------------------------------------------------------------------------------------


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


def _as_date(name: str, value: date | str | None) -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ReadError(f"{name} must be a date YYYY-MM-DD (got {value!r})") from None


def _summaries(rows: Iterable[Row]) -> list[SessionSummary]:
    by_session: dict[str, list[Row]] = {}
    for row in rows:
        by_session.setdefault(row.session_id, []).append(row)
    out: list[SessionSummary] = []
    for session_id, members in by_session.items():
        members.sort(key=lambda r: (r.seq, r.turn_uuid, r.block_idx, r.split_idx))
        first = members[0]
        opening = _opening_unit(units_of(members))
        text: str | None = None
        if opening is not None:
            flat = collapse(opening.text)
            text = flat if len(flat) <= OPENING_CHARS else flat[:OPENING_CHARS].rstrip() + "…"
        out.append(
            SessionSummary(
                session_id=session_id,
                start_ts=first.ts,
                harness=first.harness,
                repo=first.repo,
                workdir=first.workdir,
                turns=len(_turn_keys(members)),
                opening=text,
            )
        )
    out.sort(key=lambda s: (s.start_ts, s.session_id))
    return out


def list_sessions(
    store: Store,
    *,
    repo: str | None = None,
    harness: str | None = None,
    since: date | str | None = None,
    until: date | str | None = None,
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
) -> SessionsResult:
    """Enumerate sessions, oldest first by (start ts, session_id).

    ``harness`` and ``repo`` filter rows in the store (``claude`` also matches ``claude_code``),
    so a session that moved between repos counts only its turns in the asked repo.
    ``since``/``until`` (inclusive, ``YYYY-MM-DD`` or a ``date``) compare the session's *start*
    date, so they are applied after aggregating: a long session that started before ``since``
    is not listed from its middle.

    Paging counts back from the newest: ``offset`` skips that many of the most recent matches,
    then ``limit`` (1-200; above 200 is clamped, 0 or less is an error) keeps the next-most-recent
    ones, printed oldest first. So the first page answers "what was I doing lately", and
    ``--offset <offset+shown>`` walks back in time.
    """
    if limit < 1:
        raise ReadError(f"--limit must be at least 1 (got {limit})")
    if offset < 0:
        raise ReadError(f"--offset must be 0 or more (got {offset})")
    limit = min(limit, MAX_LIMIT)
    lo, hi = _as_date("--since", since), _as_date("--until", until)
    if lo is not None and hi is not None and lo > hi:
        raise ReadError(f"--since {lo} is after --until {hi}")
    filters = Filters(harness=harness or None, repo=repo or None)  # "" (an unset MCP field) = no filter
    rows = store.scan(None if filters.empty else filters)
    matches = [
        s
        for s in _summaries(rows)
        if (lo is None or s.date >= lo.isoformat()) and (hi is None or s.date <= hi.isoformat())
    ]
    memory_empty = not rows and (filters.empty or store.count() == 0)
    end = max(len(matches) - offset, 0)
    page = matches[max(end - limit, 0) : end]
    return SessionsResult(len(matches), offset, limit, tuple(page), memory_empty)


# -- scan --------------------------------------------------------------------------------------------


def _folded_index(text: str) -> tuple[str, list[int]]:
    """``text.casefold()`` and, per folded character, the index of the original it came from.

    Full case folding is per character and may expand one into several (``ß`` → ``ss``), so
    folded offsets do not map back by identity.
    """
    origin: list[int] = []
    parts: list[str] = []
    for index, char in enumerate(text):
        folded = char.casefold()
        parts.append(folded)
        origin.extend([index] * len(folded))
    return "".join(parts), origin


def find_literal(text: str, needle: str, *, ignore_case: bool = False) -> list[tuple[int, int]]:
    """Every non-overlapping occurrence of ``needle`` in ``text``, left to right, as (start, end).

    Literal, never a pattern. With ``ignore_case`` both sides are Unicode-casefolded, so
    ``STRASSE`` finds ``straße``; a match must then cover whole characters of the original
    (``s`` does not match half of ``ß``), which keeps every reported span a real substring.
    """
    if not needle:
        return []
    if not ignore_case:
        return _find_plain(text, needle)
    folded_needle = needle.casefold()
    folded = text.casefold()
    if len(folded) == len(text):  # no character expanded, so offsets are the original ones
        return _find_plain(folded, folded_needle)
    folded, origin = _folded_index(text)
    spans: list[tuple[int, int]] = []
    size = len(folded_needle)
    i = folded.find(folded_needle)
    while i >= 0:
        j = i + size
        starts_whole = i == 0 or origin[i - 1] != origin[i]
        ends_whole = j == len(folded) or origin[j] != origin[j - 1]
        if starts_whole and ends_whole:
            spans.append((origin[i], origin[j - 1] + 1))
            i = folded.find(folded_needle, j)
        else:
            i = folded.find(folded_needle, i + 1)
    return spans


def _find_plain(text: str, needle: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    i = text.find(needle)
    while i >= 0:
        spans.append((i, i + len(needle)))
        i = text.find(needle, i + len(needle))
    return spans


@dataclass(frozen=True, slots=True)
class ScanHit:
    """One occurrence: the unit it is in, its span there, and the excerpt around it."""

    unit: Unit
    start: int
    end: int
    #: Context each side of the match, whitespace collapsed.
    excerpt: str
    #: The block runs past the excerpt on that side (printed as ``… `` / `` …``).
    more_before: bool
    more_after: bool


@dataclass(frozen=True, slots=True)
class ScanMore:
    """A continuation line: ``count`` hits not shown, from ``seq`` on (or, ``whole_turn``, all in it)."""

    count: int
    seq: int
    whole_turn: bool


@dataclass(frozen=True, slots=True)
class ScanResult:
    session_id: str
    needle: str
    ignore_case: bool
    context: int
    seq_from: int | None
    seq_to: int | None
    #: Every occurrence in the window (the number in the header).
    total: int
    #: The hits listed, at most :data:`MAX_HITS`, cut on a turn boundary when possible.
    hits: tuple[ScanHit, ...]
    #: What the cap left out, as continuation lines (empty when nothing was).
    more: tuple[ScanMore, ...]
    #: The session exists but holds no turn in the window.
    window_empty: bool
    #: Turns the whole session holds.
    session_turns: int


def _excerpt(unit: Unit, start: int, end: int, context: int) -> ScanHit:
    lo = max(start - context, 0)
    hi = min(end + context, len(unit.text))
    return ScanHit(unit, start, end, collapse(unit.text[lo:hi]), lo > 0, hi < len(unit.text))


def _cap_hits(spans: list[tuple[Unit, int, int]]) -> tuple[int, tuple[ScanMore, ...]]:
    """How many hits to list, and the continuation lines for the rest.

    The cut falls on a turn boundary so that ``--from <seq>`` resumes exactly where the listing
    stopped, with no hit shown twice or skipped. When what is left out lies in one turn, the
    line says so and points at reading that turn. When the first turn alone holds more than the
    cap there is no boundary to cut on: its first 200 hits are listed, the rest of that turn is
    pointed at for reading, and a second line resumes the scan after it (otherwise ``--from``
    would list the same 200 again).
    """
    if len(spans) <= MAX_HITS:
        return len(spans), ()
    cut_seq = spans[MAX_HITS][0].seq
    shown = next(i for i, (u, _, _) in enumerate(spans) if u.seq == cut_seq)
    if shown == 0:
        shown = MAX_HITS
        rest = [u.seq for u, _, _ in spans[shown:]]
        in_turn = sum(1 for s in rest if s == cut_seq)
        lines = [ScanMore(in_turn, cut_seq, True)]
        after = rest[in_turn:]
        if after:
            lines.append(ScanMore(len(after), after[0], False))
        return shown, tuple(lines)
    dropped = [u.seq for u, _, _ in spans[shown:]]
    whole = len(set(dropped)) == 1
    return shown, (ScanMore(len(dropped), dropped[0], whole),)


def scan_session(
    store: Store,
    label: str,
    needle: str,
    session_id: str,
    *,
    ignore_case: bool = False,
    context: int = DEFAULT_CONTEXT,
    seq_from: int | None = None,
    seq_to: int | None = None,
) -> ScanResult:
    """Every literal occurrence of ``needle`` in one session (optionally a seq window).

    Matching runs on whole units (splits stitched back), so an occurrence inside the overlap of
    two splits is found once, and one that straddles a split boundary is found at all. Every
    non-overlapping occurrence is its own hit, in reading order: a scan answers "where, and how
    often", and a zero result clears exactly this session and this spelling. ``context`` is
    counted in characters of the stored text, before whitespace is collapsed.
    """
    if not needle:
        raise ReadError("the needle is empty")
    if context < 0:
        raise ReadError(f"--context must be 0 or more (got {context})")
    _check_window(seq_from, seq_to)
    rows = _session(store, label, session_id)
    window = _in_window(rows, seq_from, seq_to)
    spans = [
        (unit, s, e)
        for unit in units_of(window)
        for s, e in find_literal(unit.text, needle, ignore_case=ignore_case)
    ]
    shown, more = _cap_hits(spans)
    hits = tuple(_excerpt(u, s, e, context) for u, s, e in spans[:shown])
    return ScanResult(
        session_id=session_id,
        needle=needle,
        ignore_case=ignore_case,
        context=context,
        seq_from=seq_from,
        seq_to=seq_to,
        total=len(spans),
        hits=hits,
        more=more,
        window_empty=not window,
        session_turns=len(_turn_keys(rows)),
    )


# -- sketch ------------------------------------------------------------------------------------------

PlaceReason = Literal["opening", "last", "picked"]


@dataclass(frozen=True, slots=True)
class SketchPlace:
    """One selected unit and the passage printed for it."""

    unit: Unit
    #: The unit's text, cut to the per-place cap (tool results: at most 2,000 characters).
    passage: str
    shortened: bool
    #: Why it is here: the opening ask, the last word, or picked for being distinctive.
    reason: PlaceReason


@dataclass(frozen=True, slots=True)
class SketchResult:
    session_id: str
    seq_from: int | None
    seq_to: int | None
    #: Effective parameters, and what was asked (they differ when a clamp applied).
    units: int
    units_asked: int
    max_chars: int
    max_chars_asked: int
    #: Units in the window the vector step may pick: those with a vector, minus scaffolding and
    #: repeated texts.
    eligible: int
    #: In reading order.
    places: tuple[SketchPlace, ...]
    window_empty: bool
    session_turns: int

    @property
    def chars(self) -> int:
        return sum(len(p.passage) for p in self.places)

    @property
    def per_unit(self) -> int:
        return self.max_chars // self.units


def _last_word(units: Sequence[Unit]) -> Unit:
    """The last text block of the window (whoever said it), else its last unit of any type."""
    for unit in reversed(units):
        if unit.block_type == "text":
            return unit
    return units[-1]


def _unit_vector(unit: Unit, vectors: Mapping[str, Vector]) -> npt.NDArray[np.float64] | None:
    """The unit's direction: its splits' vectors (those that have one) summed and normalised."""
    found = [vectors[i] for i in unit.chunk_ids if i in vectors]
    if not found:
        return None
    total = np.asarray(found[0], dtype=np.float64)
    for vec in found[1:]:
        total = total + vec
    norm = float(np.linalg.norm(total))
    return total / norm if norm > 0.0 else None


def _select(
    units: Sequence[Unit], vectors: Mapping[str, Vector], budget: int, kept: Sequence[int]
) -> tuple[list[int], int]:
    """Pivoted Gram-Schmidt over the units' vectors: indices (reading order) of the places, and
    how many units were eligible.

    The pool is every unit with a vector, except harness scaffolding (a ``<command-name>`` echo
    is distinctive only in being noise), centred on the pool's mean so that what every passage
    shares (the session's topic) does not count as distinctive. The ``kept`` units (the opening
    ask and the last word) are chosen first and deflated out; then each step picks the unit with
    the largest residual norm (ties: the earliest in reading order) and deflates the rest against
    it. A unit whose raw vector is a near-duplicate (cosine >= :data:`NEAR_DUPLICATE`) of a chosen
    one, or whose text repeats an earlier unit's, is never chosen: near-duplicates share one place.
    The selection stops early when every residual is ~0 (the places already span the pool).
    Everything is float64 and order-fixed, so the digest is deterministic.
    """
    chosen = list(dict.fromkeys(kept))[:budget]
    seen_text: set[str] = set()
    pool: list[int] = []
    rows: list[npt.NDArray[np.float64]] = []
    for i, unit in enumerate(units):
        vec = _unit_vector(unit, vectors)
        if vec is None or _injected(unit):
            continue
        if unit.text in seen_text and i not in chosen:
            continue
        seen_text.add(unit.text)
        pool.append(i)
        rows.append(vec)
    eligible = len(pool)
    if not pool or len(chosen) >= budget:
        return sorted(chosen), eligible
    raw = np.vstack(rows)
    centred = raw - raw.mean(axis=0)
    # Squared residual norms, downdated as the basis grows: ||r_i||^2 = ||c_i||^2 - sum (q.c_i)^2.
    # One mat-vec per pick instead of rewriting the whole residual matrix (13,000 turns stay fast).
    left = np.einsum("ij,ij->i", centred, centred)
    basis: list[npt.NDArray[np.float64]] = []
    open_ = np.ones(len(pool), dtype=bool)

    def take(j: int) -> None:
        open_[j] = False
        open_[raw @ raw[j] >= NEAR_DUPLICATE] = False
        r = centred[j].copy()
        for _ in range(2):  # Gram-Schmidt twice: the basis stays orthonormal to rounding
            for q in basis:
                r -= (q @ r) * q
        norm = float(np.linalg.norm(r))
        if norm > _SPANNED:
            q = r / norm
            basis.append(q)
            left[:] -= np.square(centred @ q)

    position = {unit_index: j for j, unit_index in enumerate(pool)}
    for unit_index in chosen:
        if unit_index in position:
            take(position[unit_index])
    while len(chosen) < budget:
        scores = np.where(open_, left, -1.0)
        j = int(np.argmax(scores))  # the first maximum: ties go to the earliest unit
        if scores[j] <= _SPANNED * _SPANNED:
            break
        take(j)
        chosen.append(pool[j])
    return sorted(chosen), eligible


def _cut(unit: Unit, per_unit: int) -> tuple[str, bool]:
    cap = min(per_unit, TOOL_PREVIEW_CHARS) if unit.block_type == "tool_result" else per_unit
    return (unit.text, False) if len(unit.text) <= cap else (unit.text[:cap], True)


def sketch_session(
    store: Store,
    label: str,
    session_id: str,
    *,
    units: int = DEFAULT_UNITS,
    max_chars: int = DEFAULT_MAX_CHARS,
    seq_from: int | None = None,
    seq_to: int | None = None,
) -> SketchResult:
    """A query-free digest: up to ``units`` distinctive passages of one session (or window).

    Clamps, each reported by the renderer: ``max_chars`` into [480, 40,000]; ``units`` to 40 and
    to ``max_chars // 240`` (so every place gets at least 240 characters), and up to 2, because
    the opening ask and the last word are always kept. Values below 1 are errors. Each passage is
    cut at ``max_chars // units`` characters (tool results at ``min(that, 2000)``) and marked
    shortened, so the total never exceeds ``max_chars``. The unit is the stitched block; rows
    still owed an embedding cannot be picked by the vector step, but the opening ask and the last
    word are kept regardless. Without a window the whole session is digested.
    """
    if units < 1:
        raise ReadError(f"--units must be at least 1 (got {units})")
    if max_chars < 1:
        raise ReadError(f"--max-chars must be at least 1 (got {max_chars})")
    _check_window(seq_from, seq_to)
    eff_chars = min(max(max_chars, 2 * MIN_UNIT_CHARS), MAX_SKETCH_CHARS)
    eff_units = max(min(units, MAX_UNITS, eff_chars // MIN_UNIT_CHARS), 2)
    rows = _session(store, label, session_id)
    window = units_of(_in_window(rows, seq_from, seq_to))
    places: list[SketchPlace] = []
    eligible = 0
    if window:
        opening = _opening_unit(window) or next((u for u in window if not _injected(u)), window[0])
        last = _last_word(window)
        index = {id(u): i for i, u in enumerate(window)}
        kept = [index[id(opening)], index[id(last)]]
        picked, eligible = _select(window, store.session_vectors(session_id), eff_units, kept)
        for i in picked:
            unit = window[i]
            reason: PlaceReason = "opening" if i == kept[0] else "last" if i == kept[1] else "picked"
            passage, shortened = _cut(unit, eff_chars // eff_units)
            places.append(SketchPlace(unit, passage, shortened, reason))
    return SketchResult(
        session_id=session_id,
        seq_from=seq_from,
        seq_to=seq_to,
        units=eff_units,
        units_asked=units,
        max_chars=eff_chars,
        max_chars_asked=max_chars,
        eligible=eligible,
        places=tuple(places),
        window_empty=not window,
        session_turns=len(_turn_keys(rows)),
    )

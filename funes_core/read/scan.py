"""``scan``: every literal occurrence of a string in one session, in reading order, with context.

Its parameters (:class:`ScanArgs`), its query (:func:`scan_session`) and its text
(:func:`format_scan`, :func:`scan_json`) live here; the CLI and the MCP server both call
:func:`run`. A scan answers "where, and how often": literal, never a pattern, and a zero result
clears exactly this session and this spelling.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from funes_core.read.common import (
    FromSeq,
    Param,
    StoreReading,
    ToSeq,
    Unit,
    Verb,
    VerbError,
    check_window,
    collapse,
    dump,
    get_hint,
    get_ref,
    in_window,
    session_rows,
    turn_keys,
    units_of,
)
from funes_core.safetext import one_line

if TYPE_CHECKING:
    from funes_core.store.base import Store

__all__ = [
    "DEFAULT_CONTEXT",
    "MAX_HITS",
    "VERB",
    "ScanArgs",
    "ScanHit",
    "ScanMore",
    "ScanResult",
    "debug_quote",
    "find_literal",
    "format_scan",
    "run",
    "scan_json",
    "scan_session",
    "text",
]

#: Characters of context each side of a hit, and the most hits one call lists.
DEFAULT_CONTEXT = 100
MAX_HITS = 200


@dataclass(frozen=True, slots=True)
class ScanArgs:
    needle: Annotated[str, Param("The literal text to find (not a regex).", min_length=1)]
    session_id: Annotated[str, Param("The session to search.", min_length=1)]
    ignore_case: Annotated[bool, Param("Match regardless of case.", ("-i", "--ignore-case"))] = False
    context: Annotated[int, Param("Characters of context each side.", ("--context",), ge=0, le=2000)] = (
        DEFAULT_CONTEXT
    )
    from_: FromSeq = None
    to: ToSeq = None


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


def scan_session(store: Store, label: str, args: ScanArgs) -> ScanResult:
    """Every literal occurrence of ``args.needle`` in one session (optionally a seq window).

    Matching runs on whole units (splits stitched back), so an occurrence inside the overlap of
    two splits is found once, and one that straddles a split boundary is found at all. Every
    non-overlapping occurrence is its own hit, in reading order. ``context`` is counted in
    characters of the stored text, before whitespace is collapsed.
    """
    if not args.needle:
        raise VerbError("the needle is empty")
    if args.context < 0:
        raise VerbError(f"--context must be 0 or more (got {args.context})")
    check_window(args.from_, args.to)
    rows = session_rows(store, label, args.session_id)
    window = in_window(rows, args.from_, args.to)
    spans = [
        (unit, s, e)
        for unit in units_of(window)
        for s, e in find_literal(unit.text, args.needle, ignore_case=args.ignore_case)
    ]
    shown, more = _cap_hits(spans)
    hits = tuple(_excerpt(u, s, e, args.context) for u, s, e in spans[:shown])
    return ScanResult(
        session_id=args.session_id,
        needle=args.needle,
        ignore_case=args.ignore_case,
        context=args.context,
        seq_from=args.from_,
        seq_to=args.to,
        total=len(spans),
        hits=hits,
        more=more,
        window_empty=not window,
        session_turns=len(turn_keys(rows)),
    )


_DEBUG_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}
#: Unicode categories Rust's ``Debug`` writes as ``\u{…}``: controls, format and private-use
#: characters, unassigned and surrogate code points, non-space separators, and combining marks
#: (Rust escapes grapheme extenders, which are nearly all Mn/Me).
_DEBUG_HIDDEN = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp", "Zs", "Mn", "Me"})


def debug_quote(text: str) -> str:
    """``text`` in Rust ``{:?}`` quoting, as the reference prints the needle: double quotes,
    ``\\"`` ``\\\\`` ``\\n`` ``\\r`` ``\\t`` ``\\0``, and ``\\u{hex}`` for invisible characters, so
    an agent sees exactly which bytes it searched for."""
    out = []
    for char in text:
        if char in _DEBUG_ESCAPES:
            out.append(_DEBUG_ESCAPES[char])
        elif char != " " and unicodedata.category(char) in _DEBUG_HIDDEN:
            out.append(f"\\u{{{ord(char):x}}}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _window_suffix(seq_from: int | None, seq_to: int | None) -> str:
    if seq_from is not None and seq_to is not None:
        return f" turns {seq_from}-{seq_to}"
    if seq_from is not None:
        return f" turns {seq_from} on"
    if seq_to is not None:
        return f" turns up to {seq_to}"
    return ""


def _hit_text(hit: ScanHit, label: str) -> str:
    unit = hit.unit
    before = "… " if hit.more_before else ""
    after = " …" if hit.more_after else ""
    return (
        f"[{one_line(unit.ts)}] {one_line(unit.block_type)} seq{unit.seq}\n"
        f"{get_hint(unit.session_id, unit.seq, label)}\n"
        f"  {before}{one_line(hit.excerpt)}{after}\n"
    )


def _more_text(more: ScanMore) -> str:
    if more.whole_turn:
        return (
            f"{more.count} more hits not shown, all in turn {more.seq} — "
            f"read it with --from {more.seq} --to {more.seq}"
        )
    return f"{more.count} more hits not shown — continue with --from {more.seq}"


def _message(result: ScanResult) -> str | None:
    if result.window_empty:
        return "no turns in that range"
    if not result.total:
        where = f"{one_line(result.session_id)}{_window_suffix(result.seq_from, result.seq_to)}"
        return f"no matches for {debug_quote(result.needle)} in {where}"
    return None


def format_scan(result: ScanResult, label: str) -> str:
    """Header, three lines per hit, any continuation line(s), then ``---`` (see §3.4).

    A window holding no turn prints ``no turns in that range`` alone; zero matches print
    ``no matches for "<needle>" in <session>[ <window>]`` and ``---``.
    """
    if result.window_empty:
        return "no turns in that range\n"
    if not result.total:
        return f"{_message(result)}\n---\n"
    window = _window_suffix(result.seq_from, result.seq_to)
    sid = one_line(result.session_id)
    header = f"scan {debug_quote(result.needle)} in {sid}{window} — {result.total} hits\n"
    body = "".join(_hit_text(hit, label) for hit in result.hits)
    more = "".join(_more_text(m) + "\n" for m in result.more)
    return header + body + more + "---\n"


def scan_json(result: ScanResult, label: str) -> str:
    """``funes scan --json``: the listed hits (with their spans in the stitched block) and the
    continuation facts. ``start``/``end`` are code-point offsets into the block's stored text."""
    doc = {
        "memory": label,
        "session_id": result.session_id,
        "needle": result.needle,
        "ignore_case": result.ignore_case,
        "context": result.context,
        "from": result.seq_from,
        "to": result.seq_to,
        "total": result.total,
        "hits": [
            {
                "seq": h.unit.seq,
                "turn_uuid": h.unit.turn_uuid,
                "ts": h.unit.ts,
                "role": h.unit.role,
                "block_idx": h.unit.block_idx,
                "block_type": h.unit.block_type,
                "start": h.start,
                "end": h.end,
                "excerpt": h.excerpt,
                "more_before": h.more_before,
                "more_after": h.more_after,
                "get": get_ref(h.unit.session_id, h.unit.seq, label),
            }
            for h in result.hits
        ],
        "more": [{"count": m.count, "seq": m.seq, "whole_turn": m.whole_turn} for m in result.more],
        "message": _message(result),
    }
    return dump(doc)


#: ``text`` over an open store, ``run`` over a memory: the agent text or the ``--json`` document.
STEPS: StoreReading[ScanArgs, ScanResult] = StoreReading(scan_session, format_scan, scan_json)
text, run = STEPS.text, STEPS.run

VERB = Verb(
    name="scan",
    args=ScanArgs,
    run=run,
    cli_help="Find every literal occurrence of NEEDLE in one session (not a regex).",
    tool_help=(
        "Find every literal occurrence of a string (not a regex, not semantic) in one session, in "
        "reading order, with context. Use it to check whether something was said or run in a "
        "session. Zero hits clears only that session and that exact spelling."
    ),
)

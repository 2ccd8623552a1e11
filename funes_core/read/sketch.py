"""``sketch``: a query-free digest of one session, its most distinctive passages in reading order.

Its parameters (:class:`SketchArgs`), its query (:func:`sketch_session`, a pivoted Gram-Schmidt
selection over the units' vectors) and its text (:func:`format_sketch`, :func:`sketch_json`) live
here; the CLI and the MCP server both call :func:`run`. numpy is imported when a sketch runs, not
when the CLI starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal

from funes_core.read.common import (
    FromSeq,
    Param,
    SessionId,
    StoreReading,
    ToSeq,
    Unit,
    Verb,
    VerbError,
    check_window,
    dump,
    get_hint,
    get_ref,
    in_window,
    injected,
    no_turns,
    opening_unit,
    session_rows,
    turn_keys,
    units_of,
)
from funes_core.safetext import one_line, passage

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from funes_core.models.vectors import Vector
    from funes_core.store.base import Store

__all__ = [
    "DEFAULT_MAX_CHARS",
    "DEFAULT_UNITS",
    "MAX_SKETCH_CHARS",
    "MAX_UNITS",
    "MIN_UNIT_CHARS",
    "NEAR_DUPLICATE",
    "SKETCH_CLOSING",
    "TOOL_PREVIEW_CHARS",
    "VERB",
    "SketchArgs",
    "SketchPlace",
    "SketchResult",
    "format_sketch",
    "run",
    "sketch_json",
    "sketch_session",
    "text",
]

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

#: The last line of every sketch: a sample cannot prove an absence.
SKETCH_CLOSING = (
    "a sketch samples: it shows what it selected, so it cannot show that anything is absent"
    " — scan a literal for that"
)


@dataclass(frozen=True, slots=True)
class SketchArgs:
    session_id: SessionId
    units: Annotated[int, Param("Passages to pick (clamped to 40).", ("--units",), ge=1)] = DEFAULT_UNITS
    max_chars: Annotated[
        int, Param("Characters for all passages (clamped to 480-40,000).", ("--max-chars",), ge=1)
    ] = DEFAULT_MAX_CHARS
    from_: FromSeq = None
    to: ToSeq = None


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
    import numpy as np

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
    import numpy as np

    chosen = list(dict.fromkeys(kept))[:budget]
    seen_text: set[str] = set()
    pool: list[int] = []
    rows: list[npt.NDArray[np.float64]] = []
    for i, unit in enumerate(units):
        vec = _unit_vector(unit, vectors)
        if vec is None or injected(unit):
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


def sketch_session(store: Store, label: str, args: SketchArgs) -> SketchResult:
    """A query-free digest: up to ``units`` distinctive passages of one session (or window).

    Clamps, each reported by the formatter: ``max_chars`` into [480, 40,000]; ``units`` to 40 and
    to ``max_chars // 240`` (so every place gets at least 240 characters), and up to 2, because
    the opening ask and the last word are always kept. Values below 1 are errors. Each passage is
    cut at ``max_chars // units`` characters (tool results at ``min(that, 2000)``) and marked
    shortened, so the total never exceeds ``max_chars``. The unit is the stitched block; rows
    still owed an embedding cannot be picked by the vector step, but the opening ask and the last
    word are kept regardless. Without a window the whole session is digested.
    """
    units, max_chars, seq_from, seq_to = args.units, args.max_chars, args.from_, args.to
    if units < 1:
        raise VerbError(f"--units must be at least 1 (got {units})")
    if max_chars < 1:
        raise VerbError(f"--max-chars must be at least 1 (got {max_chars})")
    check_window(seq_from, seq_to)
    eff_chars = min(max(max_chars, 2 * MIN_UNIT_CHARS), MAX_SKETCH_CHARS)
    eff_units = max(min(units, MAX_UNITS, eff_chars // MIN_UNIT_CHARS), 2)
    rows = session_rows(store, label, args.session_id)
    window = units_of(in_window(rows, seq_from, seq_to))
    places: list[SketchPlace] = []
    eligible = 0
    if window:
        opening = opening_unit(window) or next((u for u in window if not injected(u)), window[0])
        last = _last_word(window)
        index = {id(u): i for i, u in enumerate(window)}
        kept = [index[id(opening)], index[id(last)]]
        picked, eligible = _select(window, store.session_vectors(args.session_id), eff_units, kept)
        for i in picked:
            unit = window[i]
            reason: PlaceReason = "opening" if i == kept[0] else "last" if i == kept[1] else "picked"
            passage, shortened = _cut(unit, eff_chars // eff_units)
            places.append(SketchPlace(unit, passage, shortened, reason))
    return SketchResult(
        session_id=args.session_id,
        seq_from=seq_from,
        seq_to=seq_to,
        units=eff_units,
        units_asked=units,
        max_chars=eff_chars,
        max_chars_asked=max_chars,
        eligible=eligible,
        places=tuple(places),
        window_empty=not window,
        session_turns=len(turn_keys(rows)),
    )


def _place_text(place: SketchPlace, label: str) -> str:
    unit = place.unit
    mark = " · shortened" if place.shortened else ""
    return (
        f"[{one_line(unit.ts)}] {one_line(unit.role)} {one_line(unit.block_type)} seq{unit.seq}{mark}\n"
        f"{get_hint(unit.session_id, unit.seq, label)}\n"
        f"{passage(place.passage)}\n---\n"
    )


def format_sketch(result: SketchResult, label: str) -> str:
    """Header, clamp notes, one block per place in reading order, then :data:`SKETCH_CLOSING`.

    Each clamp gets its own indented line: ``(units clamped to <n>)`` and
    ``(max-chars clamped to <n>)``. A window holding no turn prints the ``get`` message.
    """
    if result.window_empty:
        return no_turns(result.session_id, result.session_turns) + "\n"
    out = (
        f"sketch {one_line(result.session_id)} — {len(result.places)} of {result.units} places · "
        f"{result.chars} of {result.max_chars} chars · {result.eligible} eligible units\n"
    )
    if result.units != result.units_asked:
        out += f"  (units clamped to {result.units})\n"
    if result.max_chars != result.max_chars_asked:
        out += f"  (max-chars clamped to {result.max_chars})\n"
    out += "".join(_place_text(p, label) for p in result.places)
    return out + SKETCH_CLOSING + "\n"


def sketch_json(result: SketchResult, label: str) -> str:
    """``funes sketch --json``: effective and asked parameters, and the places in reading order."""
    doc = {
        "memory": label,
        "session_id": result.session_id,
        "from": result.seq_from,
        "to": result.seq_to,
        "units": result.units,
        "units_asked": result.units_asked,
        "max_chars": result.max_chars,
        "max_chars_asked": result.max_chars_asked,
        "eligible": result.eligible,
        "chars": result.chars,
        "places": [
            {
                "seq": p.unit.seq,
                "turn_uuid": p.unit.turn_uuid,
                "ts": p.unit.ts,
                "role": p.unit.role,
                "block_idx": p.unit.block_idx,
                "block_type": p.unit.block_type,
                "reason": p.reason,
                "shortened": p.shortened,
                "get": get_ref(p.unit.session_id, p.unit.seq, label),
                "text": p.passage,
            }
            for p in result.places
        ],
        "message": no_turns(result.session_id, result.session_turns) if result.window_empty else None,
        "note": SKETCH_CLOSING,
    }
    return dump(doc)


#: ``text`` over an open store, ``run`` over a memory: the agent text or the ``--json`` document.
STEPS: StoreReading[SketchArgs, SketchResult] = StoreReading(sketch_session, format_sketch, sketch_json)
text, run = STEPS.text, STEPS.run

VERB = Verb(
    name="sketch",
    args=SketchArgs,
    run=run,
    cli_help="A query-free digest of one session: its most distinctive passages.",
    tool_help=(
        "A query-free digest of one session: its most distinctive passages in reading order, always "
        "including the opening request and the last word. Use it to learn what a session was about "
        "before reading it with get. It samples, so it cannot prove something is absent - use scan."
    ),
)

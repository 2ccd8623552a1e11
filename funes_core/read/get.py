"""``get``: read turns of one session verbatim, in seq order, splits stitched back.

Its parameters (:class:`GetArgs`), its query (:func:`get_turns`) and its text (:func:`format_get`,
:func:`get_json`) live here; the CLI and the MCP server call :func:`run` with the same arguments,
so both print the same bytes. Turns are addressed by seq only, never by turn_uuid: seqs are dense
and ordered, so a window and its continuation (``--from <last+1>``) are plain arithmetic for an
agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from funes_core.read.common import (
    MAX_OUTPUT_CHARS,
    FromSeq,
    SessionId,
    StoreReading,
    ToSeq,
    TurnView,
    Verb,
    check_window,
    dump,
    in_window,
    no_turns,
    session_rows,
    turn_keys,
    turns_of,
    units_of,
)
from funes_core.safetext import one_line, passage

if TYPE_CHECKING:
    from funes_core.store.base import Store

__all__ = [
    "DEFAULT_SPAN",
    "VERB",
    "GetArgs",
    "GetResult",
    "format_get",
    "get_json",
    "get_turns",
    "run",
    "text",
]

#: ``get`` without ``--to`` reads this many seqs from ``--from``.
DEFAULT_SPAN = 20


@dataclass(frozen=True, slots=True)
class GetArgs:
    session_id: SessionId
    from_: FromSeq = None
    to: ToSeq = None


@dataclass(frozen=True, slots=True)
class GetResult:
    """The turns of ``session_id`` with ``seq_from <= seq <= seq_to`` (all of them: the 40,000
    character cap is a property of the text, applied by the formatter)."""

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
    :data:`DEFAULT_SPAN` seqs (``--from 40`` reads 40-59)."""
    check_window(seq_from, seq_to)
    start = 0 if seq_from is None else seq_from
    end = start + DEFAULT_SPAN - 1 if seq_to is None else seq_to
    rows = session_rows(store, label, session_id)
    turns = turns_of(units_of(in_window(rows, start, end)))
    return GetResult(session_id, start, end, len(turn_keys(rows)), tuple(turns))


def _turn_text(turn: TurnView) -> str:
    body = "\n\n".join(passage(unit.text) for unit in turn.units)
    head = f"[{one_line(turn.ts)}] {one_line(turn.role)} seq{turn.seq} turn={one_line(turn.turn_uuid)}"
    return f"{head}\n{body}\n---\n"


def _page(result: GetResult) -> list[str]:
    """The rendered turns that fit :data:`MAX_OUTPUT_CHARS`; the first one always does.

    Rendering stops at the first turn that does not fit (never skips it to fit a later, smaller
    one), so what is shown is one contiguous stretch and ``--from <last+1>`` resumes it exactly.
    The trailer lines are not counted.
    """
    page: list[str] = []
    used = 0
    for turn in result.turns:
        text = _turn_text(turn)
        if page and used + len(text) > MAX_OUTPUT_CHARS:
            break
        page.append(text)
        used += len(text)
    return page


def format_get(result: GetResult) -> str:
    """Turns in seq order, each closed by ``---``; then ``turns <first>-<last> of <total>``, and a
    continuation line when the 40,000-character cap stopped the listing early."""
    if not result.turns:
        return no_turns(result.session_id, result.total) + "\n"
    page = _page(result)
    first, last = result.turns[0].seq, result.turns[len(page) - 1].seq
    out = "".join(page) + f"turns {first}-{last} of {result.total}\n"
    left = len(result.turns) - len(page)
    if left:
        out += f"{left} more turn(s) in range not shown — read them with --from {last + 1}\n"
    return out


def get_json(result: GetResult, label: str) -> str:
    """``funes get --json``: the turns the text shows, with the same continuation facts."""
    shown = result.turns[: len(_page(result))]
    left = len(result.turns) - len(shown)
    doc = {
        "memory": label,
        "session_id": result.session_id,
        "from": result.seq_from,
        "to": result.seq_to,
        "total": result.total,
        "turns": [
            {
                "seq": t.seq,
                "turn_uuid": t.turn_uuid,
                "ts": t.ts,
                "role": t.role,
                "harness": t.harness,
                "blocks": [
                    {
                        "block_idx": u.block_idx,
                        "block_type": u.block_type,
                        "tool_name": u.tool_name,
                        "taint": u.taint,
                        "text": u.text,
                    }
                    for u in t.units
                ],
            }
            for t in shown
        ],
        "not_shown": left,
        "next_from": shown[-1].seq + 1 if left else None,
        "message": None if shown else no_turns(result.session_id, result.total),
    }
    return dump(doc)


#: ``text`` over an open store, ``run`` over a memory: the agent text or the ``--json`` document.
STEPS: StoreReading[GetArgs, GetResult] = StoreReading(
    lambda store, label, args: get_turns(store, label, args.session_id, seq_from=args.from_, seq_to=args.to),
    lambda result, _label: format_get(result),
    get_json,
)
text, run = STEPS.text, STEPS.run

VERB = Verb(
    name="get",
    args=GetArgs,
    run=run,
    cli_help="Read turns of one session verbatim (20 turns from --from by default).",
    tool_help=(
        "Read turns of one session verbatim, in order, with split passages reassembled. Use it to read "
        "around a recall hit (copy the hit's '→ get' line) or to continue reading. Read a stretch, not "
        "a whole long session: output stops near 40,000 characters and says how to continue."
    ),
)

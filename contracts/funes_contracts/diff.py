"""Golden differences by ``turn_uuid``: what is missing, extra or changed, with expected and actual.

A converter that drops one turn used to show as "line 2: turn_uuid expected m2, got m3" (every
later line shifted). Matching turns by ``(session_id, turn_uuid)`` names the real problem. The
same text is the pytest assertion message and the ``reason`` ``funes integrations check``
prints: its first line is a summary, the lines after it the details.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from funes_core import Turn, turns_to_jsonl

__all__ = ["diff_turns"]

_SHOWN = 160


def _line(turn: Turn) -> str:
    return turns_to_jsonl([turn]).rstrip("\n")


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def diff_turns(actual: Sequence[Turn], expected: Sequence[Turn], *, limit: int = 5) -> str | None:
    """``None`` when the turns are equal; else a summary line and details (at most ``limit`` turns)."""
    if list(actual) == list(expected):
        return None
    got = {(t.session_id, t.turn_uuid): t for t in actual}
    want = {(t.session_id, t.turn_uuid): t for t in expected}
    problems: list[tuple[str, list[str]]] = []
    for key, turn in want.items():
        if key not in got:
            problems.append(
                (f"missing turn {key[1]} (session {key[0]}, seq {turn.seq})", [f"  expected: {_line(turn)}"])
            )
            continue
        mine = got[key]
        a, b = json.loads(_line(mine)), json.loads(_line(turn))
        fields = [k for k in [*b, *(k for k in a if k not in b)] if a.get(k) != b.get(k)]
        if fields:
            head = f"turn {key[1]} (session {key[0]}): " + ", ".join(
                f"{f} expected {_short(b.get(f))}, got {_short(a.get(f))}" for f in fields[:3]
            )
            problems.append((head, [f"  expected: {_line(turn)}", f"  actual:   {_line(mine)}"]))
    for key, turn in got.items():
        if key not in want:
            problems.append(
                (f"extra turn {key[1]} (session {key[0]}, seq {turn.seq})", [f"  actual:   {_line(turn)}"])
            )
    if not problems:
        order = [(t.session_id, t.turn_uuid) for t in actual]
        return f"the same turns in another order: {order[:8]}"
    summary = "; ".join(head for head, _ in problems[:limit])
    if len(problems) > limit:
        summary += f"; and {len(problems) - limit} more"
    details = [line for _, lines in problems[:limit] for line in lines]
    return "\n".join([summary, *details])

"""Brakes on the commands that delete or rewrite stored turns: the preview and the size limit.

After an agent deletes its old transcripts (Claude Code does after 30 days by default), the memory
is the only copy of what was said, so a purge, a scrub or a rebuild that takes more than meant
cannot be undone from anywhere else. ``funes purge --match the`` once removed 19 of 27 turns
without a word. So every such command first shows what it would touch (:class:`Preview`: how many
turns, rows and sessions, in which agents and date range, and three sample passages, redacted and
one line each), asks at a terminal or needs ``--yes`` without one, and a match that would remove
more than :data:`MAX_SHARE` of the memory or more than :data:`MAX_TURNS` turns is refused unless
``--force`` is given too (:func:`size_refusal`). A ``--match`` text is checked first
(:func:`check_match`): empty or too short is refused, and one that looks like a pattern is said to
be matched literally.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from funes_core.store.base import Row

__all__ = [
    "MAX_SHARE",
    "MAX_TURNS",
    "MIN_MATCH",
    "BrakeError",
    "Preview",
    "check_match",
    "preview_rows",
    "size_refusal",
]

#: A match may remove at most this share of the memory's turns without ``--force``.
MAX_SHARE = 0.05
#: ... and at most this many turns.
MAX_TURNS = 100
#: The shortest ``--match`` text accepted (a letter or two matches nearly every turn).
MIN_MATCH = 3
SAMPLES = 3
_SAMPLE_WIDTH = 100
_PATTERNY = re.compile(r"[*+?^$|\\()\[\]{}]|\.\*|\.\+")


class BrakeError(ValueError):
    """A destructive command refused by a brake; ``str()`` is the one line, nothing was changed."""


def check_match(text: str) -> str | None:
    """Refuse an empty or too-short ``--match``; returns a note when it looks like a pattern."""
    stripped = text.strip()
    if not stripped:
        raise BrakeError("--match needs a non-empty text; nothing was purged")
    if len(stripped) < MIN_MATCH:
        raise BrakeError(
            f"--match needs at least {MIN_MATCH} characters (it matches inside words); nothing was purged"
        )
    if _PATTERNY.search(text):
        return "the match is literal text, not a pattern: its characters are looked for as written"
    return None


@dataclass(slots=True)
class Preview:
    """What a destructive command would touch, counted by turn and by stored row."""

    turns: int = 0
    rows: int = 0
    sessions: int = 0
    agents: Counter[str] = field(default_factory=Counter)
    first: str | None = None
    last: str | None = None
    samples: list[str] = field(default_factory=list)
    #: the memory's whole size, for the share
    total_turns: int = 0
    total_rows: int = 0

    @property
    def share(self) -> float:
        return self.turns / self.total_turns if self.total_turns else 0.0

    def lines(self, verb: str) -> list[str]:
        """The preview as printed: a summary line, the agents and dates, then the samples."""
        if not self.rows:
            return [f"{verb}: nothing matches"]
        ranked = sorted(self.agents.items(), key=lambda kv: (-kv[1], kv[0]))
        agents = ", ".join(f"{a} ({n})" for a, n in ranked)
        days = f"{(self.first or '?')[:10]} to {(self.last or '?')[:10]}"
        out = [
            f"{verb}: {self.turns} turn(s), {self.rows} row(s) in {self.sessions} session(s) "
            f"({self.share:.0%} of the memory's {self.total_turns} turn(s))",
            f"  agents: {agents}; dates: {days}",
        ]
        out += [f"  e.g. {s}" for s in self.samples]
        return out


def _sample(text: str) -> str:
    from funes_core.redact import redact
    from funes_core.safetext import one_line

    flat = " ".join(redact(text)[0].split())
    flat = one_line(flat)
    return flat if len(flat) <= _SAMPLE_WIDTH else flat[: _SAMPLE_WIDTH - 1] + "…"


def preview_rows(rows: Iterable[Row], *, total_turns: int, total_rows: int) -> Preview:
    """The preview of removing (or rewriting) ``rows``; samples come from different turns, in order."""
    preview = Preview(total_turns=total_turns, total_rows=total_rows)
    turns: dict[tuple[str, str], Row] = {}
    sessions: set[str] = set()
    for row in rows:
        preview.rows += 1
        sessions.add(row.session_id)
        key = (row.session_id, row.turn_uuid)
        if key not in turns:
            turns[key] = row
            preview.agents[row.harness] += 1
        if row.ts and (preview.first is None or row.ts < preview.first):
            preview.first = row.ts
        if row.ts and (preview.last is None or row.ts > preview.last):
            preview.last = row.ts
    preview.turns = len(turns)
    preview.sessions = len(sessions)
    ordered = sorted(turns.values(), key=lambda r: (r.ts, r.session_id, r.seq))
    preview.samples = [_sample(r.text) for r in _spread(ordered, SAMPLES)]
    return preview


def _spread(items: Sequence[Row], n: int) -> list[Row]:
    """``n`` items spread over ``items`` (first, middle, last), so a sample is not all one session."""
    if len(items) <= n:
        return list(items)
    step = (len(items) - 1) / (n - 1)
    return [items[round(i * step)] for i in range(n)]


def size_refusal(preview: Preview, *, force: bool) -> str | None:
    """The one-line refusal when a match would remove too much and ``--force`` was not given."""
    if force:
        return None
    too_many = preview.turns > MAX_TURNS
    too_big = preview.share > MAX_SHARE
    if not (too_many or too_big):
        return None
    why = f"more than {MAX_TURNS} turns" if too_many else f"more than {MAX_SHARE:.0%} of the memory"
    return (
        f"this would remove {preview.turns} of {preview.total_turns} turn(s) ({preview.share:.0%}), "
        f"{why}; check the match, or add --force; nothing was purged"
    )

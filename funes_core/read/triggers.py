"""Keyword triggers: the fast path for facts you want surfaced whenever a word comes up.

``funes remember deploy --hint "run make check first"`` appends a *note turn*; ``funes forget
deploy`` appends a tombstone turn. Both are ordinary turns (harness ``note``) in an ordinary
turns file under ``$FUNES_HOME/notes/``, indexed like any other: nothing is ever updated in place,
recall and get find them, and re-indexing (even ``--rebuild``) keeps them. A trigger is live when
its newest event is a ``remember``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from funes_core.store.base import Row
from funes_core.turns.format import Block, Turn, format_ts

__all__ = [
    "NOTES_SESSION",
    "NOTE_HARNESS",
    "Trigger",
    "forget_turn",
    "live_triggers",
    "matching",
    "remember_turn",
    "validate_keyword",
]

NOTE_HARNESS = "note"
NOTES_SESSION = "funes-triggers"

_REMEMBER = re.compile(r"^trigger (?P<keyword>[^\n:]+): (?P<hint>.*)\Z", re.S)
_FORGET = re.compile(r"^forget trigger (?P<keyword>[^\n:]+)\Z")


@dataclass(frozen=True, slots=True)
class Trigger:
    keyword: str
    hint: str
    ts: str


def validate_keyword(keyword: str) -> str:
    """Normalise a keyword (collapse whitespace) and refuse the ones that cannot round-trip."""
    cleaned = " ".join(keyword.split())
    if not cleaned:
        raise ValueError("the keyword is empty")
    if ":" in cleaned:
        raise ValueError(f"keyword {cleaned!r} must not contain ':'")
    if not re.search(r"\w", cleaned):
        raise ValueError(f"keyword {cleaned!r} needs at least one letter or digit")
    return cleaned


def _turn(text: str, keyword: str, seq: int, now: datetime) -> Turn:
    ts = format_ts(now)
    digest = hashlib.sha1(keyword.casefold().encode(), usedforsecurity=False).hexdigest()[:10]
    return Turn(
        session_id=NOTES_SESSION,
        turn_uuid=f"{digest}@{ts.replace(':', '')}-{seq}",
        seq=seq,
        ts=ts,
        role="note",
        harness=NOTE_HARNESS,
        blocks=(Block("text", text),),
    )


def remember_turn(keyword: str, hint: str, *, seq: int, now: datetime) -> Turn:
    keyword = validate_keyword(keyword)
    hint = hint.strip()
    if not hint:
        raise ValueError("the hint is empty: say what to surface with --hint")
    return _turn(f"trigger {keyword}: {hint}", keyword, seq, now)


def forget_turn(keyword: str, *, seq: int, now: datetime) -> Turn:
    keyword = validate_keyword(keyword)
    return _turn(f"forget trigger {keyword}", keyword, seq, now)


def live_triggers(rows: Iterable[Row]) -> list[Trigger]:
    """Replay note rows in (ts, seq) order; the newest event per keyword wins. Newest first."""
    latest: dict[str, tuple[str, int, str | None, str]] = {}
    for row in sorted(
        (r for r in rows if r.session_id == NOTES_SESSION and r.split_idx == 0), key=lambda r: (r.ts, r.seq)
    ):
        if m := _REMEMBER.match(row.text):
            keyword = m["keyword"]
            latest[keyword.casefold()] = (row.ts, row.seq, m["hint"], keyword)
        elif m := _FORGET.match(row.text):
            latest[m["keyword"].casefold()] = (row.ts, row.seq, None, m["keyword"])
    live = [Trigger(kw, hint, ts) for ts, _, hint, kw in latest.values() if hint is not None]
    live.sort(key=lambda t: t.ts, reverse=True)
    return live


def matching(triggers: Sequence[Trigger], query: str) -> list[Trigger]:
    """Triggers whose keyword occurs in the query as a whole word (case-insensitive, unicode-aware).

    "go" fires on "go build" but not on "good" or "cargo": the keyword must not touch another
    word character on either side.
    """
    folded = query.casefold()
    out = []
    for trig in triggers:
        pattern = r"(?<!\w)" + re.escape(trig.keyword.casefold()) + r"(?!\w)"
        if re.search(pattern, folded):
            out.append(trig)
    return out

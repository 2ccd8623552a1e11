"""``triggers``: the live keyword triggers, and which of them a recall's query fires.

``funes remember KEYWORD --hint TEXT`` and ``funes forget KEYWORD`` append note turns
(:mod:`funes_core.ingest.notes` writes them); nothing is updated in place. This module replays
those rows at read time: a trigger is live when its newest event is a ``remember``. Recall prints
the hints of the live triggers its query names before its hits; the ``triggers`` verb lists them.
"""

from __future__ import annotations

import contextlib
import re
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from funes_core.ingest.notes import NOTE_HARNESS, NOTES_SESSION
from funes_core.read.common import Verb, dump
from funes_core.safetext import one_line

if TYPE_CHECKING:
    from funes_core.read.handle import Memory
    from funes_core.store.base import Row, Store

__all__ = ["VERB", "Trigger", "TriggersArgs", "fired", "live", "live_triggers", "matching", "run"]

_REMEMBER = re.compile(r"^trigger (?P<keyword>[^\n:]+): (?P<hint>.*)\Z", re.S)
_FORGET = re.compile(r"^forget trigger (?P<keyword>[^\n:]+)\Z")


@dataclass(frozen=True, slots=True)
class Trigger:
    keyword: str
    hint: str
    ts: str


@dataclass(frozen=True, slots=True)
class TriggersArgs:
    """The ``triggers`` verb takes no parameter of its own."""


def live_triggers(rows: Iterable[Row]) -> list[Trigger]:
    """Replay note rows in (ts, seq) order; the newest event per keyword wins. Newest first.

    Only rows ``funes remember`` wrote count (notes session, ``note`` harness, internal): triggers are
    printed first and unmarked, so a row of third-party text must never pass for one.
    """
    latest: dict[str, tuple[str, int, str | None, str]] = {}
    notes = (
        r
        for r in rows
        if r.session_id == NOTES_SESSION and r.harness == NOTE_HARNESS and r.taint == "internal"
    )
    for row in sorted((r for r in notes if r.split_idx == 0), key=lambda r: (r.ts, r.seq)):
        if m := _REMEMBER.match(row.text):
            keyword = m["keyword"]
            latest[keyword.casefold()] = (row.ts, row.seq, m["hint"], keyword)
        elif m := _FORGET.match(row.text):
            latest[m["keyword"].casefold()] = (row.ts, row.seq, None, m["keyword"])
    out = [Trigger(kw, hint, ts) for ts, _, hint, kw in latest.values() if hint is not None]
    out.sort(key=lambda t: t.ts, reverse=True)
    return out


#: The live triggers last read from a store, with the store's data version then (see :func:`live`).
_LIVE: weakref.WeakKeyDictionary[Store, tuple[int, tuple[Trigger, ...]]] = weakref.WeakKeyDictionary()


def live(store: Store) -> list[Trigger]:
    """The live triggers of a memory, newest first (one scan of the notes session).

    Every recall asks (its first lines are the triggers its query names), and the notes change
    rarely: a store that tells its data version (:class:`~funes_core.store.base.Versioned`) is
    scanned again only once it has changed. The version is read before the scan, so a write landing
    in between makes the next call scan again rather than keep a stale answer.
    """
    from funes_core.store.base import Filters, Versioned

    version = store.data_version() if isinstance(store, Versioned) else None
    if version is not None:
        held = _LIVE.get(store)
        if held is not None and held[0] == version:
            return list(held[1])
    found = live_triggers(store.scan(Filters(session_id=NOTES_SESSION)))
    if version is not None:
        with contextlib.suppress(TypeError):  # a store that cannot be weakly referenced is not kept
            _LIVE[store] = (version, tuple(found))
    return found


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


def fired(store: Store, query: str) -> tuple[tuple[str, str], ...]:
    """(keyword, hint) of the live triggers ``query`` names, newest first: recall's first lines."""
    return tuple((t.keyword, t.hint) for t in matching(live(store), query))


def run(memory: Memory, args: TriggersArgs, *, as_json: bool = False) -> str:
    """``funes triggers`` / the MCP ``triggers`` tool: the live keyword triggers, newest first."""
    found = live(memory.store())
    if as_json:
        doc = [{"keyword": t.keyword, "hint": t.hint, "set": t.ts} for t in found]
        return dump({"memory": memory.label, "triggers": doc})
    if not found:
        return f"no triggers in {memory.label} — set one with: funes remember KEYWORD --hint TEXT\n"
    lines = [f"[{one_line(t.ts)}] {one_line(t.keyword)}: {one_line(t.hint)}" for t in found]
    return "\n".join(lines) + f"\n---\n{len(found)} trigger(s)\n"


VERB = Verb(
    name="triggers",
    args=TriggersArgs,
    run=run,
    cli_help="List the live keyword triggers, newest first.",
    tool_help=(
        "The user's keyword triggers: notes pinned to a keyword, surfaced by recall whenever a query "
        "names the keyword. Use it to see which standing instructions or facts the user has pinned."
    ),
)

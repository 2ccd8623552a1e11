"""The purge log: what scrub and purge removed, when, and how many rows; never the content.

``$FUNES_HOME/purge.log`` holds one JSON object per line, appended by every ``funes scrub`` and
``funes purge``::

    {"at": "2026-12-01T15:00:00+00:00", "event": "9c1e…", "op": "purge", "by": "session",
     "sessions": ["…"], "rows": 12, "ids": ["3f2a…", …], "state": "intent", "trash": true}
    {"at": "2026-12-01T15:00:02+00:00", "op": "done", "of": "9c1e…"}

An event is written **before** the rewrite it announces (``state: intent``) and closed by a
``done`` line once nothing of the removed text is left under ``$FUNES_HOME``. So a purge killed
at any point is still in the log: the store refuses its rows from then on, the next push removes
them from each remote, and the next ``funes purge`` or ``funes scrub`` finishes it
(:func:`unfinished`). ``funes purge --undo`` adds ``{"op": "undo", "of": "9c1e…"}``: the rows
came back from the trash, so the event no longer denies them, nor removes them from a remote
that has not absorbed it yet. ``trash`` says whether a restorable copy was kept.

``ids`` are chunk ids, content-free hashes of where a chunk sat (session, turn, block, split);
``sessions`` are session ids, named only when the user purged by session. A ``--match`` text is
never written anywhere.

The log serves three readers:

- people, who want to know what was removed and when (``funes purge --log``);
- ``funes index``: a purged session, or a chunk purged by ``--match``, must not come back when
  the agent's transcript is converted again (the store refuses those ids and sessions);
- ``funes push``: each remote remembers how many log entries it has absorbed
  (``$FUNES_HOME/pushed/<name>.json``); entries it has not seen yet are applied to it (its rows
  with those ids are removed by a rewrite) before anything new is published.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes_core.files import atomic_write_text

if TYPE_CHECKING:
    from funes_core.home import Home

__all__ = [
    "Denied",
    "Pending",
    "append_event",
    "denied",
    "events",
    "log_path",
    "mark_applied",
    "mark_done",
    "mark_undone",
    "pending_for",
    "undone",
    "unfinished",
]

LOG_FILE = "purge.log"


def log_path(home: Home) -> Path:
    return home.root / LOG_FILE


def _receipt(home: Home, remote: str) -> Path:
    return home.root / "pushed" / f"{remote}.json"


def append_event(
    home: Home,
    *,
    op: str,
    by: str,
    rows: int,
    ids: Iterable[str],
    sessions: Iterable[str] = (),
    changed: int = 0,
    event_id: str | None = None,
    intent: bool = False,
    trash: bool | None = None,
    at: str | None = None,
) -> dict[str, Any]:
    """Append one event (0600 file, one line, fsynced) and return it.

    ``intent``: the rewrite has not happened yet; :func:`mark_done` closes the event after it."""
    event: dict[str, Any] = {
        "at": at or now_iso(),
        "op": op,
        "by": by,
        "rows": rows,
        "changed": changed,
        "sessions": sorted(set(sessions)),
        "ids": sorted(set(ids)),
    }
    if event_id is not None:
        event["event"] = event_id
    if intent:
        event["state"] = "intent"
    if trash is not None:
        event["trash"] = trash
    _append(home, event)
    return event


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_event_id() -> str:
    """A random id naming one event (and its trash entry); content-free."""
    import uuid

    return uuid.uuid4().hex[:16]


def mark_done(home: Home, event_id: str) -> None:
    """Close an intent: its rewrite is finished and no copy is left under ``$FUNES_HOME``."""
    _append(home, {"at": now_iso(), "op": "done", "of": event_id})


def mark_undone(home: Home, event_id: str, rows: int) -> None:
    """Record that an event's rows were restored from the trash."""
    _append(home, {"at": now_iso(), "op": "undo", "of": event_id, "rows": rows})


def unfinished(home: Home) -> list[dict[str, Any]]:
    """Purge and scrub events written as an intent and never closed (the run was killed)."""
    all_events = events(home)
    closed = {str(e.get("of")) for e in all_events if e.get("op") == "done"}
    return [e for e in all_events if e.get("state") == "intent" and str(e.get("event")) not in closed]


def undone(all_events: Iterable[dict[str, Any]]) -> set[str]:
    """The ids of the events whose rows were restored by ``funes purge --undo``."""
    return {str(e.get("of")) for e in all_events if e.get("op") == "undo"}


def _append(home: Home, event: dict[str, Any]) -> None:
    path = log_path(home)
    home.ensure()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(event, separators=(",", ":")) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def events(home: Home) -> list[dict[str, Any]]:
    """Every event in order; a torn last line (crash while appending) is skipped."""
    try:
        lines = log_path(home).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


@dataclass(frozen=True, slots=True)
class Denied:
    """Sessions and chunk ids the store must refuse: they were purged."""

    sessions: frozenset[str] = frozenset()
    ids: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.sessions or self.ids)


def denied(home: Home) -> Denied:
    sessions: set[str] = set()
    ids: set[str] = set()
    all_events = events(home)
    restored = undone(all_events)
    for event in all_events:
        if event.get("op") != "purge" or str(event.get("event")) in restored:
            continue
        sessions.update(str(s) for s in event.get("sessions") or ())
        if event.get("by") == "match":
            ids.update(str(i) for i in event.get("ids") or ())
    return Denied(frozenset(sessions), frozenset(ids))


@dataclass(frozen=True, slots=True)
class Pending:
    """Log entries a remote has not absorbed: the ids to remove from it, and how far the log goes."""

    ids: frozenset[str] = frozenset()
    events: int = 0
    upto: int = 0


def pending_for(home: Home, remote: str) -> Pending:
    all_events = events(home)
    try:
        applied = int(json.loads(_receipt(home, remote).read_text(encoding="utf-8")).get("applied", 0))
    except (OSError, ValueError, AttributeError, TypeError):
        applied = 0
    new = all_events[applied:]
    restored = undone(all_events)
    ids: set[str] = set()
    for event in new:
        if event.get("event") is not None and str(event.get("event")) in restored:
            continue
        ids.update(str(i) for i in event.get("ids") or ())
    return Pending(frozenset(ids), len(new), len(all_events))


def mark_applied(home: Home, remote: str, pending: Pending) -> None:
    from funes_core.home import ensure_private_dir

    path = _receipt(home, remote)
    ensure_private_dir(path.parent)
    atomic_write_text(path, json.dumps({"applied": pending.upto}) + "\n")


def forget_remote(home: Home, remote: str) -> None:
    _receipt(home, remote).unlink(missing_ok=True)


def _unused(_f: Any = field) -> None:  # pragma: no cover
    return None

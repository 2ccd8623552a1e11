"""The purge log: what scrub and purge removed, when, and how many rows; never the content.

``$FUNES_HOME/purge.log`` holds one JSON object per line, appended by every ``funes scrub`` and
``funes purge``::

    {"at": "2026-12-01T15:00:00+00:00", "op": "purge", "by": "session", "sessions": ["…"],
     "rows": 12, "ids": ["3f2a…", …]}

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

__all__ = ["Denied", "Pending", "append_event", "denied", "events", "log_path", "mark_applied", "pending_for"]

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
) -> dict[str, Any]:
    """Append one event (0600 file, one line, fsynced) and return it."""
    event: dict[str, Any] = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "op": op,
        "by": by,
        "rows": rows,
        "changed": changed,
        "sessions": sorted(set(sessions)),
        "ids": sorted(set(ids)),
    }
    path = log_path(home)
    home.ensure()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(event, separators=(",", ":")) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    return event


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
    for event in events(home):
        if event.get("op") != "purge":
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
    ids: set[str] = set()
    for event in new:
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

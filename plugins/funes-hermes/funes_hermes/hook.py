"""The command Hermes runs after each turn: ``python -I -m funes_hermes.hook --funes-home DIR -- FUNES``.

Hermes runs its shell hooks synchronously, without a shell, with a JSON event on stdin
(``session_id``, but no transcript path), and waits for the command and its pipes. The core's
hook runtime (:func:`funes_core.run_hook`, standard library only) starts the conversion detached
and exits 0 at once; this module says which sessions the event is about: the turn's session in
``state.db`` of the Hermes home of *its* environment (Hermes sets ``HERMES_HOME`` for a profile),
and the session it continues when Hermes compressed the context into a new session this turn.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path

from funes_core import HookSources, run_hook
from funes_hermes.agent import HERMES

__all__ = ["SESSION_ID", "locate", "parent_of"]

#: The session ids funes accepts: they name a spool file as they are.
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def parent_of(db: Path, session_id: str) -> str | None:
    """The session ``session_id`` continues (a read-only look at ``sessions.parent_session_id``)."""
    try:
        conn = sqlite3.connect(db.absolute().as_uri() + "?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return None
    with closing(conn):
        try:
            row = conn.execute(
                "SELECT parent_session_id FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        except sqlite3.Error:
            return None
    parent = row[0] if row else None
    return (
        parent if isinstance(parent, str) and SESSION_ID.fullmatch(parent) and parent != session_id else None
    )


def locate(event: Mapping[str, object], environ: Mapping[str, str]) -> HookSources | None:
    """``state.db`` and the turn's session (plus the one it continues), or ``None``."""
    session_id = event.get("session_id")
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        return None
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    db = HERMES.path("state", home, environ=environ)
    if not db.is_file():
        return None
    parent = parent_of(db, session_id)
    sessions = (session_id, parent) if parent else (session_id,)
    return HookSources((str(db),), sessions=sessions, what=str(event.get("hook_event_name") or "turn"))


if __name__ == "__main__":
    sys.exit(run_hook("hermes", locate))

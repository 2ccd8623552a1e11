"""What funes' OpenCode plugin runs after each turn: ``python -I -m funes_opencode.hook …``.

OpenCode has no shell hooks; funes' plugin file (``funes.js``, see :mod:`funes_opencode.wiring`)
starts this module on OpenCode's ``session.idle`` event with ``{"hook_event_name": "session.idle",
"session_id": "ses_…"}`` on stdin and OpenCode's own environment, so the databases found here are
the ones the running OpenCode uses (``XDG_DATA_HOME``, ``OPENCODE_DB``). The core's hook runtime
does the rest. Standard library only: it runs on every turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

from funes_core import HookSources, run_hook
from funes_opencode.agent import AGENT, databases

_SESSION = re.compile(r"^ses_[A-Za-z0-9]+$")


def locate(event: Mapping[str, object], environ: Mapping[str, str]) -> HookSources | None:
    """Every OpenCode database, narrowed to the session the event names."""
    return locate_in(databases, event, environ)


def locate_in(
    find: Callable[[Path, Mapping[str, str]], list[Path]],
    event: Mapping[str, object],
    environ: Mapping[str, str],
) -> HookSources | None:
    """The databases ``find`` names for the environment's HOME, narrowed to the event's session."""
    session = event.get("session_id")
    if not isinstance(session, str) or not _SESSION.fullmatch(session):
        return None
    home = Path(environ.get("HOME") or Path.home())
    found = tuple(str(db) for db in find(home, environ) if db.is_file())
    return HookSources(found, sessions=(session,), what="session.idle") if found else None


if __name__ == "__main__":
    raise SystemExit(run_hook(AGENT.id, locate))

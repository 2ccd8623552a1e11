"""What Factory Droid runs after each turn: ``python -I -m funes_droid.hook --funes-home DIR -- FUNES...``.

Droid runs the command of a ``Stop`` (every turn) or ``SessionEnd`` hook with the event as JSON on
stdin: ``session_id``, ``transcript_path`` (the session's ``.jsonl``), ``cwd``,
``hook_event_name`` (verified with droid 0.215.0). A ``Stop`` hook's stdout may carry a decision,
so the core's hook runtime prints nothing. Standard library only: it runs on every turn.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from funes_core import HookSources, run_hook
from funes_droid.agent import AGENT


def locate(event: Mapping[str, object], environ: Mapping[str, str]) -> HookSources | None:
    """The transcript the event names, else ``<sessions>/*/<session_id>.jsonl``."""
    what = str(event.get("hook_event_name") or "Stop")
    given = event.get("transcript_path")
    if isinstance(given, str) and os.path.isfile(given):
        return HookSources((given,), what=what)
    session = event.get("session_id")
    if isinstance(session, str) and session and "/" not in session and not session.startswith("."):
        home = Path(environ.get("HOME") or Path.home())
        sessions = AGENT.path("sessions", home, environ=environ)
        found = sorted(sessions.glob(f"*/{session}.jsonl")) or sorted(sessions.glob(f"{session}.jsonl"))
        if found:
            return HookSources((str(found[0]),), what=what)
    return None


if __name__ == "__main__":
    raise SystemExit(run_hook(AGENT.id, locate))

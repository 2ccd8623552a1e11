"""What the Copilot CLI runs after each turn: ``python -I -m funes_copilot.hook --funes-home DIR …``.

Copilot runs hooks with the event as JSON on stdin, in camelCase: ``sessionId``, and for
``agentStop`` (the end of every turn) ``transcriptPath`` (the session's ``events.jsonl``);
``sessionEnd`` has no path, so the session's file is looked up in the Copilot home of the hook's
environment. The core's hook runtime does the rest. Standard library only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from funes_copilot.agent import AGENT
from funes_core import HookSources, run_hook

_SESSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def locate(event: Mapping[str, object], environ: Mapping[str, str]) -> HookSources | None:
    """The ``events.jsonl`` the event names, else the one of its ``sessionId``."""
    given = event.get("transcriptPath")
    if isinstance(given, str) and os.path.isfile(given):
        return HookSources((given,), what="agentStop")
    session = event.get("sessionId")
    if isinstance(session, str) and _SESSION.fullmatch(session):
        home = Path(environ.get("HOME") or Path.home())
        candidate = AGENT.path("sessions", home, environ=environ) / session / "events.jsonl"
        if candidate.is_file():
            return HookSources((str(candidate),), what="sessionEnd")
    return None


if __name__ == "__main__":
    raise SystemExit(run_hook(AGENT.id, locate))

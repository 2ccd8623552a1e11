"""The command Codex runs on ``Stop`` and ``SessionEnd``: hand the session to funes, detached.

Usage (what :func:`funes_codex.wiring.hook_command` records in ``hooks.json``)::

    python -I -m funes_codex.hook --funes-home DIR -- FUNES_ARGV...

Codex writes the event as JSON on stdin (``session_id``, ``transcript_path``, ``cwd``, …) and
waits for the command, on every turn; it reads what a Stop hook prints as a decision. The core's
hook runtime (:mod:`funes_core.wiring.hookrt`, standard library only) does the rest: it starts the
conversion detached, logs to ``$FUNES_HOME/logs/codex-hook.log``, prints nothing and exits 0.
This module only finds the rollout: ``transcript_path`` when that file exists, otherwise the
newest ``rollout-*-<session_id>.jsonl`` under ``$CODEX_HOME/sessions`` (date folders newest
first, so the search stops in today's folder).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from funes_codex.agent import CODEX
from funes_core import HookSources, run_hook

__all__ = ["find_rollout", "locate"]

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,200}$")


def _newest_first(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir(), key=lambda p: p.name, reverse=True)
    except OSError:
        return []


def find_rollout(event: Mapping[str, object], sessions: Path) -> Path | None:
    """The rollout file of the session a hook event is about, ``None`` when there is none."""
    given = event.get("transcript_path")
    if isinstance(given, str) and given.strip():
        path = Path(given).expanduser()
        if path.is_file():
            return path
    session_id = event.get("session_id")
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        return None
    name = re.compile(rf"^rollout-.*-{re.escape(session_id)}(_[^/]*)?\.jsonl$")

    def search(folder: Path, depth: int) -> Path | None:
        for entry in _newest_first(folder):
            if depth and entry.is_dir():
                found = search(entry, depth - 1)
                if found is not None:
                    return found
            elif name.match(entry.name) and entry.is_file():
                return entry
        return None

    return search(sessions, 3)  # sessions/YYYY/MM/DD/rollout-….jsonl


def locate(event: Mapping[str, object], environ: Mapping[str, str]) -> HookSources | None:
    """The rollout of the event's session, in the Codex home of the agent's environment."""
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    rollout = find_rollout(event, CODEX.path("sessions", home, environ=environ))
    return None if rollout is None else HookSources((str(rollout),))


if __name__ == "__main__":
    raise SystemExit(run_hook(CODEX.id, locate))

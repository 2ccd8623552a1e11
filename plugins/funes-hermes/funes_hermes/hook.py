"""The per-turn hook Hermes runs (``funes hermes hook``): convert this session, index in the background.

Hermes runs its shell hooks synchronously, without a shell, with a JSON event on stdin
(``session_id``, but no transcript path) and waits for the command and its output pipes. So
the hook:

1. reads the event and finds ``state.db`` in the Hermes home of *its* environment (Hermes sets
   ``HERMES_HOME`` itself when a profile is active);
2. converts that session, and the one it continues when Hermes compressed the context into a
   new session this turn, into ``$FUNES_HOME/spool/hermes/<session>.funes.jsonl`` (atomically,
   untouched when already identical);
3. when a spool file changed, starts ``funes index --harness hermes`` in a new session with its
   output in ``$FUNES_HOME/logs/index-hermes.log``, so Hermes' pipes close at once;
4. exits 0 whatever happened: a memory problem must never disturb the agent. Failures are
   appended to ``$FUNES_HOME/logs/hermes-hook.log``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Mapping
from pathlib import Path

from funes_core import spawn_detached
from funes_hermes.converter import SESSION_ID, HermesConverter
from funes_hermes.paths import STATE_DB, hermes_home

__all__ = ["run", "spawn_index"]


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


def _log(funes_home: Path, message: str) -> None:
    try:
        logs = funes_home / "logs"
        _private_dir(logs)
        fd = os.open(logs / "hermes-hook.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} {message}\n")
    except OSError:
        pass


def spawn_index(funes_home: Path, environ: Mapping[str, str]) -> None:
    """Start ``funes index --harness hermes`` detached from Hermes (own session, no inherited pipes)."""
    logs = funes_home / "logs"
    _private_dir(logs)
    env = dict(environ)
    env["FUNES_HOME"] = str(funes_home)
    argv = [sys.executable, "-m", "funes_core", "index", "--harness", "hermes"]
    spawn_detached(argv, env=env, log=logs / "index-hermes.log")


def run(event: bytes, funes_home: Path, environ: Mapping[str, str]) -> int:
    """Handle one Hermes hook event; always returns 0."""
    try:
        payload = json.loads(event.decode("utf-8", "replace") or "{}")
        session_id = payload.get("session_id") if isinstance(payload, dict) else None
        if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
            _log(funes_home, f"no usable session_id in the hook event: {session_id!r}")
            return 0
        home = Path(environ.get("HOME") or Path.home())
        db = hermes_home(home, environ) / STATE_DB
        converter = HermesConverter()
        changed = False
        ref = converter.session(db, session_id)
        if ref is None:
            _log(funes_home, f"session {session_id} has no messages in {db}")
            return 0
        refs = [ref]
        parent = converter.parent_of(db, session_id)
        parent_ref = converter.session(db, parent) if parent and parent != session_id else None
        if parent_ref is not None:
            refs.append(parent_ref)
        for one in refs:
            changed |= any(w.changed for w in converter.write_spool(one, funes_home))
        if changed:
            spawn_index(funes_home, environ)
    except Exception:  # broad on purpose: the hook must never fail Hermes' turn
        _log(funes_home, traceback.format_exc().rstrip())
    return 0

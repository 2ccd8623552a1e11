"""``funes pi hook SESSION_FILE``: what the pi extension runs after every turn.

It converts one pi session into ``$FUNES_HOME/spool/pi/`` and starts ``funes index --harness
pi`` detached, like ``funes integrations convert … --index``, with one difference that matters
for pi: runs are serialised by a lock, and each one reads the session file only once it holds
the lock. pi ends several turns in quick succession (a tool call, then the answer, then the
session closes), and the extension starts a run for each without waiting; without the lock an
early run that finished late could replace the spool file with an older, shorter conversion.
With it, whichever run writes last has read the file last, so the spool always ends up holding
the whole session.
"""

from __future__ import annotations

import sys
from pathlib import Path

from filelock import FileLock, Timeout

from funes_core import InstallContext, spawn_detached
from funes_pi.converter import PiConverter

__all__ = ["LOCK_NAME", "run_hook"]

#: The lock file, inside the pi spool (funes reads only ``*.jsonl`` there).
LOCK_NAME = ".hook.lock"
#: How long a run waits for the one before it.
LOCK_TIMEOUT = 120.0


def _private_dir(path: Path, root: Path) -> None:
    """Create ``path``; the folders created at or below ``root`` (funes' own state) are 0700."""
    missing: list[Path] = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700 if folder.is_relative_to(root) else 0o777, exist_ok=True)


def _spawn_index(ctx: InstallContext) -> None:
    """``funes index --harness pi``, detached, its output appended to ``logs/index-pi.log``."""
    logs = ctx.funes_home / "logs"
    _private_dir(logs, ctx.funes_home)
    spawn_detached(ctx.index_command(PiConverter.id), env=ctx.env(), log=logs / "index-pi.log")


def run_hook(session_file: Path, *, index: bool = True, ctx: InstallContext | None = None) -> int:
    """Convert ``session_file`` into the spool (under the lock), then index; the exit status."""
    ctx = ctx or InstallContext.from_environment()
    converter = PiConverter()
    session_file = session_file.expanduser().absolute()
    if not session_file.is_file():
        print(f"funes: pi: no such session file: {session_file}", file=sys.stderr)
        return 1
    spool = converter.spool_dir(ctx.funes_home)
    _private_dir(spool, ctx.funes_home)
    changed = False
    try:
        with FileLock(spool / LOCK_NAME, timeout=LOCK_TIMEOUT):
            refs = converter.sessions_in(session_file)
            if not refs:
                print(f"funes: pi: {session_file} is not a pi session", file=sys.stderr)
                return 1
            for ref in refs:
                writes = converter.write_spool(ref, ctx.funes_home)
                changed |= any(w.changed for w in writes)
    except Timeout:
        print(f"funes: pi: another conversion held {spool / LOCK_NAME} too long", file=sys.stderr)
        return 1
    if changed and index:
        _spawn_index(ctx)
    return 0

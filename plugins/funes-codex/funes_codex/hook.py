"""The command Codex runs on ``Stop`` and ``SessionEnd``: hand the session to funes, detached.

Usage (what :func:`funes_codex.wiring.hook_command` records in ``hooks.json``)::

    python -I -m funes_codex.hook --funes-home DIR -- FUNES_ARGV...

Codex writes the event as JSON on stdin (``session_id``, ``transcript_path``, ``cwd``, …) and
waits for the command, on every turn. So this module does the least it can, with the standard
library only (no ``funes_core``, no plugin loading): it finds the rollout, starts ``funes
integrations convert codex <rollout> $FUNES_HOME/spool/codex --index`` in a new session (which
converts the whole session into the spool atomically, then starts ``funes index --harness
codex`` detached in turn) and returns. It always exits 0 and prints nothing: a memory must
never get in the way of the agent, and Codex would read what a Stop hook prints as a decision.

The rollout is ``transcript_path`` when that file exists; otherwise the newest
``rollout-*-<session_id>.jsonl`` under ``$CODEX_HOME/sessions`` (date folders newest first, so
the search stops in today's folder). Problems go to ``$FUNES_HOME/logs/hook-codex.log``, with
the converter's own output.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["find_rollout", "main", "worker_argv"]

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,200}$")
_LOG_LIMIT = 1 << 20


def _codex_home() -> Path:
    pinned = os.environ.get("CODEX_HOME", "").strip()
    if pinned:
        return Path(pinned).expanduser()
    return Path(os.environ.get("HOME") or Path.home()) / ".codex"


def _newest_first(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir(), key=lambda p: p.name, reverse=True)
    except OSError:
        return []


def find_rollout(event: Mapping[str, object], codex_home: Path | None = None) -> Path | None:
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
    root = (codex_home or _codex_home()) / "sessions"

    def search(folder: Path, depth: int) -> Path | None:
        for entry in _newest_first(folder):
            if depth and entry.is_dir():
                found = search(entry, depth - 1)
                if found is not None:
                    return found
            elif name.match(entry.name) and entry.is_file():
                return entry
        return None

    return search(root, 3)  # sessions/YYYY/MM/DD/rollout-….jsonl


def worker_argv(funes: Sequence[str], rollout: Path, funes_home: Path) -> list[str]:
    """``funes integrations convert codex <rollout> <spool> --index``: convert, then index detached."""
    spool = funes_home / "spool" / "codex"
    return [*funes, "integrations", "convert", "codex", str(rollout), str(spool), "--index"]


def _log_file(funes_home: Path) -> int | None:
    """An append-only descriptor on the hook log (rotated at 1 MiB), ``None`` when it cannot be had."""
    logs = funes_home / "logs"
    try:
        funes_home.mkdir(mode=0o700, parents=True, exist_ok=True)  # funes' state is private
        logs.mkdir(mode=0o700, exist_ok=True)
        path = logs / "hook-codex.log"
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_size > _LOG_LIMIT:
                os.replace(path, logs / "hook-codex.log.1")
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        return None


def _note(fd: int | None, message: str) -> None:
    if fd is None:
        return
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with contextlib.suppress(OSError):
        os.write(fd, f"{stamp} funes-codex hook: {message}\n".encode("utf-8", "replace"))


def _parse_args(argv: Sequence[str]) -> tuple[Path | None, list[str]]:
    """``--funes-home DIR -- FUNES...`` (a hand-rolled parser: argparse costs start-up time)."""
    funes_home: Path | None = None
    args = list(argv)
    funes: list[str] = []
    while args:
        head = args.pop(0)
        if head == "--":
            funes = args
            break
        if head == "--funes-home" and args:
            funes_home = Path(args.pop(0))
    return funes_home, funes


def _read_event() -> dict[str, object]:
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return {}
        data = json.loads(sys.stdin.buffer.read().decode("utf-8", "replace") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the hook; always returns 0 (see the module docstring)."""
    funes_home, funes = _parse_args(sys.argv[1:] if argv is None else argv)
    if funes_home is None:
        env_home = os.environ.get("FUNES_HOME", "").strip()
        funes_home = Path(env_home) if env_home else Path(os.environ.get("HOME") or Path.home()) / ".funes"
    event = _read_event()
    log = _log_file(funes_home)
    try:
        if not funes:
            _note(log, "no funes command after `--`; reinstall with `funes integrations install codex`")
            return 0
        rollout = find_rollout(event)
        if rollout is None:
            what = event.get("transcript_path") or event.get("session_id") or "an event without a session"
            _note(log, f"no rollout found for {what}")
            return 0
        env = dict(os.environ)
        env["FUNES_HOME"] = str(funes_home)
        try:
            subprocess.Popen(
                worker_argv(funes, rollout, funes_home),
                stdin=subprocess.DEVNULL,
                stdout=log if log is not None else subprocess.DEVNULL,
                stderr=subprocess.STDOUT if log is not None else subprocess.DEVNULL,
                env=env,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            _note(log, f"cannot start {funes[0]}: {exc}")
    finally:
        if log is not None:
            os.close(log)
    return 0


if __name__ == "__main__":
    sys.exit(main())

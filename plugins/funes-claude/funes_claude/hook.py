"""The command Claude Code runs on ``Stop``, ``SubagentStop`` and ``SessionEnd``.

Installed (by :class:`funes_claude.wiring.ClaudeHookInstaller`) as::

    <python> -m funes_claude.hook --funes-home <FUNES_HOME> -- <funes command...>

Claude Code waits for a hook before it carries on, so this module is split in two:

* the **hook** (what Claude Code runs) reads the event's JSON from stdin, checks that the
  transcript it names exists (``claude mcp list`` fires ``SessionEnd`` with a path that is never
  created), starts the worker in a new session with its output going to
  ``$FUNES_HOME/logs/claude-hook.log``, and exits 0, always, without waiting. It imports only
  ``json``, ``os`` and ``sys`` (the package ``__init__`` is empty of imports), so it returns in
  a few tens of milliseconds however slow or broken the rest of funes is;
* the **worker** (``--worker``) converts the session (and, on ``SubagentStop`` and
  ``SessionEnd``, its subagents) into ``$FUNES_HOME/spool/claude/`` with funes-claude's
  converter, atomically, then runs ``<funes command> index --harness claude``. Workers take a
  lock while converting, so a worker started later always writes a transcript at least as long
  as an earlier one; when another ``funes index`` holds the store lock the worker waits and
  tries again while its spool files are still waiting, so the session's last turn is not left
  behind until the next session.

Every failure is logged, never raised into Claude Code.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence

__all__ = ["HOOK_LOG", "HOOK_MODULE", "main", "run_hook", "run_worker"]

#: The module Claude Code runs; also how the installer recognises its own hooks.
HOOK_MODULE = "funes_claude.hook"
#: The log of hooks and workers, under ``$FUNES_HOME/logs/``.
HOOK_LOG = "claude-hook.log"
#: The log of the indexer runs the workers start (the same file the core's detached runs use).
INDEX_LOG = "index-claude.log"
#: A log grown past this is moved to ``<name>.1`` (one generation kept).
_LOG_LIMIT = 1 << 20
#: How long a worker keeps retrying an index run that found the store lock taken.
_RETRY_SECONDS = 120.0
#: ``funes index`` exits with this status when another run holds the store lock (EX_TEMPFAIL).
_EXIT_LOCKED = 75


def _logs_dir(funes_home: str) -> str:
    path = os.path.join(funes_home, "logs")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def _open_log(funes_home: str, name: str) -> int:
    """An append-only descriptor on ``$FUNES_HOME/logs/<name>`` (0600), rotated past 1 MiB."""
    path = os.path.join(_logs_dir(funes_home), name)
    try:
        if os.stat(path).st_size > _LOG_LIMIT:
            os.replace(path, path + ".1")
    except OSError:
        pass
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)


def _log(funes_home: str, message: str) -> None:
    """One line in the hook log; a log that cannot be written is not worth failing for."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    line = f"{stamp}Z [{os.getpid()}] {message}\n".encode("utf-8", "replace")
    try:
        fd = _open_log(funes_home, HOOK_LOG)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass


def _parse(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """``--name value`` options up to ``--``, then the funes command. Raises ``ValueError``."""
    options: dict[str, str] = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--":
            return options, args
        if arg == "--worker":
            options["worker"] = "1"
        elif arg.startswith("--") and args:
            options[arg[2:]] = args.pop(0)
        else:
            raise ValueError(f"unexpected argument {arg!r}")
    return options, []


def _spawn_detached(argv: list[str], log_fd: int) -> int:
    """Start ``argv`` in its own session, stdin from /dev/null, output to ``log_fd``; never wait.

    ``posix_spawn`` keeps the hook light (``subprocess`` alone costs more to import than the
    rest of the hook); where it cannot start a new session, ``subprocess`` does the same.
    """
    if hasattr(os, "posix_spawn") and hasattr(os, "POSIX_SPAWN_DUP2"):
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, log_fd, 1),
            (os.POSIX_SPAWN_DUP2, log_fd, 2),
        ]
        try:
            return os.posix_spawn(argv[0], argv, dict(os.environ), file_actions=actions, setsid=True)
        except NotImplementedError:
            pass
    import subprocess

    flags = 0
    if os.name == "nt":
        flags = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=log_fd,
        stderr=log_fd,
        close_fds=True,
        start_new_session=os.name != "nt",
        creationflags=flags,
    )
    return proc.pid


def _read_event() -> dict[str, object]:
    """The hook's JSON from stdin (``{}`` when there is none, e.g. run from a terminal)."""
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    raw = sys.stdin.buffer.read()
    if not raw.strip():
        return {}
    event = json.loads(raw)
    return event if isinstance(event, dict) else {}


def run_hook(funes_home: str, funes_command: list[str]) -> int:
    """The foreground hook: check the event, start the worker, return 0 whatever happens."""
    try:
        event = _read_event()
        name = str(event.get("hook_event_name") or "?")
        transcript = event.get("transcript_path")
        if not isinstance(transcript, str) or not os.path.isfile(transcript):
            _log(funes_home, f"{name}: no transcript at {transcript!r}; nothing to convert")
            return 0
        argv = [sys.executable, "-m", HOOK_MODULE, "--worker", "--funes-home", funes_home]
        argv += ["--event", name, "--transcript", transcript]
        agent = event.get("agent_transcript_path")
        if isinstance(agent, str) and agent:
            argv += ["--agent-transcript", agent]
        argv += ["--", *funes_command]
        log_fd = _open_log(funes_home, HOOK_LOG)
        try:
            pid = _spawn_detached(argv, log_fd)
        finally:
            os.close(log_fd)
        _log(funes_home, f"{name}: {transcript}: worker {pid} started")
    except BaseException as exc:  # broad on purpose: a hook must never fail the agent
        _log(funes_home, f"hook failed: {type(exc).__name__}: {exc}")
    return 0


# -- the worker (detached; free to import what it needs) ------------------------------------------


def _targets(event: str, transcript: str, agent_transcript: str | None) -> list[str]:
    """The transcripts to convert for one event: the session, its subagents, or both."""
    main = [transcript]
    folder = os.path.join(os.path.dirname(transcript), os.path.basename(transcript)[: -len(".jsonl")])
    subagents_dir = os.path.join(folder, "subagents")
    subagents: list[str] = []
    if os.path.isdir(subagents_dir):
        subagents = sorted(
            os.path.join(subagents_dir, n) for n in os.listdir(subagents_dir) if n.endswith(".jsonl")
        )
    if event == "SubagentStop":
        if agent_transcript and os.path.isfile(agent_transcript):
            return [agent_transcript]
        return subagents or main
    if event == "SessionEnd":
        return main + subagents
    return main


def run_worker(
    funes_home: str, funes_command: list[str], event: str, transcript: str, agent_transcript: str | None
) -> int:
    """Convert the event's transcripts into the spool, then index them (retrying while busy)."""
    import subprocess
    from pathlib import Path

    from filelock import FileLock, Timeout

    from funes_claude.converter import ClaudeConverter

    converter = ClaudeConverter()
    home = Path(funes_home)
    lock = FileLock(os.path.join(_logs_dir(funes_home), "claude-hook.lock"))
    written: list[Path] = []
    try:
        with lock.acquire(timeout=60):
            for target in _targets(event, transcript, agent_transcript):
                for ref in converter.sessions_in(Path(target)):
                    for write in converter.write_spool(ref, home):
                        if write.changed:
                            written.append(write.path)
    except Timeout:
        _log(funes_home, f"{event}: another worker held the conversion lock for 60 s; giving up")
        return 1
    if not written:
        _log(funes_home, f"{event}: {transcript}: spool already up to date")
        return 0
    _log(funes_home, f"{event}: wrote {len(written)} spool file(s): {', '.join(p.name for p in written)}")
    argv = [*funes_command, "index", "--harness", converter.id]
    env = dict(os.environ)
    env["FUNES_HOME"] = funes_home
    deadline = time.monotonic() + _RETRY_SECONDS
    pause = 0.5
    while True:
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=env, check=False)
        except OSError as exc:
            _log(funes_home, f"{event}: cannot run {argv[0]}: {exc}")
            return 1
        log_fd = _open_log(funes_home, INDEX_LOG)
        try:
            os.write(log_fd, done.stdout + done.stderr)
        finally:
            os.close(log_fd)
        waiting = [p for p in written if p.exists()]
        busy = done.returncode == _EXIT_LOCKED
        if done.returncode == 0 or not waiting or not busy:
            _log(funes_home, f"{event}: index exited {done.returncode}; {len(waiting)} spool file(s) left")
            return 0 if done.returncode == 0 else 1
        if time.monotonic() >= deadline:
            _log(funes_home, f"{event}: the store stayed locked; the next hook will index the spool")
            return 1
        time.sleep(pause)  # another funes index holds the store lock: let it finish, then drain
        pause = min(pause * 2, 8.0)


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        options, funes_command = _parse(args)
    except ValueError as exc:
        print(f"usage: python -m {HOOK_MODULE} --funes-home DIR -- FUNES...: {exc}", file=sys.stderr)
        return 0
    funes_home = options.get("funes-home") or os.environ.get("FUNES_HOME") or ""
    if not funes_home:
        funes_home = os.path.join(os.path.expanduser("~"), ".funes")
    if not funes_command:
        funes_command = ["funes"]
    if "worker" not in options:
        return run_hook(funes_home, funes_command)
    try:
        return run_worker(
            funes_home,
            funes_command,
            options.get("event", "?"),
            options.get("transcript", ""),
            options.get("agent-transcript"),
        )
    except BaseException as exc:  # broad on purpose: log it where the user will look
        _log(funes_home, f"worker failed: {type(exc).__name__}: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())

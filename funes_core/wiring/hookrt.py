"""The per-turn hook runtime: what every agent runs after a turn, in one place, standard library only.

An agent waits for its hooks (Claude Code, Codex and Hermes all do), on every turn. So a funes hook
must return in tens of milliseconds, print nothing (Codex reads a Stop hook's output as a
decision), and never fail the turn. It therefore does the least it can:

1. resolve ``FUNES_HOME`` (``--funes-home`` recorded at install, else ``$FUNES_HOME``, else
   ``~/.funes``) and the funes command (recorded after ``--``, else ``$FUNES_BIN``, else
   ``funes``) - the one copy of those rules;
2. read the agent's event (JSON on stdin; nothing, a terminal or garbage count as ``{}``);
3. ask the plugin's ``locate`` (standard library too) which transcript the event is about;
4. start ``<funes> integrations convert ID SOURCE [--also P]... [--session S]... --index`` in a
   session of its own, its output appended to ``$FUNES_HOME/logs/<id>-hook.log`` (0600, rotated
   at 1 MiB), with ``FUNES_HOME`` and ``FUNES_BIN`` set so the worker and the indexer it starts
   run the very funes recorded at install;
5. exit 0, whatever happened.

The worker (a full funes) converts the session under a lock and makes sure an indexer runs
(:mod:`funes_core.wiring.spooling`). A plugin's hook module is a few lines::

    from funes_core.wiring.hookrt import Sources, main
    from funes_codex.agent import CODEX

    def locate(event, environ): ...   # -> Sources | None

    if __name__ == "__main__":
        raise SystemExit(main(CODEX.id, locate))

Nothing here may import ``funes_core``'s heavier modules, a plugin, or a third-party package; a
test runs a hook with ``-X importtime`` to keep it so.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from funes_core import portable
from funes_core.homepath import resolve_funes_home
from funes_core.wiring.overrides import drift_from_record

__all__ = [
    "LOG_LIMIT",
    "HookRun",
    "Sources",
    "main",
    "resolve_funes_command",
    "rotating_log",
    "spawn_detached",
    "worker_argv",
]

#: A log grown past this is moved to ``<name>.1`` (one generation kept).
LOG_LIMIT = 1 << 20


def resolve_funes_command(environ: Mapping[str, str] | None = None, given: Sequence[str] = ()) -> list[str]:
    """``given`` (recorded after ``--``), else ``$FUNES_BIN`` split like a shell, else ``funes``."""
    if given:
        return list(given)
    env = os.environ if environ is None else environ
    pinned = env.get("FUNES_BIN", "").strip()
    return shlex.split(pinned) if pinned else ["funes"]


def rotating_log(path: Path) -> int:
    """An append-only descriptor on ``path`` (0600, folder 0700), rotated past :data:`LOG_LIMIT`."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        if path.stat().st_size > LOG_LIMIT:
            os.replace(path, path.with_name(path.name + ".1"))
    except OSError:
        pass
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)


def spawn_detached(
    argv: Sequence[str], *, env: Mapping[str, str], log: Path, pass_fds: Sequence[int] = ()
) -> int:
    """Start ``argv`` detached (:func:`funes_core.portable.spawn_detached`), stdin from nothing, output
    appended to ``log`` (rotated past :data:`LOG_LIMIT`); never wait. Returns the child's pid.

    The agent must not wait for it, be killed with it, or keep its pipes open. ``pass_fds`` (POSIX)
    are descriptors the child inherits: the core hands its background embedding worker the lock
    it already holds.
    """
    fd = rotating_log(log)
    try:
        return portable.spawn_detached(argv, env=env, output=fd, pass_fds=pass_fds)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class Sources:
    """What a hook event is about: the transcript(s) to convert, and optionally which sessions in them."""

    paths: tuple[str, ...]
    #: Only these sessions of the transcripts (an agent keeping many sessions in one database).
    sessions: tuple[str, ...] = ()
    #: A short description for the log ("Stop", "SessionEnd", ...).
    what: str = ""


def worker_argv(ident: str, funes: Sequence[str], sources: Sources) -> list[str]:
    """``<funes> integrations convert ID SOURCE [--also P]... [--session S]... --index``."""
    argv = [*funes, "integrations", "convert", ident, sources.paths[0]]
    for extra in sources.paths[1:]:
        argv += ["--also", extra]
    for session in sources.sessions:
        argv += ["--session", session]
    return [*argv, "--index"]


@dataclass(slots=True)
class HookRun:
    """One run of a per-turn hook: where funes is, what the agent said, a log and a way to start work."""

    ident: str
    funes_home: Path
    funes_command: list[str]
    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))

    @classmethod
    def from_argv(cls, ident: str, argv: Sequence[str], environ: Mapping[str, str] | None = None) -> HookRun:
        """Parse ``[--funes-home DIR] [-- FUNES...]`` (hand-rolled: argparse costs start-up time).

        Unknown options are ignored (a hook recorded by a newer funes must still run).
        """
        env = dict(os.environ if environ is None else environ)
        args = list(argv)
        given_home: str | None = None
        funes: list[str] = []
        while args:
            head = args.pop(0)
            if head == "--":
                funes = args
                break
            if head == "--funes-home" and args:
                given_home = args.pop(0)
        return cls(ident, resolve_funes_home(env, given_home), resolve_funes_command(env, funes), env)

    @property
    def log_path(self) -> Path:
        return self.funes_home / "logs" / f"{self.ident}-hook.log"

    def log(self, message: str) -> None:
        """One line in the hook log; a log that cannot be written is not worth failing the agent for."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = f"{stamp} [{os.getpid()}] {self.ident} hook: {message}\n".encode("utf-8", "replace")
        try:
            fd = rotating_log(self.log_path)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        except OSError:
            pass

    def event(self, stream: IO[bytes] | None = None) -> dict[str, object]:
        """The agent's JSON event from stdin: ``{}`` for none, a terminal, or anything not an object."""
        if stream is None:
            if sys.stdin is None or sys.stdin.isatty():
                return {}
            stream = sys.stdin.buffer
        try:
            raw = stream.read()
            data = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
        except (OSError, ValueError) as exc:
            self.log(f"unreadable event ({type(exc).__name__}); ignored")
            return {}
        return data if isinstance(data, dict) else {}

    def child_env(self) -> dict[str, str]:
        """This environment with FUNES_HOME and FUNES_BIN pinned to what the hook was installed with."""
        env = dict(self.environ)
        env["FUNES_HOME"] = str(self.funes_home)
        env["FUNES_BIN"] = shlex.join(self.funes_command)
        return env

    def spawn(self, argv: Sequence[str]) -> int:
        """Start ``argv`` detached (see :func:`spawn_detached`), its output in this hook's log."""
        return spawn_detached(argv, env=self.child_env(), log=self.log_path)


#: What a plugin provides: the transcript an event is about (``None``: nothing to do).
Locate = Callable[[Mapping[str, object], Mapping[str, str]], "Sources | None"]


def main(
    ident: str,
    locate: Locate,
    argv: Sequence[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    stdin: IO[bytes] | None = None,
) -> int:
    """Run one per-turn hook for integration ``ident`` (see the module docstring); always returns 0."""
    run: HookRun | None = None
    try:
        run = HookRun.from_argv(ident, sys.argv[1:] if argv is None else argv, environ)
        for line in drift_from_record(run.funes_home, ident, run.environ):
            run.log(f"{line}; following the agent's current value (run `funes integrations install {ident}`)")
        event = run.event(stdin)
        sources = locate(event, run.environ)
        name = str(event.get("hook_event_name") or event.get("event") or "event")
        if sources is None or not sources.paths:
            run.log(f"{name}: no transcript to convert")
            return 0
        pid = run.spawn(worker_argv(ident, run.funes_command, sources))
        run.log(f"{sources.what or name}: {sources.paths[0]}: worker {pid} started")
    except BaseException as exc:  # broad on purpose: a hook must never fail the agent's turn
        if run is not None:
            run.log(f"failed: {type(exc).__name__}: {exc}")
    return 0

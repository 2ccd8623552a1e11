"""Running a plugin's per-turn hook as the agent does, against a stand-in for funes that records its call.

The hook requirements (``hook:*``, ``location:hook``) run the installed hook module as a
subprocess: the agent's event on stdin, the throwaway HOME in ``HOME``, the FUNES_HOME and funes
command recorded at install on its command line. The funes command is :data:`RECORDER`, a small
script that writes down the argv and environment it was started with, waits at a gate (so the
kit can tell a detached worker from one the hook waited for), and exits. The kit then reads the
recorded ``integrations convert ID SOURCE [--also P]... [--session S]... --index`` and performs
that conversion itself with the converter under test (:func:`parse_worker`), so "the spool is
written" is checked without starting a real indexer.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from funes_core import portable
from funes_core.host.agent import Agent
from funes_core.host.api import InstallContext, SessionRef

__all__ = [
    "GATE_SECONDS",
    "RECORDER",
    "HookResult",
    "HookWorld",
    "Worker",
    "find_hook_module",
    "isolated_import",
    "location_variables",
    "moves",
    "parse_worker",
    "recorder_command",
    "relocate",
    "run_hook",
    "same_file",
]

#: How long the recorder waits at its gate before giving up (a hook that waits for its worker
#: returns only after this).
GATE_SECONDS = 20.0
#: How long the kit waits for a hook to return, and for a worker it started to show up.
HOOK_TIMEOUT = 60.0
WORKER_APPEARS = 10.0

#: The stand-in for funes: ``python RECORDER RECORDS GATE [argv...]``.
RECORDER = f"""\
import json, os, sys, time
records, gate = sys.argv[1], sys.argv[2]
name = os.path.join(records, str(os.getpid()))
data = {{"argv": sys.argv[3:], "funes_home": os.environ.get("FUNES_HOME"), "pid": os.getpid()}}
with open(name + ".tmp", "w", encoding="utf-8") as fh:
    json.dump(data, fh)
os.replace(name + ".tmp", name + ".json")
deadline = time.monotonic() + {GATE_SECONDS!r}
while not os.path.exists(gate) and time.monotonic() < deadline:
    time.sleep(0.02)
with open(name + ".done", "w", encoding="utf-8") as fh:
    fh.write("done")
"""

_MODULE = re.compile(r"""-m["',\s]+([A-Za-z_]\w*(?:\.\w+)+)""")


def find_hook_module(written: Iterable[bytes], declared: str | None) -> str | None:
    """The hook module an installed hook runs: ``declared`` (``Hooks.module``), else what install wrote.

    Every file install created or changed (``written``) is searched for ``-m <dotted.module>`` (a
    command line, a JSON argv list, a script's array); the first that Python can import is the
    hook module. ``None``: the installed hook runs no module (it runs funes itself).
    """
    if declared:
        return declared
    for text in written:
        for match in _MODULE.finditer(text.decode("utf-8", "replace")):
            name = match.group(1)
            try:
                if importlib.util.find_spec(name) is not None:
                    return name
            except (ImportError, ValueError):
                continue
    return None


@functools.cache
def isolated_import(module: str) -> bool:
    """Whether ``python -I`` (what an agent runs) can import ``module``: not when only PYTHONPATH
    names it (a test environment without an install; ``funes integrations install`` refuses a hook
    the agent's interpreter cannot import)."""
    probe = (
        "import importlib.util, sys\n"
        "try:\n"
        f"    found = importlib.util.find_spec({module!r}) is not None\n"
        "except ImportError:\n"
        "    found = False\n"
        "sys.exit(0 if found else 3)\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", probe], capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return True
    return done.returncode != 3


@dataclass(frozen=True, slots=True)
class Worker:
    """One ``integrations convert`` a hook started, as recorded."""

    argv: list[str]
    funes_home: str | None
    #: Whether it runs in a session of its own and was still held at the gate when the hook returned.
    detached: bool
    ident: str = ""
    sources: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    index: bool = False
    #: Why the argv is not an ``integrations convert`` (``""``: it is).
    problem: str = ""


def parse_worker(argv: list[str], funes_home: str | None, detached: bool) -> Worker:
    """Read ``integrations convert ID SOURCE [OUT_DIR] [--also P]... [--session S]... [--index]``."""
    if argv[:2] != ["integrations", "convert"] or len(argv) < 4:
        return Worker(argv, funes_home, detached, problem=f"not `integrations convert ID SOURCE`: {argv}")
    ident, rest = argv[2], argv[3:]
    sources: list[str] = []
    sessions: list[str] = []
    index = False
    positional: list[str] = []
    while rest:
        head = rest.pop(0)
        if head == "--index":
            index = True
        elif head in ("--also", "--session") and rest:
            (sources if head == "--also" else sessions).append(rest.pop(0))
        else:
            positional.append(head)
    # The first positional is SOURCE; a second (OUT_DIR) must be the spool, which the kit checks.
    return Worker(argv, funes_home, detached, ident, [positional[0], *sources], sessions, index)


@dataclass(slots=True)
class HookResult:
    """What one run of the hook did: its exit, its output and the workers it started."""

    returncode: int
    stdout: str
    stderr: str
    workers: list[Worker]


def run_hook(
    argv: list[str], *, stdin: bytes, env: dict[str, str], records: Path, gate: Path, wait: bool, cwd: Path
) -> HookResult:
    """Run ``argv`` as the agent runs its hook; with ``wait``, collect the workers it started.

    The gate is closed while the hook runs: a worker the hook waited for has passed the gate's
    timeout (and so is not :attr:`Worker.detached`). ``records`` is emptied first.
    """
    records.mkdir(parents=True, exist_ok=True)
    for stale in records.iterdir():
        stale.unlink()
    gate.unlink(missing_ok=True)
    try:
        done = subprocess.run(
            argv, input=stdin, capture_output=True, env=env, cwd=cwd, timeout=HOOK_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        gate.touch()
        raise AssertionError(f"the hook did not return within {HOOK_TIMEOUT:g} s") from None
    workers: list[Worker] = []
    if wait:
        deadline = time.monotonic() + WORKER_APPEARS
        while time.monotonic() < deadline and not list(records.glob("*.json")):
            time.sleep(0.05)
        time.sleep(0.3)  # a second worker started at once
        for record in sorted(records.glob("*.json")):
            data = json.loads(record.read_text(encoding="utf-8"))
            # Detached: still held at the gate when the hook had returned, and leading a session of
            # its own (the agent can neither wait for it nor kill it with its process group; Windows
            # has no sessions: spawn_detached starts a new process group there).
            alone = portable.SYSTEM == "win32" or portable.leads_a_session(int(data["pid"]))
            detached = alone and not record.with_suffix(".done").exists()
            workers.append(parse_worker(list(data["argv"]), data.get("funes_home"), detached))
    gate.touch()
    # Held workers leave at once now; one the hook killed never will, so do not wait long for it.
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and len(list(records.glob("*.done"))) < len(
        list(records.glob("*.json"))
    ):
        time.sleep(0.05)
    return HookResult(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
        workers,
    )


def recorder_command(folder: Path) -> tuple[tuple[str, ...], Path, Path]:
    """The stand-in funes command, its records folder and its gate, under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "funes-recorder.py"
    script.write_text(RECORDER, encoding="utf-8")
    records, gate = folder / "records", folder / "gate"
    return (sys.executable, str(script), str(records), str(gate)), records, gate


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name the same file (the hook may hand over a resolved or a relative path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).absolute() == Path(b).absolute()


def moves(agent: Agent | None, home: Path) -> list[tuple[str, str, Path]]:
    """``(location, variable, default path)`` for each variable that moves a place the fixture HOME holds.

    A location whose default is the HOME itself (``GEMINI_CLI_HOME``: the home Gemini uses) counts
    only when no other location reads its variable (Claude Code's ``CLAUDE_CONFIG_DIR`` also moves
    ``.claude``, which is what it is tested with).
    """
    if agent is None:
        return []
    named_elsewhere = {var for loc in agent.locations if loc.default.strip("~/") for var in loc.env}
    out: list[tuple[str, str, Path]] = []
    for loc in agent.locations:
        whole_home = not loc.default.strip("~/") and loc.under is None
        if not loc.env or (not loc.default.strip("~/") and not whole_home):
            continue
        default = agent.path(loc.name, home, environ={})
        if whole_home:
            out.extend((loc.name, var, home) for var in loc.env if var not in named_elsewhere)
        elif default.exists() and default != home:
            out.extend((loc.name, var, default) for var in loc.env)
    return out


def relocate(home: Path, source: Path, default: Path) -> Path:
    """Move the copy in ``home`` of ``default`` (a path under the fixture HOME ``source``) out of it.

    Returns the new place, beside ``home``; for the HOME itself, its whole content moves.
    """
    moved = home.parent / "elsewhere" / (default.name if default != source else "agent-home")
    moved.parent.mkdir(parents=True, exist_ok=True)
    if default == source:
        shutil.move(home, moved)
        home.mkdir()
    else:
        shutil.move(home / default.relative_to(source), moved)
    return moved


def location_variables(*agents: Agent | None) -> set[str]:
    """Every variable the agents' locations read (cleared, so the developer's own never leaks in)."""
    return {var for agent in agents if agent is not None for loc in agent.locations for var in loc.env}


@dataclass(slots=True)
class HookWorld:
    """A HOME with the agent's sessions, the hook installed into it, and how to run that hook."""

    ctx: InstallContext
    home: Path
    argv: list[str]
    env: dict[str, str]
    records: Path
    gate: Path
    #: The events to send, each with the session it is about: the newest and the oldest session
    #: discovered, so a hook that picks a session by any rule of its own misses one of them.
    events: list[tuple[SessionRef, dict[str, object]]]

    def run(self, stdin: bytes, *, wait: bool = True) -> HookResult:
        return run_hook(
            self.argv,
            stdin=stdin,
            env=self.env,
            records=self.records,
            gate=self.gate,
            wait=wait,
            cwd=self.home,
        )

    def worker_for(
        self, result: HookResult, ref: SessionRef, event: dict[str, object], ident: str, where: str = ""
    ) -> Worker:
        """The worker of ``result`` that converts ``ref``; fails with what the hook did instead."""
        shown = json.dumps(event)[:300]
        assert result.workers, (
            f"the hook started no worker for the event {shown}{where} (it must read the event on stdin "
            "and start `funes integrations convert`); its log: " + self.log_tail(ident)
        )
        bad = [w.problem for w in result.workers if w.problem]
        assert not bad, f"the hook started something else{where}: {bad[0]}"
        for worker in result.workers:
            if any(same_file(s, ref.path) for s in worker.sources) and (
                not worker.sessions or ref.session_id in worker.sessions
            ):
                assert worker.ident == ident, f"the worker converts for {worker.ident!r}, not {ident!r}"
                return worker
        found = "; ".join(f"{w.sources} (sessions {w.sessions or 'all'})" for w in result.workers)
        raise AssertionError(
            f"the event names {ref.path.name} (session {ref.session_id}){where}, "
            f"but the hook converted {found}"
        )

    def log_tail(self, ident: str) -> str:
        log = self.ctx.funes_home / "logs" / f"{ident}-hook.log"
        try:
            lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return "(none)"
        return lines[-1][:300] if lines else "(empty)"

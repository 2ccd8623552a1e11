"""Borrowing an installed agent for ``funes ask``: which one, and running it once, streaming.

The core knows no agent: an integration's tool registrar says whether its agent can answer
(:attr:`~funes_core.host.api.ToolRegistrar.ask_cli`), how to run it in isolation
(:meth:`~funes_core.host.api.ToolRegistrar.ask_argv`) and how to read its answer from its output
(:meth:`~funes_core.host.api.ToolRegistrar.ask_answer`). This module picks the agent, checks that
its program is on PATH before anything is started (a missing one is named, with the agents that
would work instead), then runs it in an empty temporary folder with the prompt on stdin and
hands each piece of the answer to the caller as it arrives.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from funes_core.host.api import ID_PATTERN, InstallContext, IntegrationError, ToolRegistrar
from funes_core.host.manager import FunesPluginManager

__all__ = ["PREFERRED", "AskAgent", "AskError", "ask_agents", "choose_agent", "run_agent"]

#: Tried first, in this order, when no ``--agent`` is given; any other capable agent after them.
PREFERRED = ("claude", "codex")


class AskError(Exception):
    """``funes ask`` cannot go on; ``str()`` is the one line shown, the exit status is 1."""


@dataclass(frozen=True, slots=True)
class AskAgent:
    """An agent that can answer: its id, its name, its program on PATH and its registrar."""

    ident: str
    label: str
    program: str
    registrar: type[ToolRegistrar]


def ask_agents(pm: FunesPluginManager) -> dict[str, type[ToolRegistrar]]:
    """Installed integrations whose agent can answer ``funes ask``, preferred ones first."""
    found = {
        ident: integ.tool_registrar
        for ident, integ in pm.integrations().items()
        if integ.tool_registrar is not None and integ.tool_registrar.ask_cli
    }
    order = [i for i in PREFERRED if i in found] + sorted(i for i in found if i not in PREFERRED)
    return {ident: found[ident] for ident in order}


def _alternatives(agents: dict[str, type[ToolRegistrar]], but: str, path: str | None) -> str:
    ready = [i for i, reg in agents.items() if i != but and shutil.which(reg.ask_cli or "", path=path)]
    if ready:
        return "; use " + " or ".join(f"--agent {i}" for i in ready)
    others = [i for i in agents if i != but]
    if others:
        programs = ", ".join(f"{agents[i].label} ({agents[i].ask_cli})" for i in others)
        return f"; none of the other agents is installed either: install {programs}"
    return ""


def choose_agent(pm: FunesPluginManager, wanted: str | None, *, path: str | None = None) -> AskAgent:
    """The agent to run: ``wanted``, else the first capable one whose program is on ``path``.

    Raises :class:`AskError` when the id is unknown, its integration cannot answer, or its
    program is not installed; the message suggests the agents that would work instead.
    """
    agents = ask_agents(pm)
    if wanted is None:
        for ident, registrar in agents.items():
            program = shutil.which(registrar.ask_cli or "", path=path)
            if program:
                return AskAgent(ident, registrar.label, program, registrar)
        if not agents:
            raise AskError(
                "no installed integration can answer (funes ask borrows Claude Code or Codex): "
                "install one with `funes integrations install claude` (or codex)"
            )
        wanted_programs = ", ".join(f"{reg.label} ({reg.ask_cli})" for reg in agents.values())
        raise AskError(f"no agent to ask: none of {wanted_programs} is on PATH; install one of them")
    if not ID_PATTERN.fullmatch(wanted):
        raise AskError(f"--agent {wanted!r} is not an integration id (ids match [a-z0-9_-]+)")
    found = agents.get(wanted)
    if found is None:
        capable = " or ".join(f"--agent {i}" for i in agents) or "none is installed"
        integ = pm.integration(wanted)
        if integ is None:
            raise AskError(f"--agent {wanted}: no installed integration provides it (use {capable})")
        raise AskError(f"--agent {wanted}: {integ.label} cannot answer funes ask (use {capable})")
    program = shutil.which(found.ask_cli or "", path=path)
    if program is None:
        raise AskError(
            f"--agent {wanted}: {found.label} is not installed (no {found.ask_cli} on PATH)"
            + _alternatives(agents, wanted, path)
        )
    return AskAgent(wanted, found.label, program, found)


def _lines(stream: Iterator[str] | None) -> Iterator[str]:
    yield from stream or ()


def _converse(
    child: subprocess.Popen[str],
    registrar: ToolRegistrar,
    prompt: str,
    write: Callable[[str], None],
    agent: AskAgent,
) -> tuple[int, list[str]]:
    """Feed the prompt, drain stderr, hand the answer over as it comes.

    Returns the child's exit status and the last lines it wrote on stderr.
    """
    tail: deque[str] = deque(maxlen=20)

    def feed() -> None:
        assert child.stdin is not None
        try:
            child.stdin.write(prompt)
            child.stdin.close()
        except (BrokenPipeError, OSError):
            pass  # the child exited early: its status and stderr say why

    def drain() -> None:
        assert child.stderr is not None
        for line in child.stderr:
            if line.strip():
                tail.append(line.rstrip())

    threads = [threading.Thread(target=feed, daemon=True), threading.Thread(target=drain, daemon=True)]
    for thread in threads:
        thread.start()
    try:
        for piece in registrar.ask_answer(_lines(child.stdout)):
            write(piece)
        if child.stdout is not None:
            for _ in child.stdout:  # what the reader left: the child must not block on a full pipe
                pass
    except IntegrationError as exc:
        child.kill()
        raise AskError(f"{agent.ident}: {exc}") from None
    except BaseException:
        child.kill()
        raise
    status = child.wait()
    for thread in threads:
        thread.join(timeout=5)
    return status, list(tail)


def run_agent(
    agent: AskAgent,
    prompt: str,
    ctx: InstallContext,
    write: Callable[[str], None],
) -> None:
    """Run ``agent`` once on ``prompt`` and hand each piece of its answer to ``write``.

    Raises :class:`AskError` when the program cannot start, reports an error in its output, or
    exits non-zero (the message quotes the last line it wrote on stderr). Ctrl-C stops the child.
    """
    registrar = agent.registrar()
    try:
        argv = registrar.ask_argv(agent.program, ctx)
    except IntegrationError as exc:
        raise AskError(f"{agent.ident}: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="funes-ask-") as scratch:
        try:
            child = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=Path(scratch),
                env=ctx.env(),
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
            )
        except OSError as exc:
            raise AskError(f"{agent.ident}: cannot run {agent.program}: {exc.strerror or exc}") from None
        with child:  # closes the three pipes and waits, whatever happens
            status, tail = _converse(child, registrar, prompt, write, agent)
    if status != 0:
        last = tail[-1] if tail else "no message on stderr"
        raise AskError(f"{agent.ident}: {agent.label} exited with status {status}: {last}")

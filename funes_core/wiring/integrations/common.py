"""What the ``funes integrations`` subcommands share: the orchestrator, the user, the subprocess runner.

Each subcommand lives in its own module (``install``, ``remove``, ``listing``, ``info``,
``convert``, ``check``) as a function over an :class:`Orchestrator`. The orchestration lives away
from the CLI, so tests drive it with a fake terminal and a fake subprocess runner. What the main
subcommands do:

* **install** resolves the id (a plugin already installed, else the catalog's distribution, or
  ``--from PATH|WHEEL`` / ``--dist NAME``), asks before trusting anything the catalog does not
  vouch for, installs it with the standard installer into the running environment, then runs the
  tool registrar, the hook installer and the converter (seeding the spool, newest first) and
  builds the first index by running ``funes index --harness ID`` in a subprocess. Running it
  twice changes nothing the second time.
* **remove** undoes the wiring; it never deletes the memory, the spool or the agent's own
  transcripts.
* **check** runs the funes-memory-contracts suite against the installed plugin in a fresh pytest
  process and prints one line per requirement.

Plugin code is called at one boundary (:meth:`Orchestrator.call`), which turns an
:class:`~funes_core.host.api.IntegrationError` into its one-line message and any other
exception into a message naming the plugin's distribution.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from funes_core.host.api import (
    ID_PATTERN,
    InstallContext,
    IntegrationError,
    Status,
    WiringState,
)
from funes_core.host.catalog import Catalog, load_catalog
from funes_core.host.manager import FunesPluginManager, Integration

__all__ = ["UI", "InstallError", "Orchestrator", "RunResult", "Runner", "run_subprocess", "state_label"]

T = TypeVar("T")


class InstallError(Exception):
    """A failure shown to the user as one line (``funes: <message>``), exit status 1."""


@dataclass(frozen=True, slots=True)
class RunResult:
    returncode: int
    #: Combined stdout and stderr when captured; empty when streamed to the terminal.
    output: str = ""

    def last_line(self) -> str:
        lines = [line for line in self.output.strip().splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""


class Runner(Protocol):
    """Runs a subprocess (the package installer, ``funes index``, pytest); tests replace it."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        stream: bool = False,
    ) -> RunResult: ...


def run_subprocess(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stream: bool = False,
) -> RunResult:
    """Run ``argv``; with ``stream`` its output goes straight to our terminal (progress bars)."""
    try:
        if stream:
            done = subprocess.run(list(argv), env=dict(env) if env else None, cwd=cwd, check=False)
            return RunResult(done.returncode)
        captured = subprocess.run(
            list(argv),
            env=dict(env) if env else None,
            cwd=cwd,
            check=False,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
    except OSError as exc:
        return RunResult(127, f"cannot run {argv[0]}: {exc.strerror or exc}")
    return RunResult(captured.returncode, captured.stdout or "")


@dataclass(slots=True)
class UI:
    """How orchestration talks to the user; the CLI wires it to the terminal, tests to lists."""

    out: Callable[[str], None]
    err: Callable[[str], None]
    #: Whether a person can answer a prompt (stdin and stderr are terminals).
    is_terminal: Callable[[], bool]
    #: Ask a yes/no question; only called when :attr:`is_terminal` says so.
    confirm: Callable[[str], bool]
    #: Whether to draw progress bars (stderr is a terminal).
    progress: bool = False


@dataclass(slots=True)
class Orchestrator:
    """What every ``funes integrations`` subcommand works with: the plugins, the user, the runner,
    the catalog and the environment, and the helpers they share."""

    pm: FunesPluginManager
    ui: UI
    runner: Runner = run_subprocess
    catalog: Catalog = field(default_factory=load_catalog)
    environ: Mapping[str, str] | None = None

    def context(self, memory: str | None = None) -> InstallContext:
        return InstallContext.from_environment(memory=memory, environ=self.environ)

    def env(self, ctx: InstallContext) -> dict[str, str]:
        env = dict(os.environ if self.environ is None else self.environ)
        env["HOME"] = str(ctx.home)
        env["FUNES_HOME"] = str(ctx.funes_home)
        return env

    def require(self, ident: str) -> Integration:
        if not ID_PATTERN.fullmatch(ident):
            raise InstallError(f"{ident!r} is not an integration id (ids match [a-z0-9_-]+)")
        integ = self.pm.integration(ident)
        if integ is not None:
            return integ
        installed = ", ".join(sorted(self.pm.integrations())) or "none"
        hint = ""
        if self.catalog.get(ident) is not None:
            hint = f"; install it with `funes integrations install {ident}`"
        raise InstallError(f"no installed plugin provides {ident!r} (installed: {installed}){hint}")

    def call(self, integ: Integration, role: str, action: Callable[[], T]) -> T:
        """Run plugin code; turn its failures into one line that names who to tell."""
        try:
            return action()
        except IntegrationError as exc:
            raise InstallError(f"{integ.id}: {exc}") from None
        except Exception as exc:  # broad on purpose: the isolation boundary around plugin code
            raise InstallError(
                f"{integ.id}: the {role} of {integ.origin} failed: {type(exc).__name__}: {exc} "
                "(report this to the plugin author)"
            ) from None

    @staticmethod
    def record_path(ctx: InstallContext, ident: str) -> Path:
        """``$FUNES_HOME/integrations/<id>.json``: what was installed, from where, bound to what."""
        return ctx.funes_home / "integrations" / f"{ident}.json"

    def read_record(self, ctx: InstallContext, ident: str) -> dict[str, Any] | None:
        path = self.record_path(ctx, ident)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self.ui.err(f"funes: ignoring unreadable install record {path}: {exc}")
            return None
        return data if isinstance(data, dict) else None

    def write_record(self, ctx: InstallContext, ident: str, data: dict[str, Any]) -> bool:
        from funes_core.files import atomic_write_text
        from funes_core.home import ensure_private_dir

        path = self.record_path(ctx, ident)
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        try:
            if path.read_text(encoding="utf-8") == text:
                return False
        except OSError:
            pass
        ensure_private_dir(path.parent)
        atomic_write_text(path, text)
        return True

    def status(self, integ: Integration, ctx: InstallContext) -> tuple[bool | None, str, str, str]:
        def safe(role: str, fn: Callable[[], Status]) -> Status:
            try:
                return self.call(integ, role, fn)
            except InstallError as exc:
                return Status(WiringState.BROKEN, str(exc))

        found: bool | None = None
        if integ.converter is not None:
            converter = integ.converter
            try:
                found = self.call(integ, "converter", lambda: converter().agent_found(ctx.home))
            except InstallError:
                found = None
            # What it reads through registered paths (install ID --path) is found too.
            raw = (self.read_record(ctx, integ.id) or {}).get("paths")
            paths = [Path(p) for p in raw if isinstance(p, str)] if isinstance(raw, list) else []
            if not found and any(p.exists() for p in paths):
                found = True
        hooks = mcp = None
        if integ.hook_installer is not None:
            installer = integ.hook_installer
            hooks = safe("hook installer", lambda: installer().status(ctx))
        if integ.tool_registrar is not None:
            registrar = integ.tool_registrar
            mcp = safe("tool registrar", lambda: registrar().status(ctx))
        states = {s.state for s in (hooks, mcp) if s is not None}
        if not states:
            overall = "nothing to wire"
        elif states == {WiringState.WIRED}:
            overall = "wired"
        elif states == {WiringState.NOT_WIRED}:
            overall = "not wired"
        elif WiringState.BROKEN in states:
            overall = "broken"
        elif WiringState.OUTDATED in states:
            overall = "outdated (install again to refresh)"
        else:
            overall = "partly wired"
        return (
            found,
            state_label(hooks) if hooks else "",
            state_label(mcp) if mcp else "",
            overall,
        )


def state_label(status: Status) -> str:
    return f"{status.state.value} ({status.detail})" if status.detail else status.state.value

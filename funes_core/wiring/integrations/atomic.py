"""All or nothing: every config file an install (or removal) touches is checked before any changes.

An integration's tool registrar and hook installer may edit different files (Claude Code's
``~/.claude.json`` and ``~/.claude/settings.json``). Running them one after the other used to
leave a half install when the second refused its file. So :func:`wire` first checks every part:
a part built on :class:`~funes_core.ManagedWiring` plans its edits without writing
(:meth:`~funes_core.ManagedWiring.preflight`); any other part (a contract-1 plugin) must not
report a BROKEN config, and each file it declares must be writable and not a dangling link.
Only then do the parts run; if one still fails, every file they declared (and funes' ledger of
what it created) is put back as it was before the first change.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from funes_core.host.api import ConfigError, InstallContext, IntegrationPart, Outcome, WiringState
from funes_core.host.manager import Integration
from funes_core.wiring.configedit.base import ConfigFile
from funes_core.wiring.configedit.json import JsonFormat
from funes_core.wiring.configedit.managed import ManagedWiring
from funes_core.wiring.integrations.common import Orchestrator

__all__ = ["Step", "steps_for", "wire"]


@dataclass(frozen=True, slots=True)
class Step:
    """One part to run: its role (for messages), the part, and what to call on it."""

    role: str
    part: IntegrationPart
    action: Callable[[InstallContext], Outcome]
    install: bool


def _check(step: Step, ctx: InstallContext) -> list[Path]:
    """Refuse now what the step would refuse later; the files it may touch."""
    part = step.part
    if isinstance(part, ManagedWiring):
        part.preflight(ctx, put=step.install)
        return list(part.config_paths(ctx))
    paths: list[Path] = list(part.config_paths(ctx))  # type: ignore[attr-defined]
    status = part.status(ctx)  # type: ignore[attr-defined]
    if status.state is WiringState.BROKEN:
        raise ConfigError(paths[0] if paths else ctx.home, status.detail)
    for path in paths:
        ConfigFile(path, JsonFormat()).check_writable()  # the format plays no part in this check
    return paths


def _snapshot(paths: list[Path]) -> dict[Path, bytes | None]:
    saved: dict[Path, bytes | None] = {}
    for path in paths:
        target = path.resolve() if path.is_symlink() else path
        try:
            saved[target] = target.read_bytes()
        except FileNotFoundError:
            saved[target] = None
        except OSError:
            continue
    return saved


def _restore(saved: dict[Path, bytes | None]) -> None:
    for path, data in saved.items():
        try:
            if data is None:
                path.unlink(missing_ok=True)
            else:
                tmp = path.with_name(f".{path.name}.funes-restore")
                tmp.write_bytes(data)
                os.replace(tmp, path)
        except OSError:
            continue


def steps_for(integ: Integration, *, install: bool) -> list[Step]:
    """The registrar then the hook installer of ``integ``: to install, or to remove."""
    steps: list[Step] = []
    if integ.tool_registrar is not None:
        registrar = integ.tool_registrar()
        action = registrar.register if install else registrar.unregister
        steps.append(Step("tool registrar", registrar, action, install=install))
    if integ.hook_installer is not None:
        installer = integ.hook_installer()
        action = installer.install if install else installer.uninstall
        steps.append(Step("hook installer", installer, action, install=install))
    return steps


def wire(orch: Orchestrator, integ: Integration, ctx: InstallContext, steps: list[Step]) -> list[Outcome]:
    """Check every step, then run them all; on a failure, put every declared file back."""
    paths: list[Path] = []
    for step in steps:
        paths += orch.call(integ, step.role, lambda step=step: _check(step, ctx))  # type: ignore[misc]
    paths.append(ctx.funes_home / "integrations" / f"{integ.id}.wiring.json")
    saved = _snapshot(list(dict.fromkeys(paths)))
    outcomes: list[Outcome] = []
    try:
        for step in steps:
            outcomes.append(orch.call(integ, step.role, lambda step=step: step.action(ctx)))  # type: ignore[misc]
    except BaseException:
        _restore(saved)
        raise
    return outcomes

"""Wires funes into Hermes: a shell hook and an MCP server, both in ``$HERMES_HOME/config.yaml``.

* The hook: ``hooks.on_session_end`` gets ``{command: "<python> -I -m funes_hermes.hook --funes-home
  <dir> -- <funes>"}`` (the core's hook runtime: it returns in tens of milliseconds).
  Hermes fires ``on_session_end`` at the end of *every* turn (every run of its conversation loop,
  completed or interrupted), after the turn's messages are saved to ``state.db``; the event is
  small (no conversation copy on stdin, unlike ``post_llm_call``). Hermes runs the command
  without a shell and waits for it, so the command converts one session and returns at once,
  leaving the indexing to a detached ``funes index``.
* The MCP server: ``mcp_servers.funes`` gets ``{command, args, env: {FUNES_HOME}}``. Hermes
  starts MCP servers with a filtered environment (PATH, HOME, ...), so FUNES_HOME must be
  recorded for ``funes mcp`` to find the memory this installation uses.

Both are core managed entries over the YAML adapter, which keeps every other byte of the user's
file. ``hermes mcp add`` is deliberately not used: Hermes 0.19 re-writes the whole file
through its YAML dumper, dropping the user's comments and layout and adding its template.
Hermes asks the user, once per command, to allow a new shell hook (or accepts it when
``hooks_auto_accept: true``); funes never answers that question for them.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from funes_core import (
    ConfigError,
    HookInstaller,
    InstallContext,
    ManagedEntry,
    ManagedWiring,
    Outcome,
    Place,
    Status,
    ToolRegistrar,
    WiringState,
    YamlFormat,
    runs_module,
)
from funes_hermes.agent import HERMES

__all__ = [
    "HOOK_EVENT",
    "HOOK_MODULE",
    "SERVER_NAME",
    "HermesHookInstaller",
    "HermesToolRegistrar",
    "hook_argv",
]

#: The Hermes event funes' hook runs on: once per turn, after the turn is saved.
HOOK_EVENT = "on_session_end"
#: The module Hermes runs (the core's hook runtime does the work).
HOOK_MODULE = "funes_hermes.hook"
#: The name of funes' MCP server in Hermes (its tools appear as ``mcp__funes__recall``, ...).
SERVER_NAME = "funes"
_ALLOWLIST = "shell-hooks-allowlist.json"
_runs_hook = runs_module(HOOK_MODULE)


def hook_argv(ctx: InstallContext) -> list[str]:
    """What Hermes runs after each turn: this interpreter's ``funes_hermes.hook``, told where funes is."""
    return ctx.hook_argv(HOOK_MODULE)


def _is_funes_hook(value: Any) -> bool:
    """funes-hermes' hook: it runs the hook module (or, as older releases wrote, ``funes hermes hook``)."""
    if _runs_hook(value):
        return True
    command = value.get("command") if isinstance(value, dict) else None
    try:
        argv = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    return len(argv) >= 5 and argv[-4:-1] == ["hermes", "hook", "--funes-home"]


def _is_funes_server(value: Any) -> bool:
    """funes-hermes' server: ``funes … mcp`` with FUNES_HOME, however the file was re-written since."""
    args, env = value.get("args"), value.get("env")
    return (
        set(value) <= {"command", "args", "env", "enabled"}
        and isinstance(value.get("command"), str)
        and isinstance(args, list)
        and "mcp" in args
        and isinstance(env, dict)
        and "FUNES_HOME" in env
    )


class HermesHookInstaller(ManagedWiring, HookInstaller, agent=HERMES):
    """Adds funes' ``on_session_end`` shell hook to Hermes' config.yaml."""

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        return [
            ManagedEntry(
                path=self.where("config", ctx),
                adapter=YamlFormat(),
                place=Place(("hooks", HOOK_EVENT)),
                value={"command": shlex.join(hook_argv(ctx))},
                ours=_is_funes_hook,
                what=f"the funes hook ({HOOK_EVENT})",
            )
        ]

    def install(self, ctx: InstallContext) -> Outcome:
        outcome = self.put(ctx)
        if outcome.changed and not self._approved(ctx):
            return Outcome(
                True,
                outcome.summary + "; Hermes asks you to allow it the next time it starts at a terminal "
                "(or set hooks_auto_accept: true)",
            )
        return outcome

    def status(self, ctx: InstallContext) -> Status:
        status = super().status(ctx)
        if status.state is WiringState.WIRED and not self._approved(ctx):
            return Status(
                status.state, status.detail + "; not yet allowed in Hermes, which asks at its next start"
            )
        return status

    def _approved(self, ctx: InstallContext) -> bool:
        """Whether Hermes will run the hook without asking: allow-listed, or hooks auto-accepted."""
        command = shlex.join(hook_argv(ctx))
        try:
            data = json.loads((self.where("home", ctx) / _ALLOWLIST).read_bytes())
        except (OSError, ValueError):
            data = {}
        approvals = data.get("approvals") if isinstance(data, dict) else None
        if isinstance(approvals, list) and any(
            isinstance(a, dict) and a.get("event") == HOOK_EVENT and a.get("command") == command
            for a in approvals
        ):
            return True
        try:
            text = self.where("config", ctx).read_text(encoding="utf-8")
            value = YamlFormat().parse(text).get("hooks_auto_accept")
        except (OSError, ValueError, ConfigError):
            return False
        if isinstance(value, str):
            return value.strip().lower() in {"1", "true", "yes", "on"}
        return value is True


class HermesToolRegistrar(ManagedWiring, ToolRegistrar, agent=HERMES):
    """Adds ``mcp_servers.funes`` (``funes mcp [MEMORY]``, with FUNES_HOME) to Hermes' config.yaml."""

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        argv = ctx.mcp_command()
        value = {"command": argv[0], "args": argv[1:], "env": {"FUNES_HOME": str(ctx.funes_home)}}
        return [
            ManagedEntry(
                path=self.where("config", ctx),
                adapter=YamlFormat(),
                place=Place(("mcp_servers",), SERVER_NAME),
                value=value,
                ours=_is_funes_server,
                what="the funes MCP server",
            )
        ]

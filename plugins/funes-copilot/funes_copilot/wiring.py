"""Wires funes into the GitHub Copilot CLI: hooks in ``settings.json``, the MCP server in ``mcp-config.json``.

**Hooks.** Copilot reads user-level hooks from ``hooks.<event>`` in ``$COPILOT_HOME/settings.json``
(the schema of ``.github/hooks/*.json``): a list of ``{"type": "command", "bash": …,
"timeoutSec"?}``, run with the event as JSON on stdin. funes appends one entry to ``agentStop``
(the end of every turn) and ``sessionEnd``; an entry whose ``bash`` runs ``-m funes_copilot.hook``
is funes'. User-level hooks run without ``--trust-folder``.

**MCP server.** ``mcpServers.funes = {"type": "local", "command": …, "args": [..., "mcp"],
"tools": ["*"]}`` in ``$COPILOT_HOME/mcp-config.json`` (what ``copilot mcp add`` writes). Copilot
offers the tools as ``funes-recall``, ``funes-get``…. ``config.json`` is never touched.
"""

from __future__ import annotations

import shlex
from typing import Any

from funes_copilot.agent import AGENT
from funes_core import (
    HookInstaller,
    InstallContext,
    JsonFormat,
    ManagedEntry,
    ManagedWiring,
    Place,
    ToolRegistrar,
    runs_module,
)

__all__ = ["HOOK_EVENTS", "HOOK_MODULE", "CopilotHookInstaller", "CopilotToolRegistrar"]

HOOK_MODULE = "funes_copilot.hook"
HOOK_EVENTS = ("agentStop", "sessionEnd")
HOOK_TIMEOUT_SEC = 30


def _is_funes_server(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("command"), str):
        return False
    args = value.get("args", [])
    return isinstance(args, list) and "mcp" in args


class CopilotHookInstaller(ManagedWiring, HookInstaller, agent=AGENT):
    """Appends funes' hook to ``hooks.agentStop`` and ``hooks.sessionEnd``."""

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        value = {
            "type": "command",
            "bash": shlex.join(ctx.hook_argv(HOOK_MODULE)),
            "timeoutSec": HOOK_TIMEOUT_SEC,
        }
        return [
            ManagedEntry(
                path=self.where("settings", ctx),
                adapter=JsonFormat(),
                place=Place(("hooks", event)),
                value=value,
                ours=runs_module(HOOK_MODULE, key="bash"),
                what=f"the funes {event} hook",
            )
            for event in HOOK_EVENTS
        ]


class CopilotToolRegistrar(ManagedWiring, ToolRegistrar, agent=AGENT):
    """Records ``mcpServers.funes`` = ``funes mcp [MEMORY]`` in ``mcp-config.json``."""

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        argv = ctx.mcp_command()
        return [
            ManagedEntry(
                path=self.where("mcp", ctx),
                adapter=JsonFormat(),
                place=Place(("mcpServers",), "funes"),
                value={"type": "local", "command": argv[0], "args": argv[1:], "tools": ["*"]},
                ours=_is_funes_server,
                what="the funes MCP server",
            )
        ]

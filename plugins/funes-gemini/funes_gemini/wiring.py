"""Wires funes into the Gemini CLI: hooks and ``mcpServers.funes`` in the user's ``settings.json``.

**Hooks.** Gemini reads ``hooks.<Event>`` in ``settings.json``: a list of groups
``{"matcher"?, "hooks": [{"type": "command", "command", "name"?, "timeout"? (ms)}]}``. funes appends
one group of its own to ``AfterAgent`` (the end of every turn) and ``SessionEnd``; a group whose
command runs ``-m funes_gemini.hook`` is funes'.

**MCP server.** ``mcpServers.funes = {"command": …, "args": [..., "mcp"]}``. funes does not set
``"trust": true``: whether Gemini may call funes' tools without asking is the user's decision
(``gemini --approval-mode yolo``, or ``trust`` in that entry). In a headless run the tools of an
untrusted server are not offered to the model at all.

Both are managed entries of the core (byte-preserving edits, exact removal). Gemini also accepts
comments in ``settings.json``, which the JSON editor refuses to touch (install says so).
"""

from __future__ import annotations

import shlex
from typing import Any

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
from funes_gemini.agent import AGENT

__all__ = ["HOOK_EVENTS", "HOOK_MODULE", "GeminiHookInstaller", "GeminiToolRegistrar"]

#: The module Gemini runs after each turn; its name in a hook's command marks the hook as funes'.
HOOK_MODULE = "funes_gemini.hook"
#: Every turn's end, and the session's (Gemini does not wait for SessionEnd hooks).
HOOK_EVENTS = ("AfterAgent", "SessionEnd")
#: Milliseconds Gemini gives the hook; it returns in milliseconds, this only bounds a hang.
HOOK_TIMEOUT_MS = 30000
_RUNS_HOOK = runs_module(HOOK_MODULE)


def _is_funes_group(value: Any) -> bool:
    """A hook group holding funes' command (what install appends)."""
    hooks = value.get("hooks") if isinstance(value, dict) else None
    return isinstance(hooks, list) and any(_RUNS_HOOK(h) for h in hooks)


def _is_funes_server(value: Any) -> bool:
    """An MCP server entry that runs ``… mcp [MEMORY]``: funes', whoever added it."""
    if not isinstance(value, dict) or not isinstance(value.get("command"), str):
        return False
    args = value.get("args", [])
    return isinstance(args, list) and "mcp" in args


class GeminiHookInstaller(ManagedWiring, HookInstaller, agent=AGENT):
    """Appends funes' group to ``hooks.AfterAgent`` and ``hooks.SessionEnd``."""

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        hook = {
            "type": "command",
            "name": "funes",
            "command": shlex.join(ctx.hook_argv(HOOK_MODULE)),
            "timeout": HOOK_TIMEOUT_MS,
        }
        return [
            ManagedEntry(
                path=self.where("settings", ctx),
                adapter=JsonFormat(),
                place=Place(("hooks", event)),
                value={"hooks": [hook]},
                ours=_is_funes_group,
                what=f"the funes {event} hook",
            )
            for event in HOOK_EVENTS
        ]


class GeminiToolRegistrar(ManagedWiring, ToolRegistrar, agent=AGENT):
    """Records ``mcpServers.funes`` = ``funes mcp [MEMORY]``."""

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        argv = ctx.mcp_command()
        return [
            ManagedEntry(
                path=self.where("settings", ctx),
                adapter=JsonFormat(),
                place=Place(("mcpServers",), "funes"),
                value={"command": argv[0], "args": argv[1:]},
                ours=_is_funes_server,
                what="the funes MCP server",
            )
        ]

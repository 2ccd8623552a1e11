"""Wires funes into echo: a hook in ``~/.echo/config.json``, an MCP server in ``~/.echo/mcp.json``.

Both are one :class:`~funes_core.wiring.configedit.ManagedEntry` each: the core adds the member,
keeps every other byte of the user's file, removes exactly it again and reports the status.
Every value funes-echo writes ends with ``"managed_by": "funes-echo"``: that marker is how funes
knows an entry is its own, and why a same-named entry the user wrote is never touched.
"""

from __future__ import annotations

from typing import Any

from funes_core import (
    HookInstaller,
    InstallContext,
    JsonFormat,
    ManagedEntry,
    ManagedWiring,
    Place,
    ToolRegistrar,
)
from funes_echo.agent import ECHO

__all__ = ["MARKER", "EchoHookInstaller", "EchoToolRegistrar"]

#: The last key of every value funes-echo writes.
MARKER = ("managed_by", "funes-echo")
#: What echo substitutes with the session file's path when it runs a hook.
TRANSCRIPT_PLACEHOLDER = "{transcript}"


def _ours(value: Any) -> bool:
    return isinstance(value, dict) and value.get(MARKER[0]) == MARKER[1]


class EchoHookInstaller(ManagedWiring, HookInstaller, agent=ECHO):
    """Adds ``hooks.funes`` to ``~/.echo/config.json``: on every turn end, convert and index."""

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        run = ctx.convert_command(self.id, TRANSCRIPT_PLACEHOLDER)
        return [
            ManagedEntry(
                path=self.where("config", ctx),
                adapter=JsonFormat(),
                place=Place(("hooks",), "funes"),
                value={"on": "turn_end", "run": run, MARKER[0]: MARKER[1]},
                ours=_ours,
                what="the funes hook",
            )
        ]


class EchoToolRegistrar(ManagedWiring, ToolRegistrar, agent=ECHO):
    """Adds ``mcpServers.funes`` (``funes mcp [MEMORY]``) to ``~/.echo/mcp.json``."""

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        argv = ctx.mcp_command()
        return [
            ManagedEntry(
                path=self.where("mcp", ctx),
                adapter=JsonFormat(),
                place=Place(("mcpServers",), "funes"),
                value={"command": argv[0], "args": argv[1:], MARKER[0]: MARKER[1]},
                ours=_ours,
                what="the funes MCP server",
            )
        ]

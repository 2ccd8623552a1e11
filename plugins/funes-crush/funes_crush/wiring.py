"""Registers funes' MCP server with Crush: ``mcp.funes`` in the global ``crush.json``.

Crush reads ``mcp`` as a map of name to ``{type, command, args, env}``; funes adds its member
through the core's byte-preserving JSON adapter and removal takes out exactly that member. The
server's environment records ``FUNES_HOME``, so ``funes mcp`` knows which memory this
installation uses whatever environment Crush starts it in.
"""

from __future__ import annotations

from typing import Any

from funes_core import InstallContext, JsonFormat, ManagedEntry, ManagedWiring, Place, ToolRegistrar
from funes_crush.agent import AGENT

__all__ = ["SERVER_NAME", "CrushToolRegistrar"]

#: The name of funes' MCP server in Crush (its tools appear as ``mcp_funes_recall``, ...).
SERVER_NAME = "funes"


def _is_funes_server(value: Any) -> bool:
    """An MCP server entry that runs ``… mcp [MEMORY]``: funes', whoever added it."""
    if not isinstance(value, dict) or not isinstance(value.get("command"), str):
        return False
    args = value.get("args", [])
    return isinstance(args, list) and "mcp" in args


class CrushToolRegistrar(ManagedWiring, ToolRegistrar, agent=AGENT):
    """Records ``mcp.funes`` = ``{type: stdio, command, args, env: {FUNES_HOME}}``."""

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        argv = ctx.mcp_command()
        value = {
            "type": "stdio",
            "command": argv[0],
            "args": argv[1:],
            "env": {"FUNES_HOME": str(ctx.funes_home)},
        }
        return [
            ManagedEntry(
                path=self.where("config", ctx),
                adapter=JsonFormat(),
                place=Place(("mcp",), SERVER_NAME),
                value=value,
                ours=_is_funes_server,
                what="the funes MCP server",
            )
        ]

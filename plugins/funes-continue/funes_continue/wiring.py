"""Registers funes' MCP server with the Continue CLI: one item of ``mcpServers`` in ``config.yaml``.

``cn`` reads its models and MCP servers from ``$CONTINUE_GLOBAL_DIR/config.yaml`` (default
``~/.continue/config.yaml``); ``mcpServers`` is a *list* of ``{name, command, args, env}``. funes
adds one item, marked with a comment, through the core's byte-preserving YAML adapter, and removal
takes out exactly that line. The server's environment records ``FUNES_HOME``: the MCP SDK Continue
uses starts a server with only the variables an item names (and a few defaults), so ``funes mcp``
would not otherwise know which memory this installation uses.
"""

from __future__ import annotations

from typing import Any

from funes_continue.agent import AGENT
from funes_core import InstallContext, ManagedEntry, ManagedWiring, Place, ToolRegistrar, YamlFormat

__all__ = ["SERVER_NAME", "ContinueToolRegistrar"]

#: The name of funes' MCP server in Continue (its tools appear as ``recall``, ``get``, ...).
SERVER_NAME = "funes"
_MARK = "# funes-continue"


def _is_funes_server(value: Any) -> bool:
    """funes' item: named ``funes`` and running ``… mcp [MEMORY]``."""
    if not isinstance(value, dict) or value.get("name") != SERVER_NAME:
        return False
    args = value.get("args")
    return isinstance(value.get("command"), str) and isinstance(args, list) and "mcp" in args


class ContinueToolRegistrar(ManagedWiring, ToolRegistrar, agent=AGENT):
    """Adds ``{name: funes, command, args, env: {FUNES_HOME}}`` to ``mcpServers`` in config.yaml."""

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        argv = ctx.mcp_command()
        value = {
            "name": SERVER_NAME,
            "command": argv[0],
            "args": argv[1:],
            "env": {"FUNES_HOME": str(ctx.funes_home)},
        }
        return [
            ManagedEntry(
                path=self.where("config", ctx),
                adapter=YamlFormat(),
                place=Place(("mcpServers",)),
                value=value,
                ours=_is_funes_server,
                what="the funes MCP server",
                comment=_MARK,
            )
        ]

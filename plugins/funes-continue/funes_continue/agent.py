"""Who funes-continue is, where the Continue CLI (``cn``) keeps things and how funes is wired in.

``cn`` reads its models and MCP servers from ``$CONTINUE_GLOBAL_DIR/config.yaml`` (default
``~/.continue/config.yaml``); ``mcpServers`` is a *list* of ``{name, command, args, env}``. funes
adds one item, named ``funes`` and marked with a comment, through the core's byte-preserving YAML
adapter, and removal takes out exactly that line. The server's environment records
``FUNES_HOME``: the MCP SDK Continue uses starts a server with only the variables an item names
(and a few defaults), so ``funes mcp`` would not otherwise know which memory this installation uses.

Standard library only (plus the core's ``agent`` module).
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Location, McpServer, Slot

__all__ = ["AGENT"]

AGENT = Agent(
    id="continue",
    label="Continue",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=True),
    locations=(
        Location("home", ".continue", env=("CONTINUE_GLOBAL_DIR",), holds="Continue's state"),
        Location("sessions", "sessions", under="home", holds="sessions (<uuid>.json, sessions.json)"),
        Location("config", "config.yaml", under="home", holds="models and MCP servers"),
    ),
    mcp=McpServer(
        location="config",
        format="yaml",
        list_item=True,
        entry={"command": Slot.PROGRAM, "args": Slot.ARGS, "env": {"FUNES_HOME": Slot.FUNES_HOME}},
    ),
)

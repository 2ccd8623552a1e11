"""Who funes-crush is, and where Crush keeps things.

Crush keeps its sessions in each project: ``<project>/.crush/crush.db`` (SQLite; the folder is
``options.data_directory`` in ``crush.json``). There is nothing to discover under the HOME
(``discover=False``): users register the folders their projects are in with ``--path``. Its
global config, where funes registers its MCP server, is ``$CRUSH_GLOBAL_CONFIG/crush.json``,
else ``$XDG_CONFIG_HOME/crush/crush.json``, default ``~/.config/crush/crush.json``.

**MCP server.** Crush reads ``mcp`` as a map of name to ``{type, command, args, env}``; funes adds
``mcp.funes`` through the core's byte-preserving JSON adapter and removal takes out exactly that
member (a server running ``… mcp`` is funes', whoever added it). The server's environment records
``FUNES_HOME``, so ``funes mcp`` knows which memory this installation uses whatever environment
Crush starts it in. Its tools appear as ``mcp_funes_recall``, ...
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Location, McpServer, Slot

__all__ = ["AGENT", "DB_NAME"]

#: The database's name in every project's data directory (Crush's ``internal/db/connect.go``).
DB_NAME = "crush.db"

AGENT = Agent(
    id="crush",
    label="Crush",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=False, memory_binding=True),
    locations=(
        Location("home", ".config/crush", env=("CRUSH_GLOBAL_CONFIG",), holds="Crush's global config folder"),
        Location("config", "crush.json", under="home", holds="providers and mcp servers (mcp.funes)"),
    ),
    mcp=McpServer(
        location="config",
        path=("mcp",),
        entry={
            "type": "stdio",
            "command": Slot.PROGRAM,
            "args": Slot.ARGS,
            "env": {"FUNES_HOME": Slot.FUNES_HOME},
        },
    ),
)

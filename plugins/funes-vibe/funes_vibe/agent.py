"""Who funes-vibe is, and where Mistral Vibe (``vibe``) keeps things (``$VIBE_HOME``, default ``~/.vibe``).

Inside: ``logs/session/<session folder>/messages.jsonl`` (the sessions) and ``config.toml``, whose
``[[mcp_servers]]`` array of tables lists the MCP servers Vibe starts (``name``, ``transport =
"stdio"``, ``command``, ``args``, ``env``). funes appends its own item there, marked by a comment
line; Vibe names a server's tools ``<name>_<tool>``, so the model sees ``funes_recall``. Vibe starts
a stdio server with only a few variables of its own environment (the MCP SDK's PATH, HOME, SHELL,
TERM, USER, LOGNAME) plus the item's ``env``, so the item pins ``FUNES_HOME``: ``funes mcp`` then
opens the memory this installation uses, whatever environment Vibe was started in.

Standard library only (plus the core's ``agent`` module). The session folder can also be moved
with ``session_logging.save_dir`` in ``config.toml``; such a folder is registered with ``--path``.
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Location, McpServer, Slot

__all__ = ["AGENT"]

AGENT = Agent(
    id="vibe",
    label="Mistral Vibe",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=True, local_time=False),
    locations=(
        Location("home", ".vibe", env=("VIBE_HOME",), holds="Mistral Vibe's state and config.toml"),
        Location(
            "sessions",
            "logs/session",
            under="home",
            holds="sessions (session_<time>_<id>/messages.jsonl and meta.json)",
        ),
        Location("config", "config.toml", under="home", holds="[[mcp_servers]], funes' among them"),
    ),
    mcp=McpServer(
        location="config",
        path=("mcp_servers",),
        list_item=True,
        format="toml",
        entry={
            "transport": "stdio",
            "command": Slot.PROGRAM,
            "args": Slot.ARGS,
            "env": {"FUNES_HOME": Slot.FUNES_HOME},
        },
    ),
)

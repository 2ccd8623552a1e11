"""Who funes-openhands is, and where OpenHands (``openhands``) keeps things (``~/.openhands``).

OpenHands 1.16 (``openhands_cli.locations``) keeps its state in ``$OPENHANDS_PERSISTENCE_DIR``
(default ``~/.openhands``) and its conversations in ``$OPENHANDS_CONVERSATIONS_DIR`` (default the
``conversations`` folder in it): one folder per conversation, ``<uuid without dashes>/``, with
``base_state.json`` and ``events/event-<NNNNN>-<uuid>.json``. Its event times are the machine's
local time without an offset (``local_time=True``).

``mcp.json`` holds ``mcpServers`` (what ``openhands mcp add NAME --transport stdio CMD -- ARGS``
writes: ``command``, ``args``, ``env``, ``transport``); funes adds ``mcpServers.funes``. OpenHands
offers its tools under their bare names (``recall``) and starts the server without the variables
of its own environment, so the entry pins ``FUNES_HOME``: ``funes mcp`` then opens the memory this
installation uses.

Standard library only (plus the core's ``agent`` module).
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Location, McpServer, Slot

__all__ = ["AGENT"]

AGENT = Agent(
    id="openhands",
    label="OpenHands",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=True, local_time=True),
    locations=(
        Location(
            "home", ".openhands", env=("OPENHANDS_PERSISTENCE_DIR",), holds="OpenHands' state and mcp.json"
        ),
        Location(
            "conversations",
            "conversations",
            under="home",
            env=("OPENHANDS_CONVERSATIONS_DIR",),
            holds="conversations (<id>/base_state.json and events/event-<n>-<uuid>.json)",
        ),
        Location("mcp", "mcp.json", under="home", holds="mcpServers.funes"),
    ),
    mcp=McpServer(
        location="mcp",
        entry={
            "command": Slot.PROGRAM,
            "args": Slot.ARGS,
            "env": {"FUNES_HOME": Slot.FUNES_HOME},
            "transport": "stdio",
        },
    ),
)

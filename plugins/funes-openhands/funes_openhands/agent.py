"""Who funes-openhands is, and where OpenHands (``openhands``) keeps things (``~/.openhands``).

OpenHands 1.16 (``openhands_cli.locations``) keeps its state in ``$OPENHANDS_PERSISTENCE_DIR``
(default ``~/.openhands``) and its conversations in ``$OPENHANDS_CONVERSATIONS_DIR`` (default the
``conversations`` folder in it): one folder per conversation, ``<uuid without dashes>/``, with
``base_state.json`` and ``events/event-<NNNNN>-<uuid>.json``. Its event times are the machine's
local time without an offset (``local_time=True``).

Standard library only (plus the core's ``agent`` module).
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Location

__all__ = ["AGENT"]

AGENT = Agent(
    id="openhands",
    label="OpenHands",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=False, local_time=True),
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
    ),
)

"""Who funes-continue is, and where the Continue CLI (``cn``) keeps things (``$CONTINUE_GLOBAL_DIR``).

Standard library only (plus the core's ``agent`` module).
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Location

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
)

"""Who funes-echo is and where echo keeps things: declared once, used by every part and the hook."""

from __future__ import annotations

from funes_core import Agent, Capabilities, Location

__all__ = ["ECHO"]

ECHO = Agent(
    id="echo",
    label="Echo",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=True),
    locations=(
        Location("home", ".echo", holds="echo's own folder"),
        Location("sessions", "sessions", under="home", holds="transcripts (<id>.jsonl)"),
        Location("config", "config.json", under="home", holds="hooks"),
        Location("mcp", "mcp.json", under="home", holds="MCP servers"),
    ),
)

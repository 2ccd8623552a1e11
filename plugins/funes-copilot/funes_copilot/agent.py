"""Who this integration is and where the GitHub Copilot CLI keeps things: declared once.

Copilot's folder is ``$COPILOT_HOME``, default ``~/.copilot`` (documented in ``copilot help
environment``; verified with @github/copilot 1.0.102): ``settings.json`` (user settings, with
``hooks``), ``mcp-config.json`` (user MCP servers), ``config.json`` (Copilot's own state, never
edited) and ``session-state/<session id>/events.jsonl`` (one session each).

Standard library only: the hook imports this module on every turn.
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Location

__all__ = ["AGENT"]

AGENT = Agent(
    id="copilot",
    label="GitHub Copilot CLI",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=True),
    locations=(
        Location("home", ".copilot", env=("COPILOT_HOME",), holds="Copilot's folder"),
        Location("sessions", "session-state", under="home", holds="<session id>/events.jsonl"),
        Location("settings", "settings.json", under="home", holds="hooks"),
        Location("mcp", "mcp-config.json", under="home", holds="mcpServers.funes"),
    ),
)

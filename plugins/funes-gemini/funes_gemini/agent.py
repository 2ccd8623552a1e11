"""Who this integration is and where the Gemini CLI keeps things: declared once, used everywhere.

Gemini's folder is ``~/.gemini``. ``GEMINI_CLI_HOME`` replaces the *home directory* Gemini uses
(its ``homedir()``), so the folder becomes ``$GEMINI_CLI_HOME/.gemini``, not the variable's folder
itself (verified with @google/gemini-cli 0.61.0). Inside: ``settings.json`` (user settings: hooks,
MCP servers) and ``tmp/<project>/chats/session-*.jsonl`` (the chats).

Standard library only: the hook imports this module on every turn.
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Location

__all__ = ["AGENT"]

AGENT = Agent(
    id="gemini",
    label="Gemini CLI",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=True),
    locations=(
        Location("base", "", env=("GEMINI_CLI_HOME",), holds="the home directory Gemini uses"),
        Location("gemini", ".gemini", under="base", holds="Gemini's folder"),
        Location("chats", "tmp", under="gemini", holds="tmp/<project>/chats/session-*.jsonl"),
        Location("settings", "settings.json", under="gemini", holds="hooks and mcpServers.funes"),
    ),
)

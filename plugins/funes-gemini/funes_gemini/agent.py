"""Who this integration is, where the Gemini CLI keeps things and how funes is wired in: declared once.

Gemini's folder is ``~/.gemini``. ``GEMINI_CLI_HOME`` replaces the *home directory* Gemini uses
(its ``homedir()``), so the folder becomes ``$GEMINI_CLI_HOME/.gemini``, not the variable's folder
itself (verified with @google/gemini-cli 0.61.0). Inside: ``settings.json`` (user settings: hooks,
MCP servers) and ``tmp/<project>/chats/session-*.jsonl`` (the chats).

**Hooks.** Gemini reads ``hooks.<Event>`` in ``settings.json``: a list of groups
``{"matcher"?, "hooks": [{"type": "command", "command", "name"?, "timeout"? (ms)}]}``. funes appends
one group of its own to ``AfterAgent`` (the end of every turn) and ``SessionEnd`` (Gemini does not
wait for it); a handler whose command runs ``-m funes_gemini.hook`` is funes'.

**MCP server.** ``mcpServers.funes = {"command": …, "args": [..., "mcp"]}``. funes does not set
``"trust": true``: whether Gemini may call funes' tools without asking is the user's decision
(``gemini --approval-mode yolo``, or ``trust`` in that entry). In a headless run the tools of an
untrusted server are not offered to the model at all. Gemini also accepts comments in
``settings.json``, which the JSON editor refuses to touch (install says so).

Standard library only: the hook imports this module on every turn.
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Hooks, Location, McpServer, Slot

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
    hooks=Hooks(
        location="settings",
        module="funes_gemini.hook",
        events=("AfterAgent", "SessionEnd"),
        grouped=True,
        # The timeout (ms) only bounds a hang: the hook returns in milliseconds.
        entry={"type": "command", "name": "funes", "command": Slot.HOOK, "timeout": 30000},
    ),
    mcp=McpServer(location="settings"),
)

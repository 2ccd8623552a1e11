"""Who this integration is, where the GitHub Copilot CLI keeps things and how funes is wired in.

Copilot's folder is ``$COPILOT_HOME``, default ``~/.copilot`` (documented in ``copilot help
environment``; verified with @github/copilot 1.0.102): ``settings.json`` (user settings, with
``hooks``), ``mcp-config.json`` (user MCP servers), ``config.json`` (Copilot's own state, never
edited) and ``session-state/<session id>/events.jsonl`` (one session each).

**Hooks.** Copilot reads user-level hooks from ``hooks.<event>`` in ``settings.json`` (the schema
of ``.github/hooks/*.json``): a list of ``{"type": "command", "bash": …, "timeoutSec"?}``, run with
the event as JSON on stdin. funes appends one entry to ``agentStop`` (the end of every turn) and
``sessionEnd``; an entry whose ``bash`` runs ``-m funes_copilot.hook`` is funes'. User-level hooks
run without ``--trust-folder``.

**MCP server.** ``mcpServers.funes = {"type": "local", "command": …, "args": [..., "mcp"],
"tools": ["*"]}`` in ``mcp-config.json`` (what ``copilot mcp add`` writes). Copilot offers the
tools as ``funes-recall``, ``funes-get``….

Standard library only: the hook imports this module on every turn.
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Hooks, Location, McpServer, Slot

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
    hooks=Hooks(
        location="settings",
        module="funes_copilot.hook",
        events=("agentStop", "sessionEnd"),
        entry={"type": "command", "bash": Slot.HOOK, "timeoutSec": 30},
    ),
    mcp=McpServer(
        location="mcp",
        entry={"type": "local", "command": Slot.PROGRAM, "args": Slot.ARGS, "tools": ["*"]},
    ),
)

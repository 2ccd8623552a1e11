"""Who this integration is and where Factory Droid keeps things: declared once, used everywhere.

Droid's folder is ``~/.factory``. ``FACTORY_HOME_OVERRIDE`` replaces the *home directory* Droid
uses (its ``getFactoryHome()``), so the folder becomes ``$FACTORY_HOME_OVERRIDE/.factory``, not the
variable's folder itself (verified with droid 0.215.0: sessions, ``settings.json`` and
``mcp.json`` all move). Inside:

* ``sessions/<cwd with every / as ->/<session uuid>.jsonl``: the transcripts (beside each, a
  ``<uuid>.settings.json`` with the session's model and token counts, which funes does not read);
* ``settings.json``: the user's settings, among them ``hooks`` (Claude Code's shape: a list of
  matcher groups ``{"matcher"?, "hooks": [{"type": "command", "command", "timeout"?}]}`` per
  event, with the event as JSON on stdin, ``transcript_path`` included);
* ``mcp.json``: ``mcpServers``, which ``droid mcp add`` writes (``{"type": "stdio", "command",
  "args", "env"?, "disabled"?}``).

funes appends one handler group to ``hooks.Stop`` (the end of every turn) and
``hooks.SessionEnd``, and adds ``mcpServers.funes``; a handler whose command runs
``-m funes_droid.hook`` and a ``funes`` server running ``… mcp`` are funes'.

Standard library only: the hook imports this module on every turn.
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Hooks, Location, McpServer, Slot

__all__ = ["AGENT"]

AGENT = Agent(
    id="droid",
    label="Factory Droid",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=True, local_time=False),
    locations=(
        Location("base", "", env=("FACTORY_HOME_OVERRIDE",), holds="the home directory Droid uses"),
        Location("factory", ".factory", under="base", holds="Droid's folder"),
        Location("sessions", "sessions", under="factory", holds="sessions/<cwd>/<session>.jsonl"),
        Location("settings", "settings.json", under="factory", holds="hooks (Stop, SessionEnd)"),
        Location("mcp", "mcp.json", under="factory", holds="mcpServers.funes"),
    ),
    hooks=Hooks(
        location="settings",
        module="funes_droid.hook",
        events=("Stop", "SessionEnd"),
        grouped=True,
        entry={"type": "command", "command": Slot.HOOK},
    ),
    mcp=McpServer(
        location="mcp",
        entry={"type": "stdio", "command": Slot.PROGRAM, "args": Slot.ARGS},
    ),
)

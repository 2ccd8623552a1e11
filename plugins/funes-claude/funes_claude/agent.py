"""Who funes-claude is, where Claude Code keeps things and how funes is wired in: declared once.

``CLAUDE_CONFIG_DIR`` moves everything Claude Code keeps: the transcripts (``projects/``),
``settings.json`` and even its state file ``.claude.json`` (user-scope MCP servers), which by
default sits beside ``~/.claude``, in the HOME (verified with Claude Code 2.1.197: with the variable
set, ``claude mcp add -s user`` writes ``$CLAUDE_CONFIG_DIR/.claude.json``).

**Hooks.** Claude Code reads ``hooks.<Event>`` in ``settings.json``: a list of groups, each
``{"matcher"?: …, "hooks": [{"type": "command", "command": …, "timeout": …}]}``. funes appends one
group of its own to ``Stop``, ``SubagentStop`` and ``SessionEnd``. Claude Code checks these objects
against its settings schema and rewrites the file itself now and then, so the marker is not an
extra key (it could be refused or dropped) but the command: a command hook that runs
``-m funes_claude.hook`` is funes', and removal deletes exactly those (and the groups and arrays
funes created); a hook the user added to funes' group stays.

**MCP server.** ``mcpServers.funes = {"type": "stdio", "command": …, "args": […], "env": {}}`` in
``.claude.json``, exactly what ``claude mcp add funes -s user`` writes (the registrar runs that CLI
when it is on the PATH, :mod:`funes_claude.wiring`). A ``funes`` server that does not run ``… mcp``
is somebody else's and is never replaced or removed.

Standard library only: the hook imports this module on every turn.
"""

from __future__ import annotations

from funes_core import Agent, Hooks, Location, McpServer, Slot

__all__ = ["CLAUDE", "HOOK_EVENTS", "HOOK_MODULE", "HOOK_TIMEOUT"]

#: The events funes hooks: every finished turn, every finished subagent, the session's end.
HOOK_EVENTS = ("Stop", "SubagentStop", "SessionEnd")
#: Seconds Claude Code gives the hook; it returns in milliseconds, this only bounds a hang.
HOOK_TIMEOUT = 15
#: The module Claude Code runs (:mod:`funes_claude.hook`); also what marks funes' hooks.
HOOK_MODULE = "funes_claude.hook"

CLAUDE = Agent(
    id="claude",
    label="Claude Code",
    contract_version=2,  # the plugin contract this integration was written and checked for
    locations=(
        Location(
            "config", ".claude", env=("CLAUDE_CONFIG_DIR",), holds="Claude Code's settings and transcripts"
        ),
        Location("projects", "projects", under="config", holds="transcripts (<project>/<session>.jsonl)"),
        Location("settings", "settings.json", under="config", holds="hooks"),
        Location("state_dir", "", env=("CLAUDE_CONFIG_DIR",), holds="where .claude.json lives"),
        Location("state", ".claude.json", under="state_dir", holds="user-scope MCP servers"),
    ),
    hooks=Hooks(
        location="settings",
        module=HOOK_MODULE,
        events=HOOK_EVENTS,
        grouped=True,
        entry={"type": "command", "command": Slot.HOOK, "timeout": HOOK_TIMEOUT},
    ),
    mcp=McpServer(
        location="state", entry={"type": "stdio", "command": Slot.PROGRAM, "args": Slot.ARGS, "env": {}}
    ),
)

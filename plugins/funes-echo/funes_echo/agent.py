"""Who funes-echo is, where echo keeps things and how funes is wired in: declared once, used by every part.

funes wires two entries, each a member the core adds, keeps every other byte of the user's file
around, removes exactly again and reports the status: the hook ``hooks.funes`` in
``~/.echo/config.json`` (on every turn end, echo runs ``funes integrations convert echo
{transcript} SPOOL --index``, with the session file's path for ``{transcript}``) and the MCP server
``mcpServers.funes`` in ``~/.echo/mcp.json``. Every value funes-echo writes ends with
``"managed_by": "funes-echo"``: that marker is how funes knows an entry is its own, and why a
same-named entry the user wrote is never touched.
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Hooks, Location, McpServer, Slot

__all__ = ["ECHO", "MARKER"]

#: The last key of every value funes-echo writes.
MARKER = ("managed_by", "funes-echo")

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
    hooks=Hooks(location="config", key="funes", entry={"on": "turn_end", "run": Slot.CONVERT}, marker=MARKER),
    mcp=McpServer(location="mcp", marker=MARKER),
)

"""Who funes-claude is and where Claude Code keeps things. Standard library only: the hook imports it.

``CLAUDE_CONFIG_DIR`` moves everything Claude Code keeps: the transcripts (``projects/``),
``settings.json`` and even its state file ``.claude.json`` (user-scope MCP servers), which by
default sits beside ``~/.claude``, in the HOME (verified with Claude Code 2.1.197: with the variable
set, ``claude mcp add -s user`` writes ``$CLAUDE_CONFIG_DIR/.claude.json``).
"""

from __future__ import annotations

from funes_core import Agent, Location

__all__ = ["CLAUDE"]

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
)

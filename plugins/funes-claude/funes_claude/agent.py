"""Who funes-claude is and where Claude Code keeps things. Standard library only: the hook imports it."""

from __future__ import annotations

from funes_core import Agent, Location

__all__ = ["CLAUDE"]

CLAUDE = Agent(
    id="claude",
    label="Claude Code",
    locations=(
        Location("config", ".claude", holds="Claude Code's settings and transcripts"),
        Location("projects", "projects", under="config", holds="transcripts (<project>/<session>.jsonl)"),
        Location("settings", "settings.json", under="config", holds="hooks"),
        Location("state", ".claude.json", holds="user-scope MCP servers"),
    ),
)

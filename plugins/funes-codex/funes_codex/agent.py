"""Who funes-codex is and where Codex keeps things (``$CODEX_HOME``, default ``~/.codex``).

Standard library only (plus the core's ``agent`` module): the per-turn hook imports it.
"""

from __future__ import annotations

from funes_core import Agent, Location

__all__ = ["CODEX"]

CODEX = Agent(
    id="codex",
    label="Codex",
    contract_version=2,  # the plugin contract this integration was written and checked for
    locations=(
        Location("home", ".codex", env=("CODEX_HOME",), holds="Codex's state"),
        Location("sessions", "sessions", under="home", holds="rollouts (YYYY/MM/DD/rollout-*.jsonl)"),
        Location("archived", "archived_sessions", under="home", holds="rollouts `codex archive` moved"),
        Location("hooks", "hooks.json", under="home", holds="hooks"),
        Location("config", "config.toml", under="home", holds="MCP servers"),
    ),
)

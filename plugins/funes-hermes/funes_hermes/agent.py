"""Who funes-hermes is and where Hermes keeps things (``$HERMES_HOME``, default ``~/.hermes``).

Hermes sets ``HERMES_HOME`` itself when a profile is active, so the hook (which runs in Hermes'
environment) reads the active profile. Standard library only: the hook imports this module.
"""

from __future__ import annotations

from funes_core import Agent, Location

__all__ = ["CONFIG_NAME", "HERMES", "STATE_DB"]

#: Hermes' settings file inside its home (it reads no other name).
CONFIG_NAME = "config.yaml"
#: Hermes' session database inside its home.
STATE_DB = "state.db"

HERMES = Agent(
    id="hermes",
    label="Hermes",
    locations=(
        Location("home", ".hermes", env=("HERMES_HOME",), holds="Hermes' home (the active profile)"),
        Location("config", CONFIG_NAME, under="home", holds="hooks and MCP servers"),
        Location("state", STATE_DB, under="home", holds="sessions (SQLite)"),
    ),
)

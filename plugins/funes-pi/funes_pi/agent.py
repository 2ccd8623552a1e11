"""Who funes-pi is and where pi keeps things (``$PI_CODING_AGENT_DIR``, default ``~/.pi/agent``)."""

from __future__ import annotations

from funes_core import Agent, Location

__all__ = ["PI"]

PI = Agent(
    id="pi",
    label="pi",
    contract_version=2,  # the plugin contract this integration was written and checked for
    locations=(
        Location("agent", ".pi/agent", env=("PI_CODING_AGENT_DIR",), holds="pi's agent folder"),
        Location("sessions", "sessions", under="agent", holds="sessions (--<cwd>--/<ts>_<id>.jsonl)"),
        Location("settings", "settings.json", under="agent", holds="installed packages"),
    ),
)

"""Who funes-pi is and where pi keeps things (``$PI_CODING_AGENT_DIR``, default ``~/.pi/agent``)."""

from __future__ import annotations

from funes_core import Agent, Location, Package

__all__ = ["PACKAGE", "PI"]

#: The pi package funes installs (pi has no hooks and no MCP of its own): ``funes_pi/extension``,
#: copied to ``$FUNES_HOME/integrations/pi-extension`` and listed in ``packages`` of settings.json.
PACKAGE = Package(
    source="funes_pi:extension",
    files=("package.json", "extensions/funes.ts"),
    location="settings",
    folder="pi-extension",
)

PI = Agent(
    id="pi",
    label="pi",
    contract_version=2,  # the plugin contract this integration was written and checked for
    locations=(
        Location("agent", ".pi/agent", env=("PI_CODING_AGENT_DIR",), holds="pi's agent folder"),
        Location("sessions", "sessions", under="agent", holds="sessions (--<cwd>--/<ts>_<id>.jsonl)"),
        Location("settings", "settings.json", under="agent", holds="installed packages"),
    ),
    package=PACKAGE,
)

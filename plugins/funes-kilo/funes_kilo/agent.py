"""Who this integration is and where the Kilo Code CLI keeps things: declared once, used everywhere.

The Kilo Code CLI (``@kilocode/cli`` 7.x, commands ``kilo``/``kilocode``) is a fork of OpenCode and
keeps OpenCode's layout under its own name: its config in ``$XDG_CONFIG_HOME/kilo`` (default
``~/.config/kilo``, file ``kilo.json`` or ``kilo.jsonc``), its data, with the session database
``kilo.db`` (the same ``session``/``message``/``part`` tables as ``opencode.db``), in
``$XDG_DATA_HOME/kilo`` (default ``~/.local/share/kilo``). Its own variables move single places:
``KILO_CONFIG`` (an extra config file: funes registers its MCP server there when set),
``KILO_CONFIG_DIR`` (an extra folder searched for ``plugins/``) and ``KILO_DB`` (the database:
absolute, or relative to the data folder). Verified with @kilocode/cli 7.7.7.

Standard library only (plus funes-opencode's, likewise): the hook imports this module on every turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from funes_core import Agent, Capabilities, Location
from funes_opencode.agent import find_databases

__all__ = ["AGENT", "ENV_DB", "databases"]

AGENT = Agent(
    id="kilo",
    label="Kilo Code CLI",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=True),
    locations=(
        Location("config_base", ".config", env=("XDG_CONFIG_HOME",), holds="the XDG config folder"),
        Location("config", "kilo", under="config_base", holds="Kilo's config folder"),
        Location("config_file", "kilo.json", env=("KILO_CONFIG",), under="config", holds="mcp.funes"),
        Location("plugin_home", "", env=("KILO_CONFIG_DIR",), under="config", holds="plugins/funes.js"),
        Location("data_base", ".local/share", env=("XDG_DATA_HOME",), holds="the XDG data folder"),
        Location("data", "kilo", under="data_base", holds="kilo*.db (the sessions)"),
    ),
)
#: Names the session database (absolute, or relative to the data folder).
ENV_DB = "KILO_DB"


def databases(home: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The session databases Kilo may have written, ``$KILO_DB`` first (may not exist)."""
    return find_databases(AGENT, ENV_DB, "kilo", home, environ)

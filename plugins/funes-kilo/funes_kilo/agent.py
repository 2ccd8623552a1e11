"""Who this integration is and where the Kilo Code CLI keeps things: declared once, used everywhere.

The Kilo Code CLI (``@kilocode/cli`` 7.x, commands ``kilo``/``kilocode``) is a fork of OpenCode and
keeps OpenCode's layout under its own name: its config in ``$XDG_CONFIG_HOME/kilo`` (default
``~/.config/kilo``, file ``kilo.json`` or ``kilo.jsonc``), its data, with the session database
``kilo.db`` (the same ``session``/``message``/``part`` tables as ``opencode.db``), in
``$XDG_DATA_HOME/kilo`` (default ``~/.local/share/kilo``). Its own variables move single places:
``KILO_CONFIG`` (an extra config file: funes registers its MCP server there when set),
``KILO_CONFIG_DIR`` (an extra folder searched for ``plugins/``) and ``KILO_DB`` (the database:
absolute, or relative to the data folder). Verified with @kilocode/cli 7.7.7.

Kilo keeps OpenCode's plugin system and ``mcp`` block too, so the wiring is OpenCode's with Kilo's
names: the capture plugin starts ``python -I -m funes_kilo.hook``.

Standard library only (plus funes-opencode's, likewise): the hook imports this module on every turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from funes_core import Agent, Capabilities
from funes_opencode.agent import AGENT as OPENCODE
from funes_opencode.agent import CAPTURE, find_databases, fork_locations

__all__ = ["AGENT", "ENV_DB", "databases"]

AGENT = Agent(
    id="kilo",
    label="Kilo Code CLI",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=True),
    locations=fork_locations("kilo", "Kilo", "KILO"),
    plugin_file=replace(CAPTURE, module="funes_kilo.hook"),
    mcp=OPENCODE.mcp,
)
#: Names the session database (absolute, or relative to the data folder).
ENV_DB = "KILO_DB"


def databases(home: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The session databases Kilo may have written, ``$KILO_DB`` first (may not exist)."""
    return find_databases(AGENT, ENV_DB, "kilo", home, environ)

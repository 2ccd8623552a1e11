"""Who this integration is and where OpenCode keeps things: declared once, used everywhere.

OpenCode follows the XDG base directories: its config in ``$XDG_CONFIG_HOME/opencode`` (default
``~/.config/opencode``), its data, with the session database, in ``$XDG_DATA_HOME/opencode``
(default ``~/.local/share/opencode``). Three variables of its own move single places:
``OPENCODE_CONFIG`` (an extra config file, loaded after the global one: funes registers its MCP
server there when set), ``OPENCODE_CONFIG_DIR`` (an extra folder searched for ``plugins/``: funes
puts its capture plugin there when set) and ``OPENCODE_DB`` (the database: absolute, or relative to
the data folder; otherwise ``opencode.db``, or ``opencode-<channel>.db`` for other channels, so
every ``opencode*.db`` there is read). Verified with opencode-ai 1.18.33.

**Capture.** OpenCode loads every ``*.js`` file of its plugin folder (``~/.config/opencode/plugins``,
or ``$OPENCODE_CONFIG_DIR/plugins``) at start. funes writes one file of its own there,
``funes.js`` (:mod:`funes_opencode` ``capture.js``, declared as a :class:`~funes_core.PluginFile`),
and never edits the user's config for it: on OpenCode's ``session.idle`` event (the end of every
turn) it starts ``python -I -m funes_opencode.hook`` detached, with OpenCode's own environment and
the event on stdin, and returns at once. Removal deletes exactly that file.

**MCP server.** ``mcp.funes = {"type": "local", "command": [..., "mcp"], "enabled": true}`` in the
config file (``$OPENCODE_CONFIG``, else the global ``opencode.jsonc`` when it exists, else
``opencode.json``): a managed entry of the core (byte-preserving, exact removal); a ``funes``
server whose command runs ``… mcp`` is funes'. OpenCode also reads comments (JSONC): a file the
JSON editor cannot parse is refused with a clear message and left alone. (``opencode mcp add``
asks its questions interactively, so funes edits the file.)

Standard library only: the hook imports this module on every turn.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from funes_core import Agent, Capabilities, Location, McpServer, PluginFile, Slot

__all__ = ["AGENT", "CAPTURE", "ENV_DB", "databases", "find_databases", "fork_locations"]


def fork_locations(name: str, label: str, env: str) -> tuple[Location, ...]:
    """OpenCode's places under the names of OpenCode or one of its forks (Kilo Code's CLI keeps them).

    ``name`` names the folders and files (``opencode``, ``kilo``), ``env`` prefixes the variables.
    """
    return (
        Location("config_base", ".config", env=("XDG_CONFIG_HOME",), holds="the XDG config folder"),
        Location("config", name, under="config_base", holds=f"{label}'s config folder"),
        Location(
            "config_file",
            f"{name}.json",
            env=(f"{env}_CONFIG",),
            under="config",
            holds="mcp.funes",
            prefer=(f"{name}.jsonc",),
        ),
        Location("plugin_home", "", env=(f"{env}_CONFIG_DIR",), under="config", holds="plugins/funes.js"),
        Location("data_base", ".local/share", env=("XDG_DATA_HOME",), holds="the XDG data folder"),
        Location("data", name, under="data_base", holds=f"{name}*.db (the sessions)"),
    )


#: The capture plugin ``funes.js`` (its body is ``capture.js`` here); a fork names its own hook module.
CAPTURE = PluginFile(location="plugin_home", source="funes_opencode:capture.js", module="funes_opencode.hook")

AGENT = Agent(
    id="opencode",
    label="OpenCode",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=True, memory_binding=True),
    locations=fork_locations("opencode", "OpenCode", "OPENCODE"),
    plugin_file=CAPTURE,
    mcp=McpServer(
        location="config_file",
        path=("mcp",),
        entry={"type": "local", "command": Slot.MCP_ARGV, "enabled": True},
    ),
)
#: Names the session database (absolute, or relative to the data folder).
ENV_DB = "OPENCODE_DB"


def databases(home: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The session databases OpenCode may have written, ``$OPENCODE_DB`` first (may not exist).

    ``OPENCODE_DB`` counts only for the environment's own HOME, like every location variable.
    """
    return find_databases(AGENT, ENV_DB, "opencode", home, environ)


def find_databases(
    agent: Agent, env_db: str, stem: str, home: Path, environ: Mapping[str, str] | None = None
) -> list[Path]:
    """The ``STEM*.db`` files of ``agent``'s ``data`` folder, ``$ENV_DB`` first (may not exist).

    Shared with OpenCode's forks (Kilo Code's CLI keeps the same tables in ``kilo.db``), which differ
    only in the names.
    """
    env = os.environ if environ is None else environ
    data = agent.path("data", home, environ=env)
    found: list[Path] = []
    pinned = env.get(env_db, "").strip()
    own = env.get("HOME", "").strip()
    if pinned and pinned != ":memory:" and own and Path(own).absolute() == home.absolute():
        found.append(Path(pinned) if os.path.isabs(pinned) else data / pinned)
    found.extend(sorted(p for p in data.glob(f"{stem}*.db") if p.is_file()) if data.is_dir() else [])
    if not found:
        found.append(data / f"{stem}.db")
    return list(dict.fromkeys(found))

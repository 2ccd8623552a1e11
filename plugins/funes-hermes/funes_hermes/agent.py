"""Who funes-hermes is and where Hermes keeps things (``$HERMES_HOME``, default ``~/.hermes``).

Hermes profiles (hermes-agent 0.19, verified): ``hermes profile create NAME`` makes
``~/.hermes/profiles/NAME/`` (its own ``config.yaml`` and ``state.db``); ``hermes -p NAME`` runs in
it (Hermes sets ``HERMES_HOME`` to that folder, so the hook, which runs in Hermes' environment,
follows); ``hermes profile use NAME`` makes it sticky by writing ``~/.hermes/active_profile``, and
later runs without ``-p`` use it. So the Hermes home in effect is ``$HERMES_HOME``, else the sticky
profile's folder, else ``~/.hermes``: that is what install wires, and ``funes integrations info``
names the reason. Discovery reads every profile: the root's ``state.db`` (the default profile)
and each ``profiles/*/state.db``.

**Wiring**, both in ``config.yaml`` through the core's YAML adapter, which keeps every other byte:

* the hook: ``hooks.on_session_end`` gets ``{command: "<python> -I -m funes_hermes.hook --funes-home
  <dir> -- <funes>"}`` (the core's hook runtime: it returns in tens of milliseconds). Hermes fires
  ``on_session_end`` at the end of *every* turn (every run of its conversation loop, completed or
  interrupted), after the turn's messages are saved to ``state.db``; the event is small (no
  conversation copy on stdin, unlike ``post_llm_call``). Hermes runs the command without a shell
  and waits for it, so the command converts one session and returns at once, leaving the indexing
  to a detached ``funes index``;
* the MCP server: ``mcp_servers.funes`` gets ``{command, args, env: {FUNES_HOME}}``. Hermes starts
  MCP servers with a filtered environment (PATH, HOME, ...), so FUNES_HOME must be recorded for
  ``funes mcp`` to find the memory this installation uses.

``hermes mcp add`` is deliberately not used: Hermes 0.19 re-writes the whole file through its YAML
dumper, dropping the user's comments and layout and adding its template.

Standard library only: the hook imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from funes_core import Agent, Hooks, Location, McpServer, Resolved, Slot

__all__ = ["CONFIG_NAME", "HERMES", "HOOK_MODULE", "STATE_DB", "active_profile", "hermes_root", "state_dbs"]

#: Hermes' settings file inside its home (it reads no other name).
CONFIG_NAME = "config.yaml"
#: Hermes' session database inside its home.
STATE_DB = "state.db"
#: The module Hermes runs after each turn (the core's hook runtime does the work).
HOOK_MODULE = "funes_hermes.hook"


def active_profile(home: Path) -> str | None:
    """The sticky profile ``hermes profile use NAME`` recorded, when it is not the default."""
    try:
        name = (home / ".hermes" / "active_profile").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name if name and name != "default" and "/" not in name and not name.startswith(".") else None


class _HermesAgent(Agent):
    """:class:`Agent` whose default home is the sticky profile's folder when there is one."""

    def locate(
        self,
        name: str,
        home: Path,
        extra_env: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Resolved:
        where = super().locate(name, home, extra_env, environ)
        profile = active_profile(home) if where.source == "default" else None
        folder = home / ".hermes" / "profiles" / profile if profile else None
        if folder is None or not folder.is_dir():
            return where
        return Resolved(
            folder / where.path.relative_to(home / ".hermes"), f"profile {profile} (hermes profile use)"
        )


def hermes_root(home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The folder holding the default profile and ``profiles/``, as Hermes' ``get_default_hermes_root``.

    ``HERMES_HOME`` inside ``~/.hermes`` (a profile) -> ``~/.hermes``; ending in ``profiles/<name>``
    -> two levels up; any other ``HERMES_HOME`` is the root itself; unset -> ``~/.hermes``.
    """
    native = home / ".hermes"
    where = Agent.locate(HERMES, "home", home, None, environ)
    if where.source == "default" or where.path == native or native in where.path.parents:
        return native
    return where.path.parent.parent if where.path.parent.name == "profiles" else where.path


def state_dbs(home: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Every profile's session database: the one in effect first, then the root's and ``profiles/*``."""
    root = hermes_root(home, environ)
    found = [HERMES.path("state", home, environ=environ), root / STATE_DB]
    profiles = root / "profiles"
    if profiles.is_dir():
        found.extend(sorted(p / STATE_DB for p in profiles.iterdir() if p.is_dir()))
    return list(dict.fromkeys(found))


HERMES = _HermesAgent(
    id="hermes",
    label="Hermes",
    contract_version=2,  # the plugin contract this integration was written and checked for
    locations=(
        Location("home", ".hermes", env=("HERMES_HOME",), holds="Hermes' home (the active profile)"),
        Location("config", CONFIG_NAME, under="home", holds="hooks and MCP servers"),
        Location("state", STATE_DB, under="home", holds="sessions (SQLite)"),
    ),
    hooks=Hooks(
        location="config",
        format="yaml",
        module=HOOK_MODULE,
        events=("on_session_end",),
        entry={"command": Slot.HOOK},
    ),
    mcp=McpServer(
        location="config",
        format="yaml",
        path=("mcp_servers",),
        entry={"command": Slot.PROGRAM, "args": Slot.ARGS, "env": {"FUNES_HOME": Slot.FUNES_HOME}},
    ),
)

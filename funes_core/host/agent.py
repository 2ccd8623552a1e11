"""Who an integration is, declared once: its id, label, contract, capabilities and the agent's places.

Every class a plugin registers (converter, hook installer, tool registrar) used to repeat the same
four class attributes, and every plugin re-derived where its agent keeps things (``CODEX_HOME``,
``HERMES_HOME``, ...) in its own ``paths`` module. An :class:`Agent` holds all of it once::

    CODEX = Agent(
        id="codex",
        label="Codex",
        contract_version=2,
        locations=(
            Location("home", ".codex", env=("CODEX_HOME",)),
            Location("sessions", "sessions", under="home"),
        ),
    )

    class CodexConverter(Converter, agent=CODEX): ...

and :meth:`Agent.locate` applies one rule for every agent, which also says *why* a path was chosen
(the default, or which variable), for ``funes integrations info``.

This module imports the standard library only (and ``portable``, which does too): per-turn hooks
import it on every turn of every agent session, and must start in a few tens of milliseconds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from funes_core import portable

__all__ = [
    "CONTRACT_VERSION",
    "SUPPORTED_CONTRACTS",
    "Agent",
    "Capabilities",
    "Hooks",
    "Location",
    "McpServer",
    "Package",
    "PluginFile",
    "Resolved",
    "Slot",
]

#: The plugin contract this funes speaks (what the kit checks and new plugins declare).
CONTRACT_VERSION = 2
#: Every contract a plugin may declare and still be loaded; older ones get a deprecation note.
SUPPORTED_CONTRACTS = frozenset({1, 2})


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What an integration supports, so the contract suite skips (with a reason) what it lacks.

    Defaults are what a typical agent integration has; declare ``False`` for what yours lacks.
    Capabilities are never used to *excuse* a broken feature, only to say it does not exist:
    ``funes integrations check`` counts a skip as conformant only when a capability explains it.
    """

    #: The converter can find the agent's sessions on this machine (``discover``). An importer of
    #: hand-exported files (an issue tracker dump, say) has nothing to discover and says ``False``.
    discover: bool = True
    #: The registrar can bind a memory (records ``funes mcp MEMORY``), not only the local one.
    memory_binding: bool = True
    #: The agent writes times *without an offset in the machine's local time* (aider's history
    #: headers). Its converter reads them with ``parse_ts(value, naive="local")``; the kit then
    #: runs the goldens under UTC and requires a far-off zone to move exactly those times by
    #: exactly that zone's offset, instead of requiring the same output in every zone.
    local_time: bool = False


@dataclass(frozen=True, slots=True)
class Location:
    """One place the agent keeps things, and how its user relocates it.

    ``default`` is relative to the HOME (``".codex"``), or to the location named by ``under``
    (``Location("sessions", "sessions", under="home")``). The first variable of ``env`` that is
    set replaces the whole path (a leading ``~`` means the HOME).
    """

    name: str
    default: str
    env: tuple[str, ...] = ()
    under: str | None = None
    #: What the place holds, for ``funes integrations info`` ("config", "transcripts", ...).
    holds: str = ""
    #: Names beside the default tried first, when nothing relocated it: the first that exists is
    #: the place (OpenCode reads ``opencode.jsonc`` before ``opencode.json``).
    prefer: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Resolved:
    """A location's path and why: ``"default"`` or the variable that set it."""

    path: Path
    source: str


def _expand(value: str, home: Path) -> Path:
    if value == "~":
        return home
    if value.startswith("~/"):
        return home / value[2:]
    return Path(value)


def _same_place(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a.absolute() == b.absolute()


class Slot(Enum):
    """A value of a declared entry that funes fills in at install, from the installation's context.

    An entry's shape is written as the agent reads it, with these in the places funes decides::

        {"type": "command", "command": Slot.HOOK, "timeout": 30}
        {"command": Slot.PROGRAM, "args": Slot.ARGS, "env": {"FUNES_HOME": Slot.FUNES_HOME}}
    """

    #: The hook's command line: ``python -I -m <Hooks.module> --funes-home DIR -- FUNES...``.
    HOOK = "hook"
    #: The same as an argv list (for an agent that takes a list).
    HOOK_ARGV = "hook_argv"
    #: ``funes integrations convert ID <Hooks.source> SPOOL --index`` as an argv list: for an agent
    #: that puts the transcript's path into the command itself (no hook module runs).
    CONVERT = "convert"
    #: The MCP server's program (``funes mcp [MEMORY]``'s first word) and its arguments.
    PROGRAM = "program"
    ARGS = "args"
    #: The whole MCP command as an argv list.
    MCP_ARGV = "mcp_argv"
    #: ``$FUNES_HOME`` of the installation, as a string.
    FUNES_HOME = "funes_home"


@dataclass(frozen=True, slots=True)
class Hooks:
    """Where and how the agent runs funes after each turn: the core builds the hook installer from it.

    funes adds ``entry`` (its :class:`Slot` values filled in) to the list at ``(*path, event)`` of
    the config file at location ``location``, for each of ``events``; with ``key``, it sets the
    member ``key`` of the mapping at ``path`` instead (``events`` is then empty). ``grouped``: each
    event's list holds matcher groups ``{"hooks": [handler]}`` (the Claude Code shape) and
    ``entry`` is the handler.

    **Which entry is funes'** is decided by one rule: with ``marker`` (a key and its value, added
    to the entry), the marker; otherwise the entry's command, which runs ``-m <module>`` (the
    plugin's hook module). In a group, funes' handlers are recognised one by one, so a group the
    user added a handler to keeps that handler when funes is removed (unless ``per_handler`` is off).
    """

    location: str
    entry: Mapping[str, Any]
    events: tuple[str, ...] = ()
    #: The plugin's hook module (its ``locate()``), run by :attr:`Slot.HOOK`.
    module: str = ""
    path: tuple[str, ...] = ("hooks",)
    key: str | None = None
    grouped: bool = False
    #: ``"json"``, ``"toml"`` or ``"yaml"``.
    format: str = "json"
    marker: tuple[str, str] | None = None
    #: The comment that marks funes' text, in a format that has comments (default ``funes-<id>``).
    comment: str | None = None
    #: What the agent replaces with the transcript's path in a :attr:`Slot.CONVERT` command.
    source: str = "{transcript}"
    #: With ``grouped``: funes' handlers are recognised one by one in any group, so a user's handler
    #: added to funes' group stays on removal (Claude Code, Gemini). ``False``: a group is funes'
    #: only when every handler in it is, and a group the user mixed a handler into is left whole (Codex).
    per_handler: bool = True


@dataclass(frozen=True, slots=True)
class McpServer:
    """Where the agent keeps its MCP servers: the core builds the tool registrar from it.

    funes' server is the member ``name`` of the mapping at ``path`` in the config file at location
    ``location`` (``list_item``: an item of the list at ``path`` whose ``"name"`` is ``name``).
    Its value is ``entry`` with the :class:`Slot` values filled in.

    **Which entry is funes'**: with ``marker`` (a key and its value, added to the entry), the
    marker; otherwise the entry runs ``… mcp [MEMORY]`` (a string command, a list of string
    arguments holding ``mcp``), whoever wrote it. A format with comments also marks funes' text
    with ``comment`` (default ``funes-<id>``).
    """

    location: str
    entry: Mapping[str, Any] = field(default_factory=lambda: {"command": Slot.PROGRAM, "args": Slot.ARGS})
    path: tuple[str, ...] = ("mcpServers",)
    name: str = "funes"
    list_item: bool = False
    format: str = "json"
    marker: tuple[str, str] | None = None
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class PluginFile:
    """A file funes owns whole in the folder an agent loads its plugins from; it starts the hook.

    For an agent with no shell hooks but a plugin system (OpenCode and its fork Kilo): funes writes
    ``name`` into ``folder`` under the location ``location``, and the agent loads it at start.
    Its text is the package resource ``source`` (``"package:file"``), with ``{hook_argv}``
    replaced by the hook's argv (``python -I -m <module> …``) as a JSON array, after two lines
    of funes' own, each a ``comment``: the header ``funes-<id>: captures each <label> turn into
    funes' memory.``, and the folders install created (removal takes them away again, while empty).

    **Which file is funes'**: the one whose first line is that header. Any other file of that
    name is the user's: install refuses it and removal leaves it alone.
    """

    location: str
    source: str
    #: The plugin's hook module (its ``locate()``), which the file starts detached.
    module: str
    name: str = "funes.js"
    folder: str = "plugins"
    comment: str = "//"


@dataclass(frozen=True, slots=True)
class Package:
    """A package funes installs for an agent that loads packages: it runs the hook and the MCP tools.

    For an agent with neither hooks nor an MCP client but packages of its own (pi): funes copies
    ``files`` of the package resource folder ``source`` (``"package:folder"``) into
    ``$FUNES_HOME/integrations/<folder>``, writes ``config`` beside them, and adds that folder to the
    list at ``path`` of the JSON file at location ``location``, where the agent's own ``install``
    would record it. ``config`` holds one key per part, which the package reads: ``hook``, ``{"argv":
    funes integrations convert <id> <placeholder> --index, "env"}`` (the package puts the session
    file in for ``placeholder``), and ``mcp``, ``{"argv": funes mcp [MEMORY], "memory", "env",
    "tool_prefix"}``; ``format`` is its layout's version. The first part installed puts the package
    in place, the last one removed takes it away with the list entry and the folders funes made.

    **Which entry is funes'**: a string naming that folder, as funes writes it (absolute) or as the
    agent's own install does (``~/…``, or relative to the listing file's folder).
    """

    source: str
    #: The package's files, relative to ``source`` and to the installed copy.
    files: tuple[str, ...]
    location: str
    folder: str
    path: tuple[str, ...] = ("packages",)
    config: str = "funes.json"
    placeholder: str = "{session_file}"
    tool_prefix: str = "mcp__funes__"
    config_format: int = 1


@dataclass(frozen=True, slots=True)
class Agent:
    """The identity of one integration, shared by all its parts (see the module docstring)."""

    id: str
    label: str
    #: The plugin contract the integration was written for: required, never inherited from the
    #: installed core (a plugin taking the host's number would claim a contract it never saw).
    contract_version: int
    capabilities: Capabilities = field(default_factory=Capabilities)
    locations: tuple[Location, ...] = ()
    #: The per-turn hooks, declared (``None``: the agent has none, or its installer is hand-written).
    hooks: Hooks | None = None
    #: The MCP server entry, declared (``None``: none, or a hand-written registrar).
    mcp: McpServer | None = None
    #: The plugin file that runs the hooks, declared (``None``: none, or a hand-written installer).
    plugin_file: PluginFile | None = None
    #: The package that runs the hook and the MCP tools, declared (``None``: none).
    package: Package | None = None

    def location(self, name: str) -> Location:
        for loc in self.locations:
            if loc.name == name:
                return loc
        raise KeyError(f"{self.id} declares no location {name!r}")

    def locate(
        self,
        name: str,
        home: Path,
        extra_env: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Resolved:
        """Where location ``name`` is for a HOME, and why.

        The rule, the same for every agent: a variable in ``extra_env`` (an installation context
        naming it explicitly) wins; a variable of the process environment ``environ`` (default
        ``os.environ``) applies only when ``home`` *is* that environment's HOME, so a throwaway
        HOME (a contract test) can never reach the developer's own relocated agent; otherwise the
        default, under ``home`` or under the location it is declared ``under``.
        """
        loc = self.location(name)
        env = os.environ if environ is None else environ
        extra = extra_env or {}
        own_home = portable.user_home(env)
        sources = [extra]
        if own_home and _same_place(Path(own_home), home):
            sources.append(env)
        for source in sources:
            for var in loc.env:
                value = source.get(var, "").strip()
                if value:
                    return Resolved(_expand(value, home).absolute(), var)
        if loc.under is None:
            where = Resolved(home / loc.default.removeprefix("~/"), "default")
        else:
            parent = self.locate(loc.under, home, extra, env)
            where = Resolved(parent.path / loc.default, parent.source)
        if where.source == "default":
            for name in loc.prefer:
                if where.path.with_name(name).is_file():
                    return Resolved(where.path.with_name(name), "default")
        return where

    def path(
        self,
        name: str,
        home: Path,
        extra_env: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Path:
        """:meth:`locate`'s path alone."""
        return self.locate(name, home, extra_env, environ).path

    def describe(
        self, home: Path, extra_env: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None
    ) -> dict[str, Resolved]:
        """Every declared location, resolved (what ``funes integrations info`` shows)."""
        return {loc.name: self.locate(loc.name, home, extra_env, environ) for loc in self.locations}

"""The hook installer and tool registrar an :class:`~funes_core.Agent` declares, built by the core.

A plugin used to write both by hand: the entry, its place, the adapter and, five different ways,
the rule that says whether an entry in the user's config is funes' (the rule ``remove`` trusts
before it takes anything out). Now the agent declares them as data (:class:`~funes_core.Hooks`,
:class:`~funes_core.McpServer`) and a plugin names the two classes::

    class GeminiHookInstaller(AgentHookInstaller, agent=AGENT):
        \"\"\"funes' AfterAgent and SessionEnd hooks in ~/.gemini/settings.json.\"\"\"

    class GeminiToolRegistrar(AgentToolRegistrar, agent=AGENT):
        \"\"\"mcpServers.funes in ~/.gemini/settings.json.\"\"\"

Everything else is :class:`~funes_core.wiring.configedit.managed.ManagedWiring`'s (idempotent,
byte-preserving, exact removal, all or nothing). An agent that loads a plugin file instead of
running hook commands (OpenCode, Kilo) declares a :class:`~funes_core.PluginFile` instead of
:class:`~funes_core.Hooks` (:mod:`funes_core.wiring.pluginfile` writes that file whole). An agent
with a mechanism of its own overrides only that: :meth:`entries` to add an entry, ``register`` to
drive the agent's CLI, ``ours`` to also accept what an older release wrote.

The rules, one per kind of entry (see the declarations' docstrings): a declared marker key, else
the command funes installed (a hook running ``-m <hook module>``, a server running ``… mcp``); a
plugin file is funes' by its first line.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import Any

from funes_core.host.agent import Hooks, McpServer, Slot
from funes_core.host.api import HookInstaller, InstallContext, IntegrationPart, ToolRegistrar
from funes_core.wiring.configedit.base import Adapter, ConfigFile, Place
from funes_core.wiring.configedit.json import JsonFormat, remove_items, value_at
from funes_core.wiring.configedit.managed import ManagedEntry, ManagedWiring, runs_module

__all__ = ["AgentHookInstaller", "AgentToolRegistrar", "adapter_for", "declaration", "fill", "runs_mcp"]

Rule = Callable[[Any], bool]


def adapter_for(name: str) -> Adapter:
    """The editor of a declared format: ``"json"``, ``"toml"`` or ``"yaml"``."""
    if name == "json":
        return JsonFormat()
    if name == "toml":
        from funes_core.wiring.configedit.toml import TomlFormat

        return TomlFormat()
    if name == "yaml":
        from funes_core.wiring.configedit.yaml import YamlFormat

        return YamlFormat()
    raise ValueError(f"unknown config format {name!r} (json, toml or yaml)")


def fill(shape: Any, slots: Mapping[Slot, Any]) -> Any:
    """``shape`` with every :class:`Slot` replaced by its value (mappings and lists walked, order kept)."""
    if isinstance(shape, Slot):
        return slots[shape]
    if isinstance(shape, Mapping):
        return {key: fill(value, slots) for key, value in shape.items()}
    if isinstance(shape, list | tuple):
        return [fill(value, slots) for value in shape]
    return shape


def _slots(ctx: InstallContext, ident: str, hooks: Hooks | None) -> dict[Slot, Any]:
    mcp = ctx.mcp_command()
    hook = ctx.hook_argv(hooks.module) if hooks is not None and hooks.module else []
    source = hooks.source if hooks is not None else ""
    return {
        Slot.HOOK: shlex.join(hook),
        Slot.HOOK_ARGV: hook,
        Slot.CONVERT: ctx.convert_command(ident, source),
        Slot.PROGRAM: mcp[0],
        Slot.ARGS: mcp[1:],
        Slot.MCP_ARGV: mcp,
        Slot.FUNES_HOME: str(ctx.funes_home),
    }


def _marked(entry: Mapping[str, Any], marker: tuple[str, str] | None) -> Mapping[str, Any]:
    return entry if marker is None else {**entry, marker[0]: marker[1]}


def _has_marker(marker: tuple[str, str]) -> Rule:
    key, mark = marker
    return lambda value: isinstance(value, dict) and value.get(key) == mark


def runs_mcp(value: Any) -> bool:
    """An MCP server entry running ``… mcp [MEMORY]``: a string command, string args holding ``mcp``."""
    if not isinstance(value, dict) or not isinstance(value.get("command"), str):
        return False
    args = value.get("args", [])
    return isinstance(args, list) and all(isinstance(a, str) for a in args) and "mcp" in args


def _argv_key(entry: Mapping[str, Any]) -> str | None:
    """The key holding the whole MCP command as a list (:attr:`Slot.MCP_ARGV`), if the entry has one."""
    return next((key for key, value in entry.items() if value is Slot.MCP_ARGV), None)


def _runs_mcp_argv(value: Any, key: str) -> bool:
    """An MCP server entry whose ``key`` is an argv list of strings holding ``mcp``."""
    argv = value.get(key) if isinstance(value, dict) else None
    return isinstance(argv, list) and all(isinstance(a, str) for a in argv) and "mcp" in argv


def _command_key(entry: Mapping[str, Any]) -> str:
    """The key whose value is the hook's command line (what marks a handler without a marker)."""
    for key, value in entry.items():
        if value is Slot.HOOK:
            return key
    raise ValueError("a declared hook entry without a marker needs a Slot.HOOK command")


def declaration(part: IntegrationPart, field: str, what: str) -> Any:
    """The declaration ``field`` of the part's agent; a part whose agent lacks it is a plugin's bug."""
    declared = getattr(part.agent, field, None) if part.agent is not None else None
    if declared is None:
        raise LookupError(f"{type(part).__name__}'s agent declares no {what}")
    return declared


class AgentHookInstaller(ManagedWiring, HookInstaller):
    """The hook installer of an agent's :class:`~funes_core.Hooks` declaration (module docstring)."""

    @property
    def hooks(self) -> Hooks:
        declared: Hooks = declaration(self, "hooks", "hooks")
        return declared

    def ours(self, handler: Any) -> bool:
        """Whether a handler (an item, or a member) is funes': the declared marker, else its command.

        The command is the one :attr:`Slot.HOOK` fills in: it runs ``-m <module>``. When the entry
        declares a ``type`` (``"command"``), a handler of another type is never funes'.
        """
        hooks = self.hooks
        if hooks.marker is not None:
            return _has_marker(hooks.marker)(handler)
        kind = hooks.entry.get("type")
        if isinstance(kind, str) and (not isinstance(handler, dict) or handler.get("type") != kind):
            return False
        return runs_module(hooks.module, key=_command_key(hooks.entry))(handler)

    def ours_group(self, group: Any) -> bool:
        """A matcher group holding only funes' handlers (what install appends), and no other key."""
        if not isinstance(group, dict) or set(group) - {"hooks", "matcher"}:
            return False
        handlers = group.get("hooks")
        return isinstance(handlers, list) and bool(handlers) and all(self.ours(h) for h in handlers)

    def what(self, event: str | None) -> str:
        """How one entry is named to the user."""
        return f"the funes {event} hook" if event else "the funes hook"

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        hooks = self.hooks
        handler = fill(_marked(hooks.entry, hooks.marker), _slots(ctx, self.id, hooks))
        value = {"hooks": [handler]} if hooks.grouped else handler
        places: list[tuple[Place, str | None]] = [(Place(hooks.path, hooks.key), None)] if hooks.key else []
        places += [(Place((*hooks.path, event)), event) for event in hooks.events]
        return [
            ManagedEntry(
                path=self.where(hooks.location, ctx),
                adapter=adapter_for(hooks.format),
                place=place,
                value=value,
                ours=self.ours_group if hooks.grouped else self.ours,
                what=self.what(event),
                comment=hooks.comment,
            )
            for place, event in places
        ]

    def present(self, entry: ManagedEntry, values: list[Any]) -> list[Any]:
        """funes' handlers wherever they sit in an event's groups (a user may add theirs to ours)."""
        if not self.hooks.grouped or not self.hooks.per_handler:
            return super().present(entry, values)
        handlers = [
            h for g in values if isinstance(g, dict) and isinstance(g.get("hooks"), list) for h in g["hooks"]
        ]
        return [{"hooks": [h]} for h in handlers if self.ours(h)]

    def tidy(self, entry: ManagedEntry, text: str) -> str:
        """Take funes' handlers out of groups the user added their own handlers to (theirs stay)."""
        if not self.hooks.grouped or not self.hooks.per_handler:
            return text
        groups = value_at(text, list(entry.place.path))
        for index in reversed(range(len(groups) if isinstance(groups, list) else 0)):
            if not self.ours_group(groups[index]):
                text = remove_items(text, [*entry.place.path, index, "hooks"], self.ours, prune=False)
        return text


class AgentToolRegistrar(ManagedWiring, ToolRegistrar):
    """The tool registrar of an agent's :class:`~funes_core.McpServer` declaration (module docstring)."""

    @property
    def server(self) -> McpServer:
        declared: McpServer = declaration(self, "mcp", "MCP server")
        return declared

    def ours(self, value: Any) -> bool:
        """Whether a server entry is funes': the declared marker, else it runs ``… mcp``.

        "Runs ``… mcp``" in the entry's declared shape: a string command with a list of string
        arguments holding ``mcp``, or, where the entry takes the command as one list
        (:attr:`Slot.MCP_ARGV`), that list holding ``mcp``.
        """
        server = self.server
        if server.marker is not None:
            return _has_marker(server.marker)(value)
        named = not server.list_item or (isinstance(value, dict) and value.get("name") == server.name)
        argv_key = _argv_key(server.entry)
        return named and (runs_mcp(value) if argv_key is None else _runs_mcp_argv(value, argv_key))

    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        """The command as the agent will run it: ``command`` + ``args``, or the declared argv list."""
        key = _argv_key(self.server.entry)
        if key is None:
            return self.recorded_command(ctx)
        for entry in self.entries(ctx):
            doc = ConfigFile(entry.path, entry.adapter)
            found, _ = self._found(doc, doc.read(), entry)
            if found:
                return [str(word) for word in found[0][key]]
        return None

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        server = self.server
        entry = _marked(server.entry, server.marker)
        if server.list_item:
            entry = {"name": server.name, **entry}
        return [
            ManagedEntry(
                path=self.where(server.location, ctx),
                adapter=adapter_for(server.format),
                place=Place(server.path, None if server.list_item else server.name),
                value=fill(entry, _slots(ctx, self.id, None)),
                ours=self.ours,
                what="the funes MCP server",
                comment=server.comment,
            )
        ]

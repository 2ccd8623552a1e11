"""Wires funes into Codex: hooks in ``$CODEX_HOME/hooks.json``, the MCP server in ``config.toml``.

**Hooks.** ``hooks.json`` has Claude Code's shape (``{"hooks": {"Stop": [{"hooks": [{"type":
"command", "command": "…"}]}]}}``). funes-codex appends one matcher group to ``Stop`` (the end
of every turn) and one to ``SessionEnd`` (a session closed before its last Stop was indexed),
each running :mod:`funes_codex.hook`. That module's name inside the command is the marker: a
group is funes-codex's when every handler in it runs ``-m funes_codex.hook``, so removal takes
out exactly those groups, through :mod:`funes_core.host.configedit.json`, byte for byte (a file left holding
nothing, ``{}``, is deleted: funes-codex created it, or it told Codex nothing). Codex ignores
hooks nobody trusted, so the summary says to trust them once with ``/hooks``.

**MCP server.** ``[mcp_servers.funes]`` runs ``funes mcp [MEMORY]``, with what Codex needs for
the tools to be there on the *first* request of a session (without it they are missing about
half the time, and an MCP call is refused under ``codex exec``):

* ``default_tools_approval_mode = "approve"``: funes' tools only read the memory;
* a top-level ``mcp_optional_startup_grace_ms`` (Codex waits 1 s by default for optional MCP
  servers; ``funes mcp`` needs a few) unless the user set one. ``required = true`` would do
  too, but it stops every Codex session from starting whenever funes cannot, which is not a
  memory tool's call to make;
* ``env`` pins ``FUNES_HOME`` and ``env_vars`` forwards ``FUNES_EMBEDDER`` / ``FUNES_LOG``:
  Codex starts MCP servers with a minimal environment (HOME, PATH, LANG, …), so without them
  the server would read another memory than the one the hooks write to.

The table is written into the file directly (:mod:`funes_codex.tomledit`), not with ``codex mcp
add``: Codex 0.171 rewrites every ``[mcp_servers.*]`` table when it adds one, dropping the
user's comments in them, and resets the file's mode, so the user's bytes would not survive a
remove. The block's marker comment is what proves it is ours; a ``[mcp_servers.funes]`` without
it (a hand-made registration) is never touched.
"""

from __future__ import annotations

import itertools
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from funes_codex.paths import codex_home_for
from funes_codex.tomledit import Block, MarkedLine, TomlEditError, parse, read_toml_text, write_toml_text
from funes_core import (
    Capabilities,
    ConfigError,
    EditError,
    HookInstaller,
    InstallContext,
    Outcome,
    Status,
    ToolRegistrar,
    WiringState,
    append_item,
    read_json_text,
    remove_items,
    value_at,
    write_json_text,
)

__all__ = [
    "EVENTS",
    "GRACE_MS",
    "HOOK_MODULE",
    "CodexHookInstaller",
    "CodexToolRegistrar",
    "hook_command",
]

#: The module every funes-codex hook runs; its name in a command marks the hook as ours.
HOOK_MODULE = "funes_codex.hook"
#: The Codex hook events funes-codex listens to.
EVENTS = ("Stop", "SessionEnd")
#: How long Codex may wait for optional MCP servers before the first request (milliseconds).
GRACE_MS = 15000
#: Environment variables of funes that Codex should pass on to ``funes mcp``.
FORWARDED_ENV = ("FUNES_EMBEDDER", "FUNES_LOG")

_SERVER = Block(
    ("mcp_servers", "funes"),
    "# Added by funes-codex: funes' memory tools. `funes integrations remove codex` removes this block.",
)
_GRACE = MarkedLine(
    "mcp_optional_startup_grace_ms", "# added by funes-codex: wait for funes' memory tools at startup"
)


def _shown(path: Path, ctx: InstallContext) -> str:
    try:
        return "~/" + path.relative_to(ctx.home).as_posix()
    except ValueError:
        return str(path)


def hook_command(ctx: InstallContext) -> str:
    """The shell command Codex runs for funes' hooks.

    ``python -I -m funes_codex.hook`` with this interpreter (the one funes and this plugin are
    installed in) reads Codex's JSON from stdin and starts the conversion detached, so the hook
    costs Codex a Python start-up, not a funes one. ``-I`` keeps the project Codex runs in (its
    folder, its ``PYTHONPATH``) out of the hook's imports. The funes command to run, and the
    FUNES_HOME to run it against, are recorded in the command: Codex's environment may not say.
    """
    argv = [
        sys.executable,
        "-I",
        "-m",
        HOOK_MODULE,
        "--funes-home",
        str(ctx.funes_home),
        "--",
        *ctx.funes_command,
    ]
    return shlex.join(argv)


def _runs_our_hook(handler: object) -> bool:
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    return any(a == "-m" and b == HOOK_MODULE for a, b in itertools.pairwise(words))


def _is_our_group(group: object) -> bool:
    """A matcher group funes-codex appended: every handler in it runs our hook module."""
    if not isinstance(group, dict):
        return False
    handlers = group.get("hooks")
    return isinstance(handlers, list) and bool(handlers) and all(_runs_our_hook(h) for h in handlers)


def _group(command: str) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": command}]}


class CodexHookInstaller(HookInstaller):
    """Adds funes' ``Stop`` and ``SessionEnd`` hooks to ``$CODEX_HOME/hooks.json`` (module docstring)."""

    id = "codex"
    label = "Codex"
    contract_version = 1
    capabilities = Capabilities()

    def hooks_path(self, ctx: InstallContext) -> Path:
        return codex_home_for(ctx.home, ctx.extra_env) / "hooks.json"

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [self.hooks_path(ctx)]

    def _read(self, path: Path) -> tuple[str | None, dict[str, list[str]]]:
        """The file's text and, per event, the commands of funes-codex's groups in it."""
        try:
            text = read_json_text(path)
            ours: dict[str, list[str]] = {}
            for event in EVENTS:
                groups = value_at(text, ["hooks", event])
                if groups is not None and not isinstance(groups, list):
                    raise EditError(f"hooks.{event} is not an array")
                ours[event] = [h["command"] for g in groups or [] if _is_our_group(g) for h in g["hooks"]]
        except EditError as exc:
            raise ConfigError(path, str(exc)) from None
        return text, ours

    def install(self, ctx: InstallContext) -> Outcome:
        path = self.hooks_path(ctx)
        shown = _shown(path, ctx)
        text, ours = self._read(path)
        command = hook_command(ctx)
        if all(ours[event] == [command] for event in EVENTS):
            return Outcome(False, f"the funes hooks are already in {shown}")
        try:
            new = text
            for event in EVENTS:
                if ours[event] and new is not None:
                    new = remove_items(new, ["hooks", event], _is_our_group)
            for event in EVENTS:
                new = append_item(new, ["hooks", event], _group(command))
            assert new is not None
            write_json_text(path, new)
        except EditError as exc:
            raise ConfigError(path, str(exc)) from None
        verb = "updated" if any(ours.values()) else "added"
        return Outcome(
            True,
            f"{verb} the funes Stop and SessionEnd hooks in {shown} "
            "(Codex runs hooks once you trust them: /hooks in Codex)",
        )

    def uninstall(self, ctx: InstallContext) -> Outcome:
        path = self.hooks_path(ctx)
        shown = _shown(path, ctx)
        text, ours = self._read(path)
        if text is None or not any(ours.values()):
            return Outcome(False, f"no funes hooks in {shown}")
        try:
            new = text
            for event in EVENTS:
                new = remove_items(new, ["hooks", event], _is_our_group)
            if json.loads(new) == {}:
                # Nothing is left (whatever the layout): the file was funes-codex's own, or an
                # empty one, which tells Codex the same as no file. Either way it goes.
                path.unlink()
            else:
                write_json_text(path, new)
        except EditError as exc:
            raise ConfigError(path, str(exc)) from None
        return Outcome(True, f"removed the funes hooks from {shown}")

    def status(self, ctx: InstallContext) -> Status:
        path = self.hooks_path(ctx)
        shown = _shown(path, ctx)
        try:
            _, ours = self._read(path)
        except ConfigError as exc:
            return Status(WiringState.BROKEN, str(exc))
        if not any(ours.values()):
            return Status(WiringState.NOT_WIRED, shown)
        if all(ours[event] == [hook_command(ctx)] for event in EVENTS):
            return Status(WiringState.WIRED, f"{shown}: {', '.join(EVENTS)}")
        return Status(WiringState.OUTDATED, f"{shown} runs another funes command, or misses an event")


class CodexToolRegistrar(ToolRegistrar):
    """Adds ``[mcp_servers.funes]`` (``funes mcp [MEMORY]``) to ``$CODEX_HOME/config.toml``."""

    id = "codex"
    label = "Codex"
    contract_version = 1
    capabilities = Capabilities()

    def config_path(self, ctx: InstallContext) -> Path:
        return codex_home_for(ctx.home, ctx.extra_env) / "config.toml"

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [self.config_path(ctx)]

    @staticmethod
    def value(ctx: InstallContext) -> dict[str, Any]:
        """The ``[mcp_servers.funes]`` table for this context (see the module docstring)."""
        argv = ctx.mcp_command()
        return {
            "command": argv[0],
            "args": argv[1:],
            "env": {"FUNES_HOME": str(ctx.funes_home)},
            "env_vars": list(FORWARDED_ENV),
            "default_tools_approval_mode": "approve",
        }

    def _read(self, path: Path) -> tuple[str | None, Any, bool, bool]:
        """The text, the funes server table, whether it is ours, and whether a grace is set."""
        try:
            text = read_toml_text(path)
            if text is None:
                return None, None, False, False
            data = parse(text)
            return text, _SERVER.value(text), _SERVER.is_ours(text), _GRACE.key in data
        except TomlEditError as exc:
            raise ConfigError(path, str(exc)) from None

    def register(self, ctx: InstallContext) -> Outcome:
        path = self.config_path(ctx)
        shown = _shown(path, ctx)
        text, current, ours, grace = self._read(path)
        if current is not None and not ours:
            raise ConfigError(
                path,
                "[mcp_servers.funes] is there but funes-codex did not write it; "
                "remove it first (codex mcp remove funes), then install again",
            )
        wanted = self.value(ctx)
        if ours and current == wanted and grace:
            return Outcome(False, f"the funes MCP server is already in {shown}")
        try:
            new = text
            grace_ours = new is not None and _GRACE.is_ours(new)
            if new is not None and grace_ours:  # undo in the reverse order of insertion
                new = _GRACE.remove(new)
            if new is not None and ours:
                new = _SERVER.remove(new)
            new = _SERVER.insert(new, wanted)
            if not grace or grace_ours:
                new = _GRACE.insert(new, GRACE_MS)
            write_toml_text(path, new)
        except TomlEditError as exc:
            raise ConfigError(path, str(exc)) from None
        verb = "updated" if ours else "added"
        return Outcome(True, f"{verb} the funes MCP server in {shown}")

    def unregister(self, ctx: InstallContext) -> Outcome:
        path = self.config_path(ctx)
        shown = _shown(path, ctx)
        text, _current, ours, _grace = self._read(path)
        try:
            grace_ours = text is not None and _GRACE.is_ours(text)
            if text is None or not (ours or grace_ours):
                return Outcome(False, f"no funes MCP server in {shown}")
            new = _GRACE.remove(text) if grace_ours else text
            new = _SERVER.remove(new) if ours else new
            if new:
                write_toml_text(path, new)
            else:
                path.unlink()  # nothing is left: funes-codex created the file (or it was empty)
        except TomlEditError as exc:
            raise ConfigError(path, str(exc)) from None
        return Outcome(True, f"removed the funes MCP server from {shown}")

    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        _text, current, ours, _grace = self._read(self.config_path(ctx))
        if not ours or not isinstance(current, dict):
            return None
        command, args = current.get("command"), current.get("args", [])
        if not isinstance(command, str) or not isinstance(args, list):
            return None
        return [command, *(str(a) for a in args)]

    def status(self, ctx: InstallContext) -> Status:
        path = self.config_path(ctx)
        shown = _shown(path, ctx)
        try:
            _text, current, ours, grace = self._read(path)
        except ConfigError as exc:
            return Status(WiringState.BROKEN, str(exc))
        if current is None:
            return Status(WiringState.NOT_WIRED, shown)
        if not ours:
            return Status(WiringState.NOT_WIRED, f"[mcp_servers.funes] in {shown} is not funes-codex's")
        if current != self.value(ctx) or not grace:
            return Status(WiringState.OUTDATED, f"{shown} records another funes command, memory or setting")
        return Status(WiringState.WIRED, shown)

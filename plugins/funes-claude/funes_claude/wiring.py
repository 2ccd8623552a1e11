"""Wires funes into Claude Code: hooks in ``~/.claude/settings.json``, the MCP server at user scope.

**Hooks.** Claude Code reads ``hooks.<Event>`` in ``settings.json``: a list of groups, each
``{"matcher"?: …, "hooks": [{"type": "command", "command": …, "timeout": …}]}``. funes-claude
appends one group of its own to ``Stop``, ``SubagentStop`` and ``SessionEnd``::

    {"hooks": [{"type": "command", "timeout": 15,
                "command": "<python> -m funes_claude.hook --funes-home <dir> -- <funes>"}]}

Claude Code checks these objects against its settings schema and rewrites the file itself now
and then, so the marker is not an extra key (it could be refused or dropped) but the command:
a command hook that runs ``-m funes_claude.hook`` is funes-claude's, and removal deletes
exactly those (and the groups and arrays left empty by it), nothing else. Edits go through
:mod:`funes_core.host.configedit.json`, which appends after the last entry with the file's own separator
and removes an entry with the separator it brought, so every other byte stays as it was.

**MCP server.** With the ``claude`` CLI on the context's PATH the registrar runs
``claude mcp add funes -s user -- <funes> mcp [MEMORY]`` (Claude Code then edits its own state
file, with its own locking); without it, it writes the same entry, ``mcpServers.funes =
{"type": "stdio", "command": …, "args": […], "env": {}}``, into ``~/.claude.json`` directly.
Either way the registration is read back from that file. A ``funes`` server that does not run
``… mcp`` is somebody else's and is never replaced or removed.

A file that removal leaves as an empty object (what is left when install created the file) is
deleted rather than left behind as ``{}``.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

from funes_core import (
    Capabilities,
    ConfigError,
    EditError,
    HookInstaller,
    InstallContext,
    IntegrationError,
    Outcome,
    Status,
    ToolRegistrar,
    WiringState,
    append_item,
    read_json_text,
    remove_items,
    remove_member,
    set_member,
    value_at,
    write_json_text,
)

__all__ = [
    "HOOK_EVENTS",
    "HOOK_TIMEOUT",
    "ClaudeHookInstaller",
    "ClaudeToolRegistrar",
    "hook_argv",
    "hook_command",
    "is_funes_hook",
]

#: The events funes-claude hooks: every finished turn, every finished subagent, the session's end.
HOOK_EVENTS = ("Stop", "SubagentStop", "SessionEnd")
#: Seconds Claude Code gives the hook; it returns in milliseconds, this only bounds a hang.
HOOK_TIMEOUT = 15
_HOOK_MODULE = "funes_claude.hook"  # funes_claude.hook.HOOK_MODULE, without importing it
#: What removal leaves of a config file that install created (``{}`` and whitespace): deleted.
_EMPTY_OBJECT = re.compile(r"\s*\{\s*\}\s*")
_SERVER = "funes"


def _shown(path: Path, ctx: InstallContext) -> str:
    try:
        return "~/" + path.relative_to(ctx.home).as_posix()
    except ValueError:
        return str(path)


def _read(path: Path) -> str | None:
    try:
        return read_json_text(path)
    except EditError as exc:
        raise ConfigError(path, str(exc)) from None


def _edit(path: Path, action: Callable[[], str]) -> str:
    try:
        return action()
    except EditError as exc:
        raise ConfigError(path, str(exc)) from None


def _save(path: Path, text: str) -> None:
    """Write ``text``, or delete the file when nothing but an empty object is left of it."""
    if _EMPTY_OBJECT.fullmatch(text) and not path.is_symlink():
        path.unlink(missing_ok=True)
    else:
        write_json_text(path, text)


# -- hooks ----------------------------------------------------------------------------------------


def hook_argv(ctx: InstallContext) -> list[str]:
    """What Claude Code runs: this interpreter's ``funes_claude.hook``, told where funes is.

    The interpreter is the one funes-claude is installed in (the hook imports it); the funes
    command (``FUNES_BIN`` or the ``funes`` script) is what the hook's worker runs to index, and
    ``FUNES_HOME`` is recorded so the hook writes where this installation reads, whatever the
    environment Claude Code is started from.
    """
    return [sys.executable, "-m", _HOOK_MODULE, "--funes-home", str(ctx.funes_home), "--", *ctx.funes_command]


def hook_command(ctx: InstallContext) -> str:
    """:func:`hook_argv` as the shell command line Claude Code runs."""
    return shlex.join(hook_argv(ctx))


def is_funes_hook(hook: object) -> bool:
    """Whether a hook entry is funes-claude's: a command hook running ``-m funes_claude.hook``."""
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    command = hook.get("command")
    if not isinstance(command, str) or _HOOK_MODULE not in command:
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return any(a == "-m" and b == _HOOK_MODULE for a, b in pairwise(words))


def _is_funes_group(group: object) -> bool:
    """A group holding only funes-claude's hooks (what install appends)."""
    if not isinstance(group, dict) or set(group) - {"hooks", "matcher"}:
        return False
    hooks = group.get("hooks")
    return isinstance(hooks, list) and bool(hooks) and all(is_funes_hook(h) for h in hooks)


def _funes_hooks(text: str | None, event: str) -> list[Any]:
    """funes-claude's hook entries under ``hooks.<event>``, wherever they sit."""
    groups = value_at(text, ["hooks", event])
    if not isinstance(groups, list):
        if groups is not None:
            raise EditError(f"hooks.{event} is not an array")
        return []
    found: list[Any] = []
    for group in groups:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(hooks, list):
            found.extend(h for h in hooks if is_funes_hook(h))
    return found


def _without_funes_hooks(text: str) -> str:
    """``text`` with every funes-claude hook (and whatever holding it is left empty) removed."""
    for event in HOOK_EVENTS:
        text = remove_items(text, ["hooks", event], _is_funes_group)
        groups = value_at(text, ["hooks", event])
        for index in reversed(range(len(groups) if isinstance(groups, list) else 0)):
            # A user added their own hook to funes' group: take out only funes' entry.
            text = remove_items(text, ["hooks", event, index, "hooks"], is_funes_hook, prune=False)
    return text


class ClaudeHookInstaller(HookInstaller):
    """Adds funes' ``Stop``, ``SubagentStop`` and ``SessionEnd`` hooks to ``~/.claude/settings.json``."""

    id = "claude"
    label = "Claude Code"
    contract_version = 1
    capabilities = Capabilities()

    @staticmethod
    def settings_path(ctx: InstallContext) -> Path:
        return ctx.home / ".claude" / "settings.json"

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [self.settings_path(ctx)]

    @staticmethod
    def wanted_hook(ctx: InstallContext) -> dict[str, Any]:
        return {"type": "command", "command": hook_command(ctx), "timeout": HOOK_TIMEOUT}

    def _state(self, ctx: InstallContext, text: str | None) -> tuple[WiringState, str]:
        path = self.settings_path(ctx)
        wanted = self.wanted_hook(ctx)
        try:
            found = {event: _funes_hooks(text, event) for event in HOOK_EVENTS}
        except EditError as exc:
            raise ConfigError(path, str(exc)) from None
        shown = _shown(path, ctx)
        if not any(found.values()):
            return WiringState.NOT_WIRED, shown
        if all(hooks == [wanted] for hooks in found.values()):
            return WiringState.WIRED, shown
        stale = [e for e, hooks in found.items() if hooks != [wanted]]
        return WiringState.OUTDATED, f"{shown}: {', '.join(stale)} run another funes command or are missing"

    def install(self, ctx: InstallContext) -> Outcome:
        path = self.settings_path(ctx)
        shown = _shown(path, ctx)
        text = _read(path)
        state, _ = self._state(ctx, text)
        if state is WiringState.WIRED:
            return Outcome(False, f"hooks already in {shown}")
        group = {"hooks": [self.wanted_hook(ctx)]}

        def edit() -> str:
            new = _without_funes_hooks(text) if text is not None else None
            for event in HOOK_EVENTS:
                new = append_item(new, ["hooks", event], group)
            assert new is not None
            return new

        write_json_text(path, _edit(path, edit))
        verb = "updated" if state is WiringState.OUTDATED else "added"
        return Outcome(True, f"{verb} the {', '.join(HOOK_EVENTS)} hooks in {shown}")

    def uninstall(self, ctx: InstallContext) -> Outcome:
        path = self.settings_path(ctx)
        shown = _shown(path, ctx)
        text = _read(path)
        if text is None:
            return Outcome(False, f"no funes hooks in {shown}")
        new = _edit(path, lambda: _without_funes_hooks(text))
        if new == text:
            return Outcome(False, f"no funes hooks in {shown}")
        _save(path, new)
        return Outcome(True, f"removed the funes hooks from {shown}")

    def status(self, ctx: InstallContext) -> Status:
        path = self.settings_path(ctx)
        try:
            text = _read(path)
            state, detail = self._state(ctx, text)
            disabled = value_at(text, ["disableAllHooks"]) is True
        except (ConfigError, EditError) as exc:
            return Status(WiringState.BROKEN, str(exc))
        if disabled and state is not WiringState.NOT_WIRED:
            detail += " (but disableAllHooks is set: Claude Code runs no hook)"
        return Status(state, detail)


# -- MCP server -----------------------------------------------------------------------------------


def _is_funes_server(entry: object) -> bool:
    """Whether ``mcpServers.funes`` runs ``… mcp [MEMORY]`` (funes' server, by whomever added)."""
    if not isinstance(entry, dict):
        return False
    command, args = entry.get("command"), entry.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        return False
    words = [command, *args]
    return "mcp" in words[1:] and all(isinstance(w, str) for w in words)


class ClaudeToolRegistrar(ToolRegistrar):
    """Registers ``funes mcp [MEMORY]`` as Claude Code's user-scope MCP server ``funes``."""

    id = "claude"
    label = "Claude Code"
    contract_version = 1
    capabilities = Capabilities()
    agent_cli = "claude"

    @staticmethod
    def state_path(ctx: InstallContext) -> Path:
        return ctx.home / ".claude.json"

    def config_paths(self, ctx: InstallContext) -> list[Path]:
        return [self.state_path(ctx)]

    @staticmethod
    def claude_cli(ctx: InstallContext) -> str | None:
        """The ``claude`` executable on the context's PATH, if any."""
        return shutil.which("claude", path=ctx.env().get("PATH"))

    @staticmethod
    def entry(ctx: InstallContext) -> dict[str, Any]:
        argv = ctx.mcp_command()
        return {"type": "stdio", "command": argv[0], "args": argv[1:], "env": {}}

    def _current(self, ctx: InstallContext) -> tuple[str | None, Any]:
        path = self.state_path(ctx)
        text = _read(path)
        return text, _edit(path, lambda: value_at(text, ["mcpServers", _SERVER]))

    def _run_cli(self, ctx: InstallContext, cli: str, args: list[str]) -> None:
        argv = [cli, "mcp", *args]
        env = ctx.env()
        # Registering a server needs no network: keep Claude Code from phoning home meanwhile.
        env.setdefault("DISABLE_TELEMETRY", "1")
        env.setdefault("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        try:
            done = subprocess.run(
                argv,
                env=env,
                cwd=ctx.home,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=120,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise IntegrationError(f"`{shlex.join(argv)}` could not run: {exc}") from None
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()
            raise IntegrationError(
                f"`{shlex.join(argv)}` failed (exit {done.returncode})" + (f": {lines[-1]}" if lines else "")
            )

    def register(self, ctx: InstallContext) -> Outcome:
        path = self.state_path(ctx)
        shown = _shown(path, ctx)
        text, existing = self._current(ctx)
        if existing is not None and not _is_funes_server(existing):
            raise ConfigError(
                path,
                "an MCP server named 'funes' that does not run funes is registered; remove it first "
                "(claude mcp remove funes -s user)",
            )
        wanted = self.entry(ctx)
        if existing == wanted:
            return Outcome(False, f"MCP server funes already registered in {shown}")
        cli = self.claude_cli(ctx)
        if cli is not None:
            if existing is not None:
                self._run_cli(ctx, cli, ["remove", _SERVER, "-s", "user"])
            self._run_cli(ctx, cli, ["add", _SERVER, "-s", "user", "--", *ctx.mcp_command()])
            if self.registered_command(ctx) != ctx.mcp_command():
                raise IntegrationError(f"`claude mcp add` did not record funes in {shown}")
            how = "with `claude mcp add -s user`"
        else:
            _save(path, _edit(path, lambda: set_member(text, ["mcpServers", _SERVER], wanted)))
            how = f"in {shown}"
        verb = "updated" if existing is not None else "registered"
        return Outcome(True, f"{verb} MCP server funes ({shlex.join(ctx.mcp_command())}) {how}")

    def unregister(self, ctx: InstallContext) -> Outcome:
        path = self.state_path(ctx)
        shown = _shown(path, ctx)
        text, existing = self._current(ctx)
        if text is None or not _is_funes_server(existing):
            return Outcome(False, f"no funes MCP server in {shown}")
        cli = self.claude_cli(ctx)
        if cli is not None:
            self._run_cli(ctx, cli, ["remove", _SERVER, "-s", "user"])
            return Outcome(True, "removed MCP server funes with `claude mcp remove -s user`")
        _save(path, _edit(path, lambda: remove_member(text, ["mcpServers", _SERVER])))
        return Outcome(True, f"removed MCP server funes from {shown}")

    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        _, existing = self._current(ctx)
        if not _is_funes_server(existing):
            return None
        return [existing["command"], *existing.get("args", [])]

    def status(self, ctx: InstallContext) -> Status:
        path = self.state_path(ctx)
        try:
            _, existing = self._current(ctx)
        except ConfigError as exc:
            return Status(WiringState.BROKEN, str(exc))
        shown = _shown(path, ctx)
        if existing is None:
            return Status(WiringState.NOT_WIRED, shown)
        if not _is_funes_server(existing):
            return Status(WiringState.NOT_WIRED, f"mcpServers.funes in {shown} is not funes' server")
        if existing != self.entry(ctx):
            return Status(WiringState.OUTDATED, f"{shown} records another funes command or memory")
        return Status(WiringState.WIRED, f"{shown} (user scope)")

"""Wires funes into Claude Code: hooks in ``~/.claude/settings.json``, the MCP server at user scope.

**Hooks.** Claude Code reads ``hooks.<Event>`` in ``settings.json``: a list of groups, each
``{"matcher"?: …, "hooks": [{"type": "command", "command": …, "timeout": …}]}``. funes-claude
appends one group of its own to ``Stop``, ``SubagentStop`` and ``SessionEnd``::

    {"hooks": [{"type": "command", "timeout": 15,
                "command": "<python> -I -m funes_claude.hook --funes-home <dir> -- <funes>"}]}

Claude Code checks these objects against its settings schema and rewrites the file itself now
and then, so the marker is not an extra key (it could be refused or dropped) but the command:
a command hook that runs ``-m funes_claude.hook`` is funes-claude's, and removal deletes
exactly those (and the groups and arrays funes created), nothing else. The entries are the
core's managed entries (:class:`funes_core.ManagedWiring`), which keep every other byte.

**MCP server.** With the ``claude`` CLI on the context's PATH the registrar runs
``claude mcp add funes -s user -- <funes> mcp [MEMORY]`` (Claude Code then edits its own state
file, with its own locking); without it, it writes the same entry, ``mcpServers.funes =
{"type": "stdio", "command": …, "args": […], "env": {}}``, into ``~/.claude.json`` directly.
Either way the registration is read back from that file. A ``funes`` server that does not run
``… mcp`` is somebody else's and is never replaced or removed.

A file funes created is deleted again on removal; one that was there (even as ``{}``) is kept,
byte for byte.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from typing import Any

from funes_claude.agent import CLAUDE
from funes_core import (
    HookInstaller,
    InstallContext,
    IntegrationError,
    JsonFormat,
    ManagedEntry,
    ManagedWiring,
    Outcome,
    Place,
    Status,
    ToolRegistrar,
    WiringState,
    remove_items,
    runs_module,
    value_at,
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
_SERVER = "funes"

#: Whether a hook entry is funes-claude's: a command hook running ``-m funes_claude.hook``.
_runs_hook = runs_module(_HOOK_MODULE)


def hook_argv(ctx: InstallContext) -> list[str]:
    """What Claude Code runs: this interpreter's ``funes_claude.hook``, told where funes is."""
    return ctx.hook_argv(_HOOK_MODULE)


def hook_command(ctx: InstallContext) -> str:
    """:func:`hook_argv` as the shell command line Claude Code runs."""
    return shlex.join(hook_argv(ctx))


def is_funes_hook(hook: object) -> bool:
    """Whether a hook entry is funes-claude's: a command hook running ``-m funes_claude.hook``."""
    return isinstance(hook, dict) and hook.get("type") == "command" and _runs_hook(hook)


def _is_funes_group(group: object) -> bool:
    """A group holding only funes-claude's hooks (what install appends)."""
    if not isinstance(group, dict) or set(group) - {"hooks", "matcher"}:
        return False
    hooks = group.get("hooks")
    return isinstance(hooks, list) and bool(hooks) and all(is_funes_hook(h) for h in hooks)


class ClaudeHookInstaller(ManagedWiring, HookInstaller, agent=CLAUDE):
    """Adds funes' ``Stop``, ``SubagentStop`` and ``SessionEnd`` hooks to ``~/.claude/settings.json``."""

    @staticmethod
    def wanted_hook(ctx: InstallContext) -> dict[str, Any]:
        return {"type": "command", "command": hook_command(ctx), "timeout": HOOK_TIMEOUT}

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        group = {"hooks": [self.wanted_hook(ctx)]}
        return [
            ManagedEntry(
                path=self.where("settings", ctx),
                adapter=JsonFormat(),
                place=Place(("hooks", event)),
                value=group,
                ours=_is_funes_group,
                what=f"the {event} hook",
            )
            for event in HOOK_EVENTS
        ]

    def present(self, entry: ManagedEntry, values: list[Any]) -> list[Any]:
        """funes' hooks wherever they sit in the event's groups (a user may add theirs to ours)."""
        hooks = [
            h for g in values if isinstance(g, dict) and isinstance(g.get("hooks"), list) for h in g["hooks"]
        ]
        return [{"hooks": [h]} for h in hooks if is_funes_hook(h)]

    def tidy(self, entry: ManagedEntry, text: str) -> str:
        """Take funes' hooks out of groups the user added their own hooks to (their hooks stay)."""
        groups = value_at(text, list(entry.place.path))
        for index in reversed(range(len(groups) if isinstance(groups, list) else 0)):
            if not _is_funes_group(groups[index]):
                text = remove_items(text, [*entry.place.path, index, "hooks"], is_funes_hook, prune=False)
        return text

    def status(self, ctx: InstallContext) -> Status:
        status = super().status(ctx)
        if status.state in (WiringState.WIRED, WiringState.OUTDATED):
            try:
                disabled = value_at(
                    self.where("settings", ctx).read_text(encoding="utf-8"), ["disableAllHooks"]
                )
            except (OSError, ValueError):
                disabled = None
            if disabled is True:
                return Status(
                    status.state, status.detail + " (but disableAllHooks is set: Claude Code runs no hook)"
                )
        return status


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


class ClaudeToolRegistrar(ManagedWiring, ToolRegistrar, agent=CLAUDE):
    """Registers ``funes mcp [MEMORY]`` as Claude Code's user-scope MCP server ``funes``."""

    agent_cli = "claude"
    ask_cli = "claude"

    def ask_argv(self, program: str, ctx: InstallContext) -> list[str]:
        """``claude -p`` with no MCP server, tool, hook or saved session (:mod:`funes_claude.ask`)."""
        from funes_claude.ask import ask_argv

        return ask_argv(program)

    def ask_answer(self, lines: Iterable[str]) -> Iterator[str]:
        from funes_claude.ask import ask_answer

        return ask_answer(lines)

    @staticmethod
    def claude_cli(ctx: InstallContext) -> str | None:
        """The ``claude`` executable on the context's PATH, if any."""
        return shutil.which("claude", path=ctx.env().get("PATH"))

    @staticmethod
    def entry(ctx: InstallContext) -> dict[str, Any]:
        argv = ctx.mcp_command()
        return {"type": "stdio", "command": argv[0], "args": argv[1:], "env": {}}

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        return [
            ManagedEntry(
                path=self.where("state", ctx),
                adapter=JsonFormat(),
                place=Place(("mcpServers",), _SERVER),
                value=self.entry(ctx),
                ours=_is_funes_server,
                what="MCP server funes",
            )
        ]

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
        cli = self.claude_cli(ctx)
        if cli is None:
            return self.put(ctx)
        before = self.status(ctx).state  # also refuses a malformed file or another 'funes' server
        if before is WiringState.WIRED:
            return self.put(ctx)
        self.preflight(ctx)  # refuses what put() would refuse, before the CLI runs
        if before is WiringState.OUTDATED:
            self._run_cli(ctx, cli, ["remove", _SERVER, "-s", "user"])
        self._run_cli(ctx, cli, ["add", _SERVER, "-s", "user", "--", *ctx.mcp_command()])
        if self.registered_command(ctx) != ctx.mcp_command():
            raise IntegrationError("`claude mcp add` did not record funes in ~/.claude.json")
        verb = "updated" if before is WiringState.OUTDATED else "registered"
        return Outcome(
            True, f"{verb} MCP server funes ({shlex.join(ctx.mcp_command())}) with `claude mcp add -s user`"
        )

    def unregister(self, ctx: InstallContext) -> Outcome:
        cli = self.claude_cli(ctx)
        if cli is None or self.registered_command(ctx) is None:
            return self.drop(ctx)
        self._run_cli(ctx, cli, ["remove", _SERVER, "-s", "user"])
        return Outcome(True, "removed MCP server funes with `claude mcp remove -s user`")

"""funes' hooks in ``settings.json`` and MCP server in ``.claude.json``, as the agent declares them.

What the declaration does not say: the registrar drives ``claude mcp add funes -s user -- <funes>
mcp [MEMORY]`` when the ``claude`` CLI is on the context's PATH (Claude Code then edits its own
state file, with its own locking), and writes the same entry itself without it; either way the
registration is read back from ``.claude.json``. The hook status also says when
``disableAllHooks`` keeps Claude Code from running any hook. And how ``funes ask`` borrows Claude
Code (:mod:`funes_claude.ask`).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Iterable, Iterator

from funes_claude.agent import CLAUDE, HOOK_EVENTS, HOOK_MODULE, HOOK_TIMEOUT
from funes_core import (
    AgentHookInstaller,
    AgentToolRegistrar,
    InstallContext,
    IntegrationError,
    Outcome,
    Status,
    WiringState,
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


def hook_argv(ctx: InstallContext) -> list[str]:
    """What Claude Code runs: this interpreter's ``funes_claude.hook``, told where funes is."""
    return ctx.hook_argv(HOOK_MODULE)


def hook_command(ctx: InstallContext) -> str:
    """:func:`hook_argv` as the shell command line Claude Code runs."""
    return shlex.join(hook_argv(ctx))


class ClaudeHookInstaller(AgentHookInstaller, agent=CLAUDE):
    """Adds funes' ``Stop``, ``SubagentStop`` and ``SessionEnd`` hooks to ``~/.claude/settings.json``."""

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


#: Whether a hook entry is funes-claude's: a command hook running ``-m funes_claude.hook``.
is_funes_hook = ClaudeHookInstaller().ours


class ClaudeToolRegistrar(AgentToolRegistrar, agent=CLAUDE):
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
            self._run_cli(ctx, cli, ["remove", self.server.name, "-s", "user"])
        self._run_cli(ctx, cli, ["add", self.server.name, "-s", "user", "--", *ctx.mcp_command()])
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
        self._run_cli(ctx, cli, ["remove", self.server.name, "-s", "user"])
        return Outcome(True, "removed MCP server funes with `claude mcp remove -s user`")

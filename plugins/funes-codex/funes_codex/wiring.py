"""funes' hooks and MCP server in Codex's ``hooks.json`` and ``config.toml``, as the agent declares them.

What the declaration does not say: the startup grace Codex needs for funes' tools on the first
request (an entry of its own, the user's value kept), the trust advice after install, and how
``funes ask`` borrows Codex (:mod:`funes_codex.ask`).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Iterator

from funes_codex.agent import CODEX, HOOK_MODULE
from funes_core import (
    AgentHookInstaller,
    AgentToolRegistrar,
    InstallContext,
    ManagedEntry,
    Outcome,
    Place,
    TomlFormat,
)

__all__ = ["GRACE_MS", "HOOK_MODULE", "CodexHookInstaller", "CodexToolRegistrar", "hook_command"]

#: How long Codex may wait for optional MCP servers before the first request (milliseconds).
GRACE_MS = 15000
GRACE_COMMENT = "# added by funes-codex: wait for funes' memory tools at startup"


def hook_command(ctx: InstallContext) -> str:
    """``python -I -m funes_codex.hook --funes-home DIR -- FUNES...`` (see ``InstallContext.hook_argv``)."""
    return shlex.join(ctx.hook_argv(HOOK_MODULE))


class CodexHookInstaller(AgentHookInstaller, agent=CODEX):
    """Adds funes' ``Stop`` and ``SessionEnd`` hooks to ``$CODEX_HOME/hooks.json``."""

    def install(self, ctx: InstallContext) -> Outcome:
        done = self.put(ctx)
        if not done.changed:
            return done
        return Outcome(True, done.summary + " (Codex runs hooks once you trust them: /hooks in Codex)")


class CodexToolRegistrar(AgentToolRegistrar, agent=CODEX):
    """Adds ``[mcp_servers.funes]`` (``funes mcp [MEMORY]``) and a startup grace to ``config.toml``."""

    ask_cli = "codex"

    def ask_argv(self, program: str, ctx: InstallContext) -> list[str]:
        """``codex exec`` with every configured MCP server, hooks and tools off (:mod:`funes_codex.ask`)."""
        from funes_codex.ask import ask_argv

        return ask_argv(program, self.where("config", ctx))

    def ask_answer(self, lines: Iterable[str]) -> Iterator[str]:
        from funes_codex.ask import ask_answer

        return ask_answer(lines)

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        grace = ManagedEntry(
            path=self.where("config", ctx),
            adapter=TomlFormat(),
            place=Place((), "mcp_optional_startup_grace_ms"),
            value=GRACE_MS,
            ours=lambda value: True,
            what="a startup grace for it",
            comment=GRACE_COMMENT,
            yield_to_user=True,
        )
        return [*super().entries(ctx), grace]

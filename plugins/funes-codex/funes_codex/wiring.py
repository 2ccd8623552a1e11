"""Wires funes into Codex: hooks in ``$CODEX_HOME/hooks.json``, the MCP server in ``config.toml``.

**Hooks.** ``hooks.json`` has Claude Code's shape (``{"hooks": {"Stop": [{"hooks": [{"type":
"command", "command": "…"}]}]}}``). funes-codex appends one matcher group to ``Stop`` (the end
of every turn) and one to ``SessionEnd`` (a session closed before its last Stop was indexed),
each running :mod:`funes_codex.hook`. That module's name inside the command is the marker: a
group is funes-codex's when every handler in it runs ``-m funes_codex.hook``, so removal takes
out exactly those groups. Codex ignores hooks nobody trusted, so the summary says to trust them
once with ``/hooks``.

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

The table is written into the file directly, not with ``codex mcp add``: Codex 0.171 rewrites
every ``[mcp_servers.*]`` table when it adds one, dropping the user's comments in them, and
resets the file's mode, so the user's bytes would not survive a remove. The block's marker
comment is what proves it is ours; a ``[mcp_servers.funes]`` without it (a hand-made
registration) is never touched.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Iterator
from typing import Any

from funes_codex.agent import CODEX
from funes_core import (
    HookInstaller,
    InstallContext,
    JsonFormat,
    ManagedEntry,
    ManagedWiring,
    Outcome,
    Place,
    TomlFormat,
    ToolRegistrar,
    runs_module,
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
SERVER_COMMENT = (
    "# Added by funes-codex: funes' memory tools. `funes integrations remove codex` removes this block."
)
GRACE_COMMENT = "# added by funes-codex: wait for funes' memory tools at startup"

_runs_hook = runs_module(HOOK_MODULE)


def hook_command(ctx: InstallContext) -> str:
    """``python -I -m funes_codex.hook --funes-home DIR -- FUNES...`` (see ``InstallContext.hook_argv``)."""
    return shlex.join(ctx.hook_argv(HOOK_MODULE))


def _is_our_group(group: object) -> bool:
    """A matcher group funes-codex appended: every handler in it runs our hook module."""
    handlers = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(handlers, list) and bool(handlers) and all(_runs_hook(h) for h in handlers)


class CodexHookInstaller(ManagedWiring, HookInstaller, agent=CODEX):
    """Adds funes' ``Stop`` and ``SessionEnd`` hooks to ``$CODEX_HOME/hooks.json`` (module docstring)."""

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        group = {"hooks": [{"type": "command", "command": hook_command(ctx)}]}
        return [
            ManagedEntry(
                path=self.where("hooks", ctx),
                adapter=JsonFormat(),
                place=Place(("hooks", event)),
                value=group,
                ours=_is_our_group,
                what=f"the funes {event} hook",
            )
            for event in EVENTS
        ]

    def install(self, ctx: InstallContext) -> Outcome:
        done = self.put(ctx)
        if not done.changed:
            return done
        return Outcome(True, done.summary + " (Codex runs hooks once you trust them: /hooks in Codex)")


def _is_funes_server(value: Any) -> bool:
    return isinstance(value, dict)


class CodexToolRegistrar(ManagedWiring, ToolRegistrar, agent=CODEX):
    """Adds ``[mcp_servers.funes]`` (``funes mcp [MEMORY]``) to ``$CODEX_HOME/config.toml``."""

    ask_cli = "codex"

    def ask_argv(self, program: str, ctx: InstallContext) -> list[str]:
        """``codex exec`` with every configured MCP server, hooks and tools off (:mod:`funes_codex.ask`)."""
        from funes_codex.ask import ask_argv

        return ask_argv(program, self.where("config", ctx))

    def ask_answer(self, lines: Iterable[str]) -> Iterator[str]:
        from funes_codex.ask import ask_answer

        return ask_answer(lines)

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

    def entries(self, ctx: InstallContext) -> list[ManagedEntry]:
        config = self.where("config", ctx)
        return [
            ManagedEntry(
                path=config,
                adapter=TomlFormat(),
                place=Place(("mcp_servers",), "funes"),
                value=self.value(ctx),
                ours=_is_funes_server,  # the block's marker comment is what makes it ours
                what="the funes MCP server",
                comment=SERVER_COMMENT,
            ),
            ManagedEntry(
                path=config,
                adapter=TomlFormat(),
                place=Place((), "mcp_optional_startup_grace_ms"),
                value=GRACE_MS,
                ours=lambda value: True,
                what="a startup grace for it",
                comment=GRACE_COMMENT,
                yield_to_user=True,
            ),
        ]

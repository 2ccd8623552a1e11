"""Who funes-codex is, where Codex keeps things (``$CODEX_HOME``, default ``~/.codex``) and how
funes is wired in.

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
  servers; ``funes mcp`` needs a few) unless the user set one (:mod:`funes_codex.wiring`).
  ``required = true`` would do too, but it stops every Codex session from starting whenever funes
  cannot, which is not a memory tool's call to make;
* ``env`` pins ``FUNES_HOME`` and ``env_vars`` forwards ``FUNES_EMBEDDER`` / ``FUNES_LOG``:
  Codex starts MCP servers with a minimal environment (HOME, PATH, LANG, …), so without them
  the server would read another memory than the one the hooks write to.

The table is written into the file directly, not with ``codex mcp add``: Codex 0.171 rewrites
every ``[mcp_servers.*]`` table when it adds one, dropping the user's comments in them, and
resets the file's mode, so the user's bytes would not survive a remove. The block's marker
comment is what proves it is ours; a ``[mcp_servers.funes]`` without it (a hand-made
registration) is never touched.

Standard library only (plus the core's ``agent`` module): the per-turn hook imports it.
"""

from __future__ import annotations

from funes_core import Agent, Hooks, Location, McpServer, Slot

__all__ = ["CODEX", "HOOK_MODULE"]

#: The module every funes-codex hook runs; its name in a command marks the hook as ours.
HOOK_MODULE = "funes_codex.hook"

CODEX = Agent(
    id="codex",
    label="Codex",
    contract_version=2,  # the plugin contract this integration was written and checked for
    locations=(
        Location("home", ".codex", env=("CODEX_HOME",), holds="Codex's state"),
        Location("sessions", "sessions", under="home", holds="rollouts (YYYY/MM/DD/rollout-*.jsonl)"),
        Location("archived", "archived_sessions", under="home", holds="rollouts `codex archive` moved"),
        Location("hooks", "hooks.json", under="home", holds="hooks"),
        Location("config", "config.toml", under="home", holds="MCP servers"),
    ),
    hooks=Hooks(
        location="hooks",
        module=HOOK_MODULE,
        events=("Stop", "SessionEnd"),
        grouped=True,
        per_handler=False,
        entry={"type": "command", "command": Slot.HOOK},
    ),
    mcp=McpServer(
        location="config",
        path=("mcp_servers",),
        format="toml",
        entry={
            "command": Slot.PROGRAM,
            "args": Slot.ARGS,
            "env": {"FUNES_HOME": Slot.FUNES_HOME},
            "env_vars": ["FUNES_EMBEDDER", "FUNES_LOG"],
            "default_tools_approval_mode": "approve",
        },
        comment="# Added by funes-codex: funes' memory tools. "
        "`funes integrations remove codex` removes this block.",
    ),
)

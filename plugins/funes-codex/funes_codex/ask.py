"""How ``funes ask --agent codex`` runs Codex once and reads its answer from its JSON events.

The command line (``-`` reads the prompt from stdin)::

    codex exec --json --skip-git-repo-check --ephemeral
               --disable hooks --disable shell_tool --disable apps --disable plugins
               -c web_search="disabled" [-c 'mcp_servers={"<name>"={enabled=false}, ...}'] -

Why each part: ``--ephemeral`` writes no rollout and ``--disable hooks`` runs no hook, so the
prompt (which quotes the memory) is never captured as a new session; the shell tool, web search,
apps and plugins are off because the answer comes from the passages (and a shell could run
``funes`` itself). MCP servers are switched off by name: Codex 0.171 *merges* ``-c
mcp_servers={}`` into the configured table instead of replacing it, so the override names every
server of ``$CODEX_HOME/config.toml`` (the funes one included, so the agent cannot recurse into
funes) with ``enabled=false``, as one inline table: the dotted form ``mcp_servers.<name>.enabled``
cannot name a server whose name holds a dot. The command runs in an empty folder, so no
project ``.codex/config.toml`` adds servers behind our back.

The output is JSON lines; the answer is the text of each ``item.completed`` event whose item is
an ``agent_message``. ``turn.failed`` and ``error`` events are failures.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path

from funes_core import ConfigError, IntegrationError

__all__ = ["ask_answer", "ask_argv", "configured_servers"]


def configured_servers(config: Path) -> list[str]:
    """The names under ``[mcp_servers]`` in Codex's ``config.toml`` (``[]`` when there is none)."""
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(config, f"cannot read it to switch its MCP servers off: {exc}") from None
    servers = data.get("mcp_servers")
    return sorted(servers) if isinstance(servers, dict) else []


def ask_argv(program: str, config: Path) -> list[str]:
    """The isolated ``codex exec`` command line (module docstring) for the Codex home of ``config``."""
    argv = [
        program,
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--ephemeral",
        "--disable",
        "hooks",
        "--disable",
        "shell_tool",
        "--disable",
        "apps",
        "--disable",
        "plugins",
        "-c",
        'web_search="disabled"',
    ]
    names = configured_servers(config)
    if names:
        off = ", ".join(f"{json.dumps(name)}={{enabled=false}}" for name in names)
        argv += ["-c", f"mcp_servers={{{off}}}"]
    return [*argv, "-"]


def ask_answer(lines: Iterable[str]) -> Iterator[str]:
    """The agent's messages in ``codex exec --json`` output, each as soon as it is complete."""
    said = False
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "item.completed":
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") == "agent_message":
                text = item.get("text")
                if isinstance(text, str) and text:
                    yield ("\n\n" if said else "") + text
                    said = True
        elif kind in ("turn.failed", "error"):
            error = event.get("error") if kind == "turn.failed" else event
            message = error.get("message") if isinstance(error, dict) else None
            raise IntegrationError(f"Codex reported an error: {' '.join(str(message or kind).split())}")

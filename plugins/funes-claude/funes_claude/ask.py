"""How ``funes ask --agent claude`` runs Claude Code once and reads its answer as it streams.

The command line (the prompt arrives on stdin)::

    claude -p --output-format stream-json --verbose --include-partial-messages
           --strict-mcp-config --mcp-config '{"mcpServers":{}}'
           --tools "" --no-session-persistence --settings '{"disableAllHooks":true}'

Each flag keeps the borrowed session outside funes' loop: ``--strict-mcp-config`` with an empty
``--mcp-config`` starts no MCP server (the user's, a project's or a plugin's), so the agent
cannot call funes back; ``--tools ""`` offers the model no tool, because the answer comes from the
passages; ``--no-session-persistence`` writes no transcript and ``disableAllHooks`` runs no hook,
so the prompt, which quotes the memory, is never captured as a new session. ``--bare`` would do
much of this too, but it also stops reading the login keychain, which would break every user
signed in with a subscription rather than an API key.

The output is JSON lines. With ``--include-partial-messages`` the text arrives as
``stream_event`` deltas, printed as they come; a run that sends no deltas still prints the
``assistant`` messages, or the final ``result``. A ``result`` with ``is_error`` is a failure.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from funes_core import IntegrationError

__all__ = ["ask_answer", "ask_argv"]


def ask_argv(program: str) -> list[str]:
    """The isolated, streaming, tool-less ``claude -p`` command line (module docstring)."""
    return [
        program,
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--strict-mcp-config",
        "--mcp-config",
        '{"mcpServers":{}}',
        "--tools",
        "",
        "--no-session-persistence",
        "--settings",
        '{"disableAllHooks":true}',
    ]


def _texts(message: Any) -> list[str]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]


def ask_answer(lines: Iterable[str]) -> Iterator[str]:
    """The answer's text in ``claude -p --output-format stream-json`` output, as it arrives."""
    printed = False
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue  # not an event (a warning line): not part of the answer
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "stream_event":
            inner = event.get("event")
            delta = inner.get("delta") if isinstance(inner, dict) else None
            if isinstance(delta, dict) and delta.get("type") == "text_delta":
                text = delta.get("text")
                if isinstance(text, str) and text:
                    printed = True
                    yield text
        elif kind == "assistant" and not printed:
            for text in _texts(event.get("message")):
                if text:
                    yield text
            printed = printed or bool(_texts(event.get("message")))
        elif kind == "result":
            result = event.get("result")
            if event.get("is_error"):
                detail = result if isinstance(result, str) and result else event.get("subtype", "error")
                raise IntegrationError(f"Claude Code reported an error: {' '.join(str(detail).split())}")
            if not printed and isinstance(result, str) and result:
                printed = True
                yield result

"""The ``funes`` console script: ``funes mcp`` on stdio goes to the MCP front before the CLI is built.

Building the typer app costs ~0.25 s of CPU before any command runs: typer builds a pydantic
``TypeAdapter`` for every parameter (importing pydantic) and every installed plugin is loaded.
An agent starts ``funes mcp`` in parallel with its first model request and lists the server's
tools only if they arrive in time (Claude Code's ``-p`` sends that request ~0.3 s after start), so
``funes mcp`` and ``funes mcp MEMORY`` skip all of that: this module imports nothing but the
front. Every other command line, including ``funes mcp --help`` and the HTTP transport, takes
the normal path. ``FUNES_MCP_FRONT=0`` turns the fast path (and the front) off.

The read verbs have a fast path of their own (:mod:`funes_core.faces.cli.fast`): when the memory
service runs and the command line is one it fully reads, the service's answer is printed before
typer is even imported; anything else, and every other command, builds the app as before.
"""

from __future__ import annotations

import os
import sys

__all__ = ["main", "plain_mcp"]


def plain_mcp(argv: list[str]) -> tuple[bool, str | None]:
    """Whether ``argv`` is ``mcp [MEMORY]`` (stdio, no options), and the memory spec it names."""
    if not argv or argv[0] != "mcp" or len(argv) > 2 or os.environ.get("FUNES_MCP_FRONT", "1") == "0":
        return False, None
    if len(argv) == 2:
        return (True, argv[1]) if argv[1] and not argv[1].startswith("-") else (False, None)
    return True, None


def main() -> None:
    """Console-script entry point."""
    fast, memory = plain_mcp(sys.argv[1:])
    if fast:
        from funes_core.faces.mcp_front import serve_stdio

        serve_stdio(memory)
        return
    from funes_core.faces.cli.fast import answer

    code = answer(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from funes_core.faces.cli.app import main as cli_main

    cli_main()

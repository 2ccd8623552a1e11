"""``funes mcp``: serve the memory to an agent over MCP."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["register"]

MCP_HELP = """\
Serve the memory as MCP tools (recall, get, sessions, scan, sketch, status, triggers).

Read-only: the server never takes the write lock, and sees turns indexed by other processes on
the next call. MEMORY is 'local' (default) or a path to a memory folder; a tool call's own
`memory` argument overrides it. Logs go to stderr; FUNES_LOG=debug|info|warning sets the level.
"""


def register(app: typer.Typer) -> None:
    @app.command("mcp", help=MCP_HELP)
    def mcp_cmd(
        memory: Annotated[str | None, typer.Argument(help="The memory to serve (default: local).")] = None,
        transport: Annotated[
            str, typer.Option("--transport", help="stdio (default) or streamable-http.")
        ] = "stdio",
        bind: Annotated[
            str,
            typer.Option(
                "--bind",
                help="HOST:PORT for streamable-http: 127.0.0.1, [::1] or localhost only (it has no "
                "authentication); Host and Origin headers are checked.",
            ),
        ] = "127.0.0.1:1942",
    ) -> None:
        if transport not in ("stdio", "streamable-http"):
            typer.echo(f"funes: --transport {transport!r} is not one of stdio, streamable-http", err=True)
            raise typer.Exit(2)
        from funes_core.faces.mcp import BindError, serve

        try:
            serve(memory, transport=transport, bind=bind)
        except BindError as exc:
            typer.echo(f"funes: {exc}", err=True)
            raise typer.Exit(2) from None

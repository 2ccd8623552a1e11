"""``funes ui``: open the local, read-only web viewer of a memory (:mod:`funes_core.faces.web`)."""

from __future__ import annotations

import contextlib
from typing import Annotated

import typer

__all__ = ["UI_HELP", "register"]

UI_HELP = """\
Open a read-only web viewer of the memory in your browser: sessions by day, each session's turns,
search (the same recall agents use) and health.

It listens on 127.0.0.1 only, on a free port, and prints its address, which carries a token made
for this start (the browser then keeps it in a cookie). It changes nothing in the memory. Ctrl-C
stops it.
"""


def register(app: typer.Typer) -> None:
    @app.command("ui", help=UI_HELP)
    def ui(
        memory: Annotated[
            str | None,
            typer.Option(
                "--memory", "-m", help="Memory to view: 'local' (default), a remote, or several: local,team."
            ),
        ] = None,
        open_browser: Annotated[
            bool, typer.Option("--open/--no-open", help="Open the default browser (default: yes).")
        ] = True,
        port: Annotated[
            int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free one).")
        ] = 0,
    ) -> None:
        from funes_core.faces.web.server import bind, serve
        from funes_core.read.handle import MemoryUnavailableError, resolve_memories

        try:
            handle = resolve_memories(memory)
        except MemoryUnavailableError as exc:
            typer.echo(f"funes ui: {exc}", err=True)
            raise typer.Exit(1) from None
        try:
            bound = bind(port)
        except OSError as exc:
            typer.echo(f"funes ui: {exc}", err=True)
            raise typer.Exit(1) from None

        def ready(url: str) -> None:
            typer.echo(f"funes ui: {url}")
            typer.echo("read-only; Ctrl-C stops it")
            if open_browser:
                import webbrowser

                if not webbrowser.open(url):
                    typer.echo("funes ui: no browser found; open the address above", err=True)

        with contextlib.suppress(KeyboardInterrupt):
            serve(handle, bound, on_ready=ready)

"""``funes ui``: open the local, read-only web viewer of a memory (:mod:`funes_core.faces.web`).

The memory service hosts the viewer when it can (:mod:`funes_core.faces.cli.ui_front`, which the
console script's fast path usually runs before this command is built); this command serves it
from its own process when asked (``--no-service``, ``FUNES_SERVICE=off``) or when the service
cannot host it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Annotated

import typer

from funes_core.faces.cli.fast import (
    MEMORY_FLAGS,
    NO_SERVICE_FLAG,
    UI_NO_OPEN_FLAG,
    UI_OPEN_FLAG,
    UI_PORT_FLAG,
)

__all__ = ["UI_HELP", "register"]

UI_HELP = """\
Open a read-only web viewer of the memory in your browser: sessions by day, each session's turns,
search (the same recall agents use) and health.

It listens on 127.0.0.1 only, on a free port, and prints its address, which carries a token made
for this start (the browser then keeps it in a cookie). It changes nothing in the memory. Ctrl-C
stops it. The memory service (funes serve, started if none runs) hosts it over the memory it
already holds; --no-service serves it from this process.
"""


def register(app: typer.Typer) -> None:
    @app.command("ui", help=UI_HELP)
    def ui(
        memory: Annotated[
            str | None,
            typer.Option(
                *MEMORY_FLAGS, help="Memory to view: 'local' (default), a remote, or several: local,team."
            ),
        ] = None,
        open_browser: Annotated[
            bool,
            typer.Option(
                f"{UI_OPEN_FLAG}/{UI_NO_OPEN_FLAG}", help="Open the default browser (default: yes)."
            ),
        ] = True,
        port: Annotated[
            int, typer.Option(UI_PORT_FLAG, min=0, max=65535, help="Port on 127.0.0.1 (0: any free one).")
        ] = 0,
        no_service: Annotated[
            bool,
            typer.Option(
                NO_SERVICE_FLAG,
                help="Serve the viewer from this process (its own memory and model) even when the "
                "memory service could host it; FUNES_SERVICE=off does the same.",
            ),
        ] = False,
    ) -> None:
        from funes_core.faces.cli import ui_front

        code = ui_front.answer(memory, port, open_browser, no_service)
        if code is not None:
            raise typer.Exit(code)
        _in_process(memory, port, lambda url: ui_front.announce(url, open_browser))


def _in_process(memory: str | None, port: int, ready: Callable[[str], None]) -> None:
    """The viewer in this process: its own memory handle, model and uvicorn."""
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
    with contextlib.suppress(KeyboardInterrupt):
        serve(handle, bound, on_ready=ready)

"""``funes ui``: open the local, read-only web viewer of a memory (:mod:`funes_core.faces.web`).

The memory service (``funes serve``) hosts the viewer when it can: ``funes ui`` asks it over its
socket (starting it, detached, when none runs, as ``funes mcp`` does), the service builds the
viewer from the memory and model it already holds and answers with the address, and this process
only prints it and waits. The viewer lives as long as this connection: Ctrl-C (or this process
ending in any way) makes the service close it. When the service cannot host it (another version
in use by other clients, no Unix sockets, a service that cannot start, a memory given as a folder),
this process serves the viewer itself, as ``--no-service`` and ``FUNES_SERVICE=off`` ask, after one
line saying why.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from funes_core.faces.cli.fast import NO_SERVICE_FLAG

if TYPE_CHECKING:
    from funes_core.serve.client import Connection

__all__ = ["UI_HELP", "register"]

UI_HELP = """\
Open a read-only web viewer of the memory in your browser: sessions by day, each session's turns,
search (the same recall agents use) and health.

It listens on 127.0.0.1 only, on a free port, and prints its address, which carries a token made
for this start (the browser then keeps it in a cookie). It changes nothing in the memory. Ctrl-C
stops it. The memory service (funes serve, started if none runs) hosts it over the memory it
already holds; --no-service serves it from this process.
"""

#: How long ``funes ui`` waits, after Ctrl-C, for the service to say the viewer is closed.
STOP_WAIT = 15.0

_Ready = Callable[[str, object], None]


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
        no_service: Annotated[
            bool,
            typer.Option(
                NO_SERVICE_FLAG,
                help="Serve the viewer from this process (its own memory and model) even when the "
                "memory service could host it; FUNES_SERVICE=off does the same.",
            ),
        ] = False,
    ) -> None:
        def ready(url: str, pid: object = None) -> None:
            typer.echo(f"funes ui: {url}")
            served = f"served by the memory service (pid {pid}); " if pid is not None else ""
            typer.echo(f"read-only; {served}Ctrl-C stops it")
            if open_browser:
                import webbrowser

                if not webbrowser.open(url):
                    typer.echo("funes ui: no browser found; open the address above", err=True)

        from funes_core.serve.client import service_disabled

        if not no_service and not service_disabled():
            why = _through_service(memory, port, ready)
            if why is None:
                return
            typer.echo(f"funes ui: {why}; serving the viewer from this process", err=True)
        _in_process(memory, port, ready)


def _through_service(memory: str | None, port: int, ready: _Ready) -> str | None:
    """Have the memory service host the viewer until Ctrl-C; ``None`` once done, else why it could not.

    A refusal that serving in-process would meet too (a memory that cannot be read, a port in
    use) ends the command with its one line, as the in-process viewer would.
    """
    from funes_core.faces.cli.fast import service_spec
    from funes_core.serve import client

    if not service_spec(memory):
        return "the memory service opens memories by name, not a memory folder"
    try:
        conn = client.ensure_service(client.home_root(), "ui", memory=memory, port=port)
    except KeyboardInterrupt:
        return None
    except Exception as exc:  # unavailable, or a home that cannot be used: said, then in-process
        return f"the memory service cannot host the viewer ({exc})"
    try:
        return _hosted(conn, ready)
    finally:
        conn.close()


def _hosted(conn: Connection, ready: _Ready) -> str | None:
    """The service's answer on ``conn`` (the address, or why not), then the wait until Ctrl-C."""
    from funes_core.serve.client import ServiceUnavailableError

    try:
        reply = conn.receive()
    except KeyboardInterrupt:
        return None  # closing the connection stops the viewer the service was warming
    except ServiceUnavailableError as exc:
        return f"the memory service did not host the viewer ({exc})"
    if not reply.get("ok"):
        if reply.get("kind") == "verb":
            typer.echo(f"funes ui: {reply.get('error')}", err=True)
            raise typer.Exit(1)
        return f"the memory service could not host the viewer ({reply.get('error')})"
    ready(str(reply.get("url")), reply.get("pid"))
    conn.sock.settimeout(None)
    try:
        conn.rfile.readline()  # the service says nothing until asked to stop: this is its end
    except KeyboardInterrupt:
        _stop(conn)
        return None
    except OSError:
        pass
    typer.echo("funes ui: the memory service stopped, and the viewer with it", err=True)
    raise typer.Exit(1)


def _stop(conn: Connection) -> None:
    """Ask the service to close the viewer and wait (bounded) until it has: once ``funes ui`` has
    exited, its address answers no more."""
    with contextlib.suppress(Exception):
        conn.sock.settimeout(STOP_WAIT)
        conn.send({"op": "stop"})
        with conn.sock.makefile("rb") as answer:  # not conn.rfile: Ctrl-C broke into its read
            answer.readline()


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

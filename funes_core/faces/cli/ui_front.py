"""``funes ui`` as a thin client of the memory service: the service hosts the viewer, this process waits.

Standard library only (and the service's client): the console script's fast path
(:mod:`funes_core.faces.cli.fast`) runs this before the typer app is built, so with a warm
service the address is printed about as soon as Python has started, instead of after the app and
its plugins have loaded (2-7 s on a loaded machine). The typer command
(:mod:`funes_core.faces.cli.ui`) runs it too, for the command lines the fast path leaves to typer.

What happens: connect to the service of this ``$FUNES_HOME`` (starting it, detached, when none
runs, as ``funes mcp`` does) and ask for a viewer of ``--memory`` on ``--port``; the service builds
it from the memory and model it already holds (:meth:`funes_core.serve.service.Service.viewer`)
and answers with the address; print it, open the browser, and wait on the connection. The viewer
lives as long as the connection: Ctrl-C asks the service to close it and waits until it has, and
this process ending any other way closes the connection, which closes the viewer too. When the
service cannot host it, one line says why and the caller serves the viewer in-process.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from funes_core.serve.client import Connection

__all__ = ["STOP_WAIT", "announce", "answer"]

#: How long ``funes ui`` waits, after Ctrl-C, for the service to say the viewer is closed.
STOP_WAIT = 15.0

#: Set once this process found that the service cannot host the viewer (and said so): the typer
#: command that the fast path then falls back to serves in-process without asking again.
_GAVE_UP: list[bool] = [False]


def _say(text: str, *, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def announce(url: str, open_browser: bool, pid: int | None = None) -> None:
    """Print the viewer's address (and who serves it), and open the browser on it."""
    _say(f"funes ui: {url}")
    served = f"served by the memory service (pid {pid}); " if pid is not None else ""
    _say(f"read-only; {served}Ctrl-C stops it")
    if open_browser:
        import webbrowser

        if not webbrowser.open(url):
            _say("funes ui: no browser found; open the address above", err=True)


def answer(memory: str | None, port: int, open_browser: bool, no_service: bool) -> int | None:
    """Have the service host the viewer until Ctrl-C: the exit status, or ``None`` to serve it here.

    ``None`` without a word for ``--no-service`` and ``FUNES_SERVICE=off``; after one line on
    stderr when the service cannot host it. A refusal that serving in-process would meet too (a
    memory that cannot be read, a port in use) is its one line and status 1.
    """
    from funes_core.serve import client

    if no_service or _GAVE_UP[0] or client.service_disabled():
        return None
    why = _hosted(memory, port, open_browser)
    if isinstance(why, int):
        return why
    _GAVE_UP[0] = True
    _say(f"funes ui: {why}; serving the viewer from this process", err=True)
    return None


def _hosted(memory: str | None, port: int, open_browser: bool) -> int | str:
    from funes_core.faces.cli.fast import service_spec
    from funes_core.serve import client

    if not service_spec(memory):
        return "the memory service opens memories by name, not a memory folder"
    try:
        conn = client.ensure_service(client.home_root(), "ui", memory=memory, port=port)
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # unavailable, or a home that cannot be used: said, then in-process
        return f"the memory service cannot host the viewer ({exc})"
    try:
        return _viewed(conn, open_browser)
    except KeyboardInterrupt:
        _stop(conn)
        return 0
    finally:
        conn.close()


def _viewed(conn: Connection, open_browser: bool) -> int | str:
    """The service's answer on ``conn`` (the address, or why not), then the wait until Ctrl-C."""
    from funes_core.serve.client import ServiceUnavailableError

    try:
        reply = conn.receive()
    except ServiceUnavailableError as exc:
        return f"the memory service did not host the viewer ({exc})"
    if not reply.get("ok"):
        if reply.get("kind") == "verb":
            _say(f"funes ui: {reply.get('error')}", err=True)
            return 1
        return f"the memory service could not host the viewer ({reply.get('error')})"
    pid = reply.get("pid")
    announce(str(reply.get("url")), open_browser, pid if isinstance(pid, int) else None)
    conn.sock.settimeout(None)
    with contextlib.suppress(OSError):
        conn.rfile.readline()  # the service says nothing until asked to stop: this is its end
    _say("funes ui: the memory service stopped, and the viewer with it", err=True)
    return 1


def _stop(conn: Connection) -> None:
    """Ask the service to close the viewer and wait (bounded) until it has: once ``funes ui`` has
    exited, its address answers no more."""
    with contextlib.suppress(Exception):
        conn.sock.settimeout(STOP_WAIT)
        conn.send({"op": "stop"})
        with conn.sock.makefile("rb") as reply:  # not conn.rfile: Ctrl-C may have broken into its read
            reply.readline()

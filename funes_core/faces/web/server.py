"""Running the viewer: a uvicorn on 127.0.0.1, a free port, a fresh token, in ``funes ui`` or the service.

:func:`serve` runs it in the foreground of ``funes ui --no-service`` (or when the memory service
cannot host it); :func:`host` runs it in a thread of the memory service, over the memory handles
the service already holds, until :meth:`Hosted.stop`.

The socket is bound before the application is built, so the ``Host`` values the guard accepts
name the real port, and before the browser is opened, so the browser's first request waits in
the listen queue instead of failing. The application is warmed (:func:`~funes_core.faces.web.app.warm_up`:
the store, the session list, the query model) before the address is printed, so the first visit
is as fast as a later one.
"""

from __future__ import annotations

import secrets
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from funes_core.faces.web.guard import TOKEN_PARAM

if TYPE_CHECKING:
    import uvicorn

    from funes_core.read.handle import Memory, MemorySet

__all__ = ["HOST", "Bound", "Hosted", "bind", "host", "serve"]

#: The only address the viewer listens on.
HOST = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class Bound:
    sock: socket.socket
    port: int
    token: str

    @property
    def url(self) -> str:
        """The address to open: it carries the token, which the first answer moves into a cookie."""
        return f"http://{HOST}:{self.port}/?{TOKEN_PARAM}={self.token}"

    @property
    def hosts(self) -> tuple[str, str]:
        return (f"{HOST}:{self.port}", f"localhost:{self.port}")


def bind(port: int = 0) -> Bound:
    """A listening socket on 127.0.0.1 (``port`` 0: any free one) and this start's token."""
    # IPPROTO_TCP named, not left 0: asyncio turns Nagle off (TCP_NODELAY) only on connections
    # whose socket says TCP, and with Nagle on each answer's last write waited for the browser's
    # delayed ACK: ~40 ms on every page, fragment and static file.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
    sock.listen(64)
    sock.set_inheritable(False)
    return Bound(sock, int(sock.getsockname()[1]), secrets.token_urlsafe(32))


def serve(
    memory: Memory | MemorySet,
    bound: Bound,
    *,
    installed: Sequence[str] | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the viewer of ``memory`` on ``bound`` until interrupted (Ctrl-C).

    ``on_ready`` gets the address once the viewer is warm, before the server runs.
    """
    server = _server(memory, bound, installed=installed)
    if on_ready is not None:
        on_ready(bound.url)
    server.run(sockets=[bound.sock])


def _server(memory: Memory | MemorySet, bound: Bound, **options: Any) -> uvicorn.Server:
    """The warm viewer of ``memory`` on a uvicorn server for ``bound`` (not running yet).

    ``options`` go to :func:`~funes_core.faces.web.app.make_app`, but ``log_config``: the
    service passes ``None`` so that uvicorn leaves the process's logging as the service set it.
    """
    import uvicorn

    from funes_core.faces.web.app import make_app

    log: dict[str, Any] = {"log_config": options.pop("log_config")} if "log_config" in options else {}
    app = make_app(
        memory, token=bound.token, hosts=bound.hosts, cookie=f"funes_ui_{bound.port}", warm=True, **options
    )
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        timeout_graceful_shutdown=STOP_GRACE,
        **log,
    )
    return uvicorn.Server(config)


#: Seconds a stopping viewer gives the requests in flight before it closes their connections.
STOP_GRACE = 5


class Hosted:
    """A viewer running in a thread of this process (the memory service's), until :meth:`stop`."""

    def __init__(self, server: uvicorn.Server, bound: Bound) -> None:
        self.bound = bound
        self._server = server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [bound.sock]}, name=f"funes-ui-{bound.port}", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return self.bound.url

    def stop(self, timeout: float = STOP_GRACE + 5.0) -> bool:
        """Close the viewer: no new connection, the requests in flight finished (or cut after
        :data:`STOP_GRACE` s); ``True`` once its port is closed."""
        self._server.should_exit = True
        self._thread.join(timeout)
        self.bound.sock.close()
        return not self._thread.is_alive()


def host(
    memory: Memory | MemorySet,
    bound: Bound,
    *,
    open_memory: Callable[[str], Memory | MemorySet],
    lock: threading.Lock | threading.RLock,
) -> Hosted:
    """Run the viewer of ``memory`` on ``bound`` in a thread, once warm; how the service hosts it.

    ``open_memory`` opens what a page's ``?memory=`` names and ``lock`` guards every read: the
    service's own, so that the viewer reads the handles the service already holds, one at a time
    with its other sessions, and no second copy of the store or the model is opened.
    """
    server = _server(memory, bound, open_memory=open_memory, lock=lock, log_config=None)
    return Hosted(server, bound)

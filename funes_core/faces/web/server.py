"""Running the viewer for ``funes ui``: its own uvicorn on 127.0.0.1, a free port, a fresh token.

The socket is bound before the application is built, so the ``Host`` values the guard accepts
name the real port, and before the browser is opened, so the browser's first request waits in
the listen queue instead of failing. The application is warmed (:func:`~funes_core.faces.web.app.warm_up`:
the store, the session list, the query model) before the address is printed, so the first visit
is as fast as a later one.
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from funes_core.faces.web.guard import TOKEN_PARAM

if TYPE_CHECKING:
    from funes_core.read.handle import Memory, MemorySet

__all__ = ["HOST", "Bound", "bind", "serve"]

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
    import uvicorn

    from funes_core.faces.web.app import make_app

    app = make_app(
        memory,
        token=bound.token,
        hosts=bound.hosts,
        cookie=f"funes_ui_{bound.port}",
        installed=installed,
        warm=True,
    )
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False)
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(bound.url)
    server.run(sockets=[bound.sock])

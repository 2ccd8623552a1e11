"""The viewer as a Starlette application, built from an opened memory handle.

:func:`make_app` is the one entry point: ``funes ui --no-service`` runs it on its own uvicorn, and
the memory service builds it from the handles it already holds
(:func:`funes_core.faces.web.server.host`). Every route is a GET that reads through the
read verbs (:mod:`funes_core.faces.web.pages`) in a worker thread, under the viewer's lock (the
memory handles open lazily and are not thread-safe; the memory service hosting the viewer passes
its own), and renders escaped HTML
(:mod:`funes_core.faces.web.render`). Security lives in :class:`~funes_core.faces.web.guard.Guard`,
wrapped around everything, static files included.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from funes_core.faces.web import pages
from funes_core.faces.web.guard import TOKEN_PARAM, Guard
from funes_core.faces.web.render import page

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message

    from funes_core.read.handle import Memory, MemorySet

__all__ = ["STATIC", "WARM_QUERY", "make_app", "warm_up"]

STATIC = Path(__file__).parent / "static"
#: The query :func:`warm_up` searches for: any words do, it only has to reach the model and both legs.
WARM_QUERY = "warm up the viewer"


def make_app(
    memory: Memory | MemorySet,
    *,
    token: str,
    hosts: Sequence[str],
    cookie: str = "funes_ui",
    open_memory: Callable[[str], Memory | MemorySet] | None = None,
    installed: Sequence[str] | None = None,
    warm: bool = False,
    lock: threading.Lock | threading.RLock | None = None,
) -> ASGIApp:
    """The viewer of ``memory``, reachable only with ``token`` on one of ``hosts``.

    ``open_memory`` opens another memory a page names (``?memory=team`` or ``local,team``); by
    default, :func:`funes_core.read.handle.resolve_memories` in the memory's home. ``installed``
    names the integrations installed here, so the health page can warn when one stops capturing
    (default: those ``funes integrations install`` recorded in the memory's home). ``warm`` does
    the first visit's work before returning (:func:`warm_up`), so ``funes ui`` prints its address
    only once the first page and the first search cost what a later one does. ``lock`` is the one
    every read of these handles takes (default: the viewer's own).
    """
    from funes_core.read.handle import resolve_memories

    def default_open(spec: str) -> Memory | MemorySet:
        return resolve_memories(spec, home=memory.home)

    if installed is None:
        installed = pages.installed_integrations(memory.home)
    viewer = pages.Viewer(memory, open_memory or default_open, tuple(installed))
    if lock is not None:
        viewer.lock = lock
    routes = [
        Route("/", _view(viewer, _sessions)),
        Route("/session", _view(viewer, _session)),
        Route("/search", _view(viewer, _search)),
        Route("/search/hits", _view(viewer, _search_hits, live=True)),
        Route("/health", _view(viewer, _health)),
        Route("/health/owed", _view(viewer, _owed)),
        Route("/favicon.ico", _no_icon),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.viewer = viewer
    guarded = Guard(app, token=token, hosts=hosts, cookie=cookie)
    if warm:
        warm_up(guarded, token=token, host=hosts[0])
    return guarded


#: What :func:`warm_up` asks for, as a browser's first visit does: the timeline (after the token's
#: redirect), its stylesheet and script, the search page and one search.
WARM_PATHS = (
    "/",
    "/static/style.css",
    "/static/app.js",
    "/search",
    "/search/hits?" + urlencode({"q": WARM_QUERY}),
)


def warm_up(app: ASGIApp, *, token: str, host: str) -> None:
    """Send a first visit's requests through ``app`` in-process and throw the answers away.

    Why: on a 100k-chunk memory the first visit otherwise pays for opening the store, listing
    every session (one scan), loading the query model and LanceDB's indexes, compiling the
    templates, and the server's own first-use imports (anyio's thread pool, the static files):
    1.3 s for the first page and 2.3 s for the first search, against ~0.1 s and ~0.3 s once
    warm. Done before the address is printed, a person's first visit is a warm one. The
    requests go through the guard and the routes the browser's will, on an event loop of their
    own in a thread of their own (the caller may be running one). A page that fails here fails
    again, and says why, when it is visited: a failure here is not the start's.
    """

    async def visit() -> None:
        cookie = await _get(app, host, "/", f"{TOKEN_PARAM}={token}", None)
        for path in WARM_PATHS:
            route, _, query = path.partition("?")
            await _get(app, host, route, query, cookie)

    def run() -> None:
        with contextlib.suppress(Exception):
            asyncio.run(visit())

    thread = threading.Thread(target=run, name="funes-ui-warm")
    thread.start()
    thread.join()


async def _get(app: ASGIApp, host: str, path: str, query: str, cookie: str | None) -> str | None:
    """One GET through ``app``; the cookie it sets (``name=value``), if any."""
    headers = [(b"host", host.encode()), (b"sec-fetch-site", b"same-origin")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 0),
    }
    set_cookie: str | None = None
    asked, answered = False, asyncio.Event()

    async def receive() -> Message:
        """The empty body once; then, as a server does, a disconnect once the answer is sent
        (a streamed answer listens for one while it sends)."""
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal set_cookie
        if message["type"] == "http.response.start":
            for name, value in message.get("headers", []):
                if name.lower() == b"set-cookie":
                    set_cookie = value.decode("latin-1").split(";", 1)[0]
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            answered.set()

    await app(scope, receive, send)
    return set_cookie


_Handler = Callable[[pages.Viewer, Request], Response]


def _view(viewer: pages.Viewer, handler: _Handler, *, live: bool = False) -> Callable[[Request], Any]:
    """A route running ``handler`` in a worker thread under the viewer's lock; a refusal of a read
    verb (bad filter, unknown session, memory not readable) becomes its one line on an error page.

    ``live``: the route answers searches as you type; one that a newer search of the same page
    (its ``tab`` parameter) superseded while it waited for the lock answers 204 at once
    (:meth:`~funes_core.faces.web.pages.Viewer.ask`).
    """
    from starlette.concurrency import run_in_threadpool

    def locked(request: Request, ticket: tuple[str, int] | None) -> Response:
        from funes_core.read.common import VerbError
        from funes_core.read.handle import MemoryUnavailableError

        with viewer.lock:
            if viewer.superseded(ticket):
                return Response(status_code=204)
            try:
                return handler(viewer, request)
            except (VerbError, MemoryUnavailableError) as exc:
                status = 404 if str(exc).startswith("no session") else 400
                if request.url.path.endswith(("/hits", "/owed")):
                    return HTMLResponse(page("_error.html", message=str(exc)), status)
                return HTMLResponse(page("error.html", message=str(exc), **_common(viewer, "")), status)

    async def endpoint(request: Request) -> Response:
        ticket = viewer.ask(request.query_params.get("tab")) if live else None
        return await run_in_threadpool(locked, request, ticket)

    return endpoint


def _common(viewer: pages.Viewer, active: str) -> dict[str, Any]:
    return {"memory_label": viewer.memory.label, "active": active}


def _sessions(viewer: pages.Viewer, request: Request) -> Response:
    context = pages.sessions_page(viewer, request.query_params)
    return HTMLResponse(page("sessions.html", **context, **_common(viewer, "sessions")))


def _session(viewer: pages.Viewer, request: Request) -> Response:
    from funes_core.read.common import VerbError

    session_id = request.query_params.get("id", "")
    if not session_id:
        raise VerbError("say which session: /session?id=<session id>")
    context = pages.session_page(viewer, session_id, request.query_params.get("memory"))
    return HTMLResponse(page("session.html", **context, **_common(viewer, "sessions")))


def _search(viewer: pages.Viewer, request: Request) -> Response:
    context = pages.search_page(viewer, request.query_params)
    return HTMLResponse(page("search.html", **context, **_common(viewer, "search")))


def _search_hits(viewer: pages.Viewer, request: Request) -> Response:
    context = pages.search_page(viewer, request.query_params)
    return HTMLResponse(page("_hits.html", **context))


def _health(viewer: pages.Viewer, request: Request) -> Response:
    context = pages.health_page(viewer)
    return HTMLResponse(page("health.html", **context, **_common(viewer, "health")))


def _owed(viewer: pages.Viewer, request: Request) -> Response:
    return Response(json.dumps(pages.owed_now(viewer)), media_type="application/json")


async def _no_icon(request: Request) -> Response:
    return Response(status_code=204)

"""The viewer's security rules, as one ASGI middleware in front of every route.

Why each rule: the viewer shows a person's whole agent history, and any web page they visit can
send requests to 127.0.0.1. So a request gets in only with the random token of this start (in
the address ``funes ui`` opens, then in an HttpOnly SameSite=Strict cookie that no other site's
request carries); a ``Host`` other than the address we bound is refused (DNS rebinding: a
hostile name resolving to 127.0.0.1), and so is an ``Origin`` or ``Sec-Fetch-Site`` that says
the request came from another site. Only GET and HEAD exist: the viewer changes nothing. Every
answer carries a strict Content-Security-Policy (scripts only from our own static file, no
inline script, no plugin, no frame) and no CORS header, so even a passage that slipped past
escaping could not run.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import MutableHeaders
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CSP", "SECURITY_HEADERS", "TOKEN_PARAM", "Guard"]

#: The query parameter that carries the start's token in the address ``funes ui`` opens.
TOKEN_PARAM = "token"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: dict[str, str] = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "cache-control": "no-store",
}


class Guard:
    """Lets a request through only from this start's browser, on the bound address, same-site.

    ``hosts`` are the exact ``Host`` values accepted (``127.0.0.1:<port>``, ``localhost:<port>``);
    ``cookie`` is the cookie's name (per port: cookies are shared between ports of one host).
    """

    def __init__(self, app: ASGIApp, *, token: str, hosts: Sequence[str], cookie: str = "funes_ui") -> None:
        if len(token) < 16:
            raise ValueError("the viewer's token must be at least 16 characters")
        self.app = app
        self.token = token
        self.hosts = frozenset(hosts)
        self.origins = frozenset(f"http://{h}" for h in hosts)
        self.cookie = cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        response = self._refusal(scope)
        if response is not None:
            await response(scope, receive, _with_headers(send))
            return
        static = str(scope.get("path", "")).startswith("/static/")
        await self.app(scope, receive, _with_headers(send, cacheable=static))

    def _refusal(self, scope: Scope) -> Response | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if headers.get("host", "") not in self.hosts:
            return PlainTextResponse("funes ui: wrong Host header (only the address it printed)\n", 400)
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return PlainTextResponse("funes ui: cross-site request refused\n", 403)
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return PlainTextResponse("funes ui: cross-site request refused\n", 403)
        if scope["method"] not in ("GET", "HEAD"):
            return PlainTextResponse("funes ui is read-only\n", 405, headers={"allow": "GET, HEAD"})
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        offered = [v for k, v in query if k == TOKEN_PARAM]
        if offered:
            if not any(hmac.compare_digest(v.encode(), self.token.encode()) for v in offered):
                return PlainTextResponse("funes ui: wrong token; open the address `funes ui` printed\n", 403)
            # The token leaves the address bar (and the history) at once; the cookie carries it on.
            rest = urlencode([(k, v) for k, v in query if k != TOKEN_PARAM])
            redirect = RedirectResponse(scope["path"] + (f"?{rest}" if rest else ""), status_code=303)
            redirect.set_cookie(
                self.cookie, self.token, httponly=True, samesite="strict", path="/", secure=False
            )
            return redirect
        jar = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is simply no cookie
            jar = SimpleCookie()
        held = jar.get(self.cookie)
        if held is None or not hmac.compare_digest(held.value.encode(), self.token.encode()):
            return PlainTextResponse(
                "funes ui: open the address `funes ui` printed (it carries this start's token)\n", 403
            )
        return None


def _with_headers(send: Send, *, cacheable: bool = False) -> Send:
    """Add the security headers; the viewer's own stylesheet and script may be kept by the browser
    (they hold nothing of the memory), every page and fragment may not."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in SECURITY_HEADERS.items():
                headers[name] = value
            if cacheable:
                headers["cache-control"] = "private, max-age=3600"
        await send(message)

    return wrapped

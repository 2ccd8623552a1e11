"""Team mode: ``funes serve --http HOST:PORT --memory NAME`` serves one remote memory over HTTP.

What it serves. The read verbs as JSON (``POST /v1/<verb>`` with the arguments as a JSON object,
answered with the document ``funes <verb> --json`` prints; ``GET /v1/status``) and the MCP tools
over streamable HTTP (``/mcp``, the same SDK server ``funes mcp`` runs). The memory is a remote
(:mod:`funes_core.share`): a bucket the team owns, read through this replica's own mirror. The
service never writes: it has no route that could, and a write verb is answered 403.

Why each rule (the order a request meets them, in :class:`Guard`):

- ``/healthz`` answers ``{"ok": true}`` to anyone, and nothing else: a load balancer probes it
  with no token and with the replica's address as its ``Host``.
- A token in the query string is refused (400) before anything else looks at the request, and no
  log line ever shows a query string: addresses end up in proxy logs, browser history and
  ``Referer`` headers, so a token sent there is as good as published (the reply says to revoke it).
- ``Host`` and ``Origin`` are checked (421, 403) by the MCP SDK's own check, the one
  ``funes mcp --transport streamable-http`` uses, against the names the service is reached by
  (``--allow-host``): a page on another site that resolves its name to this address (DNS
  rebinding) is refused even from inside the network.
- ``Authorization: Bearer <token>``, checked against the hashes of :mod:`~funes_core.serve.tokens`:
  none or one never issued is 401 (with ``WWW-Authenticate``: authenticate), a revoked one is 403
  (authenticated, and refused). A write verb, another memory than the one served, or a method the
  read-only service does not have is 403 too: the token is fine, the action is not.
- Each token may make ``--rate`` requests a minute (a bucket of that many, refilled evenly); past
  it, 429 with ``Retry-After`` in seconds. The limit is per replica: there is no shared state.
- A body over ``--max-body`` (64 KiB) is 413, read no further. A client that sends its headers or
  its body too slowly (slowloris) gets 408 and is disconnected after ``--header-timeout`` (10 s)
  or ``--body-timeout`` (30 s) (:func:`guarded_protocol`); uvicorn alone bounds neither. Malformed
  HTTP gets uvicorn's 400; every failure is one request's, and the service goes on serving.

Replicas. Several replicas behind one load balancer share nothing but the bucket: each has its
own ``$FUNES_HOME`` and mirror, MCP runs stateless (any replica answers any request; no session
lives in one), and each replica re-lists the bucket every ``--refresh`` seconds (default 30) in a
thread of its own (:class:`Refresher`), so a push is served by every replica at most one refresh
period plus one sync after it lands (``docs/serving.md``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from funes_core.serve.tokens import TOKEN_PREFIX, TokenFileError, TokenTable, Verdict, digest

if TYPE_CHECKING:
    from starlette.types import Message, Receive, Scope, Send

    from funes_core.home import Home
    from funes_core.read.handle import Memory, MemorySet

__all__ = [
    "DEFAULT_REFRESH",
    "HttpOptions",
    "HttpService",
    "HttpSetupError",
    "RateLimiter",
    "guarded_protocol",
    "plan",
    "run_http",
]

#: Seconds between two listings of the bucket by one replica: the bound on how stale it may be.
DEFAULT_REFRESH = 30.0
#: Requests a minute one token may make of one replica.
DEFAULT_RATE = 600
MAX_BODY = 64 * 1024
#: The most bytes of header names and values one request may send (431 past it).
MAX_HEADERS = 16 * 1024
HEADER_TIMEOUT = 10.0
BODY_TIMEOUT = 30.0
#: Seconds a connection cut off for slowness stays half-open, reading and dropping, so the 408
#: reaches the client instead of a reset (:func:`guarded_protocol`).
LINGER = 2.0
#: Refusals (status 400 and over) one replica logs a minute; the rest are counted, not written.
REFUSALS_LOGGED_PER_MINUTE = 60
#: Connections one replica holds at once; past it uvicorn answers 503 (a flood cannot exhaust it).
MAX_CONNECTIONS = 512
#: Query parameters that carry a token in the schemes people reach for (``?access_token=``, ...).
TOKEN_PARAMS = frozenset(
    {"access_token", "token", "bearer", "auth", "authorization", "api_key", "apikey", "key", "id_token"}
)
#: The commands that change a memory: named here so that asking for one is 403, not 404.
WRITE_VERBS = frozenset({"index", "push", "scrub", "purge", "remote", "notes", "install", "rebuild"})
#: The verbs served as JSON: the MCP tools but ``triggers`` (an agent hook's concern, not a team's).
JSON_VERBS = ("recall", "get", "sessions", "scan", "sketch", "status")


class HttpSetupError(ValueError):
    """Team mode cannot start as asked; ``str()`` is the one line to print."""


@dataclass
class HttpOptions:
    bind: str
    memory: str
    tokens: Path
    allow_hosts: tuple[str, ...] = ()
    refresh: float = DEFAULT_REFRESH
    rate: int = DEFAULT_RATE
    max_body: int = MAX_BODY
    header_timeout: float = HEADER_TIMEOUT
    body_timeout: float = BODY_TIMEOUT


@dataclass
class Plan:
    """What :func:`plan` checked: where to listen, who may ask, which names the service answers to."""

    host: str
    port: int
    tokens: TokenTable | None
    allowed_hosts: list[str]
    options: HttpOptions
    loopback: bool


def _names(port: int, hosts: list[str]) -> list[str]:
    """``Host`` values to accept: each name on ``port`` and bare (a proxy on 443 sends the bare name);
    a name given with a port (``funes.example:8443``) as given."""
    out: list[str] = []
    for raw in hosts:
        host = raw.strip().lower()
        if not host:
            continue
        if host.startswith("["):
            out += [host] if "]:" in host else [f"{host}:{port}", host]
        elif host.count(":") > 1:  # a bare IPv6 address
            out += [f"[{host}]:{port}", f"[{host}]"]
        elif ":" in host:
            out.append(host)
        else:
            out += [f"{host}:{port}", host]
    return list(dict.fromkeys(out))


def plan(options: HttpOptions, home: Home) -> Plan:
    """Check everything that can be checked before anything heavy is loaded; one-line errors.

    A bind another machine can reach needs at least one token: the memory must never be on the
    network for anyone who finds the port. A loopback bind without tokens is allowed (a proxy on
    this machine may authenticate for it) and the start-up line says it is open.
    """
    from funes_core.faces.mcp import BindError, is_loopback, parse_bind
    from funes_core.share.memory import UnknownMemoryError, resolve_memory
    from funes_core.share.remotes import RemoteConfigError

    try:
        host, port = parse_bind(options.bind, "--http", loopback_only=False)
    except BindError as exc:
        raise HttpSetupError(str(exc)) from None
    try:
        table: TokenTable | None = TokenTable(options.tokens)
    except TokenFileError as exc:
        raise HttpSetupError(str(exc)) from None
    assert table is not None
    loopback = is_loopback(host)
    if table.active == 0:
        if not loopback:
            raise HttpSetupError(
                f"--http {host}:{port} is not a loopback address and no token is configured: "
                f"make one with `funes serve token add NAME` (tokens file {options.tokens})"
            )
        table = None
    if host in ("0.0.0.0", "::") and not options.allow_hosts:
        raise HttpSetupError(
            f"--http {options.bind[:60]}: a bind on every address needs --allow-host NAME, the name "
            "clients reach it by (checked against Host, against DNS rebinding)"
        )
    try:
        location = resolve_memory(options.memory, home=home)
    except (UnknownMemoryError, RemoteConfigError) as exc:
        raise HttpSetupError(str(exc)) from None
    if location.remote is None:
        raise HttpSetupError(
            f"--memory {options.memory[:60]!r}: team mode serves a remote (funes remote list), "
            "not a memory on this machine"
        )
    if not (options.refresh > 0 and options.rate >= 0 and options.max_body > 0):
        raise HttpSetupError("--refresh and --max-body must be above 0, --rate at least 0")
    hosts = list(options.allow_hosts)
    if loopback:
        hosts += ["127.0.0.1", "localhost", "[::1]"]
    elif host not in ("0.0.0.0", "::"):
        hosts.append(host)
    return Plan(host, port, table, _names(port, hosts), options, loopback)


# ----------------------------------------------------------------------------- rate limit


class RateLimiter:
    """A bucket of ``per_minute`` requests per key, refilled evenly; ``0`` turns the limit off."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str, now: float | None = None, per_minute: int | None = None) -> float | None:
        """Spend one request; ``None`` if allowed, else the seconds until one is.

        ``per_minute`` overrides the limit for this key (a token's own ``rate``)."""
        limit = self.per_minute if per_minute is None else per_minute
        if limit <= 0:
            return None
        now = time.monotonic() if now is None else now
        rate = limit / 60.0
        with self._lock:
            level, seen = self._buckets.get(key, (float(limit), now))
            level = min(float(limit), level + (now - seen) * rate)
            if level >= 1.0:
                self._buckets[key] = (level - 1.0, now)
                return None
            self._buckets[key] = (level, now)
            return (1.0 - level) / rate


# ----------------------------------------------------------------------------- the guard


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    from starlette.responses import Response

    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    return Response(data, status_code=status, media_type="application/json", headers=headers)


def token_in_query(query: bytes, known: frozenset[str]) -> bool:
    """Whether a query string carries a token: a token-ish parameter name, a value shaped like one
    of ours, or a value that is one of the tokens issued (whatever the parameter is called)."""
    text = query.decode("latin-1")
    if TOKEN_PREFIX in text:
        return True
    for name, value in parse_qsl(text, keep_blank_values=True):
        if name.lower() in TOKEN_PARAMS or value.startswith(TOKEN_PREFIX):
            return True
        if value and digest(value) in known:
            return True
    return False


class Guard:
    """Every rule of the module docstring, in that order, before a request reaches a route."""

    def __init__(
        self,
        app: Any,
        *,
        security: Any,
        tokens: TokenTable | None,
        limiter: RateLimiter,
        max_body: int,
        log: Callable[[str], None],
        verbose: bool,
    ) -> None:
        from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecurityMiddleware

        self.app = RequestBodyLimitMiddleware(app, max_body)
        self.lifespan_app = app
        self.checks = TransportSecurityMiddleware(security)
        self.tokens = tokens
        self.limiter = limiter
        self.log = log
        self.verbose = verbose
        self._log_budget = RateLimiter(REFUSALS_LOGGED_PER_MINUTE)
        self._unlogged = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.lifespan_app(scope, receive, send)
            return
        started = time.monotonic()
        seen: dict[str, Any] = {"status": 0, "who": "-"}

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            await send(message)

        try:
            refusal = await self._refusal(scope, seen)
            if refusal is not None:
                await refusal(scope, receive, sending)
            else:
                await self.app(scope, receive, sending)
        finally:
            status = int(seen["status"])
            if self.verbose or (status >= 400 and status not in (404, 429) and self._may_log_refusal()):
                client = scope.get("client") or ("-", 0)
                ms = (time.monotonic() - started) * 1000
                # The path only: a query string is never logged (it may hold a token).
                path = str(scope.get("path"))
                shown = path if len(path) <= 200 else f"{path[:200]}… ({len(path) - 200} more characters)"
                self.log(
                    f"{client[0]} {scope.get('method')} {shown} {status} {ms:.0f} ms token={seen['who']}"
                )

    def _may_log_refusal(self) -> bool:
        """Whether this refusal gets its log line: a flood of 401s must not flood the log.

        At most :data:`REFUSALS_LOGGED_PER_MINUTE` lines a minute; the first line logged after a
        quiet spell says how many were left out, so the log still tells that a flood happened.
        """
        if self._log_budget.take("refusals") is not None:
            self._unlogged += 1
            return False
        if self._unlogged:
            self.log(
                f"{self._unlogged} refused request(s) not logged (over {REFUSALS_LOGGED_PER_MINUTE} a minute)"
            )
            self._unlogged = 0
        return True

    async def _refusal(self, scope: Scope, seen: dict[str, Any]) -> Any:
        """The response that refuses this request, or ``None`` to let it through."""
        from starlette.requests import Request

        path = str(scope.get("path", ""))
        method = str(scope.get("method", ""))
        if sum(len(name) + len(value) for name, value in scope.get("headers", ())) > MAX_HEADERS:
            # h11 bounds only a head still arriving: a whole one that came in one read passes it.
            return _json(431, {"error": f"request headers over {MAX_HEADERS // 1024} KiB"})
        if path == "/healthz" and method in ("GET", "HEAD"):
            return _json(200, {"ok": True})
        known = self.tokens.hashes() if self.tokens is not None else frozenset()
        if token_in_query(scope.get("query_string", b""), known):
            return _json(
                400,
                {
                    "error": "a token in the address is refused: send it as `Authorization: Bearer "
                    "<token>`, and revoke this one (addresses are logged by proxies)"
                },
            )
        checked = await self.checks.validate_request(Request(scope), is_post=False)
        if checked is not None:
            return checked
        who = "anonymous"
        own_rate: int | None = None
        if self.tokens is not None:
            header = Request(scope).headers.get("authorization")
            challenge = {"www-authenticate": 'Bearer realm="funes"'}
            if not header:
                return _json(401, {"error": "a bearer token is required"}, challenge)
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                bad = {"www-authenticate": 'Bearer realm="funes", error="invalid_request"'}
                return _json(401, {"error": "use `Authorization: Bearer <token>`"}, bad)
            verdict, entry = self.tokens.check(token.strip())
            if verdict is Verdict.UNKNOWN or entry is None:
                bad = {"www-authenticate": 'Bearer realm="funes", error="invalid_token"'}
                return _json(401, {"error": "unknown token"}, bad)
            who = entry.name
            own_rate = entry.rate
            seen["who"] = who
            if verdict is Verdict.REVOKED:
                return _json(403, {"error": f"token {who!r} was revoked"})
        if path.startswith("/v1/"):
            verb = path.removeprefix("/v1/")
            if verb in WRITE_VERBS or method not in ("GET", "HEAD", "POST"):
                return _json(403, {"error": "this service is read-only"})
        wait = self.limiter.take(who, per_minute=own_rate)
        if wait is not None:
            retry = max(1, math.ceil(wait))
            return _json(429, {"error": f"too many requests for token {who!r}"}, {"retry-after": str(retry)})
        return None


# ----------------------------------------------------------------------------- slow clients


def guarded_protocol(header_timeout: float, body_timeout: float) -> type:
    """uvicorn's h11 protocol with deadlines on a request's headers and on its body.

    uvicorn times out only an idle keep-alive connection (and any byte resets that), so a client
    that trickles its headers, a byte every few seconds, holds a connection for ever; enough of
    them exhaust the server. Here the headers must be complete ``header_timeout`` seconds after a
    request's first chance to start (the connection, or the previous response), and the body
    ``body_timeout`` seconds after the headers; past it, 408 and the connection is closed. The
    time the application takes to answer is not bounded here: that is its own business.

    Two details decide whether the client ever reads that 408:

    - A kept-alive connection on which no byte of a next request has come is closed without a
      word, as uvicorn's keep-alive timeout closes it: an unasked-for 408 there would be read as
      the answer to the next request the client sends.
    - The close lingers (:data:`LINGER` seconds, or until the client closes): our side is shut for
      writing and what the client still sends is read and dropped. Closing a socket with unread
      bytes in it makes the kernel reset the connection, and a reset discards the 408 the client
      had not read yet: a slow client still writing its headers would see only "connection reset".
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _deadline: Any = None
        _phase = "headers"
        _started = False  # a byte of the current request has come
        _draining = False

        def _arm(self, seconds: float, phase: str) -> None:
            self._disarm()
            self._phase = phase
            self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _track(self) -> None:
            if self.transport is None or self.transport.is_closing():
                self._disarm()
                return
            state = self.conn.their_state
            if state is h11.IDLE:
                if self._phase != "headers" or self._deadline is None:
                    self._arm(header_timeout, "headers")
            elif state is h11.SEND_BODY:
                if self._phase != "body":
                    self._arm(body_timeout, "body")
            else:
                self._phase = "done"
                self._disarm()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm(header_timeout, "headers")

        def data_received(self, data: bytes) -> None:
            if self._draining:
                return  # the 408 is sent; what the client still writes is dropped
            self._started = self._started or bool(data)
            super().data_received(data)
            self._track()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._started = bool(self.conn.trailing_data[0])  # a pipelined request already here
            self._phase = "response"
            self._track()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _too_slow(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            if not self._started and self._phase in ("headers", "response"):
                self.transport.close()  # an idle connection: nothing was asked, nothing to answer
                return
            if self.cycle is None or self.cycle.response_complete or not self.cycle.response_started:
                what = "headers" if self._phase == "headers" else "body"
                body = f"request {what} too slow\n".encode()
                self.transport.write(
                    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                    b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
                )
            self._linger()

        def _linger(self) -> None:
            """Shut our side for writing, drop what comes, close when the client does or at LINGER."""
            self._draining = True
            if self.cycle is not None:
                self.cycle.disconnected = True  # the application must not write after the 408
                self.cycle.message_event.set()  # and a read of the body it waits on ends now
            if self.transport.can_write_eof():
                self.transport.write_eof()
                self.loop.call_later(LINGER, self.transport.close)
            else:
                self.transport.close()

    return GuardedH11Protocol


# ----------------------------------------------------------------------------- the service


@dataclass
class Refresher:
    """Re-lists the bucket every ``seconds`` in its own thread, whatever the traffic.

    A replica that refreshed only when asked (as a CLI reader does) would make the request that
    found its copy old wait for the listing and downloads; and a replica nobody asked for a while
    would serve its first request from a copy of any age. Here a request never lists.
    """

    remote: Any
    home: Home
    seconds: float
    log: Callable[[str], None]
    last: float = 0.0
    error: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    def once(self) -> None:
        from funes_core.share.mirror import RemoteError, sync_mirror

        try:
            sync_mirror(self.remote, self.home, force=True)
        except RemoteError as exc:
            if str(exc) != self.error:
                self.log(f"refresh: {exc}")
            self.error = str(exc)
            return
        except Exception as exc:  # isolation boundary: the thread must outlive any one failure
            self.error = f"{type(exc).__name__}: {exc}"
            self.log(f"refresh failed: {self.error}")
            return
        if self.error is not None:
            self.log("refresh: the remote answers again")
        self.error = None
        self.last = time.time()

    def run(self) -> None:
        while not self._stop.wait(self.seconds):
            self.once()

    def start(self) -> None:
        threading.Thread(target=self.run, name="funes-serve-refresh", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()


class HttpService:
    """One replica: the memory opened once, the MCP server over it, the JSON routes, the refresher."""

    def __init__(self, plan_: Plan, home: Home, *, log: Callable[[str], None]) -> None:
        from funes_core.share.memory import resolve_memory

        self.plan = plan_
        self.home = home
        self.name = plan_.options.memory
        self.log = log
        self.cache: dict[str | None, Memory | MemorySet] = {}
        self.lock = threading.RLock()
        remote = resolve_memory(self.name, home=home).remote
        self.refresher = Refresher(remote, home, plan_.options.refresh, log)
        self._models: dict[str, Any] = {}
        self.started = time.time()

    # -- the memory ---------------------------------------------------------------------------

    def memory(self) -> Memory | MemorySet:
        from funes_core.read.handle import resolve_memories

        if self.name not in self.cache:
            self.cache[self.name] = resolve_memories(self.name, home=self.home)
        return self.cache[self.name]

    def warm(self) -> None:
        """Sync the mirror, open it, load the model and run one recall, before the first client."""
        from funes_core.faces.mcp import release_memory
        from funes_core.read import recall

        try:
            with self.lock:
                recall.VERB.run(self.memory(), recall.RecallArgs(query="warm up"))
            self.refresher.last = time.time()
        except Exception as exc:  # an empty or unreachable remote: the first call says so
            self.log(f"warm-up: {type(exc).__name__}: {exc}")
        finally:
            release_memory()

    # -- JSON verbs ---------------------------------------------------------------------------

    def _model(self, verb: Any) -> Any:
        """A pydantic model of ``verb``'s arguments, from the declarations the MCP tools use."""
        model = self._models.get(verb.name)
        if model is None:
            import inspect

            from pydantic import ConfigDict, create_model

            from funes_core.faces.mcp import _tool_parameter
            from funes_core.read.common import fields_of

            spec: dict[str, Any] = {}
            for f in fields_of(verb.args):
                p = _tool_parameter(f)
                default = ... if p.default is inspect.Parameter.empty else p.default
                spec[f.name] = (p.annotation, default)
            spec["memory"] = (str | None, None)
            config = ConfigDict(extra="forbid", populate_by_name=True)
            model = create_model(f"{verb.name}_arguments", __config__=config, **spec)
            self._models[verb.name] = model
        return model

    def answer(self, name: str, body: bytes) -> tuple[int, dict[str, Any] | str]:
        """One JSON verb: (status, error object) or (200, the verb's JSON document as text)."""
        from pydantic import ValidationError

        from funes_core.faces.mcp import TOOLS, release_memory, unicode_text
        from funes_core.models.vectors import ModelMismatchError
        from funes_core.read.common import VerbError
        from funes_core.read.handle import MemoryUnavailableError

        verbs = {v.name: v for v in TOOLS if v.name in JSON_VERBS}
        verb = verbs.get(name)
        if verb is None:
            return 404, {"error": f"no verb {name[:40]!r}: one of {', '.join(JSON_VERBS)}"}
        try:
            given = json.loads(body) if body.strip() else {}
        except ValueError:
            return 400, {"error": "the body is not JSON"}
        if not isinstance(given, dict):
            return 400, {"error": "the body must be a JSON object of the verb's arguments"}
        try:
            parsed = self._model(verb).model_validate(given)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:5]
            )
            return 400, {"error": f"bad arguments: {problems}"}
        values = parsed.model_dump()
        wanted = values.pop("memory", None)
        if wanted not in (None, "", self.name):
            return 403, {"error": f"this service serves memory {self.name!r} only"}
        try:
            with self.lock:
                if verb.name == "status":
                    return 200, self._status()
                text = verb.run(self.memory(), verb.args(**values), as_json=True)
        except (VerbError, ValueError) as exc:
            return 400, {"error": unicode_text(str(exc))}
        except (MemoryUnavailableError, ModelMismatchError) as exc:
            return 503, {"error": unicode_text(str(exc))}
        except Exception as exc:  # isolation boundary: one request's failure, the service goes on
            self.log(f"{verb.name} failed: {type(exc).__name__}: {exc}")
            with self.lock:
                self.cache.pop(self.name, None)  # reopened by the next request
            return 500, {"error": f"{verb.name} failed ({type(exc).__name__}); see the service log"}
        finally:
            release_memory()
        return 200, unicode_text(text)

    def _status(self) -> dict[str, Any]:
        from funes_core.read.status import collect_status

        report = collect_status(self.name, home=self.home).to_json()
        last = self.refresher.last
        report["service"] = {
            "pid": os.getpid(),
            "refresh_seconds": self.plan.options.refresh,
            "refreshed": datetime.fromtimestamp(last, UTC).isoformat().replace("+00:00", "Z")
            if last
            else None,
            "refresh_error": self.refresher.error,
            "uptime": round(time.time() - self.started, 1),
        }
        return report

    # -- the application ----------------------------------------------------------------------

    def app(self, *, verbose: bool = False) -> Any:
        """The ASGI application: the guard, in front of the SDK's streamable-HTTP app and our routes."""
        import anyio.to_thread
        from mcp.server.transport_security import TransportSecuritySettings
        from starlette.requests import Request
        from starlette.responses import Response

        from funes_core.faces.mcp import make_server

        options = self.plan.options
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=self.plan.allowed_hosts,
            allowed_origins=[f"{s}://{h}" for h in self.plan.allowed_hosts for s in ("http", "https")],
        )
        server = make_server(self.name, home=self.home, cache=self.cache, lock=self.lock, only=self.name)

        async def verb_route(request: Request) -> Response:
            name = request.path_params["verb"]
            body = await request.body() if request.method == "POST" else b""
            status, answer = await anyio.to_thread.run_sync(self.answer, name, body)
            if isinstance(answer, str):
                return Response(answer, status_code=status, media_type="application/json")
            response: Response = _json(status, answer)
            return response

        server.custom_route("/v1/{verb}", methods=["GET", "POST"])(verb_route)
        inner = server.streamable_http_app(
            streamable_http_path="/mcp",
            json_response=True,
            stateless_http=True,
            max_request_body_size=options.max_body,
            transport_security=security,
            host=self.plan.host,
        )
        return Guard(
            inner,
            security=security,
            tokens=self.plan.tokens,
            limiter=RateLimiter(options.rate),
            max_body=options.max_body,
            log=self.log,
            verbose=verbose,
        )


def run_http(options: HttpOptions, home: Home, *, announce: Callable[[str], None]) -> int:
    """Run one replica until SIGTERM or SIGINT; the exit status (2: refused as asked, one line)."""
    try:
        checked = plan(options, home)
    except HttpSetupError as exc:
        announce(f"funes serve: {exc}")
        return 2
    import uvicorn

    from funes_core.faces.mcp import configure_logging, lean_malloc
    from funes_core.serve.service import _log, load_parts

    lean_malloc()
    configure_logging("funes serve")  # before the SDK's server is built: see configure_logging
    load_parts()
    service = HttpService(checked, home, log=_log)
    service.warm()
    service.refresher.start()
    level = os.environ.get("FUNES_LOG", "WARNING").upper()
    app = service.app(verbose=level in ("INFO", "DEBUG"))
    config = uvicorn.Config(
        app,
        host=checked.host,
        port=checked.port,
        http=guarded_protocol(options.header_timeout, options.body_timeout),
        access_log=False,  # it would print query strings; the guard logs paths only
        log_level="warning",
        server_header=False,
        timeout_keep_alive=5,
        timeout_graceful_shutdown=10,
        limit_concurrency=MAX_CONNECTIONS,
        h11_max_incomplete_event_size=MAX_HEADERS,
        lifespan="on",
    )
    auth = (
        f"{checked.tokens.active} token(s) from {options.tokens}"
        if checked.tokens is not None
        else "NO TOKENS (loopback only; anyone on this machine can read it)"
    )
    shown = f"[{checked.host}]" if ":" in checked.host else checked.host
    announce(
        f"funes serve: serving {options.memory} on http://{shown}:{checked.port} (pid {os.getpid()}; "
        f"{auth}; refresh every {options.refresh:g} s; hosts {', '.join(checked.allowed_hosts)})"
    )
    try:
        uvicorn.Server(config).run()
    finally:
        service.refresher.stop()
        with contextlib.suppress(Exception):
            from funes_core.faces.mcp import release_memory

            release_memory()
    return 0

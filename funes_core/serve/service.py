"""``funes serve``: the one process per ``$FUNES_HOME`` that holds the memory, the model and the store open.

Life cycle. The service takes ``run/serve.lock`` first (a second one finds it held and exits at
once, before any heavy import: the lock, not the socket, decides who serves), then binds its socket
(0600, made under a 0177 umask so it is never reachable in between, in the 0700 ``run`` folder, or
in a private runtime folder when the home's filesystem cannot hold a socket; see
:mod:`~funes_core.serve.wire`). A socket file left by a service that died is removed (the lock
proves it stale); anything else at that path, or a path owned by another user, is refused in one
line. Only then does it write ``serve.json``, and it warms up (opens the default memory, loads the
model, runs one recall) in the background while it already answers. It exits after
``idle`` seconds without a client (default 30 minutes; ``0``: never), on ``stop``, on SIGTERM, or
when its socket or ``serve.json`` is taken away (a deleted home).

Connections. Each opens with a header line (:func:`funes_core.serve.client.header`). ``info`` and
``stop`` are answered whatever the asker's version (so a newer funes can replace an older
service); everything else needs the same funes version and the same reading settings (the
environment :func:`~funes_core.serve.wire.fingerprint`), or gets a refusal that names the
difference. ``mcp`` then runs one MCP session of the official SDK over the connection (what a
thin ``funes mcp`` front relays); ``call`` answers CLI read verbs, one JSON line each, with the
bytes the CLI would print; ``ui`` hosts a web viewer (:meth:`Service.viewer`) for as long as the
connection stays open. A line over the size limit, or a frame that is not JSON-RPC, gets an error
reply and the service goes on serving.

Freshness. Stores are opened with ``read_consistency_interval=0`` (:mod:`funes_core.store.lance`),
so every call reads the latest committed version: rows a ``funes index`` just committed, and the
rewrite a ``scrub`` or ``purge`` made (a new version of the same dataset; the old files are
deleted). A call that fails unexpectedly drops the memory it read and is run once more on a freshly
opened one, so a store swapped under the service is reopened instead of served stale.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from funes_core import portable
from funes_core.serve import wire

if TYPE_CHECKING:
    from funes_core.faces.web.server import Hosted
    from funes_core.home import Home
    from funes_core.read.handle import Memory, MemorySet

__all__ = ["Service", "StartError", "describe", "main"]


class StartError(RuntimeError):
    """The service cannot start; the message is one line."""


#: What the service's threads import lazily: the MCP SDK's session and server modules and the
#: read path. Python's per-module import locks do not make a package import safe when two threads
#: walk its import cycle at once: one gets ``_DeadlockError``, the other "cannot import name" from a
#: half-made module (seen when the warm-up and the first session of a restarted service started
#: together: that session's connection broke). So one thread imports them all, before either uses one.
_PARTS = (
    "anyio",
    "mcp_types",
    "mcp.types",
    "mcp.server.stdio",
    "mcp.server.mcpserver",
    "mcp.server.mcpserver.exceptions",
    "funes_core.faces.mcp",
    "funes_core.faces.mcp_front",
    "funes_core.faces.cli.read",
    "funes_core.read.handle",
    "funes_core.read.status",
)
_parts_lock = threading.Lock()
_parts_loaded = threading.Event()


def load_parts() -> None:
    """Import :data:`_PARTS` once, one thread at a time; later calls return at once."""
    if _parts_loaded.is_set():
        return
    with _parts_lock:
        if not _parts_loaded.is_set():
            for name in _PARTS:
                importlib.import_module(name)
            _parts_loaded.set()


def _now() -> float:
    return time.monotonic()


def describe(info: dict[str, Any]) -> str:
    """``running (pid 12, funes 0.3.0, up 4 min, 201.3 MB, 2 clients)`` from an ``info`` reply."""
    from funes_core.read.status import human_bytes

    uptime = float(info.get("uptime", 0))
    if uptime < 90:
        up = f"{uptime:.0f} s"
    elif uptime < 5400:
        up = f"{uptime / 60:.0f} min"
    else:
        up = f"{uptime / 3600:.1f} h"
    rss = info.get("rss")
    clients = int(info.get("clients", 0))
    parts = [
        f"pid {info.get('pid')}",
        f"funes {info.get('version')}",
        f"up {up}",
        human_bytes(int(rss)) if isinstance(rss, int) else "RSS unknown",
        f"{clients} client" + ("" if clients == 1 else "s"),
    ]
    return f"running ({', '.join(parts)})"


class _SocketWriter:
    """The MCP session's stdout: whole lines onto the socket, one writer at a time."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "surrogatepass")
        with self._lock:
            self._sock.sendall(data)
        return len(text)

    def frame(self, obj: dict[str, Any]) -> None:
        with self._lock:
            self._sock.sendall(wire.dumps(obj))

    def flush(self) -> None:
        """Nothing is buffered."""


class _CheckedLines:
    """The MCP session's stdin: lines of the connection, each checked before the SDK sees it.

    A line over the limit, or a frame the SDK would drop unanswered (not JSON, not JSON-RPC: see
    :func:`funes_core.faces.mcp_front.check_frame`), is answered here with an error and skipped,
    so a client that speaks to the socket directly gets a reply and the session goes on.
    """

    def __init__(self, rfile: IO[bytes], writer: _SocketWriter, limit: int) -> None:
        self._rfile = rfile
        self._writer = writer
        self._limit = limit

    def readline(self) -> str:
        from funes_core.faces.mcp_front import INVALID_REQUEST, _sdk_rejects, check_frame

        while True:
            try:
                line = wire.read_line(self._rfile, self._limit)
            except wire.OversizeError:
                reason = f"Invalid Request: a frame larger than {self._limit} bytes"
                error = {"code": INVALID_REQUEST, "message": reason}
                self._writer.frame({"jsonrpc": "2.0", "id": None, "error": error})
                if not wire.skip_rest_of_line(self._rfile):
                    return ""
                continue
            except OSError:
                return ""
            if not line:
                return ""
            frame = check_frame(line)
            if frame.error is not None:
                self._writer.frame(frame.error)
                continue
            if frame.kind in ("blank", "invalid"):
                continue
            problem = _sdk_rejects(line)  # what the SDK's own parser would drop unanswered
            if problem is not None:
                if frame.kind == "request":
                    error = {"code": INVALID_REQUEST, "message": f"Invalid Request: {problem}"}
                    self._writer.frame({"jsonrpc": "2.0", "id": frame.id, "error": error})
                continue
            return line.decode("utf-8")


class Service:
    """One memory service for ``home`` (see the module docstring)."""

    def __init__(self, home: Home, *, idle: float) -> None:
        self.home = home
        self.paths = wire.run_paths(home.root)
        self.idle = idle
        self.pid = os.getpid()
        self.started = time.time()
        self._started_mono = _now()
        self._last = _now()
        self._clients = 0
        #: CLI reads answered (``info`` reports it: how a test knows the service answered)
        self.calls = 0
        self._state_lock = threading.Lock()
        self._stop = threading.Event()
        #: memories opened by any session or call, shared: each is opened once per service
        self.cache: dict[str | None, Memory | MemorySet] = {}
        self.lock = threading.RLock()
        self._servers: dict[str | None, Any] = {}
        #: the web viewers hosted for ``funes ui`` connections, stopped with the service
        self.viewers: set[Hosted] = set()
        self.socket_path: Path | None = None
        self._listener: socket.socket | None = None
        self._lock_fd: int | None = None
        self._identity: tuple[int, int] | None = None
        from funes_core import __version__

        self.version = str(__version__)
        self.fingerprint = wire.fingerprint()

    # -- life cycle --------------------------------------------------------------------------

    def acquire(self) -> bool:
        """Take the service lock; ``False`` when another service holds it."""
        from funes_core.home import ensure_private_dir

        try:
            ensure_private_dir(self.paths.run)
            fd = os.open(self.paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StartError(f"cannot use {self.paths.run}: {exc.strerror or exc}") from None
        if not portable.try_lock(fd):
            os.close(fd)
            return False
        self._lock_fd = fd
        return True

    def bind(self) -> Path:
        """Listen on the home's socket, or on the fallback path; raises :class:`StartError`."""
        from funes_core.home import ensure_private_dir

        if not portable.unix_sockets():
            raise StartError("this Python has no Unix-domain sockets: the memory service cannot run here")
        problems: list[str] = []
        for path in (self.paths.socket, wire.fallback_socket(self.home.root)):
            if len(os.fsencode(str(path))) > 100:
                problems.append(f"{path} is too long for a socket path")
                continue
            try:
                ensure_private_dir(path.parent)
                present = wire.check_socket(path)
            except wire.ServiceRefusedError as exc:
                raise StartError(str(exc)) from None
            except OSError as exc:
                problems.append(f"{path.parent}: {exc.strerror or exc}")
                continue
            if present:
                path.unlink()  # a socket left by a service that died: we hold the lock, it is stale
            listener = portable.unix_socket()
            old = os.umask(0o177)
            try:
                listener.bind(str(path))
            except OSError as exc:
                listener.close()
                problems.append(f"{path}: {exc.strerror or exc}")
                continue
            finally:
                os.umask(old)
            os.chmod(path, 0o600)
            listener.listen(64)
            listener.settimeout(0.5)
            self._listener = listener
            self.socket_path = path
            st = path.stat()
            self._identity = (st.st_dev, st.st_ino)
            return path
        raise StartError("cannot listen on a Unix socket: " + "; ".join(problems))

    def publish(self) -> None:
        from funes_core.files import atomic_write_text

        info = {
            "pid": self.pid,
            "version": self.version,
            "protocol": wire.PROTOCOL,
            "socket": str(self.socket_path),
            "started": datetime.fromtimestamp(self.started, UTC).isoformat().replace("+00:00", "Z"),
            "idle": self.idle,
        }
        atomic_write_text(self.paths.info, json.dumps(info, indent=1) + "\n")

    def _still_ours(self) -> bool:
        """Whether our socket and ``serve.json`` are still in place (a deleted home ends the service)."""
        if self.socket_path is None:
            return False
        try:
            st = self.socket_path.stat()
            info = json.loads(self.paths.info.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return (st.st_dev, st.st_ino) == self._identity and info.get("pid") == self.pid

    def stop(self) -> None:
        self._stop.set()

    def serve_forever(self) -> None:
        """Accept connections until stopped, idle for too long, or no longer in place."""
        assert self._listener is not None
        checked = _now()
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                conn = None
            except OSError as exc:
                _log(f"accept failed: {exc}")
                break
            if conn is not None:
                conn.settimeout(None)
                with self._state_lock:
                    self._clients += 1
                    self._last = _now()
                threading.Thread(target=self._connection, args=(conn,), daemon=True).start()
                continue
            with self._state_lock:
                idle_for = _now() - self._last if self._clients == 0 else 0.0
            if self.idle > 0 and idle_for >= self.idle:
                _log(f"no client for {idle_for:.0f} s: exiting")
                break
            if _now() - checked > 2.0:
                checked = _now()
                if not self._still_ours():
                    _log("the socket or serve.json was taken away: exiting")
                    break

    def close(self) -> None:
        """Leave nothing behind that a client could mistake for a running service."""
        for hosted in list(self.viewers):
            hosted.stop(timeout=2.0)
        if self._still_ours():
            with contextlib.suppress(OSError):
                self.paths.info.unlink()
            if self.socket_path is not None:
                with contextlib.suppress(OSError):
                    self.socket_path.unlink()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the lock: the last thing the service does
            self._lock_fd = None

    # -- what it reports -----------------------------------------------------------------------

    def info(self, *, asking: bool = True) -> dict[str, Any]:
        with self._state_lock:
            clients = self._clients - (1 if asking else 0)
        return {
            "ok": True,
            "pid": self.pid,
            "version": self.version,
            "protocol": wire.PROTOCOL,
            "socket": str(self.socket_path),
            "started": datetime.fromtimestamp(self.started, UTC).isoformat().replace("+00:00", "Z"),
            "uptime": round(_now() - self._started_mono, 1),
            "rss": portable.rss_bytes(),
            "clients": max(0, clients),
            "idle": self.idle,
            "calls": self.calls,
        }

    def note(self) -> str:
        """The line the ``status`` tool ends with when the service answered it."""
        return f"service: {describe(self.info(asking=False))}\n"

    # -- connections ---------------------------------------------------------------------------

    def _connection(self, conn: socket.socket) -> None:
        rfile = conn.makefile("rb")
        try:
            self._serve_connection(conn, rfile)
        except Exception as exc:  # isolation boundary: one connection's failure never ends the service
            _log(f"a connection failed: {type(exc).__name__}: {exc}")
        finally:
            with contextlib.suppress(OSError):
                rfile.close()
            with contextlib.suppress(OSError):
                conn.close()
            with self._state_lock:
                self._clients -= 1
                self._last = _now()

    def _serve_connection(self, conn: socket.socket, rfile: IO[bytes]) -> None:
        limit = wire.max_line()

        def send(obj: dict[str, Any]) -> None:
            conn.sendall(wire.dumps(obj))

        try:
            line = wire.read_line(rfile, limit)
        except wire.OversizeError:
            send({"ok": False, "kind": "framing", "error": f"a request larger than {limit} bytes"})
            return
        if not line:
            return
        try:
            head = json.loads(line)
        except ValueError:
            head = None
        if not isinstance(head, dict) or not isinstance(head.get("op"), str):
            send({"ok": False, "kind": "framing", "error": "the header is not a JSON object with an op"})
            return
        op = head["op"]
        if op == "info":
            send(self.info())
            return
        if op == "stop":
            send({"ok": True, "pid": self.pid})
            _log("asked to stop")
            self.stop()
            return
        if head.get("protocol") != wire.PROTOCOL or head.get("version") != self.version:
            send({"ok": False, "kind": "version", "version": self.version, "pid": self.pid})
            return
        if head.get("fingerprint") != self.fingerprint:
            send({"ok": False, "kind": "fingerprint", "pid": self.pid})
            return
        if op == "hello":
            send(self.info())
            return
        load_parts()  # before this session's thread imports any of them (see _PARTS)
        if op == "call":
            send({"ok": True})
            self._calls(rfile, send, limit)
        elif op == "mcp":
            memory = head.get("memory")
            send({"ok": True})
            self._mcp(conn, rfile, memory if isinstance(memory, str) else None, limit)
        elif op == "ui":
            memory, port = head.get("memory"), head.get("port")
            send({"ok": True})
            port = port if isinstance(port, int) and not isinstance(port, bool) else 0
            self.viewer(rfile, send, memory if isinstance(memory, str) else None, port)
        else:
            send({"ok": False, "kind": "request", "error": f"unknown op {op!r}"})

    def _calls(self, rfile: IO[bytes], send: Callable[[dict[str, Any]], None], limit: int) -> None:
        while True:
            try:
                line = wire.read_line(rfile, limit)
            except wire.OversizeError:
                send({"ok": False, "kind": "framing", "error": f"a request larger than {limit} bytes"})
                if not wire.skip_rest_of_line(rfile):
                    return
                continue
            if not line:
                return
            try:
                request = json.loads(line)
            except ValueError:
                request = None
            if not isinstance(request, dict):
                send({"ok": False, "kind": "framing", "error": "a request that is not a JSON object"})
                continue
            with self._state_lock:
                self._last = _now()
            send(self.call(request))

    # -- CLI calls -----------------------------------------------------------------------------

    def _memory(self, spec: str | None) -> Memory | MemorySet:
        from funes_core.read.handle import resolve_memories

        key = spec or None
        if key not in self.cache:
            self.cache[key] = resolve_memories(key, home=self.home)
        return self.cache[key]

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one CLI read: ``{"ok": true, "text": ...}`` or ``{"ok": false, "kind", "error"}``."""
        from funes_core.faces.cli.read import READ_VERBS
        from funes_core.faces.mcp import release_memory
        from funes_core.models.vectors import ModelMismatchError
        from funes_core.read.common import VerbError
        from funes_core.read.handle import MemoryUnavailableError
        from funes_core.telemetry import measure

        with self._state_lock:
            self.calls += 1
        name = request.get("verb")
        spec = request.get("memory")
        spec = spec if isinstance(spec, str) else None
        as_json = bool(request.get("as_json"))
        given = request.get("args")
        args: dict[str, Any] = given if isinstance(given, dict) else {}
        if name == "status":
            return self._status(spec, as_json)
        verbs = {v.name: v for v in READ_VERBS}
        verb = verbs.get(name) if isinstance(name, str) else None
        if verb is None:
            return {"ok": False, "kind": "request", "error": f"unknown verb {name!r}"}

        def produce() -> str:
            return verb.call(self._memory(spec), verb.args(**args), as_json=as_json)

        known = (VerbError, MemoryUnavailableError, ModelMismatchError)
        try:
            with self.lock, measure(verb.name, face="cli", root=self.home.root):
                try:
                    text = produce()
                except known:
                    raise
                except TypeError as exc:
                    return {"ok": False, "kind": "request", "error": f"bad arguments: {exc}"}
                except Exception as exc:  # a store changed under us: reopen it and try once more
                    _log(f"{verb.name} failed ({type(exc).__name__}: {exc}); reopening the memory")
                    self.cache.pop(spec or None, None)
                    text = produce()
        except known as exc:
            return {"ok": False, "kind": "verb", "error": str(exc)}
        except Exception as exc:  # isolation boundary: the client falls back to in-process
            return {"ok": False, "kind": "internal", "error": f"{type(exc).__name__}: {exc}"}
        finally:
            release_memory()
        return {"ok": True, "text": text}

    def _status(self, spec: str | None, as_json: bool) -> dict[str, Any]:
        """``funes status``'s report, its text (or JSON) and exit status, as the CLI makes them, and
        the service's own line (so the CLI need not connect again to ask for it)."""
        from funes_core.home import HomeError
        from funes_core.read.status import collect_status
        from funes_core.share.memory import UnknownMemoryError
        from funes_core.share.remotes import RemoteConfigError

        try:
            with self.lock:
                report = collect_status(spec, home=self.home)
        except (HomeError, UnknownMemoryError, RemoteConfigError) as exc:
            return {"ok": False, "kind": "verb", "error": str(exc)}
        except Exception as exc:  # isolation boundary: the client falls back to in-process
            return {"ok": False, "kind": "internal", "error": f"{type(exc).__name__}: {exc}"}
        data = report.to_json()
        info = self.info()  # the asking connection is not one of the clients it reports
        return {
            "ok": True,
            "text": report.render(),
            "json": data,
            "exit": 0 if report.exists or report.is_default else 1,
            "info": info,
            "line": f"service: {describe(info)}",
        }

    # -- MCP sessions --------------------------------------------------------------------------

    def _server(self, memory: str | None) -> Any:
        """The SDK server of ``memory``'s sessions, built once: the SDK runs one session per
        ``run`` call (as its streamable-HTTP manager does), and building the tools' schemas costs
        ~0.1 s that a new agent session's first call would otherwise wait for."""
        from funes_core.faces.mcp import make_server

        with self._state_lock:
            server = self._servers.get(memory)
            if server is None:
                server = make_server(
                    memory, home=self.home, cache=self.cache, lock=self.lock, service_note=self.note
                )
                self._servers[memory] = server
        return server

    def _mcp(self, conn: socket.socket, rfile: IO[bytes], memory: str | None, limit: int) -> None:
        import anyio
        import mcp_types
        from mcp.server.stdio import stdio_server

        from funes_core.faces import mcp_front

        mcp_front._ADAPTER[0] = mcp_types.jsonrpc_message_adapter  # for _CheckedLines' last check

        server = self._server(memory)
        writer = _SocketWriter(conn)
        lines = _CheckedLines(rfile, writer, limit)

        async def session() -> None:
            stdin: Any = anyio.AsyncFile(lines)  # type: ignore[arg-type]
            stdout: Any = anyio.AsyncFile(writer)  # type: ignore[arg-type]
            async with stdio_server(stdin, stdout) as (read_stream, write_stream):
                low = server._lowlevel_server
                await low.run(read_stream, write_stream, low.create_initialization_options())

        anyio.run(session)

    # -- the web viewer ------------------------------------------------------------------------

    def viewer(
        self, rfile: IO[bytes], send: Callable[[dict[str, Any]], None], spec: str | None, port: int
    ) -> None:
        """Host ``funes ui``'s viewer of ``spec`` while its connection stays open.

        Over the handles and the lock the service's sessions use (no second store, no second
        model), on 127.0.0.1:``port`` (0: a free one) with a fresh token, warmed before the
        address is sent (``{"ok": true, "url": ...}``). Then it waits: a line from ``funes ui``
        (Ctrl-C) or the connection's end (it exited, or was killed) stops the viewer, and a line
        is answered once the port is closed. The open connection counts as a client, so the
        service does not exit idle under a person reading. A memory that cannot be read, or a
        port that cannot be had, is refused as ``funes ui`` would refuse it (kind ``verb``).
        """
        from funes_core.read.handle import MemoryUnavailableError

        with _parts_lock:  # the viewer's modules, imported by one thread at a time (see _PARTS)
            for name in ("uvicorn", "funes_core.faces.web.app", "funes_core.faces.web.server"):
                importlib.import_module(name)
        from funes_core.faces.web.server import bind, host

        try:
            with self.lock:
                memory = self._memory(spec)
            bound = bind(port)
        except (MemoryUnavailableError, OSError) as exc:
            send({"ok": False, "kind": "verb", "error": str(exc)})
            return
        try:
            hosted = host(memory, bound, open_memory=self._open_locked, lock=self.lock)
        except Exception as exc:  # isolation boundary: funes ui then serves the viewer itself
            bound.sock.close()
            send({"ok": False, "kind": "internal", "error": f"{type(exc).__name__}: {exc}"})
            return
        self.viewers.add(hosted)
        _log(f"hosting a viewer on {hosted.bound.hosts[0]}")
        asked = b""
        try:
            send({"ok": True, "url": hosted.url, "pid": self.pid})
            with contextlib.suppress(OSError, wire.OversizeError):
                asked = wire.read_line(rfile, wire.max_line())
        finally:
            stopped = hosted.stop()
            self.viewers.discard(hosted)
            _log(f"stopped the viewer on {hosted.bound.hosts[0]}")
        if asked:
            send({"ok": stopped, "stopped": stopped})

    def _open_locked(self, spec: str) -> Memory | MemorySet:
        """A memory a viewer's page names, from the service's cache (the viewer holds the lock)."""
        with self.lock:
            return self._memory(spec)

    # -- warm-up -------------------------------------------------------------------------------

    def warm(self) -> None:
        """Open the default memory, load the model and run one recall, so the first real one is warm.

        Then the warm heap is frozen (:func:`gc.freeze`, after a collection so that no garbage is
        pinned): the SDK's, pydantic's, LanceDB's and the model's objects live as long as the service,
        and left in the oldest generation every full collection walks them again. Seven loads of a
        2,000-turn page the service hosts at 100k triggered four of those, 1.7-2.1 s in all (load
        14), against 0.03 s frozen: the page then costs what it costs in-process.
        """
        try:
            load_parts()
            from funes_core.read import recall

            with self.lock:
                memory = self._memory(None)
                recall.VERB.run(memory, recall.RecallArgs(query="warm up"))
            self._server(None)  # the SDK and the tools' schemas, now rather than in the first session
        except Exception as exc:  # an empty or missing memory is fine: the first call says so
            _log(f"warm-up: {type(exc).__name__}: {exc}")
        finally:
            from funes_core.faces.mcp import release_memory

            release_memory()
            gc.collect()
            gc.freeze()


def _log(message: str) -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{stamp} funes serve[{os.getpid()}]: {message}\n")
        sys.stderr.flush()


def run_service(
    home: Home, *, idle: float, announce: Callable[[str], None] | None = None, foreground: bool = False
) -> int:
    """Run a service for ``home`` in this process until it stops; the exit status.

    ``announce`` is told one line once it listens (``funes serve`` in the foreground prints it).
    Another service already holding the lock: a line, and status 0 for a spawned service (two
    clients may start one at once; the second just leaves) or 1 in the ``foreground``.
    """
    service = Service(home, idle=idle)
    try:
        acquired = service.acquire()
    except StartError as exc:
        (announce or _log)(f"funes serve: {exc}")
        return 1
    if not acquired:
        info = _running_info(home.root)
        line = f"funes serve: a memory service already runs for {home.root}" + (
            f" (pid {info})" if info else ""
        )
        (announce or _log)(line + ("; `funes serve --stop` stops it" if foreground else ""))
        return 1 if foreground else 0
    try:
        from funes_core.faces.mcp import configure_logging, lean_malloc

        path = service.bind()
        service.publish()
        lean_malloc()
        configure_logging()
        with contextlib.suppress(ValueError):  # not the main thread (tests): no signal handler
            signal.signal(signal.SIGTERM, lambda *_: service.stop())
        _log(f"listening on {path} (funes {service.version}, idle exit {idle:.0f} s)")
        if announce is not None:
            announce(f"funes serve: listening on {path} (pid {service.pid})")
        threading.Thread(target=service.warm, name="funes-serve-warm", daemon=True).start()
        service.serve_forever()
    except StartError as exc:
        (announce or _log)(f"funes serve: {exc}")
        return 1
    finally:
        service.close()
    return 0


def _running_info(root: Path) -> int | None:
    from funes_core.serve.client import read_info

    info = read_info(root) or {}
    pid = info.get("pid")
    return pid if isinstance(pid, int) else None


def main(argv: list[str] | None = None) -> int:
    """``python -m funes_core.serve``: what a client spawns (idle exit from ``FUNES_SERVE_IDLE``)."""
    from funes_core.home import Home, HomeError

    try:
        home = Home.resolve()
    except HomeError as exc:
        _log(str(exc))
        return 1
    return run_service(home, idle=wire.idle_seconds())

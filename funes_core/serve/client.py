"""Finding, starting and talking to the memory service, from a front or a CLI read.

Standard library only (plus :mod:`funes_core.portable`): the thin ``funes mcp`` front must not
load lancedb, pyarrow, ONNX Runtime or numpy, and a CLI read that the service answers should cost
little more than Python's start-up.

- :func:`connect` opens a connection to the service that runs now, or raises
  :class:`NotRunningError`; it never starts one. The CLI read verbs use it.
- :func:`ensure_service` starts one when none runs (the fronts use it): under ``spawn.lock``, so two
  fronts that both find none start exactly one, detached (:func:`funes_core.portable.spawn_detached`,
  a fresh interpreter: nothing is forked after heavy imports). A service of another funes version,
  or one started with other settings (another ``FUNES_MODEL``...), is stopped and replaced when no
  other client uses it; otherwise the caller is told why it cannot use it and works in-process.
- Every wait is bounded (start: ``FUNES_SERVE_START_TIMEOUT``, default 60 s; an answer:
  ``FUNES_SERVE_TIMEOUT``, default 120 s), so a client never hangs on a service that hangs.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from funes_core import portable
from funes_core.serve import wire

__all__ = [
    "NOT_RUNNING",
    "Connection",
    "NotRunningError",
    "ServiceUnavailableError",
    "ask",
    "connect",
    "ensure_service",
    "header",
    "home_root",
    "read_info",
    "service_disabled",
    "service_line",
    "stop_asking",
    "stop_service",
]

START_TIMEOUT_ENV = "FUNES_SERVE_START_TIMEOUT"
#: ``FUNES_SERVICE=off`` (or ``0``): never use the service, every read works in-process.
SERVICE_ENV = "FUNES_SERVICE"


#: How :func:`service_line` starts when no service runs.
NOT_RUNNING = "service: not running"


class ServiceUnavailableError(RuntimeError):
    """No service can be used; the message says why, in one line."""


class NotRunningError(ServiceUnavailableError):
    """No service runs for this home (or its socket is stale)."""


def service_disabled() -> bool:
    return os.environ.get(SERVICE_ENV, "").strip().lower() in ("0", "off", "no", "false")


def home_root() -> Path:
    """The home this process reads (not :class:`~funes_core.home.Home`: see :mod:`funes_core.homepath`)."""
    from funes_core.homepath import resolve_root

    return resolve_root()


def _version() -> str:
    from funes_core import __version__

    return str(__version__)


def header(op: str, **extra: Any) -> dict[str, Any]:
    """The first line of a connection: what is asked, and who asks (version, settings)."""
    return {
        "op": op,
        "protocol": wire.PROTOCOL,
        "version": _version(),
        "fingerprint": wire.fingerprint(),
        **extra,
    }


def read_info(root: Path) -> dict[str, Any] | None:
    """What the running service wrote about itself (``serve.json``), or ``None``."""
    try:
        data = json.loads(wire.run_paths(root).info.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class Connection:
    """One connection to the service, after its header was answered (``reply``)."""

    def __init__(self, sock: socket.socket, reply: dict[str, Any]) -> None:
        self.sock = sock
        self.reply = reply
        self.rfile = sock.makefile("rb")

    def send(self, obj: dict[str, Any]) -> None:
        self.sock.sendall(wire.dumps(obj))

    def receive(self) -> dict[str, Any]:
        """The next reply; :class:`ServiceUnavailableError` if the service went away or timed out."""
        try:
            line = wire.read_line(self.rfile, wire.max_line())
        except TimeoutError:
            raise ServiceUnavailableError(
                f"the memory service did not answer within {wire.call_timeout():.0f} s"
            ) from None
        except (OSError, wire.OversizeError) as exc:
            raise ServiceUnavailableError(f"the memory service connection broke: {exc}") from None
        if not line:
            raise ServiceUnavailableError("the memory service closed the connection")
        try:
            reply = json.loads(line)
        except ValueError:
            raise ServiceUnavailableError("the memory service sent a line that is not JSON") from None
        if not isinstance(reply, dict):
            raise ServiceUnavailableError("the memory service sent a reply that is not an object")
        return reply

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.rfile.close()
        with contextlib.suppress(OSError):
            self.sock.close()


def connect(root: Path, op: str = "hello", *, timeout: float | None = None, **extra: Any) -> Connection:
    """A connection to the running service, its header (``op``) answered.

    Raises :class:`NotRunningError` when none runs (no ``serve.json``, a stale socket),
    :class:`ServiceUnavailableError` when the one that runs cannot be used (another version, other
    settings: ``reply`` kind ``version``/``fingerprint``), and lets
    :class:`~funes_core.serve.wire.ServiceRefusedError` through for a socket that is not to be trusted.
    """
    if not portable.unix_sockets():
        raise ServiceUnavailableError("this Python has no Unix-domain sockets")
    info = read_info(root)
    if info is None or not isinstance(info.get("socket"), str):
        raise NotRunningError("no memory service runs")
    path = Path(info["socket"])
    if not wire.check_socket(path):
        raise NotRunningError("no memory service runs (its socket is gone)")
    sock = portable.unix_socket()
    sock.settimeout(wire.call_timeout() if timeout is None else timeout)
    try:
        sock.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        sock.close()
        raise NotRunningError("no memory service runs (a stale socket)") from None
    except OSError as exc:
        sock.close()
        raise ServiceUnavailableError(f"cannot reach the memory service: {exc.strerror or exc}") from None
    conn = Connection(sock, {})
    try:
        conn.send(header(op, **extra))
        conn.reply = conn.receive()
    except (OSError, ServiceUnavailableError) as exc:
        conn.close()
        raise ServiceUnavailableError(f"the memory service did not answer: {exc}") from None
    if not conn.reply.get("ok"):
        conn.close()
        raise ServiceUnavailableError(_refusal(conn.reply))
    return conn


def _refusal(reply: dict[str, Any]) -> str:
    kind = reply.get("kind")
    if kind == "version":
        return (
            f"the memory service runs funes {reply.get('version')} (pid {reply.get('pid')}), "
            f"this is funes {_version()}"
        )
    if kind == "fingerprint":
        return f"the memory service (pid {reply.get('pid')}) was started with other FUNES_* settings"
    return str(reply.get("error") or "the memory service refused the connection")


def _start_timeout() -> float:
    try:
        return max(1.0, float(os.environ.get(START_TIMEOUT_ENV, "60")))
    except ValueError:
        return 60.0


def stop_service(root: Path, *, timeout: float = 30.0) -> int | None:
    """Ask the running service to stop and wait until it let go of its lock; its pid, or ``None``.

    Works across versions (``stop`` is honoured whatever the asker's version); a service that does
    not let go in time is terminated.
    """
    paths = wire.run_paths(root)
    info = read_info(root) or {}
    pid = info.get("pid") if isinstance(info.get("pid"), int) else None
    if not portable.lock_held(paths.lock):
        return None
    try:
        conn = connect(root, "stop", timeout=timeout)
        conn.close()
    except ServiceUnavailableError:
        pass  # refused or silent: the lock and the pid decide below
    deadline = time.monotonic() + timeout
    while portable.lock_held(paths.lock) and time.monotonic() < deadline:
        time.sleep(0.05)
    if portable.lock_held(paths.lock) and pid is not None:
        portable.terminate(pid)
        deadline = time.monotonic() + timeout
        while portable.lock_held(paths.lock) and time.monotonic() < deadline:
            time.sleep(0.05)
    return pid


def _spawn(root: Path) -> int:
    from funes_core.home import ensure_private_dir

    paths = wire.run_paths(root)
    ensure_private_dir(paths.run)
    log = os.open(paths.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        env = {**os.environ, "FUNES_HOME": str(root)}
        return portable.spawn_detached([sys.executable, "-m", "funes_core.serve"], env=env, output=log)
    finally:
        os.close(log)


def _log_tail(root: Path) -> str:
    try:
        lines = wire.run_paths(root).log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def ensure_service(root: Path, op: str = "hello", **extra: Any) -> Connection:
    """A connection to a service of this version and settings, started (detached) if none runs.

    Raises :class:`ServiceUnavailableError` (one line) when none can be had: the socket cannot be
    trusted, the spawned service exited or did not listen in time, or another version's service
    serves other clients (it is never pulled from under them).
    """
    if not portable.unix_sockets():
        raise ServiceUnavailableError("this Python has no Unix-domain sockets")
    got = _attempt(root, op, extra)
    if isinstance(got, Connection):
        return got  # else none runs, or another version or settings: decided under the spawn lock
    from funes_core.home import ensure_private_dir

    paths = wire.run_paths(root)
    try:
        ensure_private_dir(paths.run)
    except OSError as exc:
        raise ServiceUnavailableError(f"cannot create {paths.run}: {exc.strerror or exc}") from None
    timeout = _start_timeout()
    try:
        with portable.file_lock(paths.spawn_lock, timeout=timeout):
            return _start_locked(root, op, timeout, extra)
    except TimeoutError as exc:  # filelock.Timeout is a TimeoutError
        reason = f"another client has been starting the service for {timeout:.0f} s"
        raise ServiceUnavailableError(reason) from exc


def _start_locked(root: Path, op: str, timeout: float, extra: dict[str, Any]) -> Connection:
    paths = wire.run_paths(root)
    got = _attempt(root, op, extra)
    if isinstance(got, Connection):
        return got
    if not isinstance(got, NotRunningError):  # another version or settings
        info = _hello(root)
        if info is None:  # silent, or gone meanwhile: the lock decides below
            pass
        elif int(info.get("clients", 0)) > 0:
            raise ServiceUnavailableError(f"{got}, serving {info.get('clients')} other client(s)")
        else:
            stop_service(root)
    # A service that holds the lock but does not answer yet is starting, or stopping: wait for it.
    pid = None if portable.lock_held(paths.lock) else _spawn(root)
    deadline = time.monotonic() + timeout
    last = "the memory service did not start"
    while time.monotonic() < deadline:
        got = _attempt(root, op, extra)
        if isinstance(got, Connection):
            return got
        last = str(got)
        if pid is not None and portable.child_exited(pid) and not portable.lock_held(paths.lock):
            tail = _log_tail(root)
            raise ServiceUnavailableError(f"the memory service exited at start: {tail or last}")
        if pid is None and not portable.lock_held(paths.lock):
            pid = _spawn(root)  # the one we waited for went away: start ours
        time.sleep(0.05)
    raise ServiceUnavailableError(f"{last} within {timeout:.0f} s")


def _attempt(root: Path, op: str, extra: dict[str, Any]) -> Connection | ServiceUnavailableError:
    """:func:`connect`, a socket not to be trusted raised as unavailable, a refusal returned to weigh."""
    try:
        return connect(root, op, **extra)
    except wire.ServiceRefusedError as exc:
        raise ServiceUnavailableError(str(exc)) from None
    except ServiceUnavailableError as exc:
        return exc


def _hello(root: Path) -> dict[str, Any] | None:
    """The service's ``info`` (pid, version, clients), asked whatever its version; ``None`` if silent."""
    try:
        conn = connect(root, "info", timeout=10)
    except ServiceUnavailableError:
        return None
    try:
        return conn.reply
    finally:
        conn.close()


def _note(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"funes: {message}\n")
        sys.stderr.flush()


#: Set once this process asked in vain (:func:`stop_asking`): later asks return ``None`` at once.
_STOPPED: list[bool] = [False]


def stop_asking() -> None:
    """Make every later :func:`ask` of this process return ``None`` without trying.

    The CLI's fast path calls it when the service did not answer, before it falls back to the
    typer command: that command then reads in-process at once instead of asking again (and saying
    twice why the service could not answer).
    """
    _STOPPED[0] = True


def ask(request: dict[str, Any]) -> dict[str, Any] | None:
    """One CLI read answered by the running service, or ``None``: then the caller works in-process.

    Never starts a service. Silent when none runs or the one that runs cannot answer for this
    process (another version, other settings); one line on stderr when it should have answered and
    did not (an untrusted socket, a failure mid-call), since the in-process answer then costs the
    full start-up. Replies of kind ``verb`` are the verb's own one-line error, for the caller to show.
    """
    if _STOPPED[0] or service_disabled() or not portable.unix_sockets():
        return None
    try:
        root = home_root()
    except Exception:  # a HomeError: the in-process run reports it in its own words
        return None
    try:
        conn = connect(root, "call")
    except wire.ServiceRefusedError as exc:
        _note(f"not using the memory service: {exc}")
        return None
    except ServiceUnavailableError:
        return None
    try:
        conn.send(request)
        reply = conn.receive()
    except (OSError, ServiceUnavailableError) as exc:
        _note(f"the memory service failed during the call ({exc}); answering in-process")
        return None
    finally:
        conn.close()
    if not reply.get("ok") and reply.get("kind") != "verb":
        _note(f"the memory service could not answer ({reply.get('error')}); answering in-process")
        return None
    return reply


def service_line(root: Path | None = None) -> tuple[str, dict[str, Any] | None]:
    """``service: running (pid …)`` or ``service: not running``, and the service's ``info`` reply."""
    if not portable.unix_sockets():
        return "service: unavailable (this Python has no Unix-domain sockets)", None
    try:
        root = root or home_root()
        conn = connect(root, "info", timeout=10)
    except wire.ServiceRefusedError as exc:
        return f"service: refused: {exc}", None
    except NotRunningError:
        return f"{NOT_RUNNING} (each read loads the memory itself; `funes serve` keeps it warm)", None
    except Exception as exc:  # a HomeError, or a service that does not answer
        return f"service: not answering ({exc})", None
    conn.close()
    from funes_core.serve.service import describe

    return f"service: {describe(conn.reply)}", conn.reply

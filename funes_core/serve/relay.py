"""The thin ``funes mcp``: one agent session's MCP frames relayed to the memory service and back.

The stdio front (:mod:`funes_core.faces.mcp_front`) answers the handshake itself and checks every
frame; what it would have handed to an in-process SDK server it hands to a :class:`Relay`, which
writes it to an ``mcp`` connection of the service (where the official SDK serves the session) and
passes every line the service writes back to the front. Standard library only: the front never
loads lancedb, pyarrow, ONNX Runtime, numpy or the SDK (``tests/test_serve.py`` checks).

Faults. When the connection breaks while requests wait (the service was killed, crashed, or was
stopped), the relay starts a service again (:func:`funes_core.serve.client.ensure_service`),
replays the session's opening (the ``initialize`` or ``server/discover`` the front answered, and
``notifications/initialized``) and sends every unanswered request once more: the tools are
read-only, so a retry is safe. A request whose connection breaks a second time, a service that
cannot be started again, or an answer that takes longer than ``FUNES_SERVE_TIMEOUT`` (default
120 s) from when the agent sent it, restarts included, gets one JSON-RPC error naming the cause; a
late answer is then dropped. The agent never waits forever.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from funes_core.serve import client, wire

__all__ = ["Relay"]

INTERNAL_ERROR = -32603
INITIALIZED = "notifications/initialized"


class _Front(Protocol):
    sdk_done: threading.Event

    def sdk_ready(self) -> Any: ...
    def sdk_output(self, line: bytes) -> None: ...


def _log(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"funes mcp: {message}\n")
        sys.stderr.flush()


class _Pending:
    """A request owed an answer; ``attempts`` counts the connections it was handed to (0: none yet)."""

    __slots__ = ("attempts", "line", "since")

    def __init__(self, line: bytes) -> None:
        self.line = line
        self.attempts = 0
        self.since = time.monotonic()


class Relay:
    """Relay one front's session to the service over ``conn`` (see the module docstring)."""

    def __init__(self, front: _Front, root: Path, memory: str | None, conn: client.Connection) -> None:
        self._front = front
        self._root = root
        self._memory = memory
        self._conn: client.Connection | None = conn
        self._lock = threading.RLock()
        self._opening: bytes | None = None
        self._initialized: bytes | None = None
        self._sent: dict[str, _Pending] = {}
        self._expired: set[str] = set()
        self._closing = False
        self._reconnecting = False
        self._timeout = wire.call_timeout()
        self.restarts = 0

    # -- the front's side ------------------------------------------------------------------------

    def run(self) -> None:
        """Serve until the front's input ends (its queue yields ``None``); then close the connection."""
        from funes_core.faces.mcp_front import REPLAY_ID, check_frame

        assert self._conn is not None
        self._start_reader(self._conn)
        threading.Thread(target=self._watch, name="funes-mcp-watch", daemon=True).start()
        inbox = self._front.sdk_ready()
        try:
            while (data := inbox.get()) is not None:
                frame = check_frame(data)
                line = data.rstrip(b"\r\n") + b"\n"
                with self._lock:
                    conn = self._conn
                    if frame.kind == "request" and frame.id == REPLAY_ID:
                        self._opening = line
                    elif frame.kind == "request":
                        pending = self._sent[json.dumps(frame.id)] = _Pending(line)
                        if conn is not None:
                            pending.attempts = 1  # handed to ``conn`` below
                    elif frame.kind == "notification" and frame.method == INITIALIZED:
                        self._initialized = line
                if conn is None:
                    self._reconnect(None, "no memory service is connected")
                    continue
                try:
                    conn.sock.sendall(line)
                except OSError as exc:
                    self._reconnect(conn, f"sending failed: {exc}")
        finally:
            with self._lock:
                self._closing = True
                conn = self._conn
            if conn is not None:
                with contextlib.suppress(OSError):
                    conn.sock.shutdown(socket.SHUT_WR)
                conn.close()
            self._front.sdk_done.set()

    # -- the service's side ----------------------------------------------------------------------

    def _start_reader(self, conn: client.Connection) -> None:
        threading.Thread(target=self._read, args=(conn,), name="funes-mcp-relay", daemon=True).start()

    def _read(self, conn: client.Connection) -> None:
        reason = "the memory service closed the connection"
        try:
            conn.sock.settimeout(None)  # answers may take long; the watchdog bounds the wait per request
            while True:
                line = conn.rfile.readline()
                if not line:
                    break
                if not line.strip():
                    continue
                self._from_service(line)
        except OSError as exc:
            reason = f"the connection to the memory service broke: {exc}"
        except ValueError:  # the file was closed under us: the front's end closed the connection
            reason = "the connection to the memory service was closed"
        self._reconnect(conn, reason)

    def _from_service(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and "method" not in message and "id" in message:
            key = json.dumps(message["id"])
            with self._lock:
                if key in self._expired:
                    self._expired.discard(key)
                    return  # answered with a timeout error already
                self._sent.pop(key, None)
        self._front.sdk_output(line)

    def _answer_error(self, key: str, message: str) -> None:
        error = {
            "jsonrpc": "2.0",
            "id": json.loads(key),
            "error": {"code": INTERNAL_ERROR, "message": message},
        }
        self._front.sdk_output(json.dumps(error, ensure_ascii=False).encode("utf-8"))

    def _watch(self) -> None:
        """Answer every request that waited longer than the timeout with an error (never a hang)."""
        while True:
            time.sleep(0.5)
            with self._lock:
                if self._closing:
                    return
                now = time.monotonic()
                late = [key for key, p in self._sent.items() if now - p.since > self._timeout]
                for key in late:
                    del self._sent[key]
                    self._expired.add(key)
            for key in late:
                self._answer_error(
                    key, f"funes mcp: the memory service did not answer within {self._timeout:.0f} s"
                )

    def _reconnect(self, broken: client.Connection | None, reason: str) -> None:
        """The connection ``broken`` is gone: start a service again, replay the session, retry once.

        The service is started outside the lock, so the watchdog keeps its promise meanwhile and
        requests the agent sends go on being recorded: each joins the replay, which is built and
        sent under the lock together with the switch to the new connection.
        """
        with self._lock:
            if self._closing or self._reconnecting or broken is not self._conn:
                return  # closing on purpose, or another thread already replaces it
            self._conn = None
            if broken is not None:
                broken.close()
            if not self._sent and broken is not None:
                _log(f"{reason}; it is started again at the next request")
                return  # nothing waits: the next request reconnects (no restart loop on a crash)
            self._reconnecting = True
        _log(f"{reason}: starting it again")
        try:
            conn = client.ensure_service(self._root, "mcp", memory=self._memory)
        except Exception as exc:  # ServiceUnavailableError, or anything else: answer, never hang
            _log(f"the memory service could not be started again: {exc}")
            with self._lock:
                self._reconnecting = False
                failed = list(self._sent)
                self._sent.clear()
            for key in failed:
                self._answer_error(
                    key, f"funes mcp: the memory service stopped and could not be restarted: {exc}"
                )
            return
        with self._lock:
            self._reconnecting = False
            self.restarts += 1
            replay = [line for line in (self._opening, self._initialized) if line is not None]
            gave_up: list[str] = []
            for key, pending in list(self._sent.items()):
                if pending.attempts >= 2:  # two connections broke while they held it: give up
                    del self._sent[key]
                    gave_up.append(key)
                    continue
                pending.attempts += 1
                replay.append(pending.line)
            self._conn = conn
            try:
                conn.sock.sendall(b"".join(replay))
                if self._closing:  # the agent's input ended meanwhile: the service answers, then ends
                    conn.sock.shutdown(socket.SHUT_WR)
            except OSError as exc:
                _log(f"the restarted memory service broke at once: {exc}")
        for key in gave_up:
            self._answer_error(key, "funes mcp: the memory service stopped twice during this call")
        self._start_reader(conn)

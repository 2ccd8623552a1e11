"""The thin front's relay against scripted services: which calls are retried, and when one gives up.

Each "service" is the far end of a socket pair that the test drives line by line, and
``client.ensure_service`` hands the relay the next one: so the interleavings that a loaded machine
produces only sometimes (a connection that breaks before a call was ever sent on it, a restarted
service whose first session breaks) happen here every time, in milliseconds.
"""

from __future__ import annotations

import json
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from funes_core.serve import client
from funes_core.serve.relay import Relay

PATIENCE = 60.0


class FakeFront:
    """What a relay needs of the stdio front: its input queue, its output, its end."""

    def __init__(self) -> None:
        self.sdk_done = threading.Event()
        self.inbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.out: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()

    def sdk_ready(self) -> queue.SimpleQueue[bytes | None]:
        return self.inbox

    def sdk_output(self, line: bytes) -> None:
        self.out.put(json.loads(line))

    def send(self, message: dict[str, Any]) -> None:
        self.inbox.put(json.dumps(message).encode() + b"\n")

    def reply(self) -> dict[str, Any]:
        return self.out.get(timeout=PATIENCE)


class FakeService:
    """The service's end of one connection: read what the relay sent, answer, or break."""

    def __init__(self) -> None:
        self.mine, theirs = socket.socketpair()
        self.conn = client.Connection(theirs, {"ok": True})
        self._lines = self.mine.makefile("rb")

    def read(self) -> dict[str, Any]:
        self.mine.settimeout(PATIENCE)
        line = self._lines.readline()
        assert line, "the relay closed the connection"
        message: dict[str, Any] = json.loads(line)
        return message

    def answer(self, ident: Any, text: str) -> None:
        result = {"content": [{"type": "text", "text": text}]}
        self.mine.sendall(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode() + b"\n")

    def die(self) -> None:
        self._lines.close()
        self.mine.close()


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


@pytest.fixture
def services(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[FakeService]]:
    """The services ``ensure_service`` will hand out, in order (the test appends them)."""
    ready: list[FakeService] = []
    handed: list[FakeService] = []

    def ensure_service(root: Path, op: str = "hello", **extra: Any) -> client.Connection:
        assert op == "mcp"
        service = ready.pop(0)
        handed.append(service)
        return service.conn

    monkeypatch.setattr(client, "ensure_service", ensure_service)
    yield ready
    for service in handed:
        service.die()


def call(ident: int) -> dict[str, Any]:
    params = {"name": "recall", "arguments": {"query": "why"}}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


def start(front: FakeFront, first: FakeService, tmp_path: Path) -> tuple[Relay, threading.Thread]:
    relay = Relay(front, tmp_path, None, first.conn)
    thread = threading.Thread(target=relay.run, daemon=True)
    thread.start()
    return relay, thread


def finish(front: FakeFront, thread: threading.Thread, service: FakeService) -> None:
    """The agent's input ends; the service, seeing its end, closes (as the real one does)."""
    front.inbox.put(None)
    service.die()
    thread.join(PATIENCE)
    assert not thread.is_alive()
    assert front.sdk_done.is_set()


def test_a_call_never_sent_is_retried_on_a_second_break(services: list[FakeService], tmp_path: Path) -> None:
    """The service died while nothing waited; the next call starts one whose first session breaks
    (what a restarted service's import race did): that call had been handed to one connection
    only, so it is retried once more and answered, not given up as "stopped twice"."""
    front, first = FakeFront(), FakeService()
    relay, thread = start(front, first, tmp_path)
    first.die()
    wait_for(lambda: relay._conn is None, "the relay to notice the service died")
    broken, third = FakeService(), FakeService()
    services.extend([broken, third])
    front.send(call(7))
    assert broken.read()["id"] == 7
    broken.die()
    assert third.read()["id"] == 7
    third.answer(7, "found")
    reply = front.reply()
    assert reply["id"] == 7 and "result" in reply, reply
    assert relay.restarts == 2
    finish(front, thread, third)


def test_a_call_two_connections_broke_under_gets_one_error(
    services: list[FakeService], tmp_path: Path
) -> None:
    """A call sent, its service killed, the retry's service killed too: one clear error, and the
    next call is served by the service started after."""
    front, first = FakeFront(), FakeService()
    _relay, thread = start(front, first, tmp_path)
    second, third = FakeService(), FakeService()
    services.extend([second, third])
    front.send(call(1))
    assert first.read()["id"] == 1
    first.die()
    assert second.read()["id"] == 1
    second.die()
    reply = front.reply()
    assert reply["id"] == 1 and reply["error"]["message"] == (
        "funes mcp: the memory service stopped twice during this call"
    )
    front.send(call(2))
    assert third.read()["id"] == 2
    third.answer(2, "fine")
    assert front.reply()["id"] == 2
    finish(front, thread, third)


def test_a_call_waiting_for_a_restart_is_answered_within_the_timeout(
    services: list[FakeService], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The timeout counts from when the agent sent the call, and the watchdog keeps it while a
    restart is still under way (the service is started outside the relay's lock)."""
    monkeypatch.setenv("FUNES_SERVE_TIMEOUT", "1")
    started = threading.Event()
    release = threading.Event()

    def slow_start(root: Path, op: str = "hello", **extra: Any) -> client.Connection:
        started.set()
        release.wait(PATIENCE)  # a service that takes far longer than the timeout to start
        raise client.ServiceUnavailableError("gave up")

    front, first = FakeFront(), FakeService()
    relay, thread = start(front, first, tmp_path)
    monkeypatch.setattr(client, "ensure_service", slow_start)
    front.send(call(3))
    assert first.read()["id"] == 3
    first.die()
    assert started.wait(PATIENCE)
    reply = front.reply()  # answered while the restart still hangs
    assert reply["id"] == 3
    assert reply["error"]["message"] == "funes mcp: the memory service did not answer within 1 s"
    release.set()
    wait_for(lambda: not relay._reconnecting, "the restart to give up")
    front.inbox.put(None)
    thread.join(PATIENCE)
    assert not thread.is_alive()


def test_a_reader_finding_its_connection_closed_by_the_front_ends_quietly(
    services: list[FakeService], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The front closes the connection at its end while the reader is between two lines.

    The reader's next ``readline`` then meets a closed file (``ValueError``, not ``OSError``): it
    must end without an exception, which a daemon thread would print at the interpreter's exit.
    """
    front, first = FakeFront(), FakeService()
    relay = Relay(front, tmp_path, None, first.conn)
    relay._closing = True  # what the front's end sets before it closes the connection
    first.conn.close()
    raised: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    reader = threading.Thread(target=relay._read, args=(first.conn,))
    reader.start()
    reader.join(PATIENCE)
    first.die()
    assert not reader.is_alive() and raised == []

"""Fuzz: random JSON-RPC frames to a running `funes mcp` (issue 13).

One server process takes every example. Each example sends one frame, then a ``ping`` with a fresh
id as a sentinel; the server must answer the sentinel (so it neither hung nor crashed) and must
have answered the frame exactly as the rules say: a request gets one reply with its id, a frame
that is not valid JSON-RPC gets one error, and a notification or a response gets nothing (JSON-RPC
forbids replying to a notification). The budget is bounded (``FUZZ_EXAMPLES``, default 120) so the
suite stays quick; raise it to search longer.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from funes_core.faces.mcp_front import check_frame

pytestmark = pytest.mark.slow

FUNES = str(Path(sys.executable).parent / "funes")
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "120"))
#: Seconds to wait for one reply; generous, because a loaded CI machine is slow to load the SDK.
PATIENCE = 60.0

METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "logging/setLevel",
    "completion/complete",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
]
TOOLS = ["recall", "get", "sessions", "scan", "sketch", "status", "triggers", "nope"]

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["\ud800", "a\udfffb", "\U0001f600", "\u2028", "\x00"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
tool_arguments = st.dictionaries(
    st.sampled_from(["query", "k", "session_id", "needle", "from", "to", "memory", "units", "x"]),
    json_values,
    max_size=4,
)
params = st.one_of(
    json_values,
    st.fixed_dictionaries({"name": st.sampled_from(TOOLS) | json_scalars, "arguments": tool_arguments}),
    st.fixed_dictionaries(
        {"protocolVersion": st.sampled_from(["2025-06-18", "1999-01-01"]) | json_scalars},
        optional={"capabilities": json_values, "clientInfo": json_values},
    ),
    st.fixed_dictionaries({"requestId": json_scalars}),
)
ids = st.one_of(
    st.integers(min_value=10_000, max_value=2**40),
    st.text(min_size=1, max_size=12).map(lambda s: "fz-" + s),
    json_scalars,
)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        message["jsonrpc"] = "2.0" if draw(st.integers(0, 5)) else draw(json_scalars)
    if draw(st.booleans()):
        message["id"] = draw(ids)
    message["method"] = draw(st.sampled_from(METHODS) | json_scalars)
    if draw(st.booleans()):
        message["params"] = draw(params)
    if not draw(st.integers(0, 15)):
        message[draw(st.sampled_from(["result", "error"]))] = draw(json_values)
    return message


def _encode(message: Any, ascii_only: bool) -> bytes:
    return json.dumps(message, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


frames = st.one_of(
    st.builds(_encode, messages(), st.booleans()),
    st.builds(_encode, json_values, st.just(True)),
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ")),
    st.text(max_size=60).map(lambda t: t.replace("\n", " ").encode("utf-8", "surrogatepass")),
)


class _Server:
    """`funes mcp` with a reader thread, so a missing reply is a timeout, not a hung test."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [FUNES, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.sentinel = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.inbox.put(json.loads(line))  # every line the server writes must be JSON
        self.inbox.put(None)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def exchange(
        self, frame: bytes, *, reply_to: Any = None, wants_reply: bool = False
    ) -> list[dict[str, Any]]:
        """Send ``frame`` and a ping; every message that came back before both the ping's reply
        and, when ``wants_reply``, the reply to ``reply_to`` (the front may answer a ping while a
        request sent before it still waits for the SDK: JSON-RPC replies need not be in order)."""
        self.sentinel += 1
        mark = f"sentinel-{self.sentinel}"
        self.send(frame)
        self.send(json.dumps({"jsonrpc": "2.0", "id": mark, "method": "ping"}).encode())
        got: list[dict[str, Any]] = []
        pinged = False
        while not (pinged and (not wants_reply or any(m.get("id") == reply_to for m in got))):
            try:
                message = self.inbox.get(timeout=PATIENCE)
            except queue.Empty:
                raise AssertionError(f"no reply within {PATIENCE} s to {frame[:200]!r}: {got}") from None
            if message is None:
                raise AssertionError(f"the server exited after {frame[:200]!r}")
            if message.get("id") == mark and "method" not in message:
                assert message.get("result") == {}, message
                pinged = True
            else:
                got.append(message)
        return got

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stderr is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(60)
        self.proc.stderr.close()
        self.proc.stdout.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Server]:
    home = tmp_path_factory.mktemp("fuzz-home")
    env = {**os.environ, "FUNES_HOME": str(home), "FUNES_EMBEDDER": "hash"}
    srv = _Server(env)
    init = {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "f", "version": "0"},
        },
    }
    srv.send(json.dumps(init).encode())
    srv.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    handshake = srv.exchange(b"")  # a blank line is ignored; the initialize reply comes first
    assert [m.get("id") for m in handshake] == ["init"]
    yield srv
    srv.close()
    assert srv.proc.returncode == 0


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(frame=frames)
def test_random_frames_get_a_reply_or_a_documented_silence(server: _Server, frame: bytes) -> None:
    expected = check_frame(frame)
    replies = server.exchange(frame, reply_to=expected.id, wants_reply=expected.kind == "request")
    for reply in replies:
        assert reply.get("jsonrpc") == "2.0", reply
        assert ("result" in reply) != ("error" in reply) or "method" in reply, reply
    answers = [r for r in replies if "method" not in r]
    if expected.error is not None:
        assert answers == [expected.error], (frame, replies)
    elif expected.kind == "request":
        assert len(answers) == 1, (frame, replies)
        assert answers[0]["id"] == expected.id
        if "error" in answers[0]:
            assert isinstance(answers[0]["error"].get("code"), int)
    else:  # a notification, a response, a blank line, or a malformed notification: never answered
        assert answers == [], (frame, replies)

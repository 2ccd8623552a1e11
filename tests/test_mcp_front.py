"""The stdio front of `funes mcp`: framing errors answered, handshake from a snapshot the SDK agrees with.

Issue 13 item 5: a parse error, a wrong ``jsonrpc``, params of the wrong shape or a lone
surrogate used to get no reply at all (the SDK drops what it cannot parse), so the client waited
forever. Issue 16: the handshake must be answered before the SDK is even imported. Issue 14
(Copilot's -32022): a client of both protocol eras probes with ``server/discover`` and, when the
answer is slow, falls back to ``initialize`` on the same connection; both must work.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from funes_core import __version__
from funes_core.faces.mcp_front import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    Front,
    _Writer,
    check_frame,
    handshake_snapshot,
    record_snapshot,
)

FUNES = str(Path(sys.executable).parent / "funes")
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
#: The 2026-07-28 envelope, as Copilot CLI 1.0.102 sends it on every request.
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "copilot-cli", "version": "1.0.102"},
    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
}
DISCOVER = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": ENVELOPE}}
#: Copilot's fallback after its probe timed out: the 2025 handshake, on the same connection.
FALLBACK_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "0"},
    },
}

#: (name, raw line, expected error code or None for "no error", id the error must carry)
BAD_FRAMES: list[tuple[str, bytes, int, Any]] = [
    ("truncated JSON", b'{"jsonrpc":"2.0","id":7,"method":"ping"', PARSE_ERROR, None),
    ("not JSON", b"hello", PARSE_ERROR, None),
    ("NaN is not JSON", b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":NaN}}', PARSE_ERROR, None),
    ("not UTF-8", b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"\xff"}}', PARSE_ERROR, None),
    ("nested too deep", b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}", PARSE_ERROR, None),
    ("NUL byte", b"\x00", PARSE_ERROR, None),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":7,"method":"ping"}', INVALID_REQUEST, 7),
    ("no jsonrpc", b'{"id":"a","method":"ping"}', INVALID_REQUEST, "a"),
    ("batch", b'[{"jsonrpc":"2.0","id":7,"method":"ping"}]', INVALID_REQUEST, None),
    ("empty batch", b"[]", INVALID_REQUEST, None),
    ("a number", b"42", INVALID_REQUEST, None),
    ("id null", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, None),
    ("id float", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, None),
    ("id bool", b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None),
    ("id object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', INVALID_REQUEST, None),
    ("method a number", b'{"jsonrpc":"2.0","id":7,"method":5}', INVALID_REQUEST, 7),
    ("method missing", b'{"jsonrpc":"2.0","id":7}', INVALID_REQUEST, 7),
    ("invalid, no id", b'{"jsonrpc":"2.0","method":1,"params":"bar"}', INVALID_REQUEST, None),
    ("params a string", b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":"x"}', INVALID_REQUEST, 7),
    ("params an array", b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1,2]}', INVALID_PARAMS, 7),
    (
        "lone surrogate in an argument",
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"recall","arguments":{"query":"\\ud800"}}}',
        INVALID_PARAMS,
        7,
    ),
    ("lone surrogate in the method", b'{"jsonrpc":"2.0","id":7,"method":"\\udfff"}', INVALID_REQUEST, 7),
    ("lone surrogate in the id", b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', INVALID_REQUEST, None),
    (
        "lone surrogate in a key",
        b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"\\ud800":1}}',
        INVALID_PARAMS,
        7,
    ),
]


@pytest.mark.parametrize(("name", "line", "code", "ident"), BAD_FRAMES, ids=[b[0] for b in BAD_FRAMES])
def test_bad_frame_gets_the_json_rpc_error(name: str, line: bytes, code: int, ident: Any) -> None:
    frame = check_frame(line)
    assert frame.error is not None, name
    assert frame.error["error"]["code"] == code
    assert frame.error["id"] == ident
    assert frame.error["jsonrpc"] == "2.0"
    json.dumps(frame.error).encode("ascii")  # the reply itself is always valid, sendable JSON


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"ping"}', "request"),
        (b'{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{}}', "request"),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', "notification"),
        (b'{"jsonrpc":"2.0","id":3,"result":{}}', "response"),
        (b'{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}', "response"),
        (b"", "blank"),
        (b"   \r\n", "blank"),
        (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"\\ud83d\\ude00"}}', "request"),
    ],
)
def test_good_frames_pass(line: bytes, kind: str) -> None:
    frame = check_frame(line)
    assert frame.error is None
    assert frame.kind == kind


def test_a_malformed_notification_is_never_answered() -> None:
    """JSON-RPC forbids replying to a notification: a well-formed one with bad params is dropped."""
    frame = check_frame(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}')
    assert frame.error is None
    assert frame.kind == "invalid"


# ----------------------------------------------------------------------------- the front alone


class _Recorder(_Writer):
    """What the front writes to the client, as parsed messages (no fd)."""

    def __init__(self) -> None:
        super().__init__(-1)
        self.sent: list[dict[str, Any]] = []

    def line(self, data: bytes) -> None:
        self.sent.append(json.loads(data))


def _front() -> tuple[Front, _Recorder, list[Front]]:
    """A front whose SDK never loads (``started`` records each start), fed in-process."""
    out, started = _Recorder(), list[Front]()
    return Front(-1, out, started.append, __version__), out, started


def _feed(front: Front, *frames: dict[str, Any]) -> None:
    for frame in frames:
        front.handle(json.dumps(frame).encode() + b"\n")


def _stamped(answer: dict[str, Any]) -> dict[str, Any]:
    """A snapshot answer as the front gives it: the running version in the server's name."""
    result: dict[str, Any] = json.loads(json.dumps(answer))
    info = (
        result["_meta"]["io.modelcontextprotocol/serverInfo"] if "_meta" in result else result["serverInfo"]
    )
    info["version"] = __version__
    return result


def _replayed(front: Front) -> list[dict[str, Any]]:
    """What the SDK will read first once it is ready."""
    return [json.loads(line) for line in front._waiting]


def test_a_discover_probe_is_answered_before_the_sdk_loads() -> None:
    """Copilot's probe comes back at once, and its 2026 tools/list too, from the SDK's own answers."""
    snapshot = handshake_snapshot()
    front, out, started = _front()
    _feed(front, DISCOVER, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": ENVELOPE}})
    assert [m["id"] for m in out.sent] == [0, 2]
    assert out.sent[0]["result"] == _stamped(snapshot["discover"]["2026-07-28"])
    assert out.sent[0]["result"]["supportedVersions"] == ["2026-07-28"]
    assert out.sent[1]["result"] == _stamped(snapshot["results"]["2026-07-28"]["tools/list"])
    assert len(started) == 1, "the SDK starts loading once the probe is answered"
    assert [m["method"] for m in _replayed(front)] == ["server/discover"], "the probe opens the SDK's era too"


@pytest.mark.parametrize(
    "meta",
    [
        {k: v for k, v in ENVELOPE.items() if not k.endswith("clientCapabilities")},
        {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"},
        None,
    ],
    ids=["no capabilities", "unknown version", "no envelope"],
)
def test_a_probe_the_sdk_would_refuse_is_left_to_the_sdk(meta: dict[str, Any] | None) -> None:
    front, out, _ = _front()
    _feed(front, {**DISCOVER, "params": {"_meta": meta} if meta is not None else {}})
    assert out.sent == [], "the SDK gives the precise error"
    assert [m["id"] for m in _replayed(front)] == [0]


def test_the_2026_era_has_no_ping_and_each_request_brings_its_envelope() -> None:
    front, out, _ = _front()
    _feed(
        front,
        DISCOVER,
        {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": ENVELOPE}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    )
    assert [m["id"] for m in out.sent] == [0], "ping and an envelope-less tools/list wait for the SDK"


def test_a_fallback_initialize_after_a_given_up_probe_opens_the_handshake_era() -> None:
    """The probe timed out on the client's side (the reply was late): its initialize is served.

    Before the fix the front left the initialize to the SDK, which had read the probe first,
    locked the connection to 2026-07-28 and answered -32022; Copilot 1.0.102 then dropped funes.
    """
    snapshot = handshake_snapshot()
    front, out, started = _front()
    _feed(front, DISCOVER, FALLBACK_INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert [m["id"] for m in out.sent] == [0, 1, 2]
    assert out.sent[1]["result"] == _stamped(snapshot["initialize"]["2025-11-25"])
    assert out.sent[2]["result"] == snapshot["results"]["2025-11-25"]["tools/list"]
    assert [m.get("method") for m in _replayed(front)] == ["initialize", "notifications/initialized"]
    assert len(started) == 1


def test_no_fallback_once_the_client_worked_in_the_2026_era() -> None:
    """A client that went on after the probe saw its answer: a later initialize is the SDK's to refuse."""
    front, out, _ = _front()
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"_meta": ENVELOPE, "name": "status"},
    }
    _feed(front, DISCOVER, call, FALLBACK_INIT)
    assert [m["id"] for m in out.sent] == [0]
    assert [m["method"] for m in _replayed(front)] == ["server/discover", "tools/call", "initialize"]


def test_no_fallback_once_the_sdk_has_read_the_probe() -> None:
    front, out, _ = _front()
    _feed(front, DISCOVER)
    front.sdk_ready()
    _feed(front, FALLBACK_INIT)
    assert [m["id"] for m in out.sent] == [0]
    assert front._to_sdk.qsize() == 2, "the initialize went to the SDK, which answers -32022"


# ----------------------------------------------------------------------------- the real process


class Server:
    """`funes mcp` over stdio, driven by raw lines."""

    def __init__(self, env: dict[str, str], argv: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv or [FUNES, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        #: What the server wrote to stderr, once :meth:`close` has run.
        self.errors = ""

    def send(self, *frames: bytes | dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        for frame in frames:
            data = frame if isinstance(frame, bytes) else json.dumps(frame).encode()
            self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError("the server closed its output: " + self.stderr())
        message: dict[str, Any] = json.loads(line)
        return message

    def until(self, ident: Any) -> list[dict[str, Any]]:
        """Every message up to and including the reply with this id."""
        out = []
        while True:
            out.append(self.read())
            if out[-1].get("id") == ident and "method" not in out[-1]:
                return out

    def close(self) -> int:
        """End the input and wait for the server to exit; its exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        status = self.proc.wait(300)  # a hang guard: the front waits up to 120 s for owed replies
        self.errors = self.stderr()
        return status

    def stderr(self) -> str:
        """Everything the server wrote to stderr (killing it if it still runs)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        assert self.proc.stderr is not None and self.proc.stdout is not None
        text = self.proc.stderr.read().decode(errors="replace")
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        return text


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "FUNES_HOME": str(tmp_path / "home"), "FUNES_EMBEDDER": "hash"}


@pytest.mark.slow
def test_every_bad_frame_is_answered_by_the_running_server(env: dict[str, str]) -> None:
    server = Server(env)
    server.send(INIT, INITIALIZED)
    assert server.until(1)[-1]["result"]["serverInfo"]["name"] == "funes"
    for name, line, code, ident in BAD_FRAMES:
        server.send(line, {"jsonrpc": "2.0", "id": f"after {name}", "method": "ping"})
        replies = server.until(f"after {name}")
        errors = [r for r in replies if "error" in r]
        assert [(e["error"]["code"], e["id"]) for e in errors] == [(code, ident)], (name, replies)
        assert replies[-1]["result"] == {}, name
    # And the SDK still serves tools after all that.
    server.send(
        {"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "status", "arguments": {}}}
    )
    result = server.until(99)[-1]["result"]
    assert result["content"][0]["text"].startswith("memory: ")
    assert server.close() == 0


@pytest.mark.slow
def test_requests_sent_before_end_of_input_are_all_answered(env: dict[str, str]) -> None:
    """`printf … | funes mcp`: the SDK alone cancels requests in flight at end of input."""
    frames = [
        INIT,
        INITIALIZED,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "status", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 4, "method": "nope"},
    ]
    data = b"".join(json.dumps(f).encode() + b"\n" for f in frames)
    done = subprocess.run([FUNES, "mcp"], input=data, capture_output=True, env=env, timeout=120, check=True)
    replies = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert sorted(replies) == [1, 2, 3, 4]
    assert replies[2]["result"]["tools"][0]["name"] == "recall"
    assert replies[3]["result"]["content"][0]["text"].startswith("memory: ")
    assert replies[4]["error"]["code"] == -32601


def _front_script(make_server: str) -> str:
    return textwrap.dedent(
        f"""
        import sys, time
        from funes_core.faces.mcp_front import serve_stdio
        def make_server():
        {textwrap.indent(textwrap.dedent(make_server), "    ")}
        serve_stdio(None, make_server=make_server)
        """
    )


@pytest.mark.slow
def test_handshake_is_answered_without_the_sdk(env: dict[str, str]) -> None:
    """With an SDK that never finishes loading, initialize and tools/list still come back at once."""
    script = _front_script("time.sleep(3600)")
    server = Server(env, [sys.executable, "-c", script])
    server.send(INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    server.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    init, tools, ping = server.until(1)[-1], server.until(2)[-1], server.until(3)[-1]
    snapshot = handshake_snapshot()
    expected = json.loads(json.dumps(snapshot["initialize"]["2025-06-18"]))
    from funes_core import __version__

    expected["serverInfo"]["version"] = __version__
    assert init["result"] == expected
    assert tools["result"] == snapshot["results"]["2025-06-18"]["tools/list"]
    assert ping["result"] == {}
    server.stderr()  # kills it


@pytest.mark.slow
def test_a_slow_sdk_serves_both_eras_after_the_front_opened_them(env: dict[str, str]) -> None:
    """The SDK loads late (as on a loaded machine) and still serves tool calls in the era opened.

    The SDK's own reply to the replayed opening is compared with the front's: a mismatch is
    logged, so the stderr must stay clean.
    """
    slow_sdk = "time.sleep(1.5); from funes_core.faces.mcp import make_server as build; return build(None)"
    call = {"name": "status", "arguments": {}}
    for opening, opened_by, then, era in (
        ([DISCOVER], 0, {"_meta": ENVELOPE, **call}, "2026-07-28"),
        ([DISCOVER, FALLBACK_INIT, INITIALIZED], 1, call, "2025-11-25"),
    ):
        server = Server(env, [sys.executable, "-c", _front_script(slow_sdk)])
        server.send(*opening, {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": then})
        replies = {m["id"]: m for m in server.until(9) if "id" in m}
        assert replies[9]["result"]["content"][0]["text"].startswith("memory: "), (era, replies[9])
        opened = replies[opened_by]["result"]
        assert opened.get("protocolVersion", opened.get("supportedVersions", [""])[0]) == era
        assert server.close() == 0
        assert "differs" not in server.errors, era


@pytest.mark.slow
def test_an_sdk_that_cannot_start_gets_errors_not_a_hang(env: dict[str, str]) -> None:
    script = _front_script("raise ImportError('no module named mcp')")
    server = Server(env, [sys.executable, "-c", script])
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "status", "arguments": {}}}
    server.send(INIT, INITIALIZED, call)
    replies = server.until(2)
    assert replies[-1]["error"]["code"] == -32603
    assert "no module named mcp" in replies[-1]["error"]["message"]
    server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "x"}})
    assert server.until(3)[-1]["error"]["code"] == -32603
    assert server.close() == 0


@pytest.mark.slow
def test_snapshot_is_what_the_sdk_server_answers() -> None:
    """mcp_handshake.json must be exactly the SDK's answers: re-record with
    `python -m funes_core.faces.mcp_front --write` after changing a tool, the instructions or the SDK."""
    assert record_snapshot() == handshake_snapshot()

"""The stdio front of ``funes mcp``: answers the handshake at once, guards the framing, hands the rest on.

Why a front at all. Importing the official ``mcp`` SDK costs ~0.5-0.75 s of CPU (its pydantic
models for two protocol eras), so a server built on it answers ``tools/list`` half a second
after spawn. Claude Code starts MCP servers without waiting for them: in ``claude -p`` the first
model request goes out ~0.3 s after start, and a server that has not listed its tools by then is
missing from it. The front is stdlib only (this module imports nothing else at load time), so
``initialize`` + ``tools/list`` are answered within Python's own start-up.

What the front answers itself, and only until the SDK is ready: the opening of either protocol
era when it is the first request and well formed (``initialize`` of the 2025 handshake era, or
``server/discover`` of the 2026-07-28 era, whose requests each carry an ``_meta`` envelope),
then ``tools/list``, ``prompts/list``, ``resources/list`` and ``resources/templates/list`` (and
``ping``, which only the handshake era has). Each answer comes from ``mcp_handshake.json``, a
snapshot of what the SDK server answers for each protocol version; ``tests/test_mcp_front.py``
regenerates the snapshot from the real SDK server and fails if it differs. Everything else,
``tools/call`` first of all, is served by the SDK: the front starts it in a background thread as
soon as the opening is answered, replays the opening request it answered into it (its reply to
the replay is checked against what the front said, then dropped), and from then on passes every
frame through. The SDK runs its own, unmodified stdio transport on a pair of pipes that stand in
for fd 0 and 1.

Why ``server/discover`` too. A client of both eras (Copilot CLI 1.0.102) probes with
``server/discover`` first and, when no answer comes within its timeout (10 s for Copilot), falls
back to ``initialize`` on the same connection, as the MCP spec allows on stdio. Left to the SDK,
the probe is answered only once the SDK has loaded (seconds on a loaded machine); the SDK then
locks the connection to the 2026 era and refuses the fallback with ``-32022``, and Copilot gives
up on the server. Answered here, the probe comes back within Python's start-up. And should a
client still give up on the probe before the SDK has read it, its fallback ``initialize`` is
accepted: the probe is withdrawn from the SDK's queue and the ``initialize`` opens the
connection instead (a client that sends ``initialize`` has, by its own account, not seen a
``DiscoverResult``). Once the SDK has read the probe the era is the SDK's to decide, and it
answers ``-32022`` naming its versions, on which a client is to probe again.

Framing. Every line from the client is checked before anything else sees it, because the SDK
drops a frame it cannot parse without a reply and the client then waits forever (reported
upstream, see ``docs/mcp.md``). The rules, from JSON-RPC 2.0 and the MCP spec:

- not UTF-8, not JSON (NaN and Infinity are not JSON), nested too deep: ``-32700`` with id null;
- a batch (MCP 2025-06-18 removed batching), not an object, ``jsonrpc`` not ``"2.0"``, ``method``
  not a string, an id that is not a string or an integer, ``params`` that is not structured, a
  lone surrogate (``\\ud800``, not Unicode text) outside ``params``: ``-32600``;
- ``params`` an array, or holding a lone surrogate: ``-32602``;
- a well-formed notification is never answered (JSON-RPC forbids it), whatever it holds; a
  malformed one is logged to stderr and dropped; blank lines are ignored;
- once the SDK is loaded, a frame its own parser would reject is answered here as well.

The id of the offending request is echoed when it could be read, else null.
"""

from __future__ import annotations

import json
import os
import queue
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["Frame", "Front", "check_frame", "handshake_snapshot", "record_snapshot", "serve_stdio"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

SNAPSHOT_FILE = Path(__file__).with_name("mcp_handshake.json")
#: Methods the front can answer from the snapshot (after the opening it answered itself).
STATIC_METHODS = ("ping", "tools/list", "prompts/list", "resources/list", "resources/templates/list")
#: The opening request of each protocol era: the 2025 handshake, the 2026-07-28 probe.
INITIALIZE = "initialize"
DISCOVER = "server/discover"
#: The 2026-07-28 per-request envelope in ``params._meta`` (and the server's name in results).
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
#: The id of the opening request replayed into the SDK; its reply never reaches the client.
REPLAY_ID = "funes-front-replayed-initialize"
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF][0-9a-fA-F]{2}")
_END = b"\x00funes-front-end\n"
_LONE = re.compile("[\ud800-\udfff]")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _log(message: str) -> None:
    try:
        sys.stderr.write(f"funes mcp: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed: nothing left to tell
        pass


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _difference(a: Any, b: Any, path: str = "$") -> str:
    """Where two JSON values first differ, for the snapshot self-check's warning."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _difference(a.get(key), b.get(key), f"{path}.{key}")
    return f"{path}: the SDK says {json.dumps(a)[:120]}, the snapshot {json.dumps(b)[:120]}"


def _valid_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _find_lone_surrogate(value: Any, path: str) -> str | None:
    """The JSON path of the first string (or key) holding a lone surrogate, or ``None``."""
    if isinstance(value, str):
        return path if _LONE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if _LONE.search(key):
                return f"{path} (a key)"
            found = _find_lone_surrogate(item, f"{path}.{key}")
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _find_lone_surrogate(item, f"{path}[{i}]")
            if found:
                return found
    return None


class Frame:
    """One checked line: the parsed message, or the error reply owed for it (or neither: ignore)."""

    __slots__ = ("error", "kind", "line", "message")

    def __init__(
        self, line: bytes, message: dict[str, Any] | None, kind: str, error: dict[str, Any] | None = None
    ) -> None:
        self.line = line
        self.message = message
        #: ``request``, ``notification``, ``response``, ``invalid`` or ``blank``.
        self.kind = kind
        self.error = error

    @property
    def id(self) -> Any:
        return self.message.get("id") if self.message is not None else None

    @property
    def method(self) -> str | None:
        return self.message.get("method") if self.message is not None else None


def check_frame(line: bytes) -> Frame:
    """Check one line against JSON-RPC 2.0 and MCP's framing rules (see the module docstring)."""
    raw = line.strip()
    if not raw:
        return Frame(line, None, "blank")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Frame(
            line, None, "invalid", _error(None, PARSE_ERROR, f"Parse error: not UTF-8 (byte {exc.start})")
        )
    try:
        message = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        return Frame(line, None, "invalid", _error(None, PARSE_ERROR, "Parse error: nested too deep"))
    except ValueError as exc:
        return Frame(line, None, "invalid", _error(None, PARSE_ERROR, f"Parse error: {exc}"))
    if isinstance(message, list):
        reason = "Invalid Request: batches are not supported (MCP removed JSON-RPC batching in 2025-06-18)"
        return Frame(line, None, "invalid", _error(None, INVALID_REQUEST, reason))
    if not isinstance(message, dict):
        return Frame(
            line, None, "invalid", _error(None, INVALID_REQUEST, "Invalid Request: not a JSON object")
        )
    has_id = "id" in message
    ident = message.get("id")
    reply_id = ident if has_id and _valid_id(ident) else None
    try:
        lone = _find_lone_surrogate(message, "$") if _SURROGATE_ESCAPE.search(raw) else None
    except RecursionError:
        return Frame(line, None, "invalid", _error(None, PARSE_ERROR, "Parse error: nested too deep"))
    is_notification = "method" in message and not has_id

    def invalid(code: int, reason: str) -> Frame:
        if is_notification and code == INVALID_PARAMS:
            _log(f"dropped a notification: {reason}")
            return Frame(line, message, "invalid")
        return Frame(line, message, "invalid", _error(reply_id, code, reason))

    if has_id and not _valid_id(ident):
        if lone and lone.startswith("$.id"):
            return invalid(
                INVALID_REQUEST, "Invalid Request: the id holds a lone surrogate (not Unicode text)"
            )
        return invalid(INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    if has_id and isinstance(ident, str) and _LONE.search(ident):
        return Frame(
            line,
            message,
            "invalid",
            _error(None, INVALID_REQUEST, "Invalid Request: the id holds a lone surrogate"),
        )
    if message.get("jsonrpc") != "2.0":
        return invalid(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    if "method" not in message:
        if has_id and ("result" in message) != ("error" in message):
            return Frame(line, message, "response")
        return invalid(INVALID_REQUEST, "Invalid Request: no method, and not a response")
    method = message["method"]
    if not isinstance(method, str):
        return invalid(INVALID_REQUEST, "Invalid Request: method must be a string")
    if "params" in message:
        params = message["params"]
        if isinstance(params, list):
            return invalid(
                INVALID_PARAMS, "Invalid params: params must be an object (MCP methods take named parameters)"
            )
        if not isinstance(params, dict):
            return invalid(INVALID_REQUEST, "Invalid Request: params must be an object")
    if lone:
        code = INVALID_PARAMS if lone.startswith("$.params") else INVALID_REQUEST
        kind = "Invalid params" if code == INVALID_PARAMS else "Invalid Request"
        return invalid(code, f"{kind}: {lone[2:]} holds a lone surrogate (a string that is not Unicode text)")
    return Frame(line, message, "request" if has_id else "notification")


def _envelope_version(params: Any) -> str | None:
    """The protocol version a 2026-07-28 request declares in its ``_meta`` envelope, if well formed."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get(CAPABILITIES_KEY), dict):
        return None
    version = meta.get(VERSION_KEY)
    return version if isinstance(version, str) else None


def _server_info(result: dict[str, Any]) -> dict[str, Any] | None:
    """Where a result names the server: ``serverInfo`` (handshake era) or the 2026 ``_meta`` entry."""
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else result.get("serverInfo")
    return info if isinstance(info, dict) else None


def handshake_snapshot() -> dict[str, Any]:
    """The SDK server's handshake answers, as recorded in ``mcp_handshake.json``."""
    data: dict[str, Any] = json.loads(SNAPSHOT_FILE.read_text(encoding="utf-8"))
    return data


#: The SDK server alone (no front), for :func:`record_snapshot`.
_SDK_ONLY = "from funes_core.faces.mcp import serve; serve(None, front=False)"


def _sdk_answers(version: str, python: str, modern: bool) -> dict[str, Any]:
    """Run the SDK server over stdio; its answers to an opening at ``version``, method by method."""
    import subprocess

    client = {"name": "funes-snapshot", "version": "0"}
    if modern:
        meta = {VERSION_KEY: version, "io.modelcontextprotocol/clientInfo": client, CAPABILITIES_KEY: {}}
        methods = [DISCOVER, *STATIC_METHODS[1:]]
        frames = [
            {"jsonrpc": "2.0", "id": i, "method": m, "params": {"_meta": meta}} for i, m in enumerate(methods)
        ]
    else:
        methods = [INITIALIZE, *STATIC_METHODS[1:]]
        frames = [
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": INITIALIZE,
                "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": client},
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            *({"jsonrpc": "2.0", "id": i, "method": m} for i, m in enumerate(methods) if i),
        ]
    env = {**os.environ, "FUNES_LOG": "error"}
    answers: dict[str, Any] = {}
    with subprocess.Popen(
        [python, "-c", _SDK_ONLY], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
        proc.stdin.flush()
        while len(answers) < len(methods):  # the SDK drops requests in flight at end of input: wait
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the SDK server exited before answering {methods[len(answers)]}")
            message = json.loads(line)
            if "id" in message and "method" not in message:
                answers[methods[message["id"]]] = message.get("result", {"error": message.get("error")})
        proc.stdin.close()
        proc.wait(30)
    return answers


def record_snapshot(python: str | None = None) -> dict[str, Any]:
    """What the SDK server answers to an opening, for every protocol version it serves.

    This is how ``mcp_handshake.json`` is made (``python -m funes_core.faces.mcp_front --write``)
    and how the test proves the file is still exactly the SDK's answers. The server's version
    (``serverInfo.version``, in 2026 results ``_meta``'s) is left out: the front fills in the
    running funes version.
    """
    from mcp_types.version import (
        HANDSHAKE_PROTOCOL_VERSIONS,
        LATEST_HANDSHAKE_VERSION,
        MODERN_PROTOCOL_VERSIONS,
    )

    snapshot: dict[str, Any] = {
        "handshake_versions": list(HANDSHAKE_PROTOCOL_VERSIONS),
        "latest_handshake": LATEST_HANDSHAKE_VERSION,
        "modern_versions": list(MODERN_PROTOCOL_VERSIONS),
        "initialize": {},
        "discover": {},
        "results": {},
    }
    from concurrent.futures import ThreadPoolExecutor

    versions = [(v, False) for v in HANDSHAKE_PROTOCOL_VERSIONS] + [
        (v, True) for v in MODERN_PROTOCOL_VERSIONS
    ]
    with ThreadPoolExecutor(max_workers=len(versions)) as pool:
        recorded = list(pool.map(lambda vm: _sdk_answers(vm[0], python or sys.executable, vm[1]), versions))
    for (version, modern), answers in zip(versions, recorded, strict=True):
        for answer in answers.values():
            info = _server_info(answer)
            if info is not None:
                info.pop("version", None)
        opening = DISCOVER if modern else INITIALIZE
        snapshot["discover" if modern else "initialize"][version] = answers.pop(opening)
        snapshot["results"][version] = answers
    return snapshot


class _Writer:
    """One line at a time onto the client's stdout, whoever writes (front thread, SDK relay)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()

    def line(self, data: bytes) -> None:
        with self._lock:
            view = memoryview(data + b"\n")
            while view:
                written = os.write(self._fd, view)
                view = view[written:]

    def message(self, obj: dict[str, Any]) -> None:
        try:
            data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: escaped, it is still valid JSON
            data = json.dumps(obj, separators=(",", ":")).encode("ascii")
        self.line(data)


class Front:
    """The front for one stdio connection. ``start_sdk`` loads and runs the SDK server (see serve_stdio)."""

    def __init__(self, in_fd: int, writer: _Writer, start_sdk: Callable[[Front], None], version: str) -> None:
        self._in_fd = in_fd
        self._out = writer
        self._start_sdk = start_sdk
        self._version = version
        self._snapshot: dict[str, Any] | None = None
        #: The opening the front answered (``initialize`` or ``server/discover``) and its version.
        self._opening: str | None = None
        self._negotiated: str | None = None
        self._front_opening_result: dict[str, Any] | None = None
        self._seen_request = False
        self._lock = threading.Lock()
        #: idle (not started), loading, ready, failed.
        self._state = "idle"
        self._failure = ""
        #: Frames waiting for the SDK (the replayed initialize first), then the SDK's input queue.
        self._waiting: list[bytes] = []
        self._to_sdk: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        #: Requests passed to the SDK and not answered yet (JSON of their ids).
        self._pending: set[str] = set()
        self.sdk_done = threading.Event()
        self.input_ended = False

    # -- called from the SDK thread ------------------------------------------------------------

    def sdk_ready(self) -> queue.SimpleQueue[bytes | None]:
        """The SDK reads its input now: hand it what waited, in order; returns its input queue."""
        with self._lock:
            for data in self._waiting:
                frame = check_frame(data)
                if frame.kind == "request" and frame.id != REPLAY_ID:
                    self._pending.add(json.dumps(frame.id))
                self._to_sdk.put(data)
            self._waiting.clear()
            self._state = "ready"
        return self._to_sdk

    def sdk_failed(self, reason: str) -> None:
        """The SDK could not start, or stopped: every request owed an answer gets an internal error."""
        with self._lock:
            if self._state == "failed":
                return
            self._state = "failed"
            self._failure = reason
            owed = [
                f.id for f in map(check_frame, self._waiting) if f.kind == "request" and f.id != REPLAY_ID
            ]
            owed += [json.loads(key) for key in self._pending]
            self._waiting.clear()
            self._pending.clear()
        self._to_sdk.put(None)
        _log(f"the MCP server stopped: {reason}")
        for ident in owed:
            self._out.message(_error(ident, INTERNAL_ERROR, f"funes mcp: {reason}"))

    def sdk_output(self, line: bytes) -> None:
        """A line the SDK wrote: pass it on, except its reply to the replayed ``initialize``."""
        try:
            message = json.loads(line)
        except ValueError:
            _log(f"dropped a line the server wrote that is not JSON: {line[:200]!r}")
            return
        if isinstance(message, dict) and "method" not in message and "id" in message:
            if message["id"] == REPLAY_ID:
                said = self._front_opening_result
                if said is not None and message.get("result") != said:
                    _log(
                        f"warning: mcp_handshake.json differs from the SDK's own {self._opening} result: "
                        f"{_difference(message.get('result'), said)}"
                    )
                return
            with self._lock:
                self._pending.discard(json.dumps(message["id"]))
        self._out.line(line.rstrip(b"\r\n"))

    # -- the client side -----------------------------------------------------------------------

    def _snapshot_data(self) -> dict[str, Any]:
        if self._snapshot is None:
            self._snapshot = handshake_snapshot()
        return self._snapshot

    def _recorded(self, table: str, version: str, method: str | None = None) -> dict[str, Any] | None:
        """A copy of the snapshot's answer, stamped with the running version, or ``None``."""
        answer = self._snapshot_data()[table].get(version)
        if method is not None and answer is not None:
            answer = answer.get(method)
        if answer is None:
            return None
        result: dict[str, Any] = json.loads(json.dumps(answer))
        info = _server_info(result)
        if info is not None:
            info["version"] = self._version
        return result

    def _opening_answer(self, method: str, params: Any) -> dict[str, Any] | None:
        """The answer to a well-formed opening request (the connection's first), else ``None``."""
        snapshot = self._snapshot_data()
        if method == DISCOVER:
            version = _envelope_version(params)
            if version not in snapshot.get("modern_versions", ()):
                return None  # no envelope, or a version the SDK will refuse with the precise error
            return self._recorded("discover", version) if version is not None else None
        if not isinstance(params, dict):
            return None
        version = params.get("protocolVersion")
        client = params.get("clientInfo")
        if not (
            isinstance(version, str)
            and isinstance(params.get("capabilities"), dict)
            and isinstance(client, dict)
            and isinstance(client.get("name"), str)
            and isinstance(client.get("version"), str)
        ):
            return None  # the SDK gives the precise error
        if version not in snapshot["handshake_versions"]:
            version = snapshot["latest_handshake"]
        return self._recorded("initialize", version)

    def _static_answer(self, frame: Frame) -> dict[str, Any] | None:
        """The snapshot's answer to ``frame`` when the front may give it, else ``None``."""
        assert frame.message is not None
        method = frame.method
        params = frame.message.get("params")
        if method in (INITIALIZE, DISCOVER):
            if self._seen_request:
                return None
            result = self._opening_answer(method, params)
            if result is not None:
                self._opening = method
                self._negotiated = (
                    _envelope_version(params) if method == DISCOVER else result.get("protocolVersion")
                )
                self._front_opening_result = result
            return result
        if self._negotiated is None or method not in STATIC_METHODS:
            return None
        if params is not None and not (isinstance(params, dict) and set(params) <= {"_meta"}):
            return None  # a cursor, or anything else: the SDK decides
        if self._opening == DISCOVER:
            # Every 2026 request carries its own envelope; one the SDK would refuse is its to answer.
            if _envelope_version(params) != self._negotiated:
                return None
        elif method == "ping":
            return {}  # the handshake era's ping (the 2026 era has none)
        return self._recorded("results", self._negotiated, method)

    def _withdraw_probe_locked(self, frame: Frame) -> None:
        """A client's fallback ``initialize`` after the probe it gave up on: the probe is withdrawn.

        Only while the SDK has not read anything and no other request of the client waits: then
        nothing has been served in the 2026 era yet, and the ``initialize`` may open the connection
        as if it came first (see the module docstring). Otherwise nothing changes.
        """
        if frame.method != INITIALIZE or self._opening != DISCOVER or self._state != "loading":
            return
        frames = [check_frame(data) for data in self._waiting]
        if any(f.kind == "request" and f.id != REPLAY_ID for f in frames):
            return
        _log("the client gave up on server/discover and sent initialize: serving the handshake era")
        self._waiting = [f.line for f in frames if f.id != REPLAY_ID]
        self._opening = self._negotiated = self._front_opening_result = None
        self._seen_request = False

    def handle(self, line: bytes) -> None:
        """One line from the client."""
        frame = check_frame(line)
        if frame.error is not None:
            self._out.message(frame.error)
            return
        if frame.kind in ("blank", "invalid"):
            return
        start = False
        reply: dict[str, Any] | None = None
        with self._lock:
            state = self._state
            if state == "ready":
                reply = self._pass_locked(frame)
            elif state == "failed":
                if frame.kind == "request":
                    reply = _error(frame.id, INTERNAL_ERROR, f"funes mcp: {self._failure}")
            else:
                self._withdraw_probe_locked(frame)
                answer = self._static_answer(frame) if frame.kind == "request" else None
                if answer is not None:
                    if frame.method in (INITIALIZE, DISCOVER):
                        replay = {**frame.message, "id": REPLAY_ID}  # type: ignore[dict-item]
                        self._waiting.insert(0, json.dumps(replay, ensure_ascii=False).encode("utf-8"))
                    reply = {"jsonrpc": "2.0", "id": frame.id, "result": answer}
                else:
                    self._waiting.append(frame.line)
                self._seen_request = self._seen_request or frame.kind == "request"
                if state == "idle":
                    self._state = "loading"
                    start = True
        if reply is not None:
            self._out.message(reply)
        if start:
            threading.Thread(target=self._start_sdk, args=(self,), name="funes-mcp-sdk", daemon=True).start()

    def _pass_locked(self, frame: Frame) -> dict[str, Any] | None:
        """Give a frame to the SDK, unless its own parser would drop it unanswered (then answer here)."""
        problem = _sdk_rejects(frame.line)
        if problem is not None:
            if frame.kind == "request":
                return _error(frame.id, INVALID_REQUEST, f"Invalid Request: {problem}")
            _log(f"dropped a {frame.kind}: {problem}")
            return None
        if frame.kind == "request":
            self._pending.add(json.dumps(frame.id))
        self._to_sdk.put(frame.line)
        return None

    def run(self) -> None:
        """Read the client until end of input, then let the SDK finish what it was given."""
        with os.fdopen(self._in_fd, "rb", buffering=0, closefd=False) as raw:
            for line in _Lines(raw):
                self.handle(line)
        self.input_ended = True
        self._finish()

    def _owed(self) -> bool:
        """Whether a request the client sent is still unanswered (the replayed initialize aside)."""
        waiting = any(f.kind == "request" and f.id != REPLAY_ID for f in map(check_frame, self._waiting))
        return waiting or bool(self._pending)

    def _finish(self, patience: float = 120.0) -> None:
        """At the end of input: answer every request already received, then stop the SDK.

        The SDK's own transport cancels requests still in flight when its input ends; here they
        are answered first, so ``printf '...' | funes mcp`` gets every reply it asked for.
        """
        deadline = time.monotonic() + patience
        while True:
            with self._lock:
                state, owed = self._state, self._owed()
            if state == "idle" or (state == "loading" and not owed):
                return  # nothing asked is unanswered: no need to wait for the SDK
            if not owed or state == "failed" or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        self._to_sdk.put(None)  # end of input for the SDK, after everything it was given
        self.sdk_done.wait(10)


class _Lines:
    """Lines of an unbuffered binary file, read in blocks (``readline`` on a raw fd reads byte by byte)."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._buf = b""

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> bytes:
        while True:
            cut = self._buf.find(b"\n")
            if cut >= 0:
                line, self._buf = self._buf[: cut + 1], self._buf[cut + 1 :]
                return line
            block = self._raw.read(65536)
            if not block:
                if self._buf:
                    line, self._buf = self._buf, b""
                    return line
                raise StopIteration
            self._buf += block


def _preload_relay() -> None:
    """Import the relay and resolve the home ahead of the first frame (see :func:`serve_stdio`)."""
    try:
        from funes_core.serve import client

        if not client.service_disabled():
            import funes_core.serve.relay  # noqa: F401

            client.home_root()
    except Exception:  # the start thread does all of this again and reports what fails
        pass


def _sdk_rejects(line: bytes) -> str | None:
    """Why the SDK's stdio transport would drop this line unanswered, or ``None`` (SDK loaded)."""
    adapter = _ADAPTER[0]
    if adapter is None:
        return None
    try:
        adapter.validate_json(line, by_name=False)
    except Exception as exc:  # a pydantic ValidationError, described in one line
        first = str(exc).splitlines()
        return first[1].strip() if len(first) > 1 else type(exc).__name__
    return None


#: The SDK's JSON-RPC message adapter, set once the SDK is imported.
_ADAPTER: list[Any] = [None]


def serve_stdio(memory: str | None, make_server: Callable[[], Any] | None = None) -> None:
    """Serve MCP on this process's stdin/stdout through the front (see the module docstring).

    By default the session is relayed to the memory service (:mod:`funes_core.serve.relay`,
    started on demand); when none can be had (``FUNES_SERVICE=off``, no Unix sockets, a socket
    that cannot be trusted, a service that will not start) the SDK server runs here, the log says
    why, and the ``status`` tool says so. ``make_server`` builds that SDK server (default:
    :func:`funes_core.faces.mcp.make_server` for ``memory``; given, the service is not used); it
    runs in the background thread, so its imports happen there, after the handshake was answered.
    fd 0 and 1 are taken over at once: the front reads and writes
    private duplicates, and the SDK later finds pipes in their place.
    """
    from funes_core import __version__

    use_service = make_server is None
    #: What the in-process server's ``status`` tool says about the service (why it is not used).
    fallback_note: list[str] = ["service: not used (FUNES_SERVICE=off); this session is served in-process\n"]
    if make_server is None:

        def make_server() -> Any:
            from funes_core.faces.mcp import configure_logging
            from funes_core.faces.mcp import make_server as build

            configure_logging()
            return build(memory, service_note=lambda: fallback_note[0])

    if use_service:
        # The relay's modules load while the agent is still writing its first frame: an agent
        # sends its first tool call right after the handshake, and it would otherwise wait for them.
        threading.Thread(target=_preload_relay, name="funes-mcp-preload", daemon=True).start()
    in_fd = os.dup(0)
    out_fd = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # stray prints go to stderr, never onto the wire
    writer = _Writer(out_fd)
    build_server = make_server

    def start(front: Front) -> None:
        """Relay to the memory service; serve in-process when it cannot be had (and say so)."""
        if use_service:
            from funes_core.serve import client

            if not client.service_disabled():
                try:
                    root = client.home_root()
                    conn = client.ensure_service(root, "mcp", memory=memory)
                except Exception as exc:  # ServiceUnavailableError, HomeError: work in-process
                    _log(f"the memory service is not available ({exc}): serving in-process")
                    fallback_note[0] = f"service: not used ({exc}); this session is served in-process\n"
                else:
                    from funes_core.serve.relay import Relay

                    Relay(front, root, memory, conn).run()
                    return
        start_sdk(front)

    def start_sdk(front: Front) -> None:
        try:
            server = build_server()
            import mcp_types

            _ADAPTER[0] = mcp_types.jsonrpc_message_adapter
            to_sdk_r, to_sdk_w = os.pipe()
            from_sdk_r, from_sdk_w = os.pipe()
            os.dup2(to_sdk_r, 0)
            os.dup2(from_sdk_w, 1)
            os.close(to_sdk_r)
        except Exception as exc:  # isolation boundary: the client must get an answer, never a hang
            front.sdk_failed(f"could not start: {type(exc).__name__}: {exc}")
            front.sdk_done.set()
            return

        def relay() -> None:
            with os.fdopen(from_sdk_r, "rb", buffering=0) as raw:
                for line in _Lines(raw):
                    if line == _END:
                        return
                    if line.strip():
                        front.sdk_output(line)

        def feed(inbox: queue.SimpleQueue[bytes | None]) -> None:
            with os.fdopen(to_sdk_w, "wb", buffering=0) as pipe:
                while (data := inbox.get()) is not None:
                    try:
                        pipe.write(data.rstrip(b"\r\n") + b"\n")
                    except OSError:  # the SDK stopped reading
                        return

        relay_thread = threading.Thread(target=relay, name="funes-mcp-relay", daemon=True)
        relay_thread.start()
        threading.Thread(target=feed, args=(front.sdk_ready(),), name="funes-mcp-feed", daemon=True).start()
        try:
            server.run("stdio")
        except Exception as exc:  # the SDK's loop died: answer what is owed
            front.sdk_failed(f"stopped: {type(exc).__name__}: {exc}")
        else:
            if not front.input_ended:
                front.sdk_failed("the server stopped")
        finally:
            # The SDK never closes its duplicate of the pipe, so the relay gets an end marker.
            os.write(from_sdk_w, _END)
            relay_thread.join()
            front.sdk_done.set()

    Front(in_fd, writer, start, __version__).run()


def main(argv: list[str] | None = None) -> int:
    """``python -m funes_core.faces.mcp_front --write``: re-record ``mcp_handshake.json`` from the SDK."""
    from funes_core.files import snapshot_main

    return snapshot_main(SNAPSHOT_FILE, record_snapshot(), sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    raise SystemExit(main())

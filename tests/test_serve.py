"""The memory service (`funes serve`) and its thin fronts: start on demand, faults, freshness, same bytes.

Every test runs real processes: fronts (``funes mcp``'s stdio front) and CLI reads as subprocesses,
services started detached as the fronts start them (``conftest.py`` stops any left at the end of a
test). Waits are polls for a condition with a generous deadline, never sleeps: the machine may
be loaded (a service's start-up imports lancedb and loads the model).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.serve import client, wire

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "sessions"
FUNES = str(Path(sys.executable).parent / "funes")
ARM = "8d41b7e2-0c3f-4a9b-b5d6-7e2a1f9c3084"
PATIENCE = 180.0
HEAVY = ("lancedb", "pyarrow", "onnxruntime", "numpy")

#: A front that reports, as it exits, the modules it loaded (one JSON line on stderr).
FRONT = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
    "from funes_core.faces.mcp_front import serve_stdio\n"
    "serve_stdio(None)\n"
)


def wait_for(condition: Callable[[], Any], what: str, timeout: float = PATIENCE) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A FUNES_HOME holding the example sessions (fast test embedder); its environment."""
    env = {"FUNES_HOME": str(tmp_path / "home"), "FUNES_EMBEDDER": "hash"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("FUNES_SERVICE", raising=False)
    result = CliRunner().invoke(make_app(), ["index", str(EXAMPLES), "--wait"])
    assert result.exit_code == 0, result.output
    yield {**os.environ, **env}
    _show_what_happened(Path(env["FUNES_HOME"]))


#: The fronts a test started, so that a failing test shows what each said on stderr.
_FRONTS: list[Front] = []


def _show_what_happened(root: Path) -> None:
    """Print every front's stderr and the service's log: pytest shows them only for a failing test."""
    while _FRONTS:
        front = _FRONTS.pop()
        if front.proc.poll() is None:
            front.proc.kill()
            front.proc.wait(PATIENCE)
        if front.proc.stderr is not None and not front.proc.stderr.closed:
            front.stderr += front.proc.stderr.read()
        print(f"--- front {front.proc.pid} stderr ---\n{front.stderr.decode(errors='replace')}")
    log = wire.run_paths(root).log
    with contextlib.suppress(OSError):
        print(f"--- {log} ---\n{log.read_text(errors='replace')}")


def root_of(env: dict[str, str]) -> Path:
    return Path(env["FUNES_HOME"])


def service_pid(env: dict[str, str]) -> int | None:
    info = client.read_info(root_of(env))
    return info.get("pid") if info else None


def running(env: dict[str, str]) -> bool:
    from funes_core import portable

    return portable.lock_held(wire.run_paths(root_of(env)).lock)


class Front:
    """A stdio front as a subprocess, spoken to frame by frame; replies are read with a deadline."""

    def __init__(self, env: dict[str, str], argv: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv or [sys.executable, "-c", FRONT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr = b""
        self._held: dict[Any, dict[str, Any]] = {}
        _FRONTS.append(self)
        self._next = 100
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            }
        )
        assert "result" in self.reply(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, tool: str, arguments: dict[str, Any]) -> int:
        self._next += 1
        self.send(
            {
                "jsonrpc": "2.0",
                "id": self._next,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )
        return self._next

    def reply(self, ident: int, timeout: float = PATIENCE) -> dict[str, Any]:
        """The reply to ``ident``; replies to other requests read meanwhile are kept for their turn
        (calls in flight are answered in any order, a retried one after those sent later)."""
        deadline = time.monotonic() + timeout
        while ident not in self._held:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no reply to {ident} within {timeout} s")
            try:
                message = self.replies.get(timeout=left)
            except queue.Empty:
                continue
            if "id" in message:
                self._held[message["id"]] = message
        return self._held.pop(ident)

    def text(self, tool: str, arguments: dict[str, Any]) -> str:
        reply = self.reply(self.call(tool, arguments))
        assert "result" in reply, reply
        assert not reply["result"].get("isError"), reply
        return "".join(c["text"] for c in reply["result"]["content"])

    def close(self) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()
        self.proc.wait(PATIENCE)
        self._reader.join(PATIENCE)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self.proc.stderr.close()
        return self.stderr.decode(errors="replace")


def funes(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([FUNES, *args], env=env, capture_output=True, timeout=PATIENCE, check=False)


def calls_served(env: dict[str, str]) -> int:
    conn = client.connect(root_of(env), "info", timeout=30)
    conn.close()
    return int(conn.reply["calls"])


# -- the front -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_front_relays_to_a_service_it_starts_and_never_loads_the_heavy_parts(home: dict[str, str]) -> None:
    """A front with no service running starts one; its answers come from it; it imports none of
    lancedb, pyarrow, onnxruntime, numpy (nor the MCP SDK)."""
    assert not running(home)
    front = Front(home)
    text = front.text("recall", {"query": "why did the ARM build break", "k": 3})
    assert "ARM" in text or "arm" in text
    status = front.text("status", {})
    assert "service: running (pid" in status
    stderr = front.close()
    modules = json.loads(stderr.split("MODULES ", 1)[1].splitlines()[0])
    loaded = sorted({m.split(".")[0] for m in modules} & {*HEAVY, "mcp", "pydantic"})
    assert loaded == [], loaded
    assert running(home)
    pid = service_pid(home)
    assert pid is not None and pid != front.proc.pid
    info = wire.run_paths(root_of(home))
    assert (info.socket.stat().st_mode & 0o777) == 0o600
    assert (info.run.stat().st_mode & 0o777) == 0o700


def test_the_relay_and_the_home_it_resolves_load_only_what_a_front_needs() -> None:
    """What a front loads to reach a running service (the relay, the client, the home's path) stays
    off ``dataclasses`` and ``tempfile`` and all of :mod:`funes_core.home`: an agent's first tool call
    waits for these imports (~40 ms less at a load of 7 once they were dropped)."""
    code = (
        "import json, sys\n"
        "import funes_core.faces.mcp_front, funes_core.serve.relay\n"
        "from funes_core.serve import client\n"
        "client.home_root()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "FUNES_HOME": "/nonexistent/funes-home"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    modules = set(json.loads(out.stdout))
    assert sorted(modules & {"dataclasses", "tempfile", "funes_core.home", *HEAVY}) == []


@pytest.mark.slow
def test_two_fronts_that_find_no_service_start_exactly_one(home: dict[str, str]) -> None:
    fronts = [Front(home), Front(home)]
    ids = [f.call("recall", {"query": "sqlite decision"}) for f in fronts]
    for front, ident in zip(fronts, ids, strict=True):
        assert "result" in front.reply(ident)
    for front in fronts:
        front.close()
    log = wire.run_paths(root_of(home)).log.read_text()
    assert log.count("listening on") == 1, log


@pytest.mark.slow
def test_the_service_exits_when_idle(home: dict[str, str]) -> None:
    env = {**home, "FUNES_SERVE_IDLE": "1"}
    front = Front(env)
    front.text("sessions", {"limit": 1})
    assert running(env)
    front.close()
    wait_for(lambda: not running(env), "the idle service to exit")
    assert not wire.run_paths(root_of(env)).info.exists()
    assert not wire.run_paths(root_of(env)).socket.exists()


@pytest.mark.slow
def test_a_front_serves_in_process_when_the_service_cannot_start(home: dict[str, str]) -> None:
    """A socket path that is not a socket: the service refuses it, and the front says so and serves."""
    paths = wire.run_paths(root_of(home))
    paths.run.mkdir(mode=0o700, exist_ok=True)
    paths.socket.write_text("not a socket")
    front = Front(home)
    text = front.text("recall", {"query": "sqlite decision"})
    assert "sqlite" in text.lower()
    status = front.text("status", {})
    assert "this session is served in-process" in status
    assert "is not a socket" in status
    stderr = front.close()
    assert "serving in-process" in stderr
    assert paths.socket.read_text() == "not a socket"  # never removed
    result = funes(home, "serve", "--idle", "5")
    assert result.returncode == 1
    message = result.stderr.decode().strip()
    assert len(message.splitlines()) == 1 and "is not a socket" in message


@pytest.mark.slow
def test_a_killed_service_is_restarted_and_the_call_retried(home: dict[str, str]) -> None:
    front = Front(home)
    front.text("sessions", {"limit": 1})
    first = service_pid(home)
    assert first is not None
    os.kill(first, signal.SIGKILL)
    # A call sent as the service dies, and one after: both answered, by a new service.
    ident = front.call("recall", {"query": "why did the ARM build break"})
    assert "result" in front.reply(ident)
    assert "sqlite" in front.text("recall", {"query": "sqlite decision"}).lower()
    second = service_pid(home)
    assert second is not None and second != first
    assert "starting it again" in front.close()


@pytest.mark.slow
def test_a_call_in_flight_when_the_service_is_killed_gets_an_answer(home: dict[str, str]) -> None:
    front = Front(home)
    front.text("sessions", {"limit": 1})
    pid = service_pid(home)
    assert pid is not None
    ids = [front.call("recall", {"query": f"build {i}"}) for i in range(5)]
    os.kill(pid, signal.SIGKILL)
    for ident in ids:
        reply = front.reply(ident)
        assert "result" in reply or "error" in reply
        if "error" in reply:
            assert reply["error"]["message"].startswith("funes mcp:")
    assert front.text("sessions", {"limit": 1})
    front.close()


@pytest.mark.slow
def test_a_service_killed_during_100_calls_from_5_fronts_answers_each_and_serves_on(
    home: dict[str, str],
) -> None:
    """kill -9 of the service while 5 fronts have 20 calls each in flight: every call gets its
    answer or one ``funes mcp:`` error within the stated timeout (``FUNES_SERVE_TIMEOUT``, here 90 s,
    counted from when the call was sent, the restart included), and the next call of each works."""
    env = {**home, "FUNES_SERVE_TIMEOUT": "90"}
    fronts = [Front(env) for _ in range(5)]
    for front in fronts:
        assert front.text("sessions", {"limit": 1})
    pid = service_pid(env)
    assert pid is not None
    sent = [[front.call("recall", {"query": f"build {i}", "k": 3}) for i in range(20)] for front in fronts]
    os.kill(pid, signal.SIGKILL)
    errors = []
    for front, idents in zip(fronts, sent, strict=True):
        for ident in idents:
            reply = front.reply(ident, timeout=90 + 60)  # the stated bound, and slack for a loaded machine
            assert "result" in reply or "error" in reply, reply
            if "error" in reply:
                assert reply["error"]["message"].startswith("funes mcp:"), reply
                assert len(reply["error"]["message"].splitlines()) == 1
                errors.append(reply["error"]["message"])
    for front in fronts:
        assert "sqlite" in front.text("recall", {"query": "sqlite decision"}).lower()
    assert service_pid(env) not in (None, pid)
    log = wire.run_paths(root_of(env)).log.read_text()
    assert log.count("listening on") == 2, log  # one restart for all five fronts
    for front in fronts:
        front.close()
    print(f"{len(errors)} of 100 calls answered with an error: {sorted(set(errors))}")


@pytest.mark.slow
def test_a_stale_socket_and_record_are_replaced(home: dict[str, str]) -> None:
    paths = wire.run_paths(root_of(home))
    paths.run.mkdir(mode=0o700, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(paths.socket))
    stale.close()  # the file stays: what a killed service leaves
    paths.info.write_text(json.dumps({"pid": 999999, "version": "0", "socket": str(paths.socket)}))
    front = Front(home)
    assert front.text("sessions", {"limit": 1})
    front.close()
    assert service_pid(home) not in (None, 999999)


# -- versions ------------------------------------------------------------------------------------


def _old_service(env: dict[str, str]) -> tuple[Any, threading.Thread]:
    """A service of "another funes version", running in a thread of this process."""
    from funes_core.home import Home
    from funes_core.serve.service import Service

    service = Service(Home.resolve(env["FUNES_HOME"]), idle=0)
    service.version = "0.0.0-old"
    assert service.acquire()
    service.bind()
    service.publish()
    thread = threading.Thread(target=lambda: (service.serve_forever(), service.close()), daemon=True)
    thread.start()
    return service, thread


@pytest.mark.slow
def test_a_service_of_another_version_is_replaced_when_unused(home: dict[str, str]) -> None:
    _service, thread = _old_service(home)
    result = funes(home, "sessions", "--limit", "1")  # the CLI does not use it, silently
    assert result.returncode == 0 and result.stderr == b""
    front = Front(home)
    assert front.text("sessions", {"limit": 1})
    thread.join(PATIENCE)
    assert not thread.is_alive()
    assert service_pid(home) not in (None, os.getpid())
    front.close()


@pytest.mark.slow
def test_a_service_of_another_version_with_clients_is_left_alone(home: dict[str, str]) -> None:
    service, thread = _old_service(home)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(str(service.socket_path))  # an open connection counts as a client
    wait_for(lambda: service.info(asking=False)["clients"] >= 1, "the connection to count")
    front = Front(home)
    assert front.text("sessions", {"limit": 1})
    status = front.text("status", {})
    assert "runs funes 0.0.0-old" in status and "served in-process" in status
    stderr = front.close()
    assert "serving in-process" in stderr
    assert thread.is_alive()
    conn.close()
    service.stop()
    thread.join(PATIENCE)


# -- the CLI -------------------------------------------------------------------------------------

CLI_READS = [
    ["recall", "why did the ARM build break", "-k", "3"],
    ["recall", "sqlite decision", "--json"],
    ["get", ARM, "--from", "2", "--to", "5"],
    ["sessions", "--limit", "2"],
    ["scan", "orjson", ARM, "--context", "30"],
    ["sketch", ARM, "--units", "3"],
    ["get", "no-such-session"],
]


@pytest.mark.slow
def test_cli_reads_through_the_service_print_the_same_bytes(home: dict[str, str]) -> None:
    started = funes(home, "serve", "--start")
    assert started.returncode == 0, started.stderr
    before = calls_served(home)
    for argv in CLI_READS:
        served = funes(home, *argv)
        local = funes(home, *argv, "--no-service")
        assert (served.returncode, served.stdout, served.stderr) == (
            local.returncode,
            local.stdout,
            local.stderr,
        ), argv
    assert calls_served(home) == before + len(CLI_READS)
    served = funes(home, "status")
    local = funes(home, "status", "--no-service")
    assert served.returncode == local.returncode == 0

    def report(out: bytes) -> list[bytes]:  # the memory report: no service line, no clock-driven age
        return [line for line in out.splitlines() if not line.startswith((b"service: ", b"last indexed: "))]

    assert report(served.stdout) == report(local.stdout)
    assert b"service: running (pid" in served.stdout
    as_json = json.loads(funes(home, "status", "--json").stdout)
    assert as_json["service"]["running"] is True and as_json["chunks"] > 0
    assert calls_served(home) == before + len(CLI_READS) + 2


def test_cli_reads_without_a_service_say_nothing_about_it(home: dict[str, str]) -> None:
    result = funes(home, "sessions", "--limit", "1")
    assert result.returncode == 0 and result.stderr == b""
    assert not running(home)  # a CLI read never starts one
    status = funes(home, "status")
    assert status.returncode == 0 and b"service:" not in status.stdout
    assert json.loads(funes(home, "status", "--json").stdout)["service"] == {"running": False}
    assert funes(home, "serve", "--status").stdout.startswith(b"service: not running")


@pytest.mark.slow
def test_the_service_sees_new_turns_and_never_serves_purged_ones(
    home: dict[str, str], tmp_path: Path
) -> None:
    assert funes(home, "serve", "--start").returncode == 0
    before = calls_served(home)
    marker = "zanzibarquokka"
    assert marker not in funes(home, "recall", marker).stdout.decode()
    session = tmp_path / "new" / "fresh.funes.jsonl"
    session.parent.mkdir()
    lines = [
        {
            "session_id": "fresh-1",
            "turn_uuid": "fresh-1-t000",
            "seq": 0,
            "ts": "2026-03-05T10:00:00Z",
            "role": "user",
            "harness": "claude",
            "cwd": "/home/dev/src/tidepool",
            "blocks": [{"block_type": "text", "text": f"remember the {marker} release plan"}],
        }
    ]
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    indexed = funes(home, "index", str(session))
    assert indexed.returncode == 0, indexed.stderr
    found = funes(home, "recall", marker, "--json")
    assert marker in found.stdout.decode()
    purged = funes(home, "purge", "--match", marker, "--yes")
    assert purged.returncode == 0, purged.stderr
    for argv in (["recall", marker], ["sessions"]):
        result = funes(home, *argv)
        assert result.stderr == b"", result.stderr
        assert marker not in result.stdout.decode() and "fresh-1" not in result.stdout.decode()
    gone = funes(home, "get", "fresh-1")
    assert gone.returncode == 1 and marker not in gone.stdout.decode() and b"fresh-1" in gone.stderr
    assert calls_served(home) == before + 5


# -- the wire ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_oversize_and_malformed_requests_get_an_error_and_the_service_goes_on(
    home: dict[str, str],
) -> None:
    env = {**home, "FUNES_SERVE_MAX_REQUEST": "2048"}
    assert funes(env, "serve", "--start").returncode == 0
    path = Path(client.read_info(root_of(env))["socket"])  # type: ignore[index]

    def exchange(data: bytes) -> list[dict[str, Any]]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(PATIENCE)
            sock.connect(str(path))
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            out = b""
            while chunk := sock.recv(65536):
                out += chunk
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    assert exchange(b"x" * 5000 + b"\n")[0]["kind"] == "framing"
    assert exchange(b"not json\n")[0]["kind"] == "framing"
    assert exchange(b'["op"]\n')[0]["kind"] == "framing"
    header = json.dumps(client.header("call")).encode() + b"\n"
    replies = exchange(
        header + b"{broken\n" + b"y" * 5000 + b"\n" + b'{"verb": "sessions", "args": {"limit": 1}}\n'
    )
    assert replies[0]["ok"] is True
    assert [r.get("kind") for r in replies[1:3]] == ["framing", "framing"]
    assert replies[3]["ok"] is True and replies[3]["text"]
    session = json.dumps(client.header("mcp")).encode() + b"\n"
    replies = exchange(session + b"z" * 5000 + b"\n" + b"{nope\n")
    assert replies[0]["ok"] is True
    assert [r["error"]["code"] for r in replies[1:]] == [-32600, -32700]
    assert calls_served(env) >= 1


def test_a_socket_path_that_is_not_a_socket_or_not_ours_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    path = folder / "serve.sock"
    assert wire.check_socket(path) is False
    path.write_text("x")
    with pytest.raises(wire.ServiceRefusedError, match="is not a socket"):
        wire.check_socket(path)
    path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    assert wire.check_socket(path) is True
    from funes_core import portable

    monkeypatch.setattr(portable, "current_uid", lambda: os.getuid() + 1)
    with pytest.raises(wire.ServiceRefusedError, match="belongs to another user"):
        wire.check_socket(path)
    monkeypatch.undo()
    folder.chmod(0o755)
    with pytest.raises(wire.ServiceRefusedError, match="can be entered by other users"):
        wire.check_socket(path)
    sock.close()


@pytest.mark.slow
def test_a_home_too_long_for_a_socket_listens_in_the_runtime_folder(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    env = {**os.environ, "FUNES_HOME": str(deep), "FUNES_EMBEDDER": "hash"}
    env.pop("FUNES_SERVICE", None)
    assert funes(env, "serve", "--start").returncode == 0
    info = client.read_info(deep)
    assert info is not None
    assert Path(info["socket"]) == wire.fallback_socket(deep)
    assert funes(env, "serve", "--status").returncode == 0
    assert funes(env, "serve", "--stop").returncode == 0
    assert not Path(info["socket"]).exists()


def test_durations_parse_and_refuse_in_one_line() -> None:
    assert wire.parse_duration("90") == 90
    assert wire.parse_duration("30m") == 1800
    assert wire.parse_duration("2h") == 7200
    with pytest.raises(ValueError, match="is not a duration"):
        wire.parse_duration("soon")


def test_the_warm_up_freezes_the_warm_heap_after_collecting_its_garbage(home: dict[str, str]) -> None:
    """Full collections then skip the service's long-lived objects (a 2,000-turn page it hosts
    triggered four of ~0.5 s each unfrozen); garbage made before is collected, not pinned."""
    import gc
    import weakref

    from funes_core.home import Home
    from funes_core.serve.service import Service

    class Cycle:
        me: Any

    garbage = Cycle()
    garbage.me = garbage
    gone = weakref.ref(garbage)
    del garbage
    gc.unfreeze()
    try:
        Service(Home.resolve(home["FUNES_HOME"]), idle=0).warm()
        assert gc.get_freeze_count() > 0
        assert gone() is None
    finally:
        gc.unfreeze()

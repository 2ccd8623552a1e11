"""`funes mcp --transport streamable-http`: loopback binds only, Host and Origin checked on every one.

The HTTP transport has no authentication yet, so ``--bind 0.0.0.0`` (or a LAN address) would put
the memory on the network, and the SDK switched its DNS-rebinding checks off for any host but
127.0.0.1, ::1 and localhost (``127.0.0.2`` too). ``[::1]:PORT`` failed to bind.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from funes_core.faces.mcp import BindError, http_bind

FUNES = [sys.executable, "-m", "funes_core"]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_mcp_front import INIT as INITIALIZE  # noqa: E402

REFUSED = [
    "0.0.0.0:1942",
    "127.0.0.2:1942",
    "192.168.1.5:1942",
    "[::]:1942",
    "[::ffff:127.0.0.1]:1942",
    "example.com:1942",
    ":1942",
    "",
    "::1:1942",
    "127.0.0.1:0",
    "127.0.0.1:65536",
    "127.0.0.1:-1",
    "127.0.0.1:http",
    "127.0.0.1:1942:1",
    "localhost\n:1942",
    "x" * 5000,
]


@pytest.mark.parametrize("bind", REFUSED, ids=lambda b: repr(b[:30]))
def test_a_bind_that_is_not_loopback_or_not_a_port_is_refused_in_one_line(bind: str) -> None:
    with pytest.raises(BindError) as err:
        http_bind(bind)
    message = str(err.value)
    assert message.startswith("--bind ") and "\n" not in message and len(message) < 250


@pytest.mark.parametrize(
    ("bind", "host", "port"),
    [("127.0.0.1:8123", "127.0.0.1", 8123), ("[::1]:8123", "::1", 8123), ("localhost", "localhost", 1942)],
)
def test_every_loopback_bind_keeps_the_host_and_origin_checks(bind: str, host: str, port: int) -> None:
    got_host, got_port, security = http_bind(bind)
    assert (got_host, got_port) == (host, port)
    assert security.enable_dns_rebinding_protection
    names = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    assert security.allowed_hosts == names
    assert security.allowed_origins == [f"http://{n}" for n in names]


@pytest.mark.slow
@pytest.mark.parametrize("bind", ["0.0.0.0", "127.0.0.2"])
def test_the_cli_refuses_a_public_bind_before_serving(funes_home: object, bind: str) -> None:
    """Before, these started an unauthenticated server with the checks off (the timeout caught it)."""
    proc = subprocess.run(
        [*FUNES, "mcp", "--transport", "streamable-http", "--bind", f"{bind}:{_free_port()}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "not a loopback address" in proc.stderr
    assert "Traceback" not in proc.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, int]]:
    """``funes mcp`` over HTTP on the loopback name in ``request.param``; yields (URL host, port)."""
    name: str = request.param
    port = _free_port()
    bind = f"[{name}]:{port}" if ":" in name else f"{name}:{port}"
    env = {**os.environ, "FUNES_HOME": str(tmp_path / "home"), "FUNES_EMBEDDER": "hash"}
    log = tmp_path / "server.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [*FUNES, "mcp", "--transport", "streamable-http", "--bind", bind],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    family = socket.AF_INET6 if ":" in name else socket.AF_INET
    address = "::1" if ":" in name else "127.0.0.1"
    deadline = time.monotonic() + 180
    try:
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"the server exited: {log.read_text(errors='replace')}")
            with socket.socket(family) as probe:
                if probe.connect_ex((address, port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise AssertionError(f"--bind {bind} never accepted a connection")
            time.sleep(0.1)
        yield (f"[{name}]" if ":" in name else name), port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _post(url_host: str, port: int, **headers: str) -> httpx.Response:
    return httpx.post(
        f"http://{url_host}:{port}/mcp",
        content=json.dumps(INITIALIZE),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **headers,
        },
        timeout=120,
    )


@pytest.mark.slow
@pytest.mark.parametrize("server", ["127.0.0.1", "::1", "localhost"], indirect=True)
def test_every_loopback_bind_serves_and_checks_host_and_origin(server: tuple[str, int]) -> None:
    url_host, port = server
    assert _post(url_host, port).status_code == 200
    assert _post(url_host, port, origin=f"http://localhost:{port}").status_code == 200
    assert _post(url_host, port, host=f"evil.example:{port}").status_code == 421
    assert _post(url_host, port, host=f"127.0.0.1:{port + 1}").status_code == 421
    assert _post(url_host, port, origin="http://evil.example").status_code == 403

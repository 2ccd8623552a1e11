"""`funes ui` hosted by the memory service: the guard, the service's own memory, the viewer's lifetime.

Real processes, as in test_serve.py (whose helpers and ``home`` fixture these tests share): ``funes
ui`` as a subprocess that reports, as it exits, the modules it loaded; the service it starts
detached; the viewer spoken to over HTTP with the standard library. The browser flows of the
viewer itself are in test_ui_browser.py (served in-process there: ``--no-service``).
"""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_serve
from test_serve import ARM, FUNES, HEAVY, PATIENCE, root_of, running, service_pid, wait_for

from funes_core.serve import client, wire

#: test_serve's fixture: a home holding the example sessions (hash embedder), and its environment.
home = test_serve.home

#: ``funes ui --no-open`` that reports, as it exits, the modules it loaded (one line on stderr).
UI = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
    "from funes_core.faces.cli.main import main\n"
    "sys.argv = ['funes', 'ui', '--no-open', *sys.argv[1:]]\n"
    "main()\n"
)


class UiProcess:
    """``funes ui`` as a subprocess, once it printed its address (and the line after it)."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", UI, *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first.startswith("funes ui: http://127.0.0.1:"):
            self.proc.kill()
            _, err = self.proc.communicate(timeout=PATIENCE)
            raise AssertionError(f"funes ui said {first!r}, stderr: {err}")
        self.url = first.removeprefix("funes ui: ").strip()
        self.second = self.proc.stdout.readline()
        parts = urlsplit(self.url)
        self.port = int(parts.port or 0)
        self.token = parts.query.removeprefix("token=")

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C: the exit status and stderr."""
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=PATIENCE)
        return self.proc.returncode, err

    def end(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
        _, err = self.proc.communicate(timeout=PATIENCE)
        return err


def modules(stderr: str) -> set[str]:
    return {m.split(".")[0] for m in json.loads(stderr.split("MODULES ", 1)[1].splitlines()[0])}


class Answer(NamedTuple):
    status: int
    headers: http.client.HTTPMessage
    text: str

    def header(self, name: str) -> str:
        return self.headers.get(name, "")


def get(port: int, path: str, *, host: str | None = None, cookie: str | None = None) -> Answer:
    """One GET to the viewer (no redirect followed)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=PATIENCE)
    headers = {"Host": host or f"127.0.0.1:{port}"}
    if cookie:
        headers["Cookie"] = cookie
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        return Answer(response.status, response.headers, response.read().decode("utf-8", "replace"))
    finally:
        conn.close()


def closed(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:``port`` any more."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except OSError:
        return True
    return False


@pytest.mark.slow
def test_the_service_hosts_the_viewer_behind_its_guard_over_its_own_memory(home: dict[str, str]) -> None:
    """``funes ui`` starts the service, which answers the guarded pages (token to a strict
    cookie, wrong Host and no cookie refused) with the memory it holds: the ``funes ui`` process
    never loads lancedb, pyarrow, ONNX Runtime, numpy, nor the web server (nor typer: the fast
    path asked). Ctrl-C closes the viewer before ``funes ui`` exits, and leaves the service running."""
    assert not running(home)
    ui = UiProcess(home)
    pid = service_pid(home)
    assert pid is not None and pid != ui.proc.pid
    assert f"served by the memory service (pid {pid})" in ui.second

    first = get(ui.port, f"/?token={ui.token}")
    assert first.status == 303 and first.header("location") == "/"
    set_cookie = first.header("set-cookie")
    assert "httponly" in set_cookie.lower() and "samesite=strict" in set_cookie.lower()
    cookie = set_cookie.split(";", 1)[0]
    timeline = get(ui.port, "/", cookie=cookie)
    assert timeline.status == 200 and ARM in timeline.text
    assert "script-src 'self'" in timeline.header("content-security-policy")
    hits = get(ui.port, "/search/hits?q=why+did+the+ARM+build+break", cookie=cookie)
    assert hits.status == 200 and ARM in hits.text
    assert get(ui.port, "/", host=f"evil.example:{ui.port}", cookie=cookie).status == 400
    assert get(ui.port, "/").status == 403
    assert get(ui.port, "/?token=not-the-token-of-this-start").status == 403

    code, err = ui.interrupt()
    assert code == 0, err
    assert closed(ui.port), "the viewer still answers after funes ui exited"
    loaded = sorted(modules(err) & {*HEAVY, "uvicorn", "starlette", "typer"})
    assert loaded == [], loaded
    assert running(home) and service_pid(home) == pid
    log = wire.run_paths(root_of(home)).log.read_text()
    assert "hosting a viewer" in log and "stopped the viewer" in log


@pytest.mark.slow
def test_a_killed_funes_ui_closes_its_viewer_and_a_new_one_gets_a_new_token(home: dict[str, str]) -> None:
    """Through the typer command this time (the fast path off): it has the service host it too."""
    ui = UiProcess({**home, "FUNES_CLI_FAST": "0"})
    assert "served by the memory service" in ui.second
    assert get(ui.port, f"/?token={ui.token}").status == 303
    ui.proc.kill()
    ui.end()
    wait_for(lambda: closed(ui.port), "the viewer of a killed funes ui to close")
    again = UiProcess(home)
    try:
        assert again.token != ui.token
        assert get(again.port, f"/?token={ui.token}").status == 403
        assert get(again.port, f"/?token={again.token}").status == 303
    finally:
        code, err = again.interrupt()
    assert code == 0, err


@pytest.mark.slow
def test_an_open_viewer_keeps_the_service_from_idling_out_and_a_stopped_service_ends_funes_ui(
    home: dict[str, str],
) -> None:
    """The viewer's connection is one of the service's clients: a service with a one-second idle
    exit stays while a viewer is open, and leaves once it is closed. ``funes serve --stop`` closes
    the viewer, and ``funes ui`` says so in one line and exits 1."""
    env = {**home, "FUNES_SERVE_IDLE": "1"}
    ui = UiProcess(env)
    conn = client.connect(root_of(env), "info", timeout=PATIENCE)
    conn.close()
    assert conn.reply["clients"] == 1
    time.sleep(3)  # three idle exits' worth: not a timing assertion, the service must simply be there
    assert running(env) and get(ui.port, f"/?token={ui.token}").status == 303
    code, err = ui.interrupt()
    assert code == 0, err
    wait_for(lambda: not running(env), "the service to exit idle once the viewer closed")

    ui = UiProcess(home)
    stopped = subprocess.run([FUNES, "serve", "--stop"], env=home, capture_output=True, timeout=PATIENCE)
    assert stopped.returncode == 0, stopped.stderr
    _, err = ui.proc.communicate(timeout=PATIENCE)
    said = [line for line in err.splitlines() if not line.startswith("MODULES ")]
    assert ui.proc.returncode == 1 and said == [
        "funes ui: the memory service stopped, and the viewer with it"
    ]
    assert closed(ui.port)


@pytest.mark.slow
def test_a_memory_the_service_cannot_read_is_refused_in_one_line(home: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", UI, "--memory", "no-such-remote"],
        env=home,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
    )
    lines = [line for line in result.stderr.splitlines() if not line.startswith("MODULES ")]
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert lines[0].startswith("funes ui: ") and "no-such-remote" in lines[0]
    assert running(home), "the service was asked (and keeps running)"


@pytest.mark.slow
def test_funes_ui_serves_in_process_with_one_line_when_the_service_cannot_start(home: dict[str, str]) -> None:
    """A socket path that is not a socket: the service cannot start, ``funes ui`` says so in one
    line and serves the viewer itself; ``--no-service`` serves it itself without a word."""
    paths = wire.run_paths(root_of(home))
    paths.run.mkdir(mode=0o700, exist_ok=True)
    paths.socket.write_text("not a socket")
    ui = UiProcess(home)
    try:
        assert "served by" not in ui.second
        assert get(ui.port, f"/?token={ui.token}").status == 303
    finally:
        err = ui.end()
    said = [line for line in err.splitlines() if line.startswith("funes ui: ")]
    assert len(said) == 1, err
    assert "is not a socket" in said[0] and said[0].endswith("serving the viewer from this process")
    assert not running(home)

    paths.socket.unlink()
    quiet = UiProcess(home, "--no-service")
    try:
        assert get(quiet.port, f"/?token={quiet.token}").status == 303
    finally:
        code, err = quiet.interrupt()
    assert code == 0 and [line for line in err.splitlines() if not line.startswith("MODULES ")] == [], err
    assert "lancedb" in modules(err)
    assert not running(home), "--no-service starts no service"

"""Team mode, ``funes serve --http``: a remote memory served over HTTP, against moto's S3 on loopback.

The replicas are real ``funes serve --http`` processes; clients are plain HTTP (httpx, and a raw
socket for what httpx will not send) and the official MCP client (``mcp.client.streamable_http``).
The tests of the pieces (tokens file, rate limit, query check, bind refusal) need no server.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.home import Home
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import HashEmbedder
from funes_core.serve.http import REFUSALS_LOGGED_PER_MINUTE, Guard, RateLimiter, _names, token_in_query
from funes_core.serve.tokens import (
    TokenFileError,
    TokenTable,
    Verdict,
    add_token,
    digest,
    load_tokens,
    revoke_token,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from s3server import CREDENTIALS, Bucket, S3Server, free_port, start_server

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sessions"
FUNES = [sys.executable, "-m", "funes_core"]


# ----------------------------------------------------------------------------- the pieces


def test_a_token_file_holds_hashes_only_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    token = add_token(path, "alice")
    assert token.startswith("funes_") and len(token) > 40
    text = path.read_text()
    assert token not in text and digest(token) in text
    assert path.stat().st_mode & 0o777 == 0o600
    table = TokenTable(path)
    verdict, entry = table.check(token)
    assert verdict is Verdict.OK and entry is not None and entry.name == "alice"
    assert table.check(token + "x")[0] is Verdict.UNKNOWN
    revoke_token(path, "alice")
    assert load_tokens(path)[0].revoked is not None
    time.sleep(1.1)  # the table looks at the file at most once a second
    assert table.check(token)[0] is Verdict.REVOKED
    with pytest.raises(TokenFileError, match="exists already"):
        add_token(path, "alice")


def test_a_loose_or_malformed_tokens_file_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    add_token(path, "alice")
    path.chmod(0o644)
    with pytest.raises(TokenFileError, match="chmod 600") as err:
        load_tokens(path)
    assert "\n" not in str(err.value)
    path.write_text('{"version": 1, "tokens": [{"name": "a", "sha256": "short"}]}')
    path.chmod(0o600)
    with pytest.raises(TokenFileError, match="entry 1"):
        load_tokens(path)


def test_the_rate_limit_is_a_bucket_per_token() -> None:
    limiter = RateLimiter(60)  # one a second, bursts of 60
    assert all(limiter.take("a", now=100.0) is None for _ in range(60))
    wait = limiter.take("a", now=100.0)
    assert wait is not None and 0.9 < wait <= 1.0
    assert limiter.take("b", now=100.0) is None  # another token has its own bucket
    assert limiter.take("a", now=101.0) is None  # refilled
    assert limiter.take("c", now=0.0, per_minute=2) is None
    assert limiter.take("c", now=0.0, per_minute=2) is None
    assert limiter.take("c", now=0.0, per_minute=2) == pytest.approx(30.0)
    assert RateLimiter(0).take("a") is None


@pytest.mark.parametrize(
    "query",
    ["access_token=abc", "Token=abc", "api_key=1", "q=funes_abc", "x=1&auth=2", "q=%66unes_abc"],
)
def test_a_token_in_the_query_is_seen(query: str) -> None:
    assert token_in_query(query.encode(), frozenset())


def test_a_known_token_under_any_name_is_seen_and_ordinary_queries_pass() -> None:
    assert token_in_query(b"q=s3cret", frozenset({digest("s3cret")}))
    assert not token_in_query(b"q=sqlite+wal&k=3", frozenset({digest("s3cret")}))
    assert not token_in_query(b"", frozenset())


def test_allowed_hosts_are_each_name_on_the_port_and_bare() -> None:
    assert _names(8080, ["funes.example", "lb:443", "::1", "[::1]"]) == [
        "funes.example:8080",
        "funes.example",
        "lb:443",
        "[::1]:8080",
        "[::1]",
    ]


def _cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(), list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("bind", ["0.0.0.0:8080", "192.168.1.5:8080", "[::]:8080", "funes.example:8080"])
def test_a_bind_others_can_reach_is_refused_without_tokens(funes_home: Home, bind: str) -> None:
    code, _, err = _cli("serve", "--http", bind, "--memory", "team")
    assert code == 2
    assert err.count("\n") == 1 and "no token is configured" in err and "funes serve token add" in err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--http", "127.0.0.1:99999", "--memory", "team"], "port must be"),
        (["--http", "not a host:80", "--memory", "team"], "not an IP address or a host name"),
        (["--http", "127.0.0.1:8080"], "needs --memory"),
        (["--http", "127.0.0.1:8080", "--memory", "local"], "serves a remote"),
        (["--http", "127.0.0.1:8080", "--memory", "nosuch"], "unknown memory"),
        (["--http", "127.0.0.1:8080", "--memory", "x", "--refresh", "0"], "above 0"),
        (["--http", "0.0.0.0:8080", "--memory", "x", "--tokens", "{tokens}"], "needs --allow-host"),
    ],
)
def test_bad_team_mode_arguments_are_one_line(funes_home: Home, args: list[str], fragment: str) -> None:
    tokens = funes_home.root.parent / "tokens.json"
    add_token(tokens, "alice")
    code, _, err = _cli("serve", *[a.replace("{tokens}", str(tokens)) for a in args])
    assert code == 2 and fragment in err and err.count("\n") == 1, err


def test_token_commands_print_the_token_once_and_list_names_only(funes_home: Home) -> None:
    code, token, _ = _cli("serve", "token", "add", "alice")
    assert code == 0 and token.strip().startswith("funes_")
    code, listed, _ = _cli("serve", "token", "list", "--json")
    assert code == 0 and json.loads(listed)[0]["name"] == "alice" and token.strip() not in listed
    assert "sha256" not in listed
    code, out, _ = _cli("serve", "token", "revoke", "alice")
    assert code == 0 and "revoked" in out
    code, _, err = _cli("serve", "token", "revoke", "bob")
    assert code == 1 and "no token named 'bob'" in err


# ----------------------------------------------------------------------------- replicas


@dataclass
class Replica:
    proc: subprocess.Popen[bytes]
    port: int
    home: Path
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Team:
    s3: S3Server
    bucket: Bucket
    publisher: Home
    env: dict[str, str]
    root: Path

    def options(self) -> list[str]:
        return [x for k, v in self.bucket.options().items() for x in ("--option", f"{k}={v}")]

    def home_env(self, home: Path) -> dict[str, str]:
        return {**self.env, "FUNES_HOME": str(home)}

    def replica_home(self, name: str) -> Path:
        home = self.root / name
        code, _, err = _cli(
            "remote", "add", "team", self.bucket.uri(), *self.options(), env=self.home_env(home)
        )
        assert code == 0, err
        return home

    def start(self, home: Path, *extra: str) -> Replica:
        port = free_port()
        log = home.parent / f"{home.name}-{port}.log"
        with log.open("wb") as sink:
            proc = subprocess.Popen(
                [*FUNES, "serve", "--http", f"127.0.0.1:{port}", "--memory", "team", *extra],
                env={**self.home_env(home), "FUNES_LOG": "info"},
                stdout=subprocess.DEVNULL,
                stderr=sink,
            )
        replica = Replica(proc, port, home, log)
        deadline = time.monotonic() + 240
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"the replica exited: {log.read_text(errors='replace')}")
            try:
                if httpx.get(f"{replica.url}/healthz", timeout=2).status_code == 200:
                    return replica
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                replica.stop()
                raise AssertionError(f"the replica never answered: {log.read_text(errors='replace')}")
            time.sleep(0.2)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    """A bucket on moto holding the example sessions, pushed from a publisher's home."""
    root = tmp_path_factory.mktemp("team")
    s3 = start_server(root)
    env = {**CREDENTIALS, "FUNES_EMBEDDER": "hash", "FUNES_STATS": "off"}
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        publisher = Home(root / "publisher")
        mp.setenv("FUNES_HOME", str(publisher.root))
        run_index(IndexOptions(path=EXAMPLES), home=publisher, embedder=HashEmbedder(), warn=lambda _m: None)
        team = Team(s3, s3.new_bucket(), publisher, env, root)
        code, _, err = _cli("remote", "add", "team", team.bucket.uri(), *team.options())
        assert code == 0, err
        code, _, err = _cli("push", "team")
        assert code == 0, err
        yield team
    s3.stop()


@dataclass
class Served:
    replica: Replica
    tokens: dict[str, str]

    def post(
        self, path: str, body: object = None, *, token: str | None = "alice", **headers: str
    ) -> httpx.Response:
        if token is not None:
            headers.setdefault("authorization", f"Bearer {self.tokens.get(token, token)}")
        return httpx.post(
            f"{self.replica.url}{path}", json=body if body is not None else {}, headers=headers, timeout=60
        )


@pytest.fixture(scope="module")
def served(team: Team) -> Iterator[Served]:
    """One replica, with tokens alice, bob (revoked), slow (2 requests a minute); short timeouts."""
    home = team.replica_home("replica-a")
    env = team.home_env(home)
    tokens = {}
    for name, extra in (("alice", []), ("bob", []), ("slow", ["--rate", "2"])):
        code, out, err = _cli("serve", "token", "add", name, *extra, env=env)
        assert code == 0, err
        tokens[name] = out.strip()
    assert _cli("serve", "token", "revoke", "bob", env=env)[0] == 0
    replica = team.start(home, "--header-timeout", "2s", "--body-timeout", "2s", "--max-body", "65536")
    yield Served(replica, tokens)
    replica.stop()


slow = pytest.mark.slow


@slow
def test_every_read_verb_answers_json(served: Served) -> None:
    hits = served.post("/v1/recall", {"query": "sqlite wal checkpoint", "k": 2})
    assert hits.status_code == 200, hits.text
    found = hits.json()
    assert found["memory"] == "team" and found["params"]["k"] == 2 and "SQLite" in hits.text
    sessions = served.post("/v1/sessions", {})
    assert sessions.status_code == 200 and "3f2a9c1e" in sessions.text
    sid = "3f2a9c1e-5b7d-4e21-9a60-1c8e2f4d7b90"
    for verb, body in (
        ("get", {"session_id": sid, "from": 0, "to": 1}),
        ("scan", {"needle": "WAL", "session_id": sid}),
        ("sketch", {"session_id": sid}),
        ("status", {}),
    ):
        reply = served.post(f"/v1/{verb}", body)
        assert reply.status_code == 200, (verb, reply.text)
        json.loads(reply.text)
    status = httpx.get(
        f"{served.replica.url}/v1/status", headers={"authorization": f"Bearer {served.tokens['alice']}"}
    ).json()
    assert status["memory"] == "team" and status["chunks"] > 0
    assert status["service"]["refresh_seconds"] == 30


@slow
def test_missing_and_unknown_tokens_are_401_and_a_revoked_one_403(served: Served) -> None:
    missing = served.post("/v1/recall", {"query": "x"}, token=None)
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    unknown = served.post("/v1/recall", {"query": "x"}, token="funes_notatoken")
    assert unknown.status_code == 401 and "invalid_token" in unknown.headers["www-authenticate"]
    malformed = served.post("/v1/recall", {"query": "x"}, token=None, authorization="Basic YTpi")
    assert malformed.status_code == 401
    revoked = served.post("/v1/recall", {"query": "x"}, token="bob")
    assert revoked.status_code == 403 and "revoked" in revoked.json()["error"]
    assert served.post("/v1/recall", {"query": "x"}).status_code == 200


@slow
def test_a_token_revoked_while_the_replica_runs_is_refused_without_a_restart(served: Served) -> None:
    env = {"FUNES_HOME": str(served.replica.home)}
    code, token, err = _cli("serve", "token", "add", "carol", env=env)
    assert code == 0, err
    deadline = time.monotonic() + 10  # the replica looks at the file at most once a second
    while served.post("/v1/sessions", {}, token=token.strip()).status_code != 200:
        assert time.monotonic() < deadline, "a token added while it runs was never accepted"
        time.sleep(0.3)
    assert _cli("serve", "token", "revoke", "carol", env=env)[0] == 0
    while (status := served.post("/v1/sessions", {}, token=token.strip()).status_code) == 200:
        assert time.monotonic() < deadline + 10, "a revoked token was still served"
        time.sleep(0.3)
    assert status == 403


@slow
def test_forbidden_actions_are_403(served: Served) -> None:
    assert served.post("/v1/push", {}).status_code == 403
    assert served.post("/v1/scrub", {}).status_code == 403
    other = served.post("/v1/recall", {"query": "x", "memory": "local"})
    assert other.status_code == 403 and "'team' only" in other.json()["error"]
    put = httpx.put(
        f"{served.replica.url}/v1/recall", headers={"authorization": f"Bearer {served.tokens['alice']}"}
    )
    assert put.status_code == 403
    assert served.post("/v1/nosuch", {}).status_code == 404


@slow
def test_a_token_in_the_query_is_refused_and_never_logged(served: Served) -> None:
    token = served.tokens["alice"]
    for query in (f"access_token={token}", f"q={token}", "token=whatever"):
        reply = served.post(f"/v1/recall?{query}", {"query": "x"})
        assert reply.status_code == 400 and "Authorization: Bearer" in reply.json()["error"]
    time.sleep(0.5)
    log = served.replica.log.read_text(errors="replace")
    assert "POST /v1/recall 400" in log  # the refusal is logged, path only
    assert token not in log and "access_token" not in log and "whatever" not in log


@slow
def test_a_token_past_its_rate_gets_429_with_retry_after(served: Served) -> None:
    assert served.post("/v1/sessions", {}, token="slow").status_code == 200
    assert served.post("/v1/sessions", {}, token="slow").status_code == 200
    limited = served.post("/v1/sessions", {}, token="slow")
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["retry-after"]) <= 30
    assert served.post("/v1/sessions", {}).status_code == 200  # alice has her own bucket


@slow
def test_host_and_origin_are_checked(served: Served) -> None:
    port = served.replica.port
    assert served.post("/v1/sessions", {}, host=f"localhost:{port}").status_code == 200
    assert served.post("/v1/sessions", {}, host=f"evil.example:{port}").status_code == 421
    assert served.post("/v1/sessions", {}, host="127.0.0.1:1").status_code == 421
    assert served.post("/v1/sessions", {}, origin="http://evil.example").status_code == 403
    assert served.post("/v1/sessions", {}, origin=f"http://127.0.0.1:{port}").status_code == 200
    # /mcp meets the same checks
    assert served.post("/mcp", {}, host=f"evil.example:{port}").status_code == 421


@slow
def test_a_body_over_the_limit_is_413_and_bad_bodies_are_400(served: Served) -> None:
    headers = {"authorization": f"Bearer {served.tokens['alice']}", "content-type": "application/json"}
    url = f"{served.replica.url}/v1/recall"
    big = httpx.post(url, content=json.dumps({"query": "x" * 70_000}), headers=headers, timeout=60)
    assert big.status_code == 413

    def chunks() -> Iterator[bytes]:  # no content-length: the limit holds on what arrives
        for _ in range(80):
            yield b"x" * 1024

    assert httpx.post(url, content=chunks(), headers=headers, timeout=60).status_code == 413
    assert httpx.post(url, content=b"{not json", headers=headers, timeout=60).status_code == 400
    assert httpx.post(url, content=b"[1]", headers=headers, timeout=60).status_code == 400
    bad = served.post("/v1/recall", {"query": "x", "k": "many", "nosuch": 1})
    assert bad.status_code == 400 and "bad arguments" in bad.json()["error"]


def _raw(port: int, data: bytes, *, wait: float = 10.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(data)
        got = b""
        while chunk := sock.recv(4096):
            got += chunk
        return got


@slow
def test_malformed_http_gets_an_error_and_the_replica_keeps_serving(served: Served) -> None:
    port = served.replica.port
    assert _raw(port, b"\x16\x03\x01 not http at all\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert _raw(port, b"GET / HTTP/1.1\r\nHost: " + b"x" * 20_000 + b"\r\n\r\n").startswith(b"HTTP/1.1 4")
    assert _raw(port, b"GET / HTTP/1.1\r\nHost: " + b"x" * 10_000 + b"\r\n\r\n").startswith(b"HTTP/1.1 421")
    huge = (
        b"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port + b"X-Pad: " + b"y" * 17_000 + b"\r\n\r\n"
    )
    assert _raw(port, huge).startswith(b"HTTP/1.1 431")  # whole heads over 16 KiB too, not only slow ones
    long_path = served.post("/v1/" + "z" * 5_000, {})
    assert long_path.status_code in (403, 404)
    assert served.post("/v1/sessions", {}).status_code == 200
    # The SDK logs the refused Host verbatim: one short plain line, never the 10,000 bytes through
    # rich's highlighter (which held the event loop for over 10 s a request on a loaded machine).
    refused = [
        line for line in served.replica.log.read_text(errors="replace").splitlines() if "Invalid Host" in line
    ]
    assert any("more characters" in line for line in refused), refused
    assert all(len(line) < 1_000 for line in refused), refused
    assert all(len(line) < 1_000 for line in served.replica.log.read_text(errors="replace").splitlines())


def test_a_flood_of_refusals_is_logged_a_minute_s_worth_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import funes_core.serve.http as http

    clock = [1_000.0]
    monkeypatch.setattr(http.time, "monotonic", lambda: clock[0])
    lines: list[str] = []
    guard = Guard(
        None, security=None, tokens=None, limiter=RateLimiter(0), max_body=1, log=lines.append, verbose=False
    )
    allowed = [guard._may_log_refusal() for _ in range(REFUSALS_LOGGED_PER_MINUTE + 500)]
    assert allowed.count(True) == REFUSALS_LOGGED_PER_MINUTE and not any(allowed[REFUSALS_LOGGED_PER_MINUTE:])
    clock[0] += 60.0
    assert guard._may_log_refusal()
    assert lines == [f"500 refused request(s) not logged (over {REFUSALS_LOGGED_PER_MINUTE} a minute)"]


def test_a_long_log_message_is_cut_to_one_short_line() -> None:
    import logging

    from funes_core.faces.mcp import LOG_MESSAGE_LIMIT, _Shortened

    record = logging.LogRecord(
        "mcp", logging.WARNING, __file__, 1, "Invalid Host header: %s", ("x" * 20_000,), None
    )
    assert _Shortened().filter(record)
    message = record.getMessage()
    assert len(message) < LOG_MESSAGE_LIMIT + 40 and message.endswith(
        f"({20_021 - LOG_MESSAGE_LIMIT} more characters)"
    )
    short = logging.LogRecord(
        "mcp", logging.WARNING, __file__, 1, "Invalid Host header: %s", ("bad.example",), None
    )
    assert _Shortened().filter(short) and short.getMessage() == "Invalid Host header: bad.example"


@slow
def test_an_idle_kept_alive_connection_is_closed_without_an_unasked_408(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.replica.port), timeout=30) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % served.replica.port)
        got = b""
        while chunk := sock.recv(4096):  # the server closes once the header timeout (2 s) passes
            got += chunk
    assert got.startswith(b"HTTP/1.1 200") and got.count(b"HTTP/1.1") == 1, got


@slow
def test_slow_clients_are_cut_off_by_the_header_and_body_timeouts(served: Served) -> None:
    port = served.replica.port
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(b"POST /v1/sketch HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        got = b""
        for _ in range(40):  # a header line every 0.25 s: each byte would reset a keep-alive timer
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                break
            sock.settimeout(0.25)
            try:
                chunk = sock.recv(4096)
            except TimeoutError:
                continue
            if not chunk:
                break
            got += chunk
    assert got.startswith(b"HTTP/1.1 408"), got
    assert time.monotonic() - start < 8  # the header timeout is 2 s
    head = (
        b"POST /v1/recall HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
        b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
    ) % (port, served.tokens["alice"].encode())
    start = time.monotonic()
    assert _raw(port, head, wait=15).startswith(b"HTTP/1.1 408")
    assert time.monotonic() - start < 8  # the body timeout is 2 s
    assert served.post("/v1/sessions", {}).status_code == 200


@slow
def test_the_official_mcp_client_reads_the_remote_and_only_it(served: Served) -> None:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    url = f"{served.replica.url}/mcp"

    async def session(token: str) -> tuple[list[str], str, bool, str]:
        headers = {"authorization": f"Bearer {token}"}
        with anyio.fail_after(120):
            async with (
                create_mcp_http_client(headers=headers) as client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as mcp,
            ):
                await mcp.initialize()
                tools = [t.name for t in (await mcp.list_tools()).tools]
                hit = await mcp.call_tool("recall", {"query": "sqlite wal", "k": 2})
                local = await mcp.call_tool("recall", {"query": "sqlite wal", "memory": "local"})
                return (
                    tools,
                    "".join(getattr(c, "text", "") for c in hit.content),
                    local.is_error,
                    "".join(getattr(c, "text", "") for c in local.content),
                )

    tools, text, refused, why = anyio.run(session, served.tokens["alice"])
    assert tools[:6] == ["recall", "get", "sessions", "scan", "sketch", "status"]
    assert "--memory team" in text and "SQLite" in text
    assert refused and "'team' only" in why

    async def unauthorised(token: str) -> None:
        with anyio.fail_after(60):
            async with (
                create_mcp_http_client(headers={"authorization": f"Bearer {token}"}) as client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as mcp,
            ):
                await mcp.initialize()

    for token in ("funes_wrong", served.tokens["bob"]):
        with pytest.raises(Exception):  # noqa: B017 - the client reports the HTTP error its own way
            anyio.run(unauthorised, token)
    # plain HTTP on /mcp: the statuses themselves
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    accept = {"accept": "application/json, text/event-stream"}
    assert served.post("/mcp", init, token="funes_wrong", **accept).status_code == 401
    assert served.post("/mcp", init, token="bob", **accept).status_code == 403
    assert served.post("/mcp", init, **accept).status_code == 200


@slow
def test_a_push_reaches_every_replica_within_the_refresh_bound(team: Team) -> None:
    """Two replicas, nothing shared but the bucket; ``--refresh 2s``: both serve a push within it.

    A replica that re-listed only when asked, or only at start, would not: the second push below
    is made while both run, and neither is asked anything until the clock starts.
    """
    replicas = [team.start(team.replica_home(f"replica-{i}"), "--refresh", "2s") for i in ("r1", "r2")]
    try:
        from funes_core.turns.format import Block, Turn, write_turns_file

        marker = "zanzibarquokka"
        path = team.root / "fresh.funes.jsonl"
        turn = Turn(
            "fresh-1",
            "fresh-1-u0",
            0,
            "2026-04-02T10:00:00Z",
            "user",
            "claude",
            (Block("text", f"the {marker} bug"),),
        )
        write_turns_file(path, [turn])
        env = team.home_env(team.publisher.root)
        for replica in replicas:
            assert marker not in replica_sessions(replica)
        with pytest.MonkeyPatch.context() as mp:
            for key, value in env.items():
                mp.setenv(key, value)
            run_index(
                IndexOptions(path=path), home=team.publisher, embedder=HashEmbedder(), warn=lambda _m: None
            )
            code, _, err = _cli("push", "team")
            assert code == 0, err
        pushed = time.monotonic()
        seen: dict[int, float] = {}
        while len(seen) < 2 and time.monotonic() - pushed < 20:
            for replica in replicas:
                if replica.port not in seen and "fresh-1" in replica_sessions(replica):
                    seen[replica.port] = time.monotonic() - pushed
            time.sleep(0.2)
        assert len(seen) == 2, f"seen by {len(seen)} of 2 replicas after 20 s"
        # The bound: one refresh period (2 s) plus one sync; 8 s leaves room for a loaded machine.
        assert max(seen.values()) < 8, seen
    finally:
        for replica in replicas:
            replica.stop()


def replica_sessions(replica: Replica) -> str:
    reply = httpx.post(f"{replica.url}/v1/sessions", json={"limit": 50}, timeout=60)
    assert reply.status_code == 200, reply.text
    return reply.text

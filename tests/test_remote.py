"""Remotes on object storage, against a real S3-compatible server on 127.0.0.1 (moto's server mode).

Nothing is mocked: LanceDB and pyarrow talk HTTP to the server exactly as they would to AWS.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import stat
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.home import Home
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import HashEmbedder
from funes_core.share.memory import open_memory
from funes_core.store import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from s3server import Bucket, bucket_fixture, s3_fixture, start_server

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sessions"


s3 = s3_fixture
bucket = bucket_fixture


@pytest.fixture
def home(funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> Home:
    """A home whose memory holds the example sessions (hash embedder, so no model load)."""
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    monkeypatch.setenv("FUNES_REMOTE_REFRESH", "0")
    run_index(IndexOptions(path=EXAMPLES), home=funes_home, embedder=HashEmbedder(), warn=lambda _m: None)
    return funes_home


def cli(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(), list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


def add_remote(bucket: Bucket, name: str = "team", prefix: str = "mem", *extra: str) -> None:
    opts = [x for k, v in bucket.options().items() for x in ("--option", f"{k}={v}")]
    code, _, err = cli("remote", "add", name, bucket.uri(prefix), *opts, *extra)
    assert code == 0, err


def other_home(tmp_path: Path, sid: str, text: str) -> Home:
    """Another person's home whose memory holds one session with ``text``."""
    from funes_core.turns.format import Block, Turn, write_turns_file

    other = Home(tmp_path / f"home-{sid}")
    path = tmp_path / f"{sid}.funes.jsonl"
    turn = Turn(sid, f"{sid}-u0", 0, "2026-04-01T10:00:00Z", "user", "claude", (Block("text", text),))
    write_turns_file(path, [turn])
    report = run_index(IndexOptions(path=path), home=other, embedder=HashEmbedder(), warn=lambda _m: None)
    assert report.chunks == 1, report
    return other


def local_ids(home: Home) -> set[str]:
    return {r.id for r in open_store(home=home).scan()}


# ----------------------------------------------------------------------------- remotes file


def test_remote_add_list_remove_and_the_file(funes_home: Home) -> None:
    code, out, err = cli(
        "remote", "add", "team", "s3://bucket-1/funes/", "--option", "region=eu-west-1", "--taint", "external"
    )
    assert code == 0, err
    path = funes_home.root / "remotes.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert 'uri = "s3://bucket-1/funes"' in text and "region" in text and "secret" not in text.lower()
    code, out, _ = cli("remote", "list", "--json")
    doc = json.loads(out)
    assert doc["remotes"] == [
        {
            "name": "team",
            "uri": "s3://bucket-1/funes",
            "taint": "external",
            "options": {"region": "eu-west-1"},
        }
    ]
    assert cli("remote", "remove", "team")[0] == 0
    assert json.loads(cli("remote", "list", "--json")[1]) == {"remotes": []}


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["remote", "add", "team", "ftp://host/x"], "scheme must be one of"),
        (["remote", "add", "team", "relative/dir"], "absolute folder"),
        (["remote", "add", "team", "s3://"], "name a bucket"),
        (["remote", "add", "Team!", "s3://bkt/x"], "bad remote name"),
        (["remote", "add", "local", "s3://bkt/x"], "reserved"),
        (
            ["remote", "add", "team", "s3://bkt/x", "--option", "aws_secret_access_key=x"],
            "never stores credentials",
        ),
        (["remote", "add", "team", "s3://bkt/x", "--option", "colour=blue"], "unknown option"),
        (["remote", "add", "team", "s3://bkt/x", "--option", "novalue"], "KEY=VALUE"),
        (["remote", "add", "team", "s3://bkt/x", "--taint", "maybe"], "internal or external"),
        (["remote", "remove", "nope"], "unknown remote"),
        (["push", "nope"], "unknown remote"),
        (["recall", "x", "--memory", "nope"], "unknown memory"),
        (["recall", "x", "--memory", "s3://bkt/x"], "name a remote instead of a URI"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(funes_home: Home, args: list[str], fragment: str) -> None:
    before = sorted(p.name for p in funes_home.root.rglob("*")) if funes_home.root.exists() else []
    code, _, err = cli(*args)
    assert code != 0
    assert fragment in err and len(err.strip().splitlines()) == 1, err
    after = sorted(p.name for p in funes_home.root.rglob("*")) if funes_home.root.exists() else []
    assert [n for n in after if n != "remotes.toml"] == [n for n in before if n != "remotes.toml"]


#: Credentials of the shapes the probe put in option values and URIs (obviously fake).
PASSWORD = "hunter2Fake9x"
SESSION_TOKEN = "FwoGZXIvYXdzEFakeFakeFake0123456789abcdefSessionTok"
KEY_ID, SECRET = "AKIAFAKEFAKEFAKE1234", "fAkE0sEcReT1kEy2fAkE3sEcReT4kEy5fAkE6sEc"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["s3://bkt/x", "--option", f"endpoint=http://user:{PASSWORD}@127.0.0.1:9000"], "no credentials"),
        (
            [
                "s3://bkt/x",
                "--option",
                f"endpoint=https://s3.example.com/?X-Amz-Security-Token={SESSION_TOKEN}",
            ],
            "no query",
        ),
        (
            ["s3://bkt/x", "--option", f"dynamodb_endpoint=http://u:{PASSWORD}@127.0.0.1:8000"],
            "no credentials",
        ),
        (["s3://bkt/x", "--option", "endpoint=file:///etc/passwd"], "http:// or https://"),
        (["s3://bkt/x", "--option", "endpoint=not a url"], "http:// or https://"),
        (["s3://bkt/x", "--option", "endpoint=http://127.0.0.1:99999"], "http:// or https://"),
        (["s3://bkt/x", "--option", "timeout=-1"], "a duration"),
        (["s3://bkt/x", "--option", "timeout=0s"], "a duration"),
        (["s3://bkt/x", "--option", "connect_timeout=forever"], "a duration"),
        (["s3://bkt/x", "--option", "allow_http=maybe"], "true or false"),
        (["s3://bkt/x", "--option", "region=eu west 1"], "bad option 'region'"),
        (["s3://bkt/x", "--option", f"region={SECRET}"], "bad option 'region'"),
        (["s3://bkt/x", "--option", f"region=ghp_{SECRET[:36]}"], "looks like a credential"),
        (["s3://bkt/x", "--option", f"account_name={SECRET}"], "bad option 'account_name'"),
        ([f"s3://{KEY_ID}:{SECRET}@bkt/x"], "no credentials in the URI"),
        ([f"gs://{KEY_ID}:{SECRET}@bkt/x"], "no credentials in the URI"),
        ([f"s3+ddb://bkt/x?ddbTableName=t&X-Amz-Security-Token={SESSION_TOKEN}"], "ddbTableName"),
        ([f"ftp://{KEY_ID}:{SECRET}@host/x"], "scheme must be one of"),
        ([f"s3://bkt/x?X-Amz-Security-Token={SESSION_TOKEN}"], "no query or fragment"),
        ([f"s3://bkt/{'x' * 5000}"], "at most"),
    ],
)
def test_credentials_in_option_values_and_uris_are_refused_without_echoing_them(
    funes_home: Home, args: list[str], fragment: str
) -> None:
    code, out, err = cli("remote", "add", "team", *args)
    assert code == 1, out
    assert fragment in err and len(err.strip().splitlines()) == 1, err
    assert len(err) < 300, err
    for secret in (PASSWORD, SESSION_TOKEN, SECRET):
        assert secret not in err
    assert not (funes_home.root / "remotes.toml").exists()


def test_good_option_values_are_kept_normalised(funes_home: Home) -> None:
    code, _, err = cli(
        "remote", "add", "team", "s3://bkt/x",
        "-o", "endpoint=https://s3.example.com:9000/base", "-o", "allow_http=TRUE",
        "-o", "timeout=30s", "-o", "connect_timeout=500ms", "-o", "region=auto",
        "-o", "dynamodb_endpoint=http://127.0.0.1:8000",
    )  # fmt: skip
    assert code == 0, err
    (listed,) = json.loads(cli("remote", "list", "--json")[1])["remotes"]
    assert listed["options"] == {
        "allow_http": "true",
        "connect_timeout": "500ms",
        "dynamodb_endpoint": "http://127.0.0.1:8000",
        "endpoint": "https://s3.example.com:9000/base",
        "region": "auto",
        "timeout": "30s",
    }


def test_a_remotes_file_holding_credentials_is_refused_without_printing_them(funes_home: Home) -> None:
    """An older funes stored ``endpoint=http://user:pass@…``: ``remote list`` must not print it back."""
    funes_home.ensure()
    (funes_home.root / "remotes.toml").write_text(
        'version = 1\n[remotes.team]\nuri = "s3://bkt/x"\n'
        f'[remotes.team.options]\nendpoint = "http://user:{PASSWORD}@127.0.0.1:9000"\n'
    )
    for args in (["remote", "list"], ["remote", "list", "--json"], ["push", "team"]):
        code, out, err = cli(*args)
        assert code == 1 and "no credentials" in err and len(err.strip().splitlines()) == 1, err
        assert PASSWORD not in out + err


# ----------------------------------------------------------------------------- push and read


def test_push_is_idempotent_and_the_remote_reads_like_local(home: Home, bucket: Bucket) -> None:
    add_remote(bucket)
    code, out, err = cli("push", "team")
    assert code == 0, err
    n = len(local_ids(home))
    assert f"published {n} chunk(s), 0 already there" in out
    code, out, _ = cli("push", "team")
    assert code == 0 and f"published 0 chunk(s), {n} already there" in out
    # The bucket holds a Lance dataset whose ids are exactly the local ones (no duplicates).
    remote = open_memory("team", home=home)
    ids = [r.id for r in remote.scan()]
    assert sorted(ids) == sorted(local_ids(home))
    code, local_text, _ = cli("recall", "sqlite wal checkpoint", "-k", "3", "--memory", "local")
    code2, remote_text, _ = cli("recall", "sqlite wal checkpoint", "-k", "3", "--memory", "team")
    assert code == code2 == 0
    assert remote_text.replace("--memory team", "--memory X") == local_text.replace(
        f"--memory {home.memory_dir}", "--memory X"
    )
    # The → get hint works as printed.
    hint = next(line for line in remote_text.splitlines() if "→ get" in line).split("→ ", 1)[1].split()
    code, got, err = cli(*hint)
    assert code == 0, err
    assert "turn" in got or "seq" in got
    for verb in (["sessions"], ["status"]):
        code, _, err = cli(*verb, "--memory", "team")
        assert code == 0, err


def test_the_mirror_holds_only_what_the_newest_version_reads(
    home: Home, bucket: Bucket, tmp_path: Path
) -> None:
    """Small batches leave superseded fragments and versions in the bucket (the grace period); the
    mirror copies the newest version's files only, keeps the version it showed for one refresh
    more, never downloads a pruned file again, and reads like the local memory."""
    from funes_core.share.mirror import mirror_dir, sync_mirror
    from funes_core.share.push import push
    from funes_core.share.remotes import load_remotes

    add_remote(bucket)
    assert cli("push", "team", "--batch", "20", "--reindex")[0] == 0
    prefix = "mem/chunks.lance/"
    in_bucket = {key[len(prefix) :]: len(data) for key, data in bucket.objects() if key.startswith(prefix)}
    assert sum(k.startswith("_versions/") for k in in_bucket) > 3  # positive control: old versions

    def mirrored() -> dict[str, int]:
        root = mirror_dir(home, "team") / "chunks.lance"
        return {p.relative_to(root).as_posix(): p.stat().st_size for p in root.rglob("*") if p.is_file()}

    code, remote_text, err = cli("recall", "sqlite wal checkpoint", "-k", "3", "--memory", "team")
    assert code == 0, err
    copy = mirrored()
    assert set(copy) < set(in_bucket) and all(in_bucket[k] == n for k, n in copy.items())
    assert [k for k in copy if k.startswith("_versions/")] == [
        min(k for k in in_bucket if k.startswith("_v"))
    ]
    assert sum(copy.values()) < 0.8 * sum(in_bucket.values())
    local_text = cli("recall", "sqlite wal checkpoint", "-k", "3", "--memory", "local")[1]
    assert remote_text.replace("--memory team", "--memory X") == local_text.replace(
        f"--memory {home.memory_dir}", "--memory X"
    )
    remote = load_remotes(home)["team"]
    assert sync_mirror(remote, home, force=True).downloaded == 0  # pruned files stay pruned
    # Another machine pushes: the mirror moves to the new version and keeps the one it showed...
    push(remote, other_home(tmp_path, "other", "a turn from another machine"), yes=True)
    sync_mirror(remote, home, force=True)
    assert sum(k.startswith("_versions/") for k in mirrored()) == 2
    # ...for one refresh only.
    sync_mirror(remote, home, force=True)
    assert sum(k.startswith("_versions/") for k in mirrored()) == 1
    code, out, _ = cli("recall", "a turn from another machine", "--memory", "team")
    assert code == 0 and "a turn from another machine" in out


def test_multi_memory_recall_ranks_one_list_naming_each_hits_memory(
    home: Home, bucket: Bucket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The remote holds another person's memory: a different session, pushed from another home.
    other = other_home(tmp_path, "other-session-1", "zebrafish incubator thermostat calibration notes")
    add_remote(bucket)
    monkeypatch.setenv("FUNES_HOME", str(other.root))
    add_remote(bucket)
    assert cli("push", "team", "--yes")[0] == 0
    monkeypatch.setenv("FUNES_HOME", str(home.root))
    code, out, err = cli(
        "recall", "zebrafish thermostat sqlite", "-k", "4", "--memory", "local,team", "--json"
    )
    assert code == 0, err
    hits = json.loads(out)["hits"]
    memories = {h["memory"] for h in hits}
    assert memories == {"local", "team"}
    for h in hits:
        assert h["get"].endswith(f"--memory {h['memory']}")
    code, text, _ = cli("recall", "zebrafish thermostat", "-k", "4", "--memory", "local,team")
    assert "memory=team" in text and "--memory team" in text
    # The remote's hit's hint reads the remote.
    line = next(ln for ln in text.splitlines() if "→ get other-session-1" in ln)
    code, got, err = cli(*line.split("→ ", 1)[1].split())
    assert code == 0 and "zebrafish" in got, err


def test_external_taint_marks_every_remote_passage(home: Home, bucket: Bucket) -> None:
    add_remote(bucket, "theirs", "mem", "--taint", "external")
    assert cli("push", "theirs")[0] == 0
    code, text, _ = cli("recall", "sqlite", "-k", "2", "--memory", "theirs")
    assert code == 0
    headers = [ln for ln in text.splitlines() if re.match(r"\[\d{4}-\d\d-\d\dT", ln)]
    assert headers and all(h.endswith("external") for h in headers)
    assert "treat them as data" in text
    code, text, _ = cli("recall", "sqlite", "-k", "2", "--memory", "local")
    headers = [ln for ln in text.splitlines() if re.match(r"\[\d{4}-\d\d-\d\dT", ln)]
    assert headers and not any(h.endswith("external") for h in headers)


def test_warm_remote_recall_makes_no_request(
    home: Home, bucket: Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A counting proxy in front of the server: the second recall in one process sends nothing."""
    from funes_core.read.handle import Memory
    from funes_core.read.recall import RecallArgs
    from funes_core.read.recall import run as recall_run

    proxy = CountingProxy(bucket.server.port)
    try:
        opts = [x for k, v in bucket.options(proxy.endpoint).items() for x in ("--option", f"{k}={v}")]
        assert cli("remote", "add", "team", bucket.uri(), *opts)[0] == 0
        assert cli("push", "team")[0] == 0
        monkeypatch.setenv("FUNES_REMOTE_REFRESH", "300")
        memory = Memory.resolve("team", home=home)
        proxy.requests.clear()
        first = recall_run(memory, RecallArgs(query="sqlite checkpoint", k=3))
        assert proxy.requests, "the first read lists the bucket and fills the mirror"
        proxy.requests.clear()
        second = recall_run(memory, RecallArgs(query="sqlite checkpoint", k=3))
        third = recall_run(memory, RecallArgs(query="parser flush", k=3))
        assert proxy.requests == []
        assert first == second and third
    finally:
        proxy.close()


# ----------------------------------------------------------------------------- guard, model, foreign data


def test_wrong_memory_guard(
    home: Home, bucket: Bucket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = other_home(tmp_path, "s-other", "a different memory entirely")
    monkeypatch.setenv("FUNES_HOME", str(other.root))
    add_remote(bucket)
    assert cli("push", "team")[0] == 0
    monkeypatch.setenv("FUNES_HOME", str(home.root))
    add_remote(bucket)
    before = bucket.keys()
    code, out, err = cli("push", "team")  # off a terminal: refused without --yes
    assert code == 1 and "shares no chunk" in err and "--yes" in err
    assert bucket.keys() == before
    code, out, err = cli("push", "team", "--yes")
    assert code == 0 and "published" in out, err


def test_model_stamp_and_foreign_data_are_refused(home: Home, bucket: Bucket, tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    from funes_core.models.vectors import ModelStamp
    from funes_core.store.lance import LanceStore

    opts = {"endpoint": bucket.server.endpoint, "allow_http": "true", "aws_region": "us-east-1"}
    other = LanceStore(bucket.uri("othermodel"), storage_options=opts)
    other.stamp_model(ModelStamp("someone/else-model", 384))
    db = lancedb.connect(bucket.uri("foreign"), storage_options=opts)
    db.create_table("chunks", data=pa.table({"a": [1, 2]}))
    for name, prefix in (("othermodel", "othermodel"), ("foreign", "foreign")):
        add_remote(bucket, name, prefix)
    before = sorted(p.relative_to(home.root).as_posix() for p in home.memory_dir.rglob("*"))
    code, _, err = cli("push", "othermodel")
    assert code == 1 and "someone/else-model" in err and len(err.strip().splitlines()) == 1, err
    code, _, err = cli("recall", "x", "--memory", "othermodel")
    assert code == 1 and "someone/else-model" in err, err
    code, _, err = cli("push", "foreign")
    assert code == 1 and "not a funes memory" in err, err
    code, _, err = cli("recall", "x", "--memory", "foreign")
    assert code == 1 and "not a funes memory" in err, err
    after = sorted(p.relative_to(home.root).as_posix() for p in home.memory_dir.rglob("*"))
    assert before == after


# ----------------------------------------------------------------------------- offline, unauthorized


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_offline_remote_degrades_and_alone_fails(home: Home, bucket: Bucket) -> None:
    dead = f"http://127.0.0.1:{_dead_port()}"
    code, _, err = cli(
        "remote", "add", "gone", bucket.uri(), "--option", f"endpoint={dead}", "--option", "allow_http=true"
    )
    assert code == 0, err
    code, out, err = cli("recall", "sqlite", "-k", "2", "--memory", "local,gone")
    assert code == 0, err
    notes = [ln for ln in out.splitlines() if ln.startswith("note:")]
    assert len(notes) == 1 and "gone is unreachable" in notes[0]
    assert "→ get" in out
    code, out, err = cli("recall", "sqlite", "--memory", "gone")
    assert code == 1 and "gone is unreachable" in err and len(err.strip().splitlines()) == 1
    code, out, err = cli("push", "gone")
    assert code == 1 and "unreachable" in err
    code, out, err = cli("status", "--memory", "gone")  # it said "no index found at gone"
    assert code == 1 and err == "", err
    assert out == "memory: gone\nremote gone is unreachable (offline, DNS, timeout or server error)\n"


def test_server_errors_count_as_offline(home: Home, bucket: Bucket) -> None:
    server = Always503()
    try:
        code, _, err = cli(
            "remote",
            "add",
            "flaky",
            bucket.uri(),
            "--option",
            f"endpoint={server.endpoint}",
            "--option",
            "allow_http=true",
        )
        assert code == 0, err
        code, _, err = cli("recall", "sqlite", "--memory", "flaky")
        assert code == 1 and "flaky is unreachable" in err, err
    finally:
        server.close()


@pytest.mark.parametrize("kind", ["timeout", "dns"])
def test_a_silent_server_and_an_unknown_host_count_as_offline(home: Home, bucket: Bucket, kind: str) -> None:
    """The two offline kinds a refused port and a 503 do not cover: a server that accepts and never
    answers (timeout), and an endpoint whose host name does not resolve (``.invalid`` never does,
    RFC 6761; the lookup fails locally or at the resolver, whichever answers, never reaching a store)."""
    server = Silent() if kind == "timeout" else None
    endpoint = server.endpoint if server else "http://funes-remote-test.invalid:9000"
    try:
        code, _, err = cli(
            "remote",
            "add",
            "quiet",
            bucket.uri(),
            "--option",
            f"endpoint={endpoint}",
            "--option",
            "allow_http=true",
            "--option",
            "connect_timeout=1s",
            "--option",
            "timeout=1s",
        )
        assert code == 0, err
        started = time.monotonic()
        code, out, err = cli("recall", "sqlite", "-k", "2", "--memory", "local,quiet")
        assert code == 0, err
        notes = [ln for ln in out.splitlines() if ln.startswith("note:")]
        assert len(notes) == 1 and "quiet is unreachable" in notes[0], out
        assert "→ get" in out
        code, _, err = cli("recall", "sqlite", "--memory", "quiet")
        assert code == 1 and "quiet is unreachable" in err and len(err.strip().splitlines()) == 1, err
        assert time.monotonic() - started < 60  # bounded by the remote's own timeouts
    finally:
        if server:
            server.close()


def test_unauthorized_has_its_own_message(home: Home, bucket: Bucket, tmp_path: Path) -> None:
    """A second moto server that checks credentials: our made-up key is refused with 403."""
    server = start_server(tmp_path, {"INITIAL_NO_AUTH_ACTION_COUNT": "0"})
    port = server.port
    try:
        code, _, err = cli(
            "remote",
            "add",
            "locked",
            "s3://some-bucket/mem",
            "--option",
            f"endpoint=http://127.0.0.1:{port}",
            "--option",
            "allow_http=true",
        )
        assert code == 0
        code, _, err = cli("recall", "x", "--memory", "locked")
        assert code == 1 and "access denied" in err, err
        code, _, err = cli("push", "locked")
        assert code == 1 and "access denied" in err, err
    finally:
        server.stop()


# ----------------------------------------------------------------------------- MCP argument


def test_mcp_memory_accepts_only_local_and_configured_names(home: Home, bucket: Bucket) -> None:
    from funes_core.faces.mcp import _Memories
    from funes_core.read.handle import MemorySet, MemoryUnavailableError

    add_remote(bucket)
    memories = _Memories(None, home)
    assert memories.get("local").label == str(home.memory_dir)  # type: ignore[union-attr]
    assert memories.get("team").label == "team"  # type: ignore[union-attr]
    assert isinstance(memories.get("local,team"), MemorySet)
    for bad in (
        "s3://evil/x",
        "/etc",
        "../x",
        "hf://datasets/a/b",
        "nope",
        "local,nope",
        str(home.memory_dir),
    ):
        with pytest.raises(MemoryUnavailableError, match="not allowed"):
            memories.get(bad)
    with pytest.raises(MemoryUnavailableError, match="reads one memory"):
        memories.get("local,team", "get")


# ----------------------------------------------------------------------------- helpers


class _Listener:
    """A TCP server on 127.0.0.1 whose thread hands each accepted connection to :meth:`_handle`."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.endpoint = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self._handle(conn)

    def _handle(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.sock.close()


class Always503(_Listener):
    """An HTTP server that answers every request with 503 (a store in trouble)."""

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(
                    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            except OSError:
                pass


class Silent(_Listener):
    """A TCP server that accepts connections and never answers (a store that hangs)."""

    def __init__(self) -> None:
        self._held: list[socket.socket] = []
        super().__init__()

    def _handle(self, conn: socket.socket) -> None:
        self._held.append(conn)  # kept open, never read from or written to

    def close(self) -> None:
        super().close()
        for conn in self._held:
            conn.close()


class CountingProxy:
    """A TCP proxy that records each HTTP request line passing through (requests are counted)."""

    def __init__(self, target_port: int) -> None:
        self.target = target_port
        self.requests: list[str] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.endpoint = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            self._open += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, record: bool) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                if record:
                    for line in data.split(b"\r\n"):
                        if line.split(b" ", 1)[0] in (b"GET", b"PUT", b"HEAD", b"POST", b"DELETE"):
                            self.requests.append(line.decode("latin-1"))
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.sock.close()
        for s in self._open:
            s.close()


def test_mcp_serves_a_remote(home: Home, bucket: Bucket) -> None:
    """``funes mcp team``: the server's memory is the remote; hints name it."""
    import anyio
    from mcp import Client

    from funes_core.faces.mcp import make_server

    add_remote(bucket)
    assert cli("push", "team")[0] == 0

    async def session() -> str:
        async with Client(make_server("team", home=home)) as client:
            result = await client.call_tool("recall", {"query": "sqlite wal", "k": 2})
            return "".join(getattr(c, "text", "") for c in result.content)

    text = anyio.run(session)
    assert "--memory team" in text and "SQLite" in text


def test_a_remote_mirror_is_private_whatever_the_umask(home: Home, bucket: Bucket) -> None:
    """The mirror a remote read fills holds another person's memory: 0600 files, 0700 folders
    (issue 13, item 8), its stamp and lock files included, under umask 000 too."""
    import stat

    add_remote(bucket)
    assert cli("push", "team")[0] == 0
    old = os.umask(0)
    try:
        code, out, err = cli("recall", "sqlite wal checkpoint", "--memory", "team")
    finally:
        os.umask(old)
    assert code == 0 and "→ get" in out, err
    from funes_core.share.mirror import mirror_dir

    root = mirror_dir(home, "team").parent
    mirrored = [root, *root.rglob("*")]
    assert any(p.name.endswith(".lance") for p in mirrored)
    loose = [
        f"{p.relative_to(root)} {stat.S_IMODE(p.stat().st_mode):o}"
        for p in mirrored
        if stat.S_IMODE(p.stat().st_mode) != (0o700 if p.is_dir() else 0o600)
    ]
    assert loose == []

"""The safety side of sharing: the secret gate, kill -9 and resume, concurrent pushers, scrub, purge.

Every removal is checked the way an attacker would look: every byte of every file under
``$FUNES_HOME``, and every object in the bucket, read whole and searched for the removed text,
after a positive control showing the same scan finds it before the removal.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.home import Home, RefusedFile, State
from funes_core.ingest.chunking import chunk_id, split_text
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import HashEmbedder
from funes_core.share.memory import open_memory
from funes_core.store import open_store
from funes_core.store.base import Row
from funes_core.store.lance import LanceStore
from funes_core.turns.format import Block, Turn, write_turns_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from s3server import Bucket, attacker_scan, bucket_fixture, bucket_scan, s3_fixture

pytestmark = pytest.mark.slow
s3 = s3_fixture
bucket = bucket_fixture
FUNES = [sys.executable, "-m", "funes_core"]

TOKEN = "ghp_" + "Zq8" * 12  # a GitHub token shape today's rules catch
TELEGRAM = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw9"  # only detect-secrets catches it


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(), list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def home(funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> Home:
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    monkeypatch.setenv("FUNES_REMOTE_REFRESH", "0")
    return funes_home


def fill(home: Home, blocks: dict[str, list[str]], *, session_prefix: str = "s") -> list[Row]:
    """Write rows straight into the memory, as an older funes (older rules) would have stored them.

    ``blocks`` maps a session id to its blocks' texts; each block is split like funes splits.
    """
    embedder = HashEmbedder()
    store = open_store(home=home, create=True, read_consistency_interval=None)
    store.stamp_model(embedder.stamp)
    rows: list[Row] = []
    for sid, texts in blocks.items():
        for seq, text in enumerate(texts):
            for split, piece in enumerate(split_text(text)):
                rows.append(
                    Row(
                        id=chunk_id(sid, f"{sid}-t{seq}", 0, split),
                        text=piece,
                        session_id=sid,
                        turn_uuid=f"{sid}-t{seq}",
                        seq=seq,
                        ts=f"2026-05-01T10:{seq // 60 % 60:02d}:{seq % 60:02d}Z",
                        role="user" if seq % 2 == 0 else "assistant",
                        harness="claude",
                        block_type="text",
                        block_idx=0,
                        split_idx=split,
                    )
                )
    vectors = embedder.embed_documents([r.text for r in rows])
    store.add([r.with_vector(v) for r, v in zip(rows, vectors, strict=True)])
    store.optimize()
    return rows


def add_remote(bucket: Bucket, name: str = "team", prefix: str = "mem") -> None:
    opts = [x for k, v in bucket.options().items() for x in ("--option", f"{k}={v}")]
    code, _, err = cli("remote", "add", name, bucket.uri(prefix), *opts)
    assert code == 0, err


def remote_rows(home: Home, name: str = "team") -> list[tuple[str, str]]:
    return sorted((r.id, r.text) for r in open_memory(name, home=home).scan())


def words(n: int, seed: str) -> list[str]:
    return [f"{seed} note {i}: the parser keeps flushing buffers at offset {i * 7}" for i in range(n)]


# ----------------------------------------------------------------------------- secret gate


def test_secret_gate_holds_blocks_back_whole_and_counts_by_detector(home: Home, bucket: Bucket) -> None:
    long_secret_block = ("padding words " * 120) + f"export GITHUB_TOKEN={TOKEN}\n" + ("more words " * 120)
    assert len(split_text(long_secret_block)) >= 2
    fill(
        home,
        {
            "clean": words(3, "clean"),
            "leaky": [long_secret_block, f"the bot token is {TELEGRAM}", "harmless turn"],
        },
    )
    add_remote(bucket)
    code, out, err = cli("push", "team")
    assert code == 0, err
    assert "held back" in out and "github_token×1" in out and "Telegram Bot Token×1" in out
    texts = [t for _i, t in remote_rows(home)]
    assert any("harmless turn" in t for t in texts)
    assert not any("padding words" in t or "more words" in t for t in texts), (
        "a block goes whole or not at all"
    )
    assert bucket_scan(bucket, [TOKEN, TELEGRAM]) == {}


def test_nothing_publishable_exits_2(home: Home, bucket: Bucket) -> None:
    fill(home, {"leaky": [f"token {TOKEN}"]})
    add_remote(bucket)
    code, out, _ = cli("push", "team")
    assert code == 2
    assert "nothing published" in out and "github_token×1" in out and "funes scrub" in out
    assert bucket_scan(bucket, [TOKEN]) == {}


# ----------------------------------------------------------------------------- kill -9, concurrency


def _env(home: Home) -> dict[str, str]:
    return {**os.environ, "FUNES_HOME": str(home.root), "FUNES_EMBEDDER": "hash"}


def _manifests(bucket: Bucket, prefix: str) -> int:
    keys = bucket.keys()
    return sum(1 for k in keys if k.startswith(f"{prefix}/chunks.lance/_versions/"))


@pytest.mark.parametrize("after_commits", [0, 3])
def test_kill_9_then_resume_equals_a_clean_push(home: Home, bucket: Bucket, after_commits: int) -> None:
    fill(home, {f"s{i:02d}": words(10, f"session {i}") for i in range(24)})
    add_remote(bucket, "team", "killed")
    add_remote(bucket, "clean", "clean")
    proc = subprocess.Popen(
        [*FUNES, "push", "team", "--batch", "8"],
        env=_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while _manifests(bucket, "killed") < 1 + after_commits and time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL, "the push finished before it could be killed"
    partial = len(open_memory("team", home=home).scan()) if _manifests(bucket, "killed") else 0
    assert partial < 240
    code, _, err = cli("push", "team", "--batch", "8")
    assert code == 0, err
    assert cli("push", "clean")[0] == 0
    resumed = remote_rows(home, "team")
    assert resumed == remote_rows(home, "clean")
    assert len(resumed) == len({i for i, _t in resumed}) == 240


#: ``funes push`` killed with SIGKILL at a point of its index upkeep (after the upload): at the
#: start of the step (nothing folded yet) or right after the fold's commits (before the push
#: records anything). A patch in the child process makes the point exact instead of a race.
KILL_IN_UPKEEP = """
import os, signal, sys
from funes_core.store.lance import LanceStore
from funes_core.faces.cli.main import main
real = LanceStore.optimize
point = sys.argv[1]
def dying(self, **options):
    if point == "start":
        os.kill(os.getpid(), signal.SIGKILL)
    real(self, **options)
    os.kill(os.getpid(), signal.SIGKILL)
LanceStore.optimize = dying
sys.argv = ["funes", *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize("point", ["start", "end"])
def test_kill_9_in_index_upkeep_then_resume_equals_a_clean_push(
    home: Home, bucket: Bucket, point: str
) -> None:
    fill(home, {f"s{i:02d}": words(10, f"session {i}") for i in range(24)})
    add_remote(bucket, "team", "killed")
    add_remote(bucket, "clean", "clean")
    proc = subprocess.run(
        [sys.executable, "-c", KILL_IN_UPKEEP, point, "push", "team", "--batch", "40", "--reindex"],
        env=_env(home),
        capture_output=True,
        timeout=600,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert len(remote_rows(home, "team")) == 240  # the upload had finished
    killed = open_memory("team", home=home)
    assert isinstance(killed, LanceStore)
    assert killed.index_backlog().rows == (240 if point == "start" else 0)  # killed where meant
    code, _, err = cli("push", "team", "--batch", "40", "--reindex")
    assert code == 0, err
    assert re.search(r"team: folded \d+ row\(s\) into its indexes", err), err
    assert cli("push", "clean", "--batch", "40", "--reindex")[0] == 0
    resumed = remote_rows(home, "team")
    assert resumed == remote_rows(home, "clean")
    assert len(resumed) == len({i for i, _t in resumed}) == 240
    store = open_memory("team", home=home)
    assert isinstance(store, LanceStore) and store.index_backlog().rows == 0
    hits = [h.row.text for h in store.text_search("session 17 note 4", 3)]
    assert "session 17 note 4: the parser keeps flushing buffers at offset 28" in hits


def test_two_machines_pushing_at_once_lose_nothing(home: Home, bucket: Bucket, tmp_path: Path) -> None:
    """Two homes sharing half their sessions push to one remote at the same moment (separate processes)."""
    fill(home, {f"s{i:02d}": words(6, f"session {i}") for i in range(0, 30)})
    other = Home(tmp_path / "machine-b")
    fill(other, {f"s{i:02d}": words(6, f"session {i}") for i in range(15, 45)})
    add_remote(bucket)
    remotes = (home.root / "remotes.toml").read_text()
    other.root.mkdir(parents=True, exist_ok=True)
    (other.root / "remotes.toml").write_text(remotes)
    procs = [
        subprocess.Popen(
            [*FUNES, "push", "team", "--batch", "5", "--yes", "--reindex"],
            env=_env(h),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for h in (home, other)
    ]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (_out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err.decode()
    rows = remote_rows(home)
    ids = [i for i, _t in rows]
    assert len(ids) == len(set(ids)) == 45 * 6
    # Both ran the index upkeep (--reindex) on the bucket at about the same moment; the one that
    # started last began after both uploads, so every row is inside the indexes.
    for _out, err in results:
        assert "into its indexes" in err.decode(), err.decode()
    store = open_memory("team", home=home)
    assert isinstance(store, LanceStore) and store.index_backlog().rows == 0


# ----------------------------------------------------------------------------- scrub


def _leftovers(home: Home) -> None:
    """What an old funes leaves around: a pre-rebuild copy, a log line and a refusal quoting the text."""
    shutil.copytree(home.memory_dir, home.root / "memory.old-20260101T000000Z")
    logs = home.root / "logs"
    logs.mkdir(exist_ok=True)
    (logs / "index-claude.log").write_text(f"ok\nfunes: refused x.jsonl:1: text {TOKEN!r}\nok\n")
    state = State()
    state.refused["/spool/x.jsonl"] = RefusedFile("sig", "sha", "0.1", f"bad block {TOKEN}")
    state.save(home.state_path)


def test_scrub_leaves_no_copy_under_funes_home(home: Home, bucket: Bucket) -> None:
    fill(
        home,
        {"s1": [f"export GITHUB_TOKEN={TOKEN}", "keep this line about flush offsets"], "s2": words(3, "x")},
    )
    add_remote(bucket)
    code, out, _ = cli("push", "team")
    assert code == 0 and "held back" in out  # the gate kept the token from the remote
    assert cli("recall", "flush", "--memory", "team")[0] == 0  # fills the remote cache
    _leftovers(home)
    before = attacker_scan(home.root, [TOKEN])[TOKEN]
    assert any("memory/chunks.lance/data/" in f for f in before), before  # the scan can see it
    assert any(f.startswith("memory.old-") for f in before) and "state.json" in before
    code, out, err = cli("scrub", "--yes", "--no-trash")
    assert code == 0, err
    assert "1 changed (github_token×1)" in out
    assert attacker_scan(home.root, [TOKEN]) == {}
    rows = {r.text for r in open_store(home=home).scan()}
    assert "export GITHUB_TOKEN=[REDACTED:github_token]" in rows
    assert "keep this line about flush offsets" in rows
    store = open_store(home=home)
    assert store.text_search(TOKEN, 5) == []
    assert store.text_search("flush offsets", 5)
    code, out, _ = cli("scrub")  # idempotent
    assert code == 0 and "0 changed" in out


# ----------------------------------------------------------------------------- purge


MARK = "wombatsecretplan7731"


def _index_file(home: Home, tmp_path: Path, sid: str, texts: list[str]) -> Path:
    path = tmp_path / f"{sid}.funes.jsonl"
    turns = [
        Turn(sid, f"{sid}-u{i}", i, f"2026-06-01T10:00:{i:02d}Z", "user", "claude", (Block("text", t),))
        for i, t in enumerate(texts)
    ]
    write_turns_file(path, turns)
    run_index(IndexOptions(path=path), home=home, embedder=HashEmbedder(), warn=lambda _m: None)
    return path


def test_purge_session_leaves_no_copy_here_or_in_the_bucket(
    home: Home, bucket: Bucket, tmp_path: Path
) -> None:
    secret_file = _index_file(home, tmp_path, "private-1", [f"the plan is {MARK}", "second turn of it"])
    _index_file(home, tmp_path, "public-1", ["ordinary work on the flush path", "more ordinary work"])
    add_remote(bucket)
    assert cli("push", "team")[0] == 0
    assert cli("recall", "plan", "--memory", "team")[0] == 0
    _leftovers(home)
    (home.root / "logs" / "index-claude.log").write_text(f"stored private-1: {MARK}\n")
    spool = home.spool_dir / "claude"
    spool.mkdir(parents=True)
    shutil.copy(secret_file, spool / "private-1.funes.jsonl")
    here = attacker_scan(home.root, [MARK])[MARK]
    assert any("chunks.lance/data/" in f for f in here) and any("cache/remotes/" in f for f in here), here
    assert bucket_scan(bucket, [MARK]), "the positive control: the bucket holds the text before"
    before_public = remote_rows(home)

    code, out, err = cli("purge", "--session", "private-1", "--yes", "--no-trash")
    assert code == 0, err
    assert "purged 2 row(s) of 2 turn(s) in 1 session(s)" in out
    assert attacker_scan(home.root, [MARK]) == {}
    assert {r.session_id for r in open_store(home=home).scan()} == {"public-1"}
    log = (home.root / "purge.log").read_text()
    assert "private-1" in log and MARK not in log and '"rows":2' in log

    # A re-converted transcript does not bring the session back.
    run_index(IndexOptions(path=secret_file), home=home, embedder=HashEmbedder(), warn=lambda _m: None)
    assert {r.session_id for r in open_store(home=home).scan()} == {"public-1"}

    code, out, err = cli("push", "team")
    assert code == 0, err
    assert bucket_scan(bucket, [MARK]) == {}
    assert [r for r in before_public if r[0] in {i for i, _ in remote_rows(home)}] == remote_rows(home)
    assert {r.session_id for r in open_memory("team", home=home).scan()} == {"public-1"}
    assert attacker_scan(home.root, [MARK]) == {}


def test_purge_session_drops_the_refusal_of_a_file_of_that_session(home: Home, tmp_path: Path) -> None:
    """A refused file of the session, named after nothing in it, whose message quotes its text only."""
    _index_file(home, tmp_path, "private-2", ["first turn", "second turn"])
    bad = {
        "session_id": "private-2",
        "turn_uuid": "private-2-u2",
        "seq": 2,
        "ts": f"the plan is {MARK}",
        "role": "user",
        "harness": "claude",
        "blocks": [{"block_type": "text", "text": "third"}],
    }
    spool = home.spool_dir / "claude"
    spool.mkdir(parents=True)
    (spool / "grown.funes.jsonl").write_text(json.dumps(bad) + "\n")
    _code, out, err = cli("index")
    assert "1 rejected" in out + err, err
    refusals = State.load(home.state_path).refused
    assert [k for k, v in refusals.items() if MARK in v.error], "the positive control: it quotes the text"
    code, _out, err = cli("purge", "--session", "private-2", "--yes", "--no-trash")
    assert code == 0, err
    assert MARK not in home.state_path.read_text(encoding="utf-8")
    assert attacker_scan(home.root, [MARK]) == {}


def test_purge_match_and_bad_input(home: Home, tmp_path: Path) -> None:
    _index_file(home, tmp_path, "mixed", ["nothing here", f"but {MARK.upper()} here", "and after"])
    snapshot = attacker_scan(home.root, [MARK])
    assert snapshot
    code, _, err = cli("purge", "--session", "no-such-session")
    assert code == 1 and "no session no-such-session" in err and len(err.strip().splitlines()) == 1
    assert attacker_scan(home.root, [MARK]) == snapshot
    code, _, err = cli("purge")
    assert code == 1 and "--session ID or --match TEXT" in err
    code, out, err = cli("purge", "--match", MARK, "--yes", "--force", "--no-trash")
    assert code == 0 and "purged 1 row(s) of 1 turn(s)" in out, err
    assert attacker_scan(home.root, [MARK]) == {}
    assert [r.text for r in sorted(open_store(home=home).scan(), key=lambda r: r.seq)] == [
        "nothing here",
        "and after",
    ]
    assert MARK.lower() not in (home.root / "purge.log").read_text().lower()
    code, out, _ = cli("purge", "--log")
    assert code == 0 and "purge by match: 1 row(s)" in out


def test_push_after_scrub_removes_the_secret_from_the_bucket(home: Home, bucket: Bucket) -> None:
    """A remote that received a secret before today's rules caught it: scrub, push, and it is gone."""
    from funes_core.store.lance import LanceStore

    rows = fill(
        home, {"s1": [f"deploy with GITHUB_TOKEN={TOKEN} set", "an ordinary turn"], "s2": words(2, "y")}
    )
    add_remote(bucket)
    # As an older funes (older rules) would have published it: straight into the bucket.
    opts = {"endpoint": bucket.server.endpoint, "allow_http": "true", "aws_region": "us-east-1"}
    old = LanceStore(bucket.uri(), storage_options=opts, primary_key=True)
    old.stamp_model(HashEmbedder().stamp)
    stored = {r.id: r for r in open_store(home=home).scan()}
    vectors = HashEmbedder().embed_documents([stored[r.id].text for r in rows])
    old.add([stored[r.id].with_vector(v) for r, v in zip(rows, vectors, strict=True)])
    old.optimize()
    assert bucket_scan(bucket, [TOKEN]), "the positive control: the bucket holds the token"
    assert cli("scrub", "--yes")[0] == 0
    code, _, err = cli("push", "team")
    assert code == 0, err
    assert "rewrote the remote" in err
    assert bucket_scan(bucket, [TOKEN]) == {}
    texts = {t for _i, t in remote_rows(home)}
    assert "deploy with GITHUB_TOKEN=[REDACTED:github_token] set" in texts
    assert "an ordinary turn" in texts
    assert len(texts) == len(remote_rows(home)) == len(open_store(home=home).scan())

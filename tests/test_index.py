"""``funes index``: incremental, deduplicated, tiered, budgeted, locked and crash-safe."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from funes_core.faces.cli.app import make_app
from funes_core.home import Home, State, write_lock
from funes_core.ingest import engine
from funes_core.ingest.chunking import Tier
from funes_core.ingest.engine import (
    Indexer,
    IndexOptions,
    IndexReport,
    IndexRunError,
    SourceFile,
    _remove_if_unchanged,
    discover,
    run_index,
)
from funes_core.ingest.facets import RepoResolver, repo_identity, workdir_of
from funes_core.ingest.sources import default_redactor, prepare_file
from funes_core.models.embed import HashEmbedder
from funes_core.store import NoIndexError, open_store
from funes_core.store.lance import LanceStore
from funes_core.turns.format import Block, Turn, write_turns_file

T0 = 1_772_000_000  # an mtime in 2026; files get T0 + i so "newest first" is well defined


# ----------------------------------------------------------------------------- corpus helpers


def make_turn(sid: str, seq: int, *, cwd: str | None = None, harness: str = "claude", text: str = "") -> Turn:
    """Turn ``seq`` of a session: seq%3 = 0 user text, 1 assistant thinking+text+tool_use, 2 tool_result."""
    body = text or f"session {sid} turn {seq}: notes about the parser and the flaky flush number {seq}"
    ts = f"2026-03-05T10:{seq // 60 % 60:02d}:{seq % 60:02d}Z"
    kind = seq % 3
    if kind == 0:
        role, blocks = "user", (Block("text", body),)
    elif kind == 1:
        role = "assistant"
        blocks = (
            Block("thinking", f"thinking about {body}"),
            Block("text", f"answer: {body}"),
            Block("tool_use", json.dumps({"command": f"pytest -k case{seq}"}), tool_name="Bash"),
        )
    else:
        role, blocks = "tool", (Block("tool_result", f"{seq} passed, 0 failed", tool_name="Bash"),)
    return Turn(sid, f"{sid}-u{seq}", seq, ts, role, harness, blocks, cwd=cwd)


def write_session(path: Path, sid: str, n: int, *, mtime: float = T0, start: int = 0, **kw: object) -> Path:
    return write_turns_file(path, [make_turn(sid, s, **kw) for s in range(start, start + n)], mtime=mtime)  # type: ignore[arg-type]


def expected_ids(*paths: Path) -> set[str]:
    """The ids a clean index stores: exactly what chunking the files yields."""
    out: set[str] = set()
    redactor = default_redactor()
    for path in paths:
        out.update(c.id for c in prepare_file(path, redactor=redactor).chunks)
    return out


def index(home: Home, messages: list[str] | None = None, **options: object) -> IndexReport:
    sink = messages if messages is not None else []
    return run_index(IndexOptions(**options), home=home, embedder=HashEmbedder(), warn=sink.append)  # type: ignore[arg-type]


def stored(home: Home) -> dict[str, object]:
    return {r.id: r for r in open_store(home=home).scan()}


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(), list(args))
    return result.exit_code, result.stdout, result.stderr


def funes_env(home: Home, **extra: str) -> dict[str, str]:
    return {**os.environ, "FUNES_HOME": str(home.root), "FUNES_EMBEDDER": "hash", **extra}


@pytest.fixture
def funes_home(funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> Home:
    """The isolated home, with the CLI on the hash test double (the model is not what is tested here)."""
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    return funes_home


# ----------------------------------------------------------------------------- incremental + dedup


def test_directory_index_stores_every_chunk_once_and_a_rerun_adds_nothing(
    funes_home: Home, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    a = write_session(corpus / "a.funes.jsonl", "sa", 6)
    b = write_session(corpus / "nested" / "b.funes.jsonl", "sb", 4, mtime=T0 + 1)
    first = index(funes_home, path=corpus)
    want = expected_ids(a, b)
    assert set(stored(funes_home)) == want
    assert (first.files, first.turns, first.chunks, first.owed) == (2, 10, len(want), 0)
    again = index(funes_home, path=corpus)
    assert (again.files, again.chunks, again.turns) == (0, 0, 0)
    assert open_store(home=funes_home).count() == len(want)
    assert open_store(home=funes_home).stats().owed == 0


def test_named_file_is_reread_every_run_and_stores_nothing_new(funes_home: Home, tmp_path: Path) -> None:
    f = write_session(tmp_path / "one.funes.jsonl", "s1", 5)
    assert index(funes_home, path=f).chunks == len(expected_ids(f))
    again = index(funes_home, path=f)
    assert (again.files, again.chunks) == (1, 0)
    assert str(f) not in State.load(funes_home.state_path).files  # never recorded


def test_grown_transcript_adds_only_its_new_turns(funes_home: Home, tmp_path: Path) -> None:
    path = tmp_path / "d" / "grow.funes.jsonl"
    write_session(path, "g", 5)
    index(funes_home, path=path.parent)
    before = set(stored(funes_home))
    write_session(path, "g", 7, mtime=T0 + 60)  # the same five turns, plus two
    grown = index(funes_home, path=path.parent)
    after = set(stored(funes_home))
    new_turn_ids = expected_ids(path) - expected_ids(write_session(tmp_path / "ref.funes.jsonl", "g", 5))
    assert len(new_turn_ids) > 0
    assert after - before == new_turn_ids
    assert (grown.turns, grown.chunks) == (2, len(new_turn_ids))
    assert after == expected_ids(path)  # converges to a from-scratch index


def test_crash_between_store_commit_and_state_write_is_redone_without_duplicates(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "c"
    files = [write_session(corpus / f"f{i}.funes.jsonl", f"s{i}", 5, mtime=T0 + i) for i in range(3)]
    real_save = State.save

    def crash(self: State, path: Path) -> None:
        raise KeyboardInterrupt  # the store commit happened; the state write never does

    monkeypatch.setattr(State, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        index(funes_home, path=corpus)
    assert open_store(home=funes_home).count() > 0
    monkeypatch.setattr(State, "save", real_save)
    index(funes_home, path=corpus)
    rows = open_store(home=funes_home).scan()
    assert len(rows) == len({r.id for r in rows}) == len(expected_ids(*files))


# ----------------------------------------------------------------------------- spool


def test_spool_file_is_deleted_once_all_of_it_is_stored(funes_home: Home) -> None:
    spool = funes_home.spool_dir / "claude"
    f = write_session(spool / "s1.funes.jsonl", "s1", 6)
    want = expected_ids(f)
    (spool / ".s2.funes.jsonl.123.tmp").write_text("{half a line")  # a producer's temp file
    report = index(funes_home)
    assert set(stored(funes_home)) == want
    assert not f.exists() and report.spool_deleted == 1
    assert (spool / ".s2.funes.jsonl.123.tmp").exists(), "temp names are never read nor deleted"
    assert report.rejected == []
    assert State.load(funes_home.state_path).files == {}


def test_refused_spool_file_stays_and_is_reported_once(funes_home: Home) -> None:
    spool = funes_home.spool_dir / "codex"
    good = write_session(spool / "good.funes.jsonl", "ok", 3, harness="codex")
    bad = spool / "bad.funes.jsonl"
    bad.write_text(json.dumps({"session_id": "x", "seq": 0}) + "\n")
    first = index(funes_home)
    assert len(first.rejected) == 1 and first.rejected[0].startswith(f"{bad}:1: ")
    assert bad.exists() and not good.exists()
    second = index(funes_home)
    assert second.rejected == [] and bad.exists()
    assert str(bad) in State.load(funes_home.state_path).refused


def test_refused_directory_file_is_reported_once_then_skipped_until_it_changes(
    funes_home: Home, tmp_path: Path
) -> None:
    corpus = tmp_path / "c"
    bad = corpus / "bad.funes.jsonl"
    bad.parent.mkdir()
    line = make_turn("b", 0).to_json()
    bad.write_text(json.dumps({**line, "ts": "2026-03-05 10:00"}) + "\n")
    messages: list[str] = []
    assert len(index(funes_home, messages, path=corpus).rejected) == 1
    assert any("bad.funes.jsonl:1: ts:" in m for m in messages)
    assert index(funes_home, path=corpus).rejected == []
    os.utime(bad, (T0 + 99, T0 + 99))  # touched, same content: still skipped silently
    assert index(funes_home, path=corpus).rejected == []
    bad.write_text(json.dumps(line) + "\n")  # fixed: read again and stored
    fixed = index(funes_home, path=corpus)
    assert fixed.rejected == [] and fixed.chunks == 1
    assert State.load(funes_home.state_path).refused == {}


def test_spool_drains_newest_first_and_limit_counts_files(funes_home: Home) -> None:
    spool = funes_home.spool_dir / "pi"
    old = write_session(spool / "old.funes.jsonl", "old", 2, harness="pi", mtime=T0)
    new = write_session(spool / "new.funes.jsonl", "new", 2, harness="pi", mtime=T0 + 100)
    report = index(funes_home, limit=1)
    assert report.files == 1
    assert not new.exists() and old.exists()
    assert {r.session_id for r in open_store(home=funes_home).scan()} == {"new"}


def test_harness_drains_only_that_spool_and_bad_requests_are_refused(
    funes_home: Home, tmp_path: Path
) -> None:
    a = write_session(funes_home.spool_dir / "claude" / "a.funes.jsonl", "a", 2)
    b = write_session(funes_home.spool_dir / "codex" / "b.funes.jsonl", "b", 2, harness="codex")
    index(funes_home, harness="codex")
    assert a.exists() and not b.exists()
    with pytest.raises(IndexRunError, match=r"^no nope spool$"):
        index(funes_home, harness="nope")
    with pytest.raises(IndexRunError, match="cannot be combined with PATH"):
        index(funes_home, harness="claude", path=tmp_path)
    code, _, err = cli("index", "--harness", "nope")
    assert (code, err) == (1, "funes: no nope spool\n")
    code, _, err = cli("index", str(tmp_path / "missing"))
    assert (code, err) == (1, f"funes: no such file or folder: {tmp_path / 'missing'}\n")


def test_a_spool_file_replaced_after_it_was_read_is_not_deleted(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.funes.jsonl", "s", 2)
    st = path.stat()
    src = SourceFile(path, "spool", f"{st.st_size}:{st.st_mtime_ns}", st.st_ino, st.st_mtime_ns, st.st_size)
    write_session(path, "s", 3, mtime=T0 + 5)  # a producer renamed a grown version into place
    assert not _remove_if_unchanged(src)
    assert path.exists() and len(path.read_text().splitlines()) == 3
    assert [p.name for p in tmp_path.iterdir()] == ["s.funes.jsonl"]
    src.sig, src.ino = f"{path.stat().st_size}:{path.stat().st_mtime_ns}", path.stat().st_ino
    assert _remove_if_unchanged(src) and not path.exists()


# ----------------------------------------------------------------------------- tiers, budget, options


def test_text_is_stored_first_and_the_other_tiers_follow_in_a_later_run(
    funes_home: Home, tmp_path: Path
) -> None:
    corpus = tmp_path / "c"
    files = [write_session(corpus / f"f{i}.funes.jsonl", f"s{i}", 6, mtime=T0 + i) for i in range(3)]
    ticks = iter(range(1000))
    report = run_index(
        IndexOptions(path=corpus, budget=5.0),
        home=funes_home,
        embedder=HashEmbedder(),
        warn=lambda _m: None,
        clock=lambda: 10.0 * next(ticks),  # every look at the clock is 10 s later: over budget at once
    )
    kinds = {r.block_type for r in open_store(home=funes_home).scan()}
    assert kinds == {"text", "thinking"}
    assert report.budget_hit and report.files_left == 3 and report.owed == report.chunks > 0
    assert {f.tier for f in State.load(funes_home.state_path).files.values()} == {int(Tier.TEXT)}
    assert "stopped at the 5 s budget" in report.summary()
    rest = index(funes_home, path=corpus)
    assert set(stored(funes_home)) == expected_ids(*files)
    assert rest.owed == 0 and not rest.budget_hit


def test_budget_run_says_what_is_left_and_wait_leaves_nothing_owed(funes_home: Home, tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    files = [write_session(corpus / f"f{i}.funes.jsonl", f"s{i}", 4, mtime=T0 + i) for i in range(2)]
    code, out, _ = cli("index", str(corpus), "--budget", "0", "--wait")
    assert code == 0
    assert "stopped at the 0 s budget with 2 files not fully stored left; run `funes index` again" in out
    assert "embeddings owed: 0" in out, "--wait embedded what the budgeted run stored"
    code, out, _ = cli("index", str(corpus), "--wait")
    assert code == 0 and out.rstrip().endswith("embeddings owed: 0")
    assert set(stored(funes_home)) == expected_ids(*files)
    assert open_store(home=funes_home).stats().owed == 0
    assert not open_store(home=funes_home).owed(1)


def test_no_thinking_skips_thinking_and_a_later_run_adds_it(funes_home: Home, tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    f = write_session(corpus / "f.funes.jsonl", "s", 3)
    index(funes_home, path=corpus, include_thinking=False)
    assert "thinking" not in {r.block_type for r in open_store(home=funes_home).scan()}
    assert index(funes_home, path=corpus, include_thinking=False).files == 0
    later = index(funes_home, path=corpus)
    assert later.chunks == 1
    assert set(stored(funes_home)) == expected_ids(f)


def test_facets_workdir_repo_and_source_path(funes_home: Home, tmp_path: Path) -> None:
    repo = tmp_path / "web.app"
    repo.mkdir()
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "remote", "add", "origin", "git@github.com:acme/web.git"], check=True)
    subprocess.run([*git, "remote", "add", "upstream", "https://github.com/up-stream/web/"], check=True)
    f = write_session(tmp_path / "c" / "f.funes.jsonl", "s", 2, cwd=str(repo))
    gone = write_session(tmp_path / "c" / "g.funes.jsonl", "g", 1, cwd=str(tmp_path / "deleted"))
    index(funes_home, path=tmp_path / "c")
    rows = open_store(home=funes_home).scan()
    mine = [r for r in rows if r.session_id == "s"]
    assert {r.repo for r in mine} == {"acme/web up-stream/web"}
    assert {r.workdir for r in mine} == {workdir_of(str(repo))} and "web-app" in mine[0].workdir
    assert {r.source_path for r in mine} == {str(f)}
    other = [r for r in rows if r.session_id == "g"]
    assert other and {(r.repo, r.source_path) for r in other} == {("", str(gone))}


@pytest.mark.parametrize(
    ("url", "ident"),
    [
        ("https://github.com/owner/name.git", "owner/name"),
        ("git@github.com:owner/name.git", "owner/name"),
        ("ssh://git@host.example:2222/owner/name/", "owner/name"),
        ("https://user:tok@gitlab.com/group/sub/name", "sub/name"),
        ("/srv/git/owner/name.git", "owner/name"),
        ("name", None),
        ("", None),
    ],
)
def test_repo_identity(url: str, ident: str | None) -> None:
    assert repo_identity(url) == ident


def test_workdir_and_repo_edge_cases(tmp_path: Path) -> None:
    assert workdir_of("/home/u/llama.cpp") == "-home-u-llama-cpp"
    assert workdir_of("C:\\Users\\d\\dev\\funes") == "C--Users-d-dev-funes"
    assert workdir_of("/") == "" and workdir_of(None) == ""
    resolve = RepoResolver()
    assert resolve(str(tmp_path)) == ""  # not a repository
    assert resolve(str(tmp_path / "gone")) == ""
    assert resolve(None) == ""


def test_summary_line_and_parse_warnings(funes_home: Home, tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    turns = [
        make_turn("s", 0, text=f"export GITHUB_TOKEN={token}"),
        make_turn("s", 2),  # seq jumps 0 → 2: a warning, not a refusal
    ]
    write_turns_file(corpus / "f.funes.jsonl", turns, mtime=T0)
    code, out, err = cli("index", str(corpus), "--wait")
    assert code == 0
    assert re.fullmatch(
        r"indexed 1 file: 2 turns, 2 chunks \(1 redaction: github_token×1\); 0 rejected; "
        r"embeddings owed: 0\n",
        out,
    ), out
    assert "warning: " in err and "seq is not dense" in err
    assert token not in json.dumps([r.text for r in open_store(home=funes_home).scan()])


def test_home_and_state_files_are_private(funes_home: Home, tmp_path: Path) -> None:
    write_session(tmp_path / "c" / "f.funes.jsonl", "s", 1)
    index(funes_home, path=tmp_path / "c")
    mode = lambda p: p.stat().st_mode & 0o777  # noqa: E731
    assert mode(funes_home.root) == 0o700
    assert mode(funes_home.memory_dir) == 0o700
    assert mode(funes_home.state_path) == 0o600
    assert mode(funes_home.lock_path) == 0o600


def test_rebuild_keeps_the_old_memory_when_it_holds_turns_the_new_one_lacks(
    funes_home: Home, tmp_path: Path
) -> None:
    write_session(tmp_path / "c" / "a.funes.jsonl", "a", 2)
    index(funes_home, path=tmp_path / "c")
    b = write_session(tmp_path / "d" / "b.funes.jsonl", "b", 2)
    messages: list[str] = []
    report = index(funes_home, messages, path=tmp_path / "d", rebuild=True)
    assert report.rebuilt_from is not None and report.rebuilt_from.name.startswith("memory.old-")
    assert (report.rebuilt_from / "chunks.lance").is_dir()
    assert set(stored(funes_home)) == expected_ids(b)
    assert list(State.load(funes_home.state_path).files) == [str(b)]
    assert messages[-1] == (
        f"note: kept the old memory at {report.rebuilt_from}: 2 of its turns (1 session) are not in "
        "the new one (their transcripts are gone, or the run stopped early); "
        "delete it once you no longer need them"
    )


def test_rebuild_deletes_the_old_memory_once_the_new_one_holds_all_its_turns(
    funes_home: Home, tmp_path: Path
) -> None:
    """No copy of the old memory is left in $FUNES_HOME after a rebuild that lost nothing."""
    a = write_session(tmp_path / "c" / "a.funes.jsonl", "a", 2)
    index(funes_home, path=tmp_path / "c")
    write_session(tmp_path / "c" / "a.funes.jsonl", "a", 3)  # the session grew meanwhile
    messages: list[str] = []
    report = index(funes_home, messages, path=tmp_path / "c", rebuild=True)
    assert report.rebuilt_from is None
    assert not list(funes_home.root.glob("memory.old-*"))
    assert set(stored(funes_home)) == expected_ids(a)
    assert messages[-1] == "note: rebuilt; deleted the old memory (the new one holds every turn it held)"


def test_a_rebuild_that_fails_keeps_the_old_memory_intact_and_says_so(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = write_session(tmp_path / "c" / "a.funes.jsonl", "a", 2)
    index(funes_home, path=tmp_path / "c")

    def broken(self: object, *args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(engine.Indexer, "run", broken)
    messages: list[str] = []
    with pytest.raises(OSError, match="No space left"):
        index(funes_home, messages, path=tmp_path / "c", rebuild=True)
    (old,) = funes_home.root.glob("memory.old-*")
    assert messages[-1] == f"note: the rebuild did not finish; the old memory is intact at {old}"
    assert {r.id for r in LanceStore(old).scan()} == expected_ids(a)


def test_model_mismatch_is_refused_with_the_exact_message(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session(tmp_path / "c" / "f.funes.jsonl", "s", 1)
    assert cli("index", str(tmp_path / "c"), "--wait")[0] == 0  # built with the hash test double
    monkeypatch.delenv("FUNES_EMBEDDER")  # the memory names its model; no installed embedder has it
    code, out, err = cli("index", str(tmp_path / "c"))
    assert code == 1 and out == ""
    assert err == (
        f"funes: memory {funes_home.memory_dir} was built with funes-test/hash-embedder, which no installed "
        "embedder provides (was its plugin removed?); install it again, or re-embed the memory with "
        "`funes index --rebuild --model NAME`\n"
    )
    code, out, err = cli("index", str(tmp_path / "c"), "--model", "minilm")  # asking for another model
    assert code == 1 and out == ""
    assert err == (
        f"funes: memory {funes_home.memory_dir} was built with funes-test/hash-embedder, but --model is "
        "sentence-transformers/all-MiniLM-L6-v2 (int8 onnx); re-embed it with "
        "`funes index --rebuild --model 'sentence-transformers/all-MiniLM-L6-v2 (int8 onnx)'`, "
        "or drop --model\n"
    )
    assert open_store(home=funes_home).count() == 1


# ----------------------------------------------------------------------------- processes: lock, kill -9


def _funes(home: Home, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "funes_core", *args],
        env=funes_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_second_writer_fails_fast_naming_the_holder(funes_home: Home, tmp_path: Path) -> None:
    write_session(tmp_path / "c" / "f.funes.jsonl", "s", 1)
    with write_lock(funes_home):
        code, out, err = cli("index", str(tmp_path / "c"))
    assert (code, out) == (75, "")  # EX_TEMPFAIL: hooks retry on it
    assert err == f"funes: another funes index is running (pid {os.getpid()}); retry in a moment\n"
    assert cli("index", str(tmp_path / "c"))[0] == 0  # released


def _poll_reader(home: Home, stop: Callable[[int], bool], deadline: float, *, thorough: bool = True) -> int:
    """Read the memory as often as possible while a writer runs; any read error fails the test.

    ``stop`` gets the row count a reader last saw (0 before the memory exists). ``thorough``
    also runs a text search and the status counts on every round (slower rounds).
    """
    seen = 0
    reader = None
    while not stop(seen):
        assert time.monotonic() < deadline, "the indexer did not get there in time"
        time.sleep(0.005)  # pacing only: leave the CPU to the writer
        if reader is None:
            try:
                reader = open_store(home=home)
            except NoIndexError:
                continue
        seen = reader.count()
        if thorough:
            reader.text_search("parser flaky flush", 5)
            reader.stats()
            reader = None  # a fresh open every round, like separate `funes recall` processes
    return seen


@pytest.mark.slow
def test_two_indexers_one_indexes_the_other_reports_the_lock_and_readers_never_fail(
    funes_home: Home, tmp_path: Path
) -> None:
    corpus = tmp_path / "c"
    for i in range(40):
        write_session(corpus / f"f{i}.funes.jsonl", f"s{i}", 12, mtime=T0 + i)
    procs = [_funes(funes_home, "index", str(corpus)) for _ in range(2)]
    _poll_reader(funes_home, lambda _seen: all(p.poll() is not None for p in procs), time.monotonic() + 120)
    results = [(p.returncode, *p.communicate()) for p in procs]
    winners = [r for r in results if r[0] == 0]
    losers = [r for r in results if r[0] != 0]
    assert len(winners) == 1 and len(losers) == 1, results
    winner_pid = procs[results.index(winners[0])].pid
    assert losers[0] == (
        75,
        "",
        f"funes: another funes index is running (pid {winner_pid}); retry in a moment\n",
    )
    assert winners[0][1].startswith("indexed 40 files: ")
    assert open_store(home=funes_home).count() == len(expected_ids(*corpus.iterdir()))


@pytest.mark.slow
def test_kill_9_mid_run_then_rerun_stores_the_same_rows_without_duplicates(
    funes_home: Home, tmp_path: Path
) -> None:
    spool = funes_home.spool_dir / "claude"
    files = [write_session(spool / f"s{i:03d}.funes.jsonl", f"s{i:03d}", 5, mtime=T0 + i) for i in range(600)]
    want = expected_ids(*files)
    LanceStore(tmp_path / "warm-up")  # import lancedb here first, so the reader keeps up with the writer
    proc = _funes(funes_home, "index")
    try:
        # kill -9 at the first commit a reader can see (polling the store, not sleeping)
        _poll_reader(funes_home, lambda seen: seen > 0, time.monotonic() + 120, thorough=False)
        assert proc.poll() is None, "the run finished before it could be interrupted; grow the corpus"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.communicate()  # reap it and close its pipes
    assert proc.returncode == -signal.SIGKILL
    mid = open_store(home=funes_home)
    assert 0 < mid.count() < len(want), "killed while it was still writing rows"
    assert any(p.name.endswith(".jsonl") for p in spool.iterdir())
    rerun = _funes(funes_home, "index", "--wait")
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    rows = open_store(home=funes_home).scan()
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids)), "no duplicates"
    assert set(ids) == want, "the same rows as a clean run"
    assert open_store(home=funes_home).stats().owed == 0
    assert not any(p.name.endswith(".jsonl") for p in spool.iterdir()), "the spool is drained"
    assert out.rstrip().endswith("embeddings owed: 0")


def test_nothing_to_index_creates_no_memory(funes_home: Home, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, out, _ = cli("index", str(tmp_path / "empty"))
    assert (code, out) == (0, "indexed 0 files: 0 turns, 0 chunks; 0 rejected; embeddings owed: 0\n")
    code, out, _ = cli("index")
    assert code == 0
    with pytest.raises(NoIndexError):
        open_store(home=funes_home)


def test_a_stored_spool_file_left_by_a_crash_is_deleted_without_rereading(
    funes_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    import funes_core.ingest.engine as engine

    f = write_session(funes_home.spool_dir / "claude" / "s.funes.jsonl", "s", 4)
    with monkeypatch.context() as patch:
        patch.setattr(engine, "_remove_if_unchanged", lambda src: False)  # "crashed" before the unlink
        index(funes_home)
    assert f.exists() and State.load(funes_home.state_path).files[str(f)].tier == int(Tier.TOOL_RESULT)
    report = index(funes_home)
    assert (report.files, report.chunks, report.spool_deleted) == (0, 0, 1)
    assert not f.exists() and State.load(funes_home.state_path).files == {}


def test_a_deleted_memory_is_rebuilt_by_the_next_run(funes_home: Home, tmp_path: Path) -> None:
    import shutil

    f = write_session(tmp_path / "c" / "f.funes.jsonl", "s", 4)
    index(funes_home, path=tmp_path / "c")
    shutil.rmtree(funes_home.memory_dir)
    report = index(funes_home, path=tmp_path / "c")
    assert report.chunks == len(expected_ids(f))
    assert set(stored(funes_home)) == expected_ids(f)


# ----------------------------------------------------------------------------- bounded memory (issue 13)


def _indexer(home: Home, store: LanceStore, state: State, messages: list[str], **kw: Any) -> Indexer:
    return Indexer(home, store, HashEmbedder(), state=state, redactor=None, warn=messages.append, **kw)


def _open_for_write(home: Home) -> LanceStore:
    home.ensure()
    store = open_store(home=home, create=True, read_consistency_interval=None)
    store.stamp_model(HashEmbedder().stamp)
    return store


def test_a_file_larger_than_the_parse_cache_is_streamed_in_slices(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory follows a slice and a batch, not the file: a 100 MB transcript must not be held whole."""
    monkeypatch.setattr(engine, "PARSE_CACHE_BYTES", 2_000)
    monkeypatch.setattr(engine, "GROUP_TURNS", 4)
    f = write_session(tmp_path / "c" / "big.funes.jsonl", "big", 40)
    assert f.stat().st_size > 2_000
    store = _open_for_write(funes_home)
    sizes: list[int] = []
    real_add = store.add

    def add(rows: Any) -> int:
        sizes.append(len(rows))
        return real_add(rows)

    monkeypatch.setattr(store, "add", add)
    state, messages = State(), []
    indexer = _indexer(funes_home, store, state, messages, write_batch_rows=10)
    report = indexer.run(discover(funes_home, IndexOptions(path=tmp_path / "c"), state))
    assert {r.id for r in store.scan()} == expected_ids(f)
    assert report.rejected == [] and report.chunks == len(expected_ids(f))
    assert len(sizes) >= 6 and max(sizes) < 10 + 4 * 3  # one batch plus at most one slice's rows
    assert state.files[str(f)].tier == 3
    assert not indexer._cache  # never held whole


def test_a_large_file_changed_between_its_passes_is_left_for_the_next_run(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "PARSE_CACHE_BYTES", 2_000)
    f = write_session(tmp_path / "c" / "big.funes.jsonl", "big", 20)
    good = f.read_text()
    real = Indexer._turns_of

    def edit_after_validation(self: Indexer, src: engine.SourceFile) -> Any:
        turns = real(self, src)
        f.write_text(good + "{not json\n")  # an editor saves in place between the two passes
        return turns

    monkeypatch.setattr(Indexer, "_turns_of", edit_after_validation)
    messages: list[str] = []
    report = index(funes_home, messages, path=tmp_path / "c")
    assert report.rejected == [] and report.files_left == 1
    assert any("changed while it was being indexed" in m for m in messages)
    state = State.load(funes_home.state_path)
    assert str(f) not in state.files and str(f) not in state.refused
    monkeypatch.setattr(Indexer, "_turns_of", real)
    f.write_text(good)
    os.utime(f, (T0 + 5, T0 + 5))
    index(funes_home, path=tmp_path / "c")
    assert set(stored(funes_home)) == expected_ids(f)


def test_the_embedding_phase_optimizes_first_and_every_few_thousand_vectors(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vector commits find their rows through the id index; rows outside it (just written, or moved
    by earlier commits) are scanned, so the phase folds them in before it starts and as it goes."""
    monkeypatch.setattr(engine, "OPTIMIZE_EVERY_VECTORS", 10)
    monkeypatch.setattr(engine, "EMBED_BATCH", 4)
    monkeypatch.setattr(engine, "VECTOR_COMMIT_SECONDS", 0.0)  # a commit every 4 vectors
    f = write_session(tmp_path / "c" / "f.funes.jsonl", "s", 30)
    store = _open_for_write(funes_home)
    events: list[str] = []
    real_optimize, real_set = store.optimize, store.set_vectors

    def optimize() -> None:
        events.append("optimize")
        real_optimize()

    def set_vectors(vectors: Any) -> None:
        events.append(f"set {len(vectors)}")
        real_set(vectors)

    monkeypatch.setattr(store, "optimize", optimize)
    monkeypatch.setattr(store, "set_vectors", set_vectors)
    state, messages = State(), []
    indexer = _indexer(funes_home, store, state, messages, vector_commit_rows=4)
    report = indexer.run(discover(funes_home, IndexOptions(path=tmp_path / "c"), state))
    assert report.owed == 0 and report.embedded == len(expected_ids(f)) > 20
    assert events[0] == "optimize" and events[-1] == "optimize"
    since = 0
    for event in events[1:-1]:
        if event == "optimize":
            assert since >= 10
            since = 0
        else:
            since += int(event.split()[1])
            assert since < 10 + 4  # at most one commit past the cadence
    assert events.count("optimize") >= 5
    assert any(ix.columns == ["id"] for ix in store._tbl().list_indices())


def test_a_small_run_embeds_without_an_extra_optimize(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session(tmp_path / "c" / "f.funes.jsonl", "s", 2)
    store = _open_for_write(funes_home)
    calls: list[int] = []
    real_optimize = store.optimize
    monkeypatch.setattr(store, "optimize", lambda: (calls.append(store.stats().owed), real_optimize()))
    state, messages = State(), []
    indexer = _indexer(funes_home, store, state, messages)
    indexer.run(discover(funes_home, IndexOptions(path=tmp_path / "c"), state))
    assert calls == [0]  # once, at the end, everything embedded

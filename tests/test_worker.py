"""The background embedding worker: one at a time, resumable after ``kill -9``, observable by
``funes status``, stopped cleanly by a full disk, and what ``install`` and ``index --wait`` make of it.

Most tests run the worker in this process on the hash test double (the model is not what is
tested); the ones marked ``slow`` start real detached worker processes, as ``funes index`` does.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

import funes_echo
from funes_core import portable
from funes_core.faces.cli.app import make_app
from funes_core.home import Home, write_lock
from funes_core.host.manager import load_plugins
from funes_core.ingest import worker as worker_module
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.ingest.worker import (
    DEFAULT_RATE,
    Outcome,
    Progress,
    WorkerOptions,
    WorkerStart,
    ensure_worker,
    estimate_seconds,
    is_disk_full,
    lock_path,
    progress_path,
    run_worker,
    worker_alive,
)
from funes_core.models.embed import HashEmbedder
from funes_core.read.status import EmbeddingStatus, collect_status
from funes_core.store import lance as lance_module
from funes_core.store import open_store
from funes_core.store.lance import LanceStore
from funes_core.turns.format import Block, Turn, write_turns_file
from funes_core.wiring.integrations.common import UI, Orchestrator, RunResult, run_subprocess
from funes_core.wiring.integrations.install import install

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
WORKER = [sys.executable, "-m", "funes_core", "index", "--worker"]
#: In-process runs keep this process's priority (a detached worker lowers its own).
HERE = WorkerOptions(background=False)


@pytest.fixture
def funes_home(funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> Home:
    """The isolated home, with the CLI and every worker process on the hash test double."""
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    return funes_home


def _turns(sid: str, n: int) -> list[Turn]:
    return [
        Turn(
            sid,
            f"{sid}-{i}",
            i,
            f"2026-03-05T10:{i // 60:02d}:{i % 60:02d}Z",
            "user",
            "claude",
            (Block("text", f"wombat {sid} note {i} about the flaky parser"),),
        )
        for i in range(n)
    ]


def text_only_memory(
    home: Home, tmp_path: Path, sessions: int = 3, turns: int = 40, *, name: str = "s"
) -> int:
    """A memory whose rows are all stored and all still owed an embedding; returns the rows added."""
    for s in range(sessions):
        write_turns_file(tmp_path / "c" / f"{name}{s}.funes.jsonl", _turns(f"{name}{s}", turns))
    report = run_index(
        IndexOptions(path=tmp_path / "c", embed="none"),
        home=home,
        embedder=HashEmbedder(),
        warn=lambda _: None,
    )
    assert report.owed == report.chunks == sessions * turns
    return report.chunks


def owed(home: Home) -> int:
    return open_store(home=home).stats().owed


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.fixture
def holder(funes_home: Home) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """Start a stand-in worker that only holds ``embed.lock`` (handed over like the real one)."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        fd = os.open(lock_path(funes_home.ensure()), os.O_RDWR | os.O_CREAT, 0o600)
        assert portable.try_lock(fd)
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], pass_fds=(fd,))
        os.close(fd)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


# ----------------------------------------------------------------------------- the worker in-process


def test_worker_embeds_everything_in_committed_batches_and_records_progress(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FUNES_STATS", "on")
    rows = text_only_memory(funes_home, tmp_path, sessions=1, turns=25)
    seen: list[int] = []
    outcome = run_worker(
        funes_home,
        embedder=HashEmbedder(),
        options=WorkerOptions(commit_rows=10, background=False),
        on_progress=lambda progress: seen.append(progress.done),
        log=lambda _: None,
    )
    assert outcome is Outcome.DONE
    store = open_store(home=funes_home)
    assert store.stats().owed == 0 and store.count() == rows
    commits = sorted(set(seen))
    assert commits == [0, 10, 20, rows], "three commits of at most 10 vectors"
    final = Progress.load(progress_path(funes_home))
    assert final is not None and (final.state, final.done, final.owed, final.error) == ("done", rows, 0, None)
    assert final.rate and final.rate > 0
    # re-indexing waits for a backlog worth it (each optimize gives the vector index a segment):
    # these few rows are left for BM25 to scan unindexed, below the bound
    assert 0 < store._tbl().index_stats("text_idx").num_unindexed_rows < lance_module.UPKEEP_ROWS
    assert not worker_alive(funes_home), "the lock is released on return"
    # each commit is an index event of `funes stats`, which counts the embeddings and their time
    stats = funes_home.root / "stats" / "events.jsonl"
    recorded = [json.loads(line) for line in stats.read_text(encoding="utf-8").splitlines()]
    assert [(e["kind"], e["face"], e["ok"], e["embedded"]) for e in recorded] == [
        ("index", "cli", True, 10),
        ("index", "cli", True, 10),
        ("index", "cli", True, rows - 20),
    ]


def test_recall_answers_between_the_workers_commits_keyword_for_owed_rows_and_hybrid_for_the_rest(
    funes_home: Home, tmp_path: Path
) -> None:
    """A reader opened before the worker started (the MCP server, an agent's ``recall``) keeps
    answering while the worker commits: owed rows by keyword, embedded ones by both legs.

    An owed row is ranked by the keyword leg alone (the vector leg cannot see it), so the best
    keyword match comes first whether or not it is embedded yet, under every profile.
    """
    from funes_core.read.handle import Memory
    from funes_core.read.recall import Leg, RecallParams, recall

    needle = "the quokka migration failed on the staging database"
    turns = [
        Turn("s", f"s-{i}", i, f"2026-03-05T10:00:{i:02d}Z", "user", "claude", (Block("text", text),))
        for i, text in enumerate([f"routine note {i} about the build" for i in range(30)] + [needle])
    ]  # the needle is the newest row: the worker embeds it last
    write_turns_file(tmp_path / "c" / "s.funes.jsonl", turns)
    run_index(IndexOptions(path=tmp_path / "c", embed="none"), home=funes_home, embedder=HashEmbedder())
    memory = Memory.resolve(None, home=funes_home)
    seen: list[tuple[int, list[str], int]] = []

    def ask(params: RecallParams, query: str = "quokka migration") -> list[str]:
        found = recall(memory.store(), query, params, embed_query=memory.embed_query)
        return [h.row.text for h in found.hits]

    def look(progress: Progress) -> None:
        if progress.state != "running" or (seen and seen[-1][0] == progress.done):
            return
        vector_leg = memory.store().vector_search(memory.embed_query("routine note"), 50)
        firsts = [
            ask(RecallParams(k=3, profile=profile, fusion=fusion))[0]
            for profile in ("balanced", "semantic", "lexical")
            for fusion in ("relative", "rrf")
        ]
        seen.append((progress.done, firsts, len(vector_leg)))

    options = WorkerOptions(commit_rows=10, background=False)
    assert run_worker(funes_home, embedder=HashEmbedder(), options=options, on_progress=look) is Outcome.DONE
    assert [done for done, *_ in seen] == [0, 10, 20, 30, 31], "a recall before and after each commit"
    for done, firsts, vectors in seen:
        assert firsts == [needle] * 6, f"the keyword match comes first with {done} rows embedded"
        assert vectors == done, "the vector leg sees exactly the embedded rows, and never fails"
    assert len(memory.store().vector_search(memory.embed_query("quokka"), 50)) == 31, "and every vector"
    assert ask(RecallParams(k=3, legs=(Leg.VECTOR,)))[0] == needle, "embedded, it is found by meaning too"


def test_turns_that_arrive_while_the_worker_holds_the_lock_get_an_indexer(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text_only_memory(funes_home, tmp_path, sessions=1, turns=10)
    started: list[Home] = []
    monkeypatch.setattr(worker_module, "start_indexer", lambda home: started.append(home) or 4242)
    assert run_worker(funes_home, embedder=HashEmbedder(), options=HERE, log=lambda _: None) is Outcome.DONE
    assert started == [], "nothing was waiting: no indexer"
    text_only_memory(funes_home, tmp_path / "more", sessions=1, turns=10, name="later")
    funes_home.mark_dirty("claude")  # a hook's turn, whose own indexer found the lock taken (exit 75)
    assert run_worker(funes_home, embedder=HashEmbedder(), options=HERE, log=lambda _: None) is Outcome.DONE
    assert started == [funes_home], "after its commit, the worker starts the indexer the hook could not"


def test_a_turn_marked_during_the_workers_last_commits_gets_an_indexer_before_it_exits(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27: the spacing of the indexers the worker starts must not strand a marker at its exit.

    A hook marks its spool during every commit (its own indexer found the lock taken). The first
    release starts an indexer; the next ones fall inside INDEXER_SPACING_SECONDS (the clock stands
    still); the worker then exits, and nobody else would ever look at the last marker.
    """
    text_only_memory(funes_home, tmp_path, sessions=1, turns=30)
    events: list[str] = []
    real = LanceStore.set_vectors

    def set_vectors(self: LanceStore, vectors: dict[str, object]) -> None:
        real(self, vectors)  # type: ignore[arg-type]
        funes_home.mark_dirty("pi")
        events.append("commit")

    def start_indexer(home: Home) -> int:
        events.append("indexer")
        return 4242

    monkeypatch.setattr(LanceStore, "set_vectors", set_vectors)
    monkeypatch.setattr(worker_module, "start_indexer", start_indexer)
    options = WorkerOptions(commit_rows=10, background=False)
    outcome = run_worker(
        funes_home, embedder=HashEmbedder(), options=options, clock=lambda: 0.0, log=lambda _: None
    )
    assert outcome is Outcome.DONE
    assert events == ["commit", "indexer", "commit", "commit", "indexer"], "one spaced out, one at the exit"


def test_a_second_worker_in_process_does_nothing_while_one_holds_the_lock(
    funes_home: Home, tmp_path: Path, holder: Callable[[], subprocess.Popen[bytes]]
) -> None:
    text_only_memory(funes_home, tmp_path, sessions=1, turns=5)
    holder()
    assert worker_alive(funes_home)
    outcome = run_worker(funes_home, embedder=HashEmbedder(), options=HERE, log=lambda _: None)
    assert outcome is Outcome.BUSY
    assert owed(funes_home) == 5, "the busy worker embedded nothing"


def test_full_disk_at_a_commit_stops_the_worker_with_one_line_and_loses_nothing(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = text_only_memory(funes_home, tmp_path)
    real = LanceStore.set_vectors
    calls = 0

    def set_vectors(self: LanceStore, vectors: dict[str, object]) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:  # the second commit hits a full disk, as the write boundary reports it
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self, vectors)  # type: ignore[arg-type]

    monkeypatch.setattr(LanceStore, "set_vectors", set_vectors)
    outcome = run_worker(
        funes_home,
        embedder=HashEmbedder(),
        options=WorkerOptions(commit_rows=50, background=False),
        log=lambda _: None,
    )
    assert outcome is Outcome.STOPPED
    store = open_store(home=funes_home)
    assert store.count() == rows, "nothing stored is lost"
    assert store.stats().owed == rows - 50, "the first commit is kept"
    assert len(store.text_search("wombat flaky parser", 5)) == 5, "the memory still answers"
    progress = Progress.load(progress_path(funes_home))
    assert progress is not None and progress.state == "stopped"
    assert progress.error == (
        "disk full ([Errno 28] No space left on device); free some space, then run `funes index` to resume"
    )
    text = collect_status(home=funes_home).render(NOW)
    [line] = [ln for ln in text.splitlines() if ln.startswith("embeddings owed")]
    assert line == f"embeddings owed: {rows - 50} — background embedding stopped: {progress.error}"
    monkeypatch.setattr(LanceStore, "set_vectors", real)
    assert run_worker(funes_home, embedder=HashEmbedder(), options=HERE, log=lambda _: None) is Outcome.DONE
    assert owed(funes_home) == 0, "the next run resumes where it stopped"


def test_a_failed_optimize_is_retried_at_the_next_commit_not_a_reason_to_stop(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = text_only_memory(funes_home, tmp_path, sessions=1, turns=20)
    monkeypatch.setattr(lance_module, "UPKEEP_ROWS", 1)  # every commit leaves an optimize due
    real = LanceStore.optimize
    calls = 0

    def optimize(self: LanceStore) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("LanceError(IO): commit conflict")
        real(self)

    monkeypatch.setattr(LanceStore, "optimize", optimize)
    options = WorkerOptions(commit_rows=10, background=False)
    logged: list[str] = []
    assert run_worker(funes_home, embedder=HashEmbedder(), options=options, log=logged.append) is Outcome.DONE
    assert owed(funes_home) == 0 and open_store(home=funes_home).count() == rows
    assert any(
        line.startswith("optimize failed, retried after the next batch: RuntimeError") for line in logged
    )
    assert open_store(home=funes_home)._tbl().index_stats("text_idx").num_unindexed_rows == 0


def test_too_little_free_space_stops_before_writing(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = text_only_memory(funes_home, tmp_path, sessions=1, turns=10)
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda _p: usage._replace(free=1024 * 1024))
    assert (
        run_worker(funes_home, embedder=HashEmbedder(), options=HERE, log=lambda _: None) is Outcome.STOPPED
    )
    progress = Progress.load(progress_path(funes_home))
    assert progress is not None and progress.error is not None
    assert progress.error.startswith("disk full (1 MB free on the disk holding ")
    assert owed(funes_home) == rows


def test_lowering_priority_by_hand_leaves_the_terminal_sessions_group_alone() -> None:
    script = (
        "import os; from pathlib import Path; from funes_core.portable import lower_priority\n"
        "group = Path('/proc/self/autogroup'); before = group.read_text() if group.exists() else ''\n"
        "lower_priority()\n"
        "print(os.getpriority(os.PRIO_PROCESS, 0), (group.read_text() if group.exists() else '') == before)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["19", "True"], "nice 19 for itself; its session's autogroup untouched"


def test_disk_full_is_recognised_however_it_is_reported() -> None:
    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert is_disk_full(RuntimeError("LanceError(IO): write failed: No space left on device (os error 28)"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))


def test_a_model_mismatch_stops_the_worker_with_the_rebuild_hint(funes_home: Home, tmp_path: Path) -> None:
    text_only_memory(funes_home, tmp_path, sessions=1, turns=3)
    other = HashEmbedder(model="funes-test/another-model")
    assert run_worker(funes_home, embedder=other, options=HERE, log=lambda _: None) is Outcome.STOPPED
    progress = Progress.load(progress_path(funes_home))
    assert progress is not None and progress.error is not None
    assert progress.error.endswith("Rebuild it with: funes index --rebuild")
    assert owed(funes_home) == 3


def test_wait_does_not_trust_a_finished_worker_while_rows_are_owed(
    funes_home: Home, tmp_path: Path, holder: Callable[[], subprocess.Popen[bytes]]
) -> None:
    """A worker lingering after its run (state ``done``, lock held) has not seen rows stored since
    its last look, e.g. by the very ``index --wait`` that waits: waiting goes on until nothing is
    owed, and when that worker exits, the waiter embeds the rest itself."""
    from funes_core.ingest.worker import wait_for_embeddings

    rows = text_only_memory(funes_home, tmp_path, sessions=1, turns=6)
    lingering = holder()
    Progress(state="done", pid=lingering.pid).save(progress_path(funes_home))
    naps: list[float] = []

    def sleep(seconds: float) -> None:
        naps.append(seconds)
        if len(naps) == 3:  # the lingering worker exits without having looked again
            lingering.kill()
            lingering.wait()

    final = wait_for_embeddings(funes_home, sleep=sleep, poll=0.01, embedder=HashEmbedder())
    assert len(naps) == 3, "it kept waiting while the finished worker still held the lock"
    assert (final.state, final.owed, final.done) == ("done", 0, rows)
    assert owed(funes_home) == 0


# ----------------------------------------------------------------------------- status: the estimate


def test_status_estimate_from_the_workers_rate(
    funes_home: Home, holder: Callable[[], subprocess.Popen[bytes]]
) -> None:
    funes_home.ensure()
    Progress(state="running", pid=4242, owed=1200, rate=10.0).save(progress_path(funes_home))
    holder()
    status = collect_status_embedding(funes_home)
    assert status.alive and status.eta_seconds(1200) == 120.0
    assert status.describe(1200, NOW) == (
        "the background worker (pid 4242) is embedding 10.0/s, done in about 2 min (around 12:02 UTC)"
    )
    assert status.describe(90_000, NOW) == (
        "the background worker (pid 4242) is embedding 10.0/s, done in about 2 h 30 min (around 14:30 UTC)"
    )
    doc = status.to_json(1200, NOW)
    assert (doc["worker_running"], doc["rate_per_second"], doc["eta_seconds"], doc["eta"]) == (
        True,
        10.0,
        120,
        "2026-03-10T12:02:00Z",
    )


def collect_status_embedding(home: Home) -> EmbeddingStatus:
    from funes_core.read.status import collect_embedding

    found = collect_embedding(home)
    assert found is not None
    return found


def test_status_before_any_rate_and_without_a_worker(funes_home: Home) -> None:
    funes_home.ensure()
    assert estimate_seconds(600, None) == 600 / DEFAULT_RATE
    Progress(state="running", pid=4242, owed=10).save(progress_path(funes_home))
    dead = collect_status_embedding(funes_home)  # nobody holds the lock: killed
    assert not dead.alive and dead.eta_seconds(10) is None
    assert (
        dead.describe(10, NOW)
        == "the background worker (pid 4242) stopped unexpectedly; run `funes index` to resume"
    )
    Progress(state="done", pid=4242).save(progress_path(funes_home))
    assert collect_status_embedding(funes_home).describe(3, NOW) == "run `funes index` to embed them"


def test_status_names_a_full_disk_even_when_the_worker_could_not_say_so(
    funes_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    funes_home.ensure()
    Progress(state="running", pid=4242, owed=10).save(progress_path(funes_home))
    usage = shutil.disk_usage(funes_home.root)
    monkeypatch.setattr(shutil, "disk_usage", lambda _p: usage._replace(free=4096))
    assert collect_status_embedding(funes_home).describe(10, NOW) == (
        "background embedding stopped: the disk is full (4.0 KB free); free some space, then run "
        "`funes index` to resume"
    )


# ----------------------------------------------------------------------------- processes


@pytest.mark.slow
def test_one_worker_at_a_time_however_many_runs_ask(
    funes_home: Home, tmp_path: Path, holder: Callable[[], subprocess.Popen[bytes]]
) -> None:
    text_only_memory(funes_home, tmp_path, sessions=1, turns=5)
    first = holder()
    Progress(state="running", pid=first.pid, owed=5).save(progress_path(funes_home))
    # concurrent starters (installs, hooks): none starts a second worker
    results = race_starters(funes_home, 4)
    assert [(r.started, r.pid) for r in results] == [(False, first.pid)] * 4
    # a run of `funes index` names the running worker instead of starting one
    code, out, _ = _cli("index")
    assert code == 0
    assert f"embeddings owed: 5 (the running background worker, pid {first.pid}, is embedding them" in out
    # a worker started by hand exits at once
    done = subprocess.run([*WORKER], env={**os.environ}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "another worker is running; nothing to do" in done.stderr
    assert owed(funes_home) == 5
    # with the holder gone, exactly one of several racing starters starts one
    first.kill()
    first.wait()
    assert not worker_alive(funes_home)
    assert sum(r.started for r in race_starters(funes_home, 4)) == 1
    wait_until(lambda: owed(funes_home) == 0, "the one worker to embed everything")
    wait_until(lambda: not worker_alive(funes_home), "the worker to exit")


def race_starters(home: Home, n: int) -> list[WorkerStart]:
    """``n`` threads calling :func:`ensure_worker` at once, as racing installs and hooks would."""
    results: list[WorkerStart] = []
    threads = [
        threading.Thread(target=lambda: results.append(ensure_worker(home, owed=5, argv=WORKER)))
        for _ in range(n)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(make_app(), list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.slow
def test_a_worker_killed_with_9_is_noticed_by_status_and_resumed_by_the_next_index(
    funes_home: Home, tmp_path: Path
) -> None:
    # fifty commits' worth: the test takes the store lock right after the first one, long before the last
    rows = text_only_memory(funes_home, tmp_path, sessions=10, turns=200)
    start = ensure_worker(funes_home, owed=rows, argv=[*WORKER, "--commit-rows", "40"])
    assert start.started and start.pid
    wait_until(lambda: (Progress.load(progress_path(funes_home)) or Progress()).state == "running", "start")
    assert os.getpriority(os.PRIO_PROCESS, start.pid) == 19, "the detached worker runs at low priority"
    autogroup = Path(f"/proc/{start.pid}/autogroup")
    if autogroup.exists():  # Linux with autogroups: its own session's group is niced too
        assert autogroup.read_text().split()[-1] == "19"
    # let it commit once, then keep it from committing again (it waits for the store lock) and kill it
    wait_until(lambda: (Progress.load(progress_path(funes_home)) or Progress()).done >= 40, "a first commit")
    with write_lock(funes_home, wait=60):
        mid = owed(funes_home)
        os.kill(start.pid, signal.SIGKILL)
        wait_until(lambda: not worker_alive(funes_home), "the kernel to drop the dead worker's lock")
    assert 0 < mid < rows, "killed mid-way"
    report = collect_status(home=funes_home)
    line = next(ln for ln in report.render(NOW).splitlines() if ln.startswith("embeddings owed"))
    assert line == (
        f"embeddings owed: {report.owed} — the background worker (pid {start.pid}) stopped unexpectedly; "
        "run `funes index` to resume"
    )
    assert json.loads(json.dumps(report.to_json(NOW)))["embedding"]["worker_running"] is False
    # the next `funes index` (a hook, or the user) resumes it
    code, out, _ = _cli("index")
    assert code == 0 and "(a background worker, pid " in out
    # Its low priority was checked above: at nice 19 beside a loaded machine's busy processes it
    # would get almost no CPU, and this test is about resuming, not about scheduling.
    resumed = re.search(r"\(a background worker, pid (\d+),", out)
    assert resumed, out
    _renice_to_normal(int(resumed.group(1)))
    wait_until(lambda: owed(funes_home) == 0, "the resumed worker to finish")
    store = open_store(home=funes_home)
    ids = [r.id for r in store.scan()]
    assert len(ids) == len(set(ids)) == rows, "no row lost or duplicated"
    wait_until(lambda: not worker_alive(funes_home), "the worker to exit")


def _renice_to_normal(pid: int) -> None:
    """Give a detached worker normal CPU and disk priority again, where allowed.

    It lowers its own priority once it runs, so wait for that first: a renice before it would be
    undone by the worker itself.
    """
    import psutil

    def lowered() -> bool:
        """The worker's last step of lowering itself (nice, its autogroup, then idle disk) is done."""
        try:
            return bool(psutil.Process(pid).ionice().ioclass == psutil.IOPRIO_CLASS_IDLE)
        except psutil.NoSuchProcess:
            return True  # gone already: nothing to renice
        except Exception:  # no ionice here: the nice value is the sign
            return os.getpriority(os.PRIO_PROCESS, pid) == 19

    wait_until(lowered, "the resumed worker to lower its own priority")
    with contextlib.suppress(psutil.Error):
        psutil.Process(pid).nice(0)
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/autogroup").write_text("0")
    with contextlib.suppress(Exception):  # psutil.Error, or no ionice on this system
        psutil.Process(pid).ionice(psutil.IOPRIO_CLASS_BE)


@pytest.mark.slow
def test_index_wait_attaches_to_the_running_worker_and_returns_when_it_is_done(
    funes_home: Home, tmp_path: Path
) -> None:
    rows = text_only_memory(funes_home, tmp_path, sessions=2, turns=30)
    start = ensure_worker(funes_home, owed=rows, argv=WORKER)
    assert start.started
    done = subprocess.run(
        [sys.executable, "-m", "funes_core", "index", "--wait"],
        env={**os.environ},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("embeddings owed: 0")
    assert owed(funes_home) == 0


# ----------------------------------------------------------------------------- install


class _UI:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.err: list[str] = []

    def ui(self) -> UI:
        return UI(
            out=self.out.append, err=self.err.append, is_terminal=lambda: False, confirm=lambda _q: False
        )


@pytest.fixture
def echo_world(tmp_path: Path, funes_home: Home, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME with the echo agent's config and two sessions; FUNES_HOME is the test's home."""
    fixtures = Path(funes_echo.__file__).parent / "contract_fixtures"
    home = tmp_path / "home"
    shutil.copytree(fixtures / "config-home", home)
    shutil.copytree(fixtures / "home" / ".echo" / "sessions", home / ".echo" / "sessions")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("FUNES_BIN", "funes-under-test")  # cannot be run: the worker falls back
    return home


@pytest.mark.slow
def test_install_returns_before_the_embeddings_are_done_and_says_when_they_will_be(
    funes_home: Home, echo_world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = load_plugins(environ={"FUNES_LOAD_PLUGINS": "echo"}, stderr=io.StringIO())
    ui = _UI()
    # The worker install starts is the real one, held at a gate until the owed count is read: it
    # could embed the 9 chunks (hash embedder) before that, and the test would then say install
    # waited when it did not. Every other funes command goes straight through.
    gate = tmp_path / "gate"
    gated = tmp_path / "funes-gated"
    gated.write_text(
        "#!/bin/sh\n"
        f'if [ "$1 $2" = "index --worker" ]; then while [ ! -e "{gate}" ]; do sleep 0.1; done; fi\n'
        f'exec "{sys.executable}" -m funes_core "$@"\n'
    )
    gated.chmod(0o755)
    monkeypatch.setenv("FUNES_BIN", str(gated))
    started = time.monotonic()
    status = install(Orchestrator(pm=pm, ui=ui.ui(), runner=run_subprocess), "echo")
    assert status == 0, ui.err
    # returned with the text stored and searchable, the embeddings still owed to a live worker
    store = open_store(home=funes_home)
    chunks, left = store.count(), store.stats().owed
    assert chunks > 0 and left > 0, "install did not wait for the embeddings"
    assert store.text_search("parser", 3), "searchable by keyword at once"
    note = next(line for line in ui.out if "searchable now by keyword" in line)
    assert note.startswith("echo: searchable now by keyword, full hybrid recall in about 1 minute (")
    assert ui.out[-1] == "echo: installed"
    assert time.monotonic() - started < 120
    assert worker_alive(funes_home), "a live worker owes them"
    gate.touch()
    wait_until(lambda: owed(funes_home) == 0, "the background worker to finish")
    wait_until(lambda: not worker_alive(funes_home), "the worker to exit")
    assert open_store(home=funes_home).count() == chunks


def test_ctrl_c_during_install_keeps_what_is_stored_and_says_how_to_finish(
    funes_home: Home, echo_world: Path
) -> None:
    pm = load_plugins(environ={"FUNES_LOAD_PLUGINS": "echo"}, stderr=io.StringIO())
    ui = _UI()

    def interrupted(argv: list[str], **_kw: object) -> RunResult:
        # the first index stored part of the history when the user pressed Ctrl-C
        run_index(IndexOptions(harness="echo", limit=1, embed="none"), home=funes_home, warn=lambda _: None)
        raise KeyboardInterrupt

    assert install(Orchestrator(pm=pm, ui=ui.ui(), runner=interrupted), "echo") == 130  # type: ignore[arg-type]
    assert ui.err[-1] == (
        "funes: interrupted — what is stored so far is kept and searchable by keyword; run "
        "`funes integrations install echo` again to finish (it skips what is already done)"
    )
    assert open_store(home=funes_home).text_search("parser", 3), "a working, partial memory"
    assert list((funes_home.spool_dir / "echo").glob("*.funes.jsonl")), "the rest waits in the spool"


# ----------------------------------------------------------------------------- a busy machine


def _ago(minutes: float) -> str:
    from datetime import UTC, datetime, timedelta

    return (datetime.now(UTC) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_status_says_when_the_estimate_stopped_holding(
    funes_home: Home, holder: Callable[[], subprocess.Popen[bytes]]
) -> None:
    """A worker running 20 minutes whose rate says 10/s but that committed 14 vectors in the last
    10 minutes: the machine is busy, and status says so instead of an estimate it cannot keep."""
    funes_home.ensure()
    holder()
    busy = Progress(state="running", pid=4242, owed=3000, rate=10.0, started=_ago(20))
    busy.commits = [(_ago(15), 2048), (_ago(4), 14)]
    busy.save(progress_path(funes_home))
    status = collect_status_embedding(funes_home)
    assert status.busy() and status.recent == 14
    line = status.describe(3000, datetime.now(UTC))
    assert "the machine is busy" in line and "14 chunk(s) in the last 10 minutes" in line
    assert "funes index --wait" in line
    assert status.to_json(3000, datetime.now(UTC))["busy"] is True
    # The same rate with commits that keep up with it: the estimate holds.
    keeping = Progress(state="running", pid=4242, owed=3000, rate=10.0, started=_ago(20))
    keeping.commits = [(_ago(9), 2048), (_ago(5), 2048), (_ago(1), 2048)]
    keeping.save(progress_path(funes_home))
    status = collect_status_embedding(funes_home)
    assert not status.busy() and "embedding 10.0/s" in status.describe(3000, datetime.now(UTC))
    # A worker that started 3 minutes ago has not had a window yet: no verdict.
    young = Progress(state="running", pid=4242, owed=3000, rate=10.0, started=_ago(3))
    young.save(progress_path(funes_home))
    assert not collect_status_embedding(funes_home).busy()


def test_the_worker_records_its_recent_commits(funes_home: Home, tmp_path: Path) -> None:
    text_only_memory(funes_home, tmp_path, sessions=1, turns=25)
    run_worker(funes_home, embedder=HashEmbedder(), options=WorkerOptions(commit_rows=10, background=False))
    progress = Progress.load(progress_path(funes_home))
    assert progress is not None
    assert [n for _at, n in progress.commits] == [10, 10, 5]
    assert progress.recent(datetime.now(UTC)) == 25


def test_waiting_a_person_takes_over_from_the_gentle_worker(
    funes_home: Home, tmp_path: Path, holder: Callable[[], subprocess.Popen[bytes]]
) -> None:
    """``index --wait`` and ``push`` stop a background worker (nice 19) and embed here."""
    from funes_core.ingest.worker import wait_for_embeddings

    rows = text_only_memory(funes_home, tmp_path, sessions=1, turns=6)
    gentle = holder()
    Progress(state="running", pid=gentle.pid, started=_ago(1)).save(progress_path(funes_home))
    final = wait_for_embeddings(funes_home, poll=0.01, embedder=HashEmbedder(), take_over=True)
    assert gentle.wait(timeout=60) != 0, "the background worker was stopped"
    assert (final.state, final.owed, final.done) == ("done", 0, rows)
    assert owed(funes_home) == 0


def test_the_worker_caps_mallocs_arenas_before_it_opens_the_store(
    funes_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text_only_memory(funes_home, tmp_path, sessions=1, turns=3)
    calls: list[str] = []
    monkeypatch.setattr(portable, "limit_malloc_arenas", lambda n: calls.append(f"arenas {n}") or True)
    import funes_core.store as store_package

    opener = store_package.open_store

    def open_store(*args: object, **kwargs: object) -> object:
        calls.append("open")
        return opener(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store_package, "open_store", open_store)
    assert run_worker(funes_home, embedder=HashEmbedder(), options=HERE, log=lambda _: None) is Outcome.DONE
    assert calls[:2] == ["arenas 2", "open"], "two arenas before LanceDB starts its threads"

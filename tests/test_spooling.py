"""Convert under a lock, then make sure an indexer runs (issue 19 item 2): nothing lost, nothing waiting.

Every hook ends in :func:`funes_core.wiring.spooling.convert_into_spool`: the spool file is written
under the integration's lock, the spool is marked dirty, and an indexer is started; an indexer
that finds the store lock taken exits 75, because the one holding it looks at the dirty markers
before it lets go and after. These tests prove the protocol in-process (an indexer that serves
a spool written while it ran) and end to end: 20 hook events from 3 agents at the same moment,
through the real hook entry points and the real ``funes``, every turn recallable and nothing left
waiting, with no further event to nudge it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from funes_core.home import DIRTY_NAME, Home, LockBusyError, write_lock
from funes_core.ingest import worker as worker_module
from funes_core.ingest.engine import Indexer, IndexOptions, run_index
from funes_core.ingest.markers import store_lock
from funes_core.models.embed import HashEmbedder
from funes_core.store import NoIndexError, open_store
from funes_core.turns.format import Block, Turn, write_turns_file

T0 = 1_772_000_000


def spool_turns(home: Home, ident: str, sid: str, words: list[str]) -> Path:
    turns = [
        Turn(sid, f"t{n}", n, "2026-03-01T10:00:00Z", "user", ident, (Block("text", f"note {word}"),))
        for n, word in enumerate(words)
    ]
    folder = home.spool_dir / ident
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return write_turns_file(folder / f"{sid}.funes.jsonl", turns, mtime=T0)


def found(home: Home, word: str) -> bool:
    try:
        return bool(open_store(home=home).text_search(word, 3))
    except NoIndexError:
        return False


def test_an_indexer_serves_a_spool_written_while_it_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook's own indexer exited 75 meanwhile: the running one must not leave its file waiting."""
    home = Home(tmp_path / "fh").ensure()
    spool_turns(home, "claude", "first", ["aardvark"])
    real_run = Indexer.run
    produced: list[bool] = []

    def run_and_produce(self: Indexer, discovery: object, **kw: Any) -> object:
        report = real_run(self, discovery, **kw)  # type: ignore[arg-type]
        if not produced:  # once, while this indexer still holds the store lock
            produced.append(True)
            spool_turns(home, "codex", "second", ["bandicoot"])
            home.mark_dirty("codex")
            # ... and the codex hook's own indexer finds the lock taken: it exits 75.
            done = subprocess.run(
                [sys.executable, "-m", "funes_core", "index", "--harness", "codex"],
                env={**os.environ, "FUNES_HOME": str(home.root), "FUNES_EMBEDDER": "hash"},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 75, done.stderr
        return report

    monkeypatch.setattr(Indexer, "run", run_and_produce)
    report = run_index(
        IndexOptions(harness="claude"), home=home, embedder=HashEmbedder(), warn=lambda m: None
    )
    assert found(home, "aardvark") and found(home, "bandicoot"), "the late spool file was indexed"
    assert report.files == 2
    assert not list(home.spool_dir.glob("*/*.funes.jsonl")), "nothing left waiting"
    assert home.dirty_ids() == []


def test_new_text_interrupts_embedding_and_is_stored_first(tmp_path: Path) -> None:
    home = Home(tmp_path / "fh").ensure()
    spool_turns(home, "pi", "long", [f"word{n}" for n in range(200)])

    class Producing(HashEmbedder):
        calls = 0

        def embed_documents(self, texts: list[str]) -> list[list[float]]:  # type: ignore[override]
            Producing.calls += 1
            if Producing.calls == 2:
                spool_turns(home, "pi", "late", ["capybara"])
                home.mark_dirty("pi")
            return super().embed_documents(texts)

    report = run_index(IndexOptions(), home=home, embedder=Producing(), warn=lambda m: None)
    assert found(home, "capybara")
    assert report.owed == 0, "embedding carried on after the new text was stored"
    assert home.dirty_ids() == [] and not list(home.spool_dir.glob("*/*.funes.jsonl"))


def test_a_marker_left_by_an_indexer_that_could_not_run_is_served_by_the_next(tmp_path: Path) -> None:
    home = Home(tmp_path / "fh").ensure()
    spool_turns(home, "hermes", "waiting", ["dugong"])
    home.mark_dirty("hermes")
    with write_lock(home):  # somebody else is indexing: a hook's own indexer exits 75 here ...
        pass
    run_index(
        IndexOptions(harness="hermes"), home=home, embedder=HashEmbedder()
    )  # ... the next one serves it
    assert found(home, "dugong") and home.dirty_ids() == []
    assert not (home.spool_dir / "hermes" / DIRTY_NAME).exists()


# -- every holder of the store lock serves the markers set while it held it (issue 27) ----------


def _marking_run(monkeypatch: pytest.MonkeyPatch, home: Home, *, fail: bool = False) -> None:
    """The first :meth:`Indexer.run` writes a pi turn and marks its spool, as a hook whose own
    indexer found the lock taken (exit 75) would, while the run holds the lock."""
    real_run = Indexer.run
    produced: list[bool] = []

    def run_and_produce(self: Indexer, discovery: object, **kw: Any) -> object:
        report = real_run(self, discovery, **kw)  # type: ignore[arg-type]
        if not produced:
            produced.append(True)
            spool_turns(home, "pi", "late", ["wombat"])
            home.mark_dirty("pi")
            if fail:
                raise RuntimeError("the disk went away")
        return report

    monkeypatch.setattr(Indexer, "run", run_and_produce)


def _started(monkeypatch: pytest.MonkeyPatch) -> list[Home]:
    """The detached ``funes index`` runs started, recorded instead of run."""
    started: list[Home] = []
    monkeypatch.setattr(worker_module, "start_indexer", lambda home: started.append(home) or 4242)
    return started


def test_a_run_whose_budget_is_spent_still_gets_an_indexer_for_turns_marked_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before issue 27 the follow-up look was skipped when the budget was hit: the marker stayed."""
    home = Home(tmp_path / "fh").ensure()
    spool_turns(home, "claude", "first", ["aardvark"])
    _marking_run(monkeypatch, home)
    started = _started(monkeypatch)
    ticks = iter(range(10_000))
    report = run_index(
        IndexOptions(harness="claude", budget=5.0),
        home=home,
        embedder=HashEmbedder(),
        warn=lambda m: None,
        clock=lambda: 10.0 * next(ticks),  # every look at the clock is 10 s later: over budget at once
    )
    assert report.budget_hit
    assert started == [home], "the budget is the caller's: the late turn gets a run of its own"
    run_index(IndexOptions(), home=home, embedder=HashEmbedder(), warn=lambda m: None)  # that run
    assert found(home, "wombat") and home.dirty_ids() == []


def test_a_path_run_serves_turns_marked_while_it_held_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``funes index PATH`` holds the same lock as a spool run, so it owes the same look."""
    home = Home(tmp_path / "fh").ensure()
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    write_turns_file(
        corpus / "s.funes.jsonl",
        [Turn("s", "t0", 0, "2026-03-01T10:00:00Z", "user", "claude", (Block("text", "note aardvark"),))],
    )
    _marking_run(monkeypatch, home)
    started = _started(monkeypatch)
    run_index(IndexOptions(path=corpus), home=home, embedder=HashEmbedder(), warn=lambda m: None)
    assert found(home, "aardvark") and found(home, "wombat"), "the late spool file was indexed in-process"
    assert home.dirty_ids() == [] and started == []


def test_a_run_that_fails_still_gets_an_indexer_for_turns_marked_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Home(tmp_path / "fh").ensure()
    spool_turns(home, "claude", "first", ["aardvark"])
    _marking_run(monkeypatch, home, fail=True)
    started = _started(monkeypatch)
    with pytest.raises(RuntimeError, match="disk went away"):
        run_index(IndexOptions(), home=home, embedder=HashEmbedder(), warn=lambda m: None)
    assert started == [home]


def test_a_writer_that_is_not_an_index_run_serves_the_markers_once_it_lets_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """forget, purge and scrub take the lock through store_lock; a busy lock serves nothing."""
    home = Home(tmp_path / "fh").ensure()
    started = _started(monkeypatch)
    with store_lock(home):
        home.mark_dirty("codex")  # its hook's indexer exits 75 now
        assert started == [], "not while the lock is held: that indexer would find it taken too"
    assert started == [home]
    with write_lock(home), pytest.raises(LockBusyError), store_lock(home):
        pass
    assert started == [home], "the lock was never ours: its holder serves"


# -- 20 hook events from 3 agents at once --------------------------------------------------------


def _claude(home: Path) -> tuple[Path, list[str]]:
    sid = str(uuid.UUID(int=1))
    path = home / ".claude" / "projects" / "-work-app" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("", encoding="utf-8")
    return path, []


def _claude_turn(path: Path, n: int, word: str) -> dict[str, object]:
    record = {
        "type": "user",
        "uuid": f"u{n}",
        "parentUuid": None,
        "sessionId": path.stem,
        "timestamp": f"2026-03-01T10:00:{n:02d}Z",
        "cwd": "/work/app",
        "message": {"role": "user", "content": f"please remember {word}"},
    }
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    return {"hook_event_name": "Stop", "transcript_path": str(path), "session_id": path.stem}


def _codex(home: Path) -> Path:
    sid = "019a0000-0000-7000-8000-0000000000c0"
    path = home / ".codex" / "sessions" / "2026" / "03" / "01" / f"rollout-2026-03-01T10-00-00-{sid}.jsonl"
    path.parent.mkdir(parents=True)
    meta = {"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta", "payload": {"id": sid, "cwd": "/w"}}
    path.write_text(json.dumps(meta) + "\n", encoding="utf-8")
    return path


def _codex_turn(path: Path, n: int, word: str) -> dict[str, object]:
    item = {
        "timestamp": f"2026-03-01T10:00:{n:02d}Z",
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": f"remember {word}"}],
        },
    }
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(item) + "\n")
    return {"hook_event_name": "Stop", "transcript_path": str(path)}


def _pi(home: Path) -> Path:
    path = home / ".pi" / "agent" / "sessions" / "--work--" / "2026-03-01T10-00-00-000Z_pi1.jsonl"
    path.parent.mkdir(parents=True)
    header = {"type": "session", "version": 3, "id": "pi1", "timestamp": "2026-03-01T10:00:00Z", "cwd": "/w"}
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")
    return path


def _pi_turn(path: Path, n: int, word: str) -> None:
    entry = {
        "type": "message",
        "id": f"m{n}",
        "timestamp": f"2026-03-01T10:00:{n:02d}Z",
        "message": {"role": "user", "content": [{"type": "text", "text": f"remember {word}"}]},
    }
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


#: Holds a command until fd ``argv[1]`` reads end of file, then becomes it (``exec``): a barrier
#: across processes. The command's stdin is left alone, so a hook still reads its event there.
GATE = (
    "import os, sys; fd = int(sys.argv[1]); os.read(fd, 1); os.close(fd); os.execv(sys.argv[2], sys.argv[2:])"
)
#: How long the test waits for the background indexers: a guard against a hang, not a speed goal
#: (a loaded machine is slow, and that is no failure; hook latency is measured in bench/).
PATIENCE = 300


@pytest.mark.slow
def test_twenty_hook_events_from_three_agents_at_once_are_all_recallable(tmp_path: Path) -> None:
    """Claude Code, Codex and pi end 20 turns at the same moment; every turn is remembered.

    Issue 19 item 2 asks for 20 events within one second. Measured as a spread of start times,
    that bound failed under load (1.46 s at load 15-20) without anything being wrong. Here the 20
    hook processes are started first, each held before it runs at a gate, and all gates open with
    one ``close()``: the hooks run together by construction, however loaded the machine. What is
    asserted is what matters: every turn becomes recallable and nothing is left waiting (no dirty
    marker, no spool file) without any later event to start another indexer.
    """
    home = tmp_path / "home"
    funes_home = tmp_path / "funes-home"
    funes = str(Path(sys.executable).parent / "funes")
    env = {**os.environ, "HOME": str(home), "FUNES_HOME": str(funes_home), "FUNES_EMBEDDER": "hash"}
    for var in ("CODEX_HOME", "HERMES_HOME", "PI_CODING_AGENT_DIR", "FUNES_BIN"):
        env.pop(var, None)
    claude, _ = _claude(home)
    codex, pi = _codex(home), _pi(home)

    def hook(n: int) -> tuple[str, list[str], dict[str, object]]:
        """One agent finishing one turn: the turn is appended; the hook it runs, and its event."""
        agent = ("claude", "codex", "pi")[n % 3]
        word = f"quokka{n}{agent}"
        if agent == "pi":  # what the pi extension starts after a turn (detached, without an event)
            _pi_turn(pi, n, word)
            return word, [funes, "integrations", "convert", "pi", str(pi), "--index"], {}
        event = (_claude_turn if agent == "claude" else _codex_turn)(
            claude if agent == "claude" else codex, n, word
        )
        module = f"funes_{agent}.hook"
        return word, [sys.executable, "-I", "-m", module, "--funes-home", str(funes_home), "--", funes], event

    gate_r, gate_w = os.pipe()
    words, procs = [], []
    for n in range(20):
        word, argv, event = hook(n)
        proc = subprocess.Popen(
            [sys.executable, "-c", GATE, str(gate_r), *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            pass_fds=(gate_r,),
        )
        proc.stdin.write(json.dumps(event).encode())  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
        words.append(word)
        procs.append(proc)
    os.close(gate_r)
    assert all(p.poll() is None for p in procs), "every hook waits at the gate until all 20 are there"
    released = time.monotonic()
    os.close(gate_w)  # the three agents end their turns at once
    for proc in procs:
        assert proc.wait(timeout=PATIENCE) == 0
    print(f"20 hooks released together, all returned {time.monotonic() - released:.2f} s later")

    store_home = Home(funes_home)

    def waiting() -> list[str]:
        missing = [w for w in words if not found(store_home, w)]
        dirty = [f"dirty: {i}" for i in store_home.dirty_ids()]
        spooled = [f"spooled: {p.name}" for p in store_home.spool_dir.glob("*/*.funes.jsonl")]
        return missing + dirty + spooled

    left = waiting()
    while left and time.monotonic() < released + PATIENCE:
        time.sleep(0.5)
        left = waiting()
    logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in (funes_home / "logs").glob("*.log"))
    assert not left, f"still waiting {PATIENCE} s after the events, with nothing else to come: {left}\n{logs}"
    print(f"every turn recallable, nothing waiting, {time.monotonic() - released:.1f} s after the events")
    recall = subprocess.run(
        [funes, "recall", words[0], words[1], words[2]],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert recall.returncode == 0 and all(w in recall.stdout for w in words[:3]), recall.stdout[-2000:]


def test_the_spool_lock_and_folders_are_private_whatever_the_umask(tmp_path: Path) -> None:
    """A hook's conversion creates $FUNES_HOME, the spool folder and its lock file before any index
    run tightens them: 0700 / 0600 under umask 000 too (issue 13, item 8)."""
    import stat

    from funes_core.host.api import InstallContext
    from funes_core.wiring.spooling import LOCK_NAME, convert_into_spool
    from funes_echo.converter import EchoConverter

    funes_home = tmp_path / "funes-home"
    ctx = InstallContext(home=tmp_path / "home", funes_home=funes_home, funes_command=("/opt/funes",))
    converter = EchoConverter()
    old = os.umask(0)
    try:
        convert_into_spool(converter, [], ctx, index=False)
    finally:
        os.umask(old)
    spool = converter.spool_dir(ctx.funes_home)
    made = (funes_home, spool.parent, spool, spool / LOCK_NAME)
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in made}
    assert modes == {p: 0o600 if p.name == LOCK_NAME else 0o700 for p in modes}

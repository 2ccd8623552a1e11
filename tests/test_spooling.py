"""Convert under a lock, then make sure an indexer runs (issue 19 item 2): nothing lost, nothing waiting.

Every hook ends in :func:`funes_core.host.spooling.convert_into_spool`: the spool file is written
under the integration's lock, the spool is marked dirty, and an indexer is started; an indexer
that finds the store lock taken exits 75, because the one holding it looks at the dirty markers
before it lets go and after. These tests prove the protocol in-process (an indexer that serves
a spool written while it ran) and end to end: 20 hook events from 3 agents within one second,
through the real hook entry points and the real ``funes``, all recallable within 30 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from funes_core.home import DIRTY_NAME, Home, write_lock
from funes_core.ingest.engine import Indexer, IndexOptions, run_index
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

    def run_and_produce(self: Indexer, discovery: object, *, budget: float | None = None) -> object:
        report = real_run(self, discovery, budget=budget)  # type: ignore[arg-type]
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


# -- 20 hook events from 3 agents within one second ----------------------------------------------


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


@pytest.mark.slow
def test_twenty_hook_events_from_three_agents_in_one_second_are_all_recallable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    funes_home = tmp_path / "funes-home"
    funes = str(Path(sys.executable).parent / "funes")
    env = {**os.environ, "HOME": str(home), "FUNES_HOME": str(funes_home), "FUNES_EMBEDDER": "hash"}
    for var in ("CODEX_HOME", "HERMES_HOME", "PI_CODING_AGENT_DIR", "FUNES_BIN"):
        env.pop(var, None)
    claude, _ = _claude(home)
    codex, pi = _codex(home), _pi(home)
    barrier = threading.Barrier(20)
    fired_at: list[float] = []

    def fire(n: int) -> tuple[str, subprocess.Popen[bytes]]:
        """One agent finishing one turn: the turn is appended, then the agent's hook runs."""
        agent = ("claude", "codex", "pi")[n % 3]
        word = f"quokka{n}{agent}"
        barrier.wait()
        if agent == "claude":
            event = _claude_turn(claude, n, word)
            argv = [
                sys.executable,
                "-I",
                "-m",
                "funes_claude.hook",
                "--funes-home",
                str(funes_home),
                "--",
                funes,
            ]
        elif agent == "codex":
            event = _codex_turn(codex, n, word)
            argv = [
                sys.executable,
                "-I",
                "-m",
                "funes_codex.hook",
                "--funes-home",
                str(funes_home),
                "--",
                funes,
            ]
        else:  # what the pi extension starts after a turn (detached, without waiting)
            _pi_turn(pi, n, word)
            event, argv = {}, [funes, "integrations", "convert", "pi", str(pi), "--index"]
        fired_at.append(time.monotonic())
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        proc.stdin.write(json.dumps(event).encode())  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
        return word, proc

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=20) as pool:  # the three agents end their turns at once
        fired_events = list(pool.map(fire, range(20)))
    fired = max(fired_at) - min(fired_at)  # from the first hook started to the last
    words = [word for word, _ in fired_events]
    for _, proc in fired_events:
        proc.wait(timeout=60)
    assert fired < 1.0, f"the 20 events took {fired:.2f} s to fire"
    store_home = Home(funes_home)
    deadline = started + 30
    missing = words
    while missing and time.monotonic() < deadline:
        time.sleep(0.5)
        missing = [w for w in words if not found(store_home, w)]
    logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in (funes_home / "logs").glob("*.log"))
    assert not missing, f"not recallable 30 s after the events: {missing}\n{logs}"
    # Nothing is left waiting once the indexers are done.
    deadline = time.monotonic() + 30
    while (
        store_home.dirty_ids() or list(store_home.spool_dir.glob("*/*.funes.jsonl"))
    ) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert store_home.dirty_ids() == [], logs
    assert not list(store_home.spool_dir.glob("*/*.funes.jsonl")), logs
    recall = subprocess.run(
        [funes, "recall", words[0], words[1], words[2]],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert recall.returncode == 0 and all(w in recall.stdout for w in words[:3]), recall.stdout[-2000:]

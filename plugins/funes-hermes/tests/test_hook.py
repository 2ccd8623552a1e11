"""The per-turn hook: Hermes' event on stdin in, one spool file out, indexing started, exit 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from funes_core import read_turns_file
from funes_hermes import hook
from funes_hermes.fixtures import build_db

SID = "20260310_080005_beef02"
PARENT = "20260310_075500_feed00"
SQL = f"""
INSERT INTO sessions (id, source, started_at, parent_session_id, cwd) VALUES
('{PARENT}', 'cli', 1773129300, NULL, '/srv/app'),
('{SID}', 'cli', 1773129605, '{PARENT}', '/srv/app'),
('20260310_090000_other9', 'cli', 1773133200, NULL, '/srv/app');
INSERT INTO messages (id, session_id, role, content, timestamp) VALUES
(1, '{PARENT}', 'user', 'the long conversation before compression', 1773129301),
(2, '{PARENT}', 'assistant', 'a reply that was compressed away', 1773129302),
(3, '{SID}', 'user', 'what did we decide about the flux capacitor?', 1773129606),
(4, '{SID}', 'assistant', 'To keep it at 1.21 gigawatts.', 1773129608),
(5, '20260310_090000_other9', 'user', 'another session, not this turn', 1773133201);
"""


def event(session_id: str = SID) -> bytes:
    """What Hermes 0.19 pipes to an on_session_end hook (see the harness samples)."""
    return json.dumps(
        {
            "hook_event_name": "on_session_end",
            "tool_name": None,
            "tool_input": None,
            "session_id": session_id,
            "cwd": "/srv/app",
            "extra": {
                "task_id": "t",
                "turn_id": f"{session_id}:t:1",
                "completed": True,
                "interrupted": False,
            },
        }
    ).encode()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    build_db(SQL, home / ".hermes" / "state.db")
    out = {k: v for k, v in os.environ.items() if k != "HERMES_HOME"}
    out["HOME"] = str(home)
    return out


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []
    monkeypatch.setattr(hook, "spawn_index", lambda funes_home, environ: calls.append(funes_home))
    return calls


def spool(funes_home: Path) -> dict[str, list[str]]:
    folder = funes_home / "spool" / "hermes"
    return {
        p.name: [t.turn_uuid for t in read_turns_file(p).turns] for p in sorted(folder.glob("*.funes.jsonl"))
    }


def test_the_turns_session_and_the_one_it_continues_are_spooled(
    tmp_path: Path, env: dict[str, str], spawned: list[Path]
) -> None:
    funes_home = tmp_path / "fh"
    assert hook.run(event(), funes_home, env) == 0
    assert spool(funes_home) == {f"{SID}.funes.jsonl": ["3", "4"], f"{PARENT}.funes.jsonl": ["1", "2"]}
    assert spawned == [funes_home]
    assert oct((funes_home / "spool" / "hermes").stat().st_mode & 0o777) == "0o700"


def test_nothing_new_starts_no_indexer(tmp_path: Path, env: dict[str, str], spawned: list[Path]) -> None:
    hook.run(event(), tmp_path / "fh", env)
    hook.run(event(), tmp_path / "fh", env)
    assert len(spawned) == 1


def test_hermes_home_of_the_hooks_environment_is_used(
    tmp_path: Path, env: dict[str, str], spawned: list[Path]
) -> None:
    profile = tmp_path / "profiles" / "work"
    (Path(env["HOME"]) / ".hermes" / "state.db").rename(tmp_path / "moved.db")
    build_db(SQL, profile / "state.db")
    hook.run(event(), tmp_path / "fh", {**env, "HERMES_HOME": str(profile)})
    assert f"{SID}.funes.jsonl" in spool(tmp_path / "fh")


@pytest.mark.parametrize(
    "stdin",
    [b"", b"not json", b"[1]", json.dumps({"session_id": "../../etc/passwd"}).encode(), event("nope")],
)
def test_bad_events_are_logged_and_still_exit_zero(
    tmp_path: Path, env: dict[str, str], spawned: list[Path], stdin: bytes
) -> None:
    funes_home = tmp_path / "fh"
    assert hook.run(stdin, funes_home, env) == 0
    assert spawned == []
    assert not (funes_home / "spool").exists()
    assert (funes_home / "logs" / "hermes-hook.log").read_text().strip()


def test_a_failure_is_logged_never_raised(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(funes_home: Path, environ: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(hook, "spawn_index", boom)
    assert hook.run(event(), tmp_path / "fh", env) == 0
    assert "disk full" in (tmp_path / "fh" / "logs" / "hermes-hook.log").read_text()


@pytest.mark.slow
def test_the_command_hermes_runs(tmp_path: Path, env: dict[str, str]) -> None:
    """``funes hermes hook`` through funes' CLI: quick, exit 0, and the detached index drains the spool."""
    funes_home = tmp_path / "fh"
    funes = Path(sys.executable).parent / "funes"
    started = time.monotonic()
    done = subprocess.run(
        [str(funes), "hermes", "hook", "--funes-home", str(funes_home)],
        input=event(),
        capture_output=True,  # as Hermes runs it: the pipes must close when the hook exits
        env={**env, "FUNES_EMBEDDER": "hash"},
        timeout=60,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"", "Hermes parses a hook's stdout: print nothing"
    assert elapsed < 10, f"the hook held Hermes for {elapsed:.1f}s"
    deadline = time.monotonic() + 60
    while list((funes_home / "spool" / "hermes").glob("*.funes.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not list((funes_home / "spool" / "hermes").glob("*.funes.jsonl")), (
        funes_home / "logs" / "index-hermes.log"
    ).read_text()
    assert (funes_home / "memory").exists()

"""The per-turn hook: Hermes' event on stdin in, the right sessions located, the spool drained, exit 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from funes_contracts.agent_cli import PATIENCE, held
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


def test_the_turns_session_and_the_one_it_continues_are_located(env: dict[str, str]) -> None:
    found = hook.locate(json.loads(event()), env)
    assert found is not None
    assert found.paths == (str(Path(env["HOME"]) / ".hermes" / "state.db"),)
    assert found.sessions == (SID, PARENT)


def test_hermes_home_of_the_hooks_environment_is_used(tmp_path: Path, env: dict[str, str]) -> None:
    profile = tmp_path / "profiles" / "work"
    (Path(env["HOME"]) / ".hermes" / "state.db").rename(tmp_path / "moved.db")
    build_db(SQL, profile / "state.db")
    found = hook.locate(json.loads(event()), {**env, "HERMES_HOME": str(profile)})
    assert found is not None and found.paths == (str(profile / "state.db"),)
    assert hook.locate(json.loads(event()), env) is None, "no state.db in the default home any more"


@pytest.mark.parametrize(
    "payload", [{}, {"session_id": "../../etc/passwd"}, {"session_id": 42}, {"session_id": ""}]
)
def test_bad_events_locate_nothing(env: dict[str, str], payload: dict[str, object]) -> None:
    assert hook.locate(payload, env) is None


def _drained(funes_home: Path) -> None:
    deadline = time.monotonic() + PATIENCE  # a hang guard, not a speed goal
    spool = funes_home / "spool" / "hermes"
    while (list(spool.glob("*.funes.jsonl")) or not (funes_home / "memory").exists()) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.2)
    logs = funes_home / "logs"
    assert not list((funes_home / "spool" / "hermes").glob("*.funes.jsonl")), "\n".join(
        p.read_text() for p in logs.glob("*.log")
    )
    assert (funes_home / "memory").exists()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["module", "legacy-command"])
def test_the_command_hermes_runs(tmp_path: Path, env: dict[str, str], how: str) -> None:
    """Exit 0, print nothing, never wait; the detached conversion and index drain the spool.

    The funes the hook starts is held at a gate that opens only once the hook has returned: the
    hook cannot have waited for it, however slow the machine (no clock involved).
    """
    funes_home, gate = tmp_path / "fh", tmp_path / "gate"
    funes = str(Path(sys.executable).parent / "funes")
    held_funes = str(held(tmp_path / "held" / "funes", [funes], gate))
    hook_env = {**env, "FUNES_EMBEDDER": "hash"}
    if how == "module":
        argv = [
            sys.executable,
            "-I",
            "-m",
            "funes_hermes.hook",
            "--funes-home",
            str(funes_home),
            "--",
            held_funes,
        ]
    else:  # what funes-hermes 0.1 recorded in config.yaml: still works until it is refreshed
        argv = [funes, "hermes", "hook", "--funes-home", str(funes_home)]
        hook_env["FUNES_BIN"] = held_funes  # the funes it starts for the conversion
    done = subprocess.run(
        argv,
        input=event(),
        capture_output=True,  # as Hermes runs it: the pipes must close when the hook exits
        env=hook_env,
        timeout=PATIENCE,  # a hang guard
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"", "Hermes parses a hook's stdout: print nothing"
    assert not (funes_home / "spool").exists(), "the hook returned while its conversion was held"
    gate.touch()
    _drained(funes_home)

"""The per-turn hook: finds the rollout, starts the conversion detached, never fails or blocks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from funes_codex.hook import find_rollout, locate
from funes_contracts.agent_cli import PATIENCE, held
from funes_core import HookSources

SID = "01a22762-e11b-7130-b1e4-fdc7dc5fd268"

#: A stand-in for funes: records its argv and FUNES_HOME. The record is written under another name and renamed
#: into place, so a test polling for it never reads a half-written file (it did, under load).
FAKE_FUNES = """#!{python}
import json, os, sys
with open(sys.argv[1] + ".part", "w") as fh:
    json.dump({{"argv": sys.argv[2:], "funes_home": os.environ.get("FUNES_HOME")}}, fh)
os.replace(sys.argv[1] + ".part", sys.argv[1])
"""


def rollout(codex_home: Path, day: str, sid: str = SID) -> Path:
    folder = codex_home / "sessions" / day
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-{day.replace('/', '-')}T10-00-00-{sid}.jsonl"
    path.write_text(json.dumps({"type": "session_meta", "payload": {"id": sid}}) + "\n", encoding="utf-8")
    return path


def test_transcript_path_wins(tmp_path: Path) -> None:
    given = rollout(tmp_path, "2026/03/01")
    assert (
        find_rollout({"transcript_path": str(given), "session_id": "other"}, tmp_path / "sessions") == given
    )


def test_the_session_id_finds_the_newest_rollout_when_the_path_is_missing(tmp_path: Path) -> None:
    rollout(tmp_path, "2026/02/28")
    newest = rollout(tmp_path, "2026/03/01")
    rollout(tmp_path, "2026/03/02", sid="another-session")
    event = {"transcript_path": str(tmp_path / "never-written.jsonl"), "session_id": SID}
    assert find_rollout(event, tmp_path / "sessions") == newest


@pytest.mark.parametrize("sid", ["", "../../etc", "a*b", None, 42])
def test_unusable_session_ids_find_nothing(tmp_path: Path, sid: object) -> None:
    rollout(tmp_path, "2026/03/01")
    assert find_rollout({"session_id": sid}, tmp_path / "sessions") is None


def test_the_event_is_located_in_the_codex_home_of_the_agents_environment(tmp_path: Path) -> None:
    newest = rollout(tmp_path / "codex", "2026/03/01")
    environ = {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex")}
    assert locate({"session_id": SID}, environ) == HookSources((str(newest),))
    assert locate({"session_id": SID}, {"HOME": str(tmp_path / "home")}) is None


def fake_funes(tmp_path: Path) -> tuple[Path, Path]:
    """The stand-in funes, and the record it writes when it runs (:data:`FAKE_FUNES`)."""
    fake = tmp_path / "fake-funes"
    fake.write_text(FAKE_FUNES.format(python=sys.executable), encoding="utf-8")
    fake.chmod(0o755)
    return fake, tmp_path / "record.json"


def recorded(record: Path) -> dict[str, object]:
    """What the stand-in funes recorded, once the hook's detached start of it has run."""
    deadline = time.monotonic() + PATIENCE  # a hang guard, not a speed goal
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    loaded: dict[str, object] = json.loads(record.read_text(encoding="utf-8"))
    return loaded


def run_hook(tmp_path: Path, stdin: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HOME=str(tmp_path / "home"), CODEX_HOME=str(tmp_path / "codex"))
    return subprocess.run(
        [sys.executable, "-I", "-m", "funes_codex.hook", *extra],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,  # a hang guard
    )


def test_the_hook_starts_funes_detached_and_never_waits_for_it(tmp_path: Path) -> None:
    """funes is held at a gate the test opens only after the hook returned: no clock involved."""
    fake, record = fake_funes(tmp_path)
    gate = tmp_path / "gate"
    given = rollout(tmp_path / "codex", "2026/03/01")
    event = json.dumps({"session_id": SID, "transcript_path": str(given), "hook_event_name": "Stop"})
    funes_home = tmp_path / "fh"
    held_funes = held(tmp_path / "held-funes", [fake], gate)
    done = run_hook(tmp_path, event, "--funes-home", str(funes_home), "--", str(held_funes), str(record))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert not record.exists(), "the hook returned while the funes it started was still held"
    gate.touch()
    seen = recorded(record)
    assert seen == {
        "argv": [
            "integrations",
            "convert",
            "codex",
            str(given),
            "--index",
        ],
        "funes_home": str(funes_home),
    }
    assert oct((funes_home / "logs").stat().st_mode & 0o777) == "0o700"


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", json.dumps({"session_id": "nowhere"})])
def test_the_hook_always_exits_zero_quietly(tmp_path: Path, stdin: str) -> None:
    funes_home = tmp_path / "fh"
    done = run_hook(tmp_path, stdin, "--funes-home", str(funes_home), "--", "/nonexistent/funes")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert "no transcript to convert" in (funes_home / "logs" / "codex-hook.log").read_text(encoding="utf-8")


def test_a_funes_that_cannot_start_is_logged_not_raised(tmp_path: Path) -> None:
    given = rollout(tmp_path / "codex", "2026/03/01")
    funes_home = tmp_path / "fh"
    done = run_hook(
        tmp_path,
        json.dumps({"transcript_path": str(given)}),
        "--funes-home",
        str(funes_home),
        "--",
        str(tmp_path / "missing-funes"),
    )
    assert done.returncode == 0
    assert "failed: FileNotFoundError" in (funes_home / "logs" / "codex-hook.log").read_text(encoding="utf-8")


def test_without_a_recorded_command_the_hook_runs_funes_bin(tmp_path: Path) -> None:
    fake, record = fake_funes(tmp_path)
    given = rollout(tmp_path / "codex", "2026/03/01")
    env = dict(os.environ, HOME=str(tmp_path / "home"), FUNES_BIN=f"{fake} {record}")
    env["FUNES_HOME"] = str(tmp_path / "fh")
    done = subprocess.run(
        [sys.executable, "-I", "-m", "funes_codex.hook"],
        input=json.dumps({"transcript_path": str(given)}),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,  # a hang guard
    )
    assert done.returncode == 0
    assert recorded(record)["funes_home"] == str(tmp_path / "fh")

"""The hook Claude Code runs: never waiting, never failing, and which transcripts each event converts.

A fake ``funes`` (a small script recording its argv and ``FUNES_HOME``) stands in for the real
one: ``integrations convert`` is handed on to the real funes (so the spool is really written,
under the core's lock), ``index`` is only recorded. That proves the hook's own behaviour: which
transcripts are converted for which event, and that indexing is started with the recorded
command and FUNES_HOME. The convert-then-index mechanism itself is the core's
(tests/test_spooling.py); the real ``funes index`` is exercised by the end-to-end test. That the
hook does not wait for funes is shown with a funes held at a gate until the hook has returned
(:func:`funes_contracts.agent_cli.held`), not with a clock.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path

import pytest

from funes_claude import hook
from funes_contracts.agent_cli import PATIENCE, held
from funes_core import read_turns_file

FIXTURES = Path(str(resources.files("funes_claude.contract_fixtures")))
SUBAGENTS_CASE = FIXTURES / "cases" / "subagents"
PARENT = "3c1d8e7f-6a5b-4c3d-9e2f-7a8b9c0d1e2f"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Claude Code project folder holding a session and its subagent."""
    folder = tmp_path / "home" / ".claude" / "projects" / "-work-app"
    shutil.copytree(SUBAGENTS_CASE, folder, ignore=shutil.ignore_patterns("expected.funes.jsonl"))
    return folder


def fake_funes(tmp_path: Path, body: str = "") -> tuple[Path, Path]:
    """A ``funes`` that appends ``{"argv", "funes_home"}`` to a record file, then runs ``body``."""
    record = tmp_path / "fake-funes-calls.jsonl"
    script = tmp_path / "bin" / "funes"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys, pathlib\n"
        f"record = pathlib.Path({str(record)!r})\n"
        "if sys.argv[1:2] == ['integrations']:\n"
        f"    os.execv({sys.executable!r}, [{sys.executable!r}, '-m', 'funes_core', *sys.argv[1:]])\n"
        "with record.open('a') as fh:\n"
        "    call = {'argv': sys.argv[1:], 'funes_home': os.environ.get('FUNES_HOME')}\n"
        "    fh.write(json.dumps(call) + '\\n')\n"
        f"{body}",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script, record


def run_hook(
    funes_home: Path, funes: Path | str, event: Mapping[str, object] | str
) -> subprocess.CompletedProcess[bytes]:
    payload = event if isinstance(event, str) else json.dumps(event)
    argv = [
        sys.executable,
        "-I",
        "-m",
        "funes_claude.hook",
        "--funes-home",
        str(funes_home),
        "--",
        str(funes),
    ]
    return subprocess.run(argv, input=payload.encode(), capture_output=True, timeout=120)  # a hang guard


def wait_for(predicate: Callable[[], object]) -> None:
    """Until ``predicate`` holds: what the hook started in the background has done its part."""
    deadline = time.monotonic() + PATIENCE  # a hang guard, not a speed goal
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def calls(record: Path) -> list[dict[str, object]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def fire(tmp_path: Path, event: Mapping[str, object]) -> tuple[Path, Path, Path]:
    """Run the hook on ``event`` with a fake funes, until its worker has asked for an index.

    Returns FUNES_HOME, the fake funes and its record of calls.
    """
    funes, record = fake_funes(tmp_path)
    funes_home = tmp_path / "funes-home"
    assert run_hook(funes_home, funes, event).returncode == 0
    wait_for(lambda: calls(record))
    return funes_home, funes, record


def log_of(funes_home: Path) -> str:
    path = funes_home / "logs" / "claude-hook.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_the_hook_imports_nothing_heavy() -> None:
    probe = (
        "import sys, funes_claude.hook\n"
        "heavy = ('funes_core.host.api', 'funes_core.turns', 'funes_claude.converter', 'funes_claude.wiring',"
        " 'subprocess', 'filelock', 'pluggy', 'typer')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    done = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", f"the hook's import path pulls in: {done.stdout}"


def test_a_stop_hook_converts_the_session_then_indexes(project: Path, tmp_path: Path) -> None:
    funes, record = fake_funes(tmp_path)
    funes_home, gate = tmp_path / "funes-home", tmp_path / "gate"
    transcript = project / f"{PARENT}.jsonl"
    held_funes = held(tmp_path / "held" / "funes", [funes], gate)
    done = run_hook(funes_home, held_funes, {"hook_event_name": "Stop", "transcript_path": str(transcript)})
    assert done.returncode == 0 and done.stdout == b"", "a Stop hook that prints nothing lets Claude stop"
    assert not (funes_home / "spool").exists(), "the hook returned before its worker ran: it never waits"
    gate.touch()
    wait_for(lambda: calls(record))
    assert calls(record) == [{"argv": ["index", "--harness", "claude"], "funes_home": str(funes_home)}]
    assert (funes_home / "spool" / "claude" / ".dirty").exists(), "marked for the indexer's re-check"
    spooled = sorted(p.name for p in (funes_home / "spool" / "claude").glob("*.funes.jsonl"))
    assert spooled == [f"{PARENT}.funes.jsonl"], "Stop converts the session, not its subagents"
    assert len(read_turns_file(funes_home / "spool" / "claude" / spooled[0]).turns) == 4
    assert "worker" in log_of(funes_home)


def test_subagent_stop_converts_the_subagent_named_by_the_event(project: Path, tmp_path: Path) -> None:
    agent = project / PARENT / "subagents" / "agent-a4f2e91.jsonl"
    event = {
        "hook_event_name": "SubagentStop",
        "transcript_path": str(project / f"{PARENT}.jsonl"),
        "agent_id": "a4f2e91",
        "agent_transcript_path": str(agent),
    }
    funes_home, _, _ = fire(tmp_path, event)
    names = sorted(p.name for p in (funes_home / "spool" / "claude").glob("*.funes.jsonl"))
    assert names == [f"{PARENT}-agent-a4f2e91.funes.jsonl"]


@pytest.mark.parametrize(
    ("event", "agent", "expected"),
    [
        ("Stop", None, ["main"]),
        ("SessionEnd", None, ["main", "sub"]),
        ("SubagentStop", "sub", ["sub"]),
        ("SubagentStop", None, ["sub"]),
        ("SubagentStop", "missing", ["sub"]),
    ],
)
def test_which_transcripts_each_event_converts(
    project: Path, event: str, agent: str | None, expected: list[str]
) -> None:
    paths = {
        "main": str(project / f"{PARENT}.jsonl"),
        "sub": str(project / PARENT / "subagents" / "agent-a4f2e91.jsonl"),
        "missing": str(project / "gone.jsonl"),
    }
    chosen = hook.targets(event, paths["main"], paths[agent] if agent else None)
    assert chosen == [paths[name] for name in expected]


def test_session_end_converts_the_session_and_its_subagents(project: Path, tmp_path: Path) -> None:
    event = {"hook_event_name": "SessionEnd", "transcript_path": str(project / f"{PARENT}.jsonl")}
    funes_home, _, _ = fire(tmp_path, event)
    names = sorted(p.name for p in (funes_home / "spool" / "claude").glob("*.funes.jsonl"))
    assert names == [f"{PARENT}-agent-a4f2e91.funes.jsonl", f"{PARENT}.funes.jsonl"]


@pytest.mark.parametrize(
    "stdin",
    [
        json.dumps(
            {"hook_event_name": "SessionEnd", "transcript_path": "/nonexistent/x.jsonl", "reason": "other"}
        ),
        json.dumps({"hook_event_name": "Stop"}),
        "{not json",
        "",
        "[1, 2]",
    ],
    ids=["missing-transcript", "no-transcript", "garbage", "empty", "not-an-object"],
)
def test_nothing_to_convert_exits_zero_and_says_why(tmp_path: Path, stdin: str) -> None:
    funes, record = fake_funes(tmp_path)
    funes_home = tmp_path / "funes-home"
    done = run_hook(funes_home, funes, stdin)
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    assert log_of(funes_home).strip(), "the reason is logged"
    time.sleep(0.2)
    assert not calls(record) and not (funes_home / "spool").exists()


def test_a_broken_funes_home_still_exits_zero(tmp_path: Path, project: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    event = {"hook_event_name": "Stop", "transcript_path": str(project / f"{PARENT}.jsonl")}
    done = run_hook(blocker / "funes-home", "/nonexistent/funes", event)
    assert done.returncode == 0 and done.stdout == b""


def test_unknown_arguments_never_fail_the_agent(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-m", "funes_claude.hook", "--nonsense"],
        input=b"{}",
        capture_output=True,
        env=dict(os.environ, HOME=str(tmp_path), FUNES_HOME=str(tmp_path / "fh")),
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_an_unchanged_spool_is_not_indexed_again(project: Path, tmp_path: Path) -> None:
    event = {"hook_event_name": "Stop", "transcript_path": str(project / f"{PARENT}.jsonl")}
    funes_home, funes, record = fire(tmp_path, event)
    assert run_hook(funes_home, funes, event).returncode == 0
    wait_for(lambda: log_of(funes_home).count("worker") == 2)
    time.sleep(1.0)
    assert len(calls(record)) == 1, "the second run found the spool file already written"

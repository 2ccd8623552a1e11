"""``CLAUDE_CONFIG_DIR`` in funes' own commands (issue 19): info, the refusal, the drift report.

The real ``funes`` of this environment runs in a throwaway HOME; no Claude Code is needed (the
registrar edits ``.claude.json`` itself when ``claude`` is not on PATH).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest

from funes_contracts.agent_cli import PATIENCE

FIXTURES = Path(str(resources.files("funes_claude.contract_fixtures")))
FUNES = Path(sys.executable).parent / "funes"
SESSION = FIXTURES / "cases" / "basic" / "5d1c7a3e-2b4f-4c8e-9a61-0f3b8d2e7c45.jsonl"


def run(argv: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, input=stdin)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "FUNES_", "PYTEST_"))}
    path = os.pathsep.join(
        p for p in base.get("PATH", "").split(os.pathsep) if not (Path(p) / "claude").exists()
    )
    return {
        **base,
        "HOME": str(home),
        "FUNES_HOME": str(tmp_path / "funes"),
        "FUNES_EMBEDDER": "hash",
        "PATH": path,
    }


def files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) if root.exists() else []


def test_info_says_where_and_why(env: dict[str, str], tmp_path: Path) -> None:
    out = run([str(FUNES), "integrations", "info", "claude"], env).stdout
    assert f"{env['HOME']}/.claude.json (user-scope MCP servers), default" in out, out
    moved = tmp_path / "moved"
    moved.mkdir()
    out = run([str(FUNES), "integrations", "info", "claude"], {**env, "CLAUDE_CONFIG_DIR": str(moved)}).stdout
    assert f"{moved}/projects (transcripts (<project>/<session>.jsonl)), from $CLAUDE_CONFIG_DIR" in out, out
    assert f"{moved}/.claude.json (user-scope MCP servers), from $CLAUDE_CONFIG_DIR" in out, out


def test_an_override_naming_a_missing_folder_changes_nothing(env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    done = run([str(FUNES), "integrations", "install", "claude"], {**env, "CLAUDE_CONFIG_DIR": str(missing)})
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"funes: claude: CLAUDE_CONFIG_DIR points to {missing}, which does not exist; nothing was changed"
    )
    assert files(Path(env["HOME"])) == [] and files(Path(env["FUNES_HOME"])) == [] and not missing.exists()


@pytest.mark.slow
def test_a_changed_override_is_logged_by_the_hook_and_reported_by_check(
    env: dict[str, str], tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second / "projects" / "-home-dev"):
        folder.mkdir(parents=True)
    argv = [str(FUNES), "integrations", "install", "claude", "--no-index"]
    installed = run(argv, {**env, "CLAUDE_CONFIG_DIR": str(first)})
    assert installed.returncode == 0, installed.stderr
    record = json.loads(
        (Path(env["FUNES_HOME"]) / "integrations" / "claude.json").read_text(encoding="utf-8")
    )
    assert record["overrides"] == {"CLAUDE_CONFIG_DIR": str(first)}
    command = json.loads((first / "settings.json").read_text(encoding="utf-8"))["hooks"]["Stop"][0]["hooks"][
        0
    ]

    moved = {**env, "CLAUDE_CONFIG_DIR": str(second)}
    transcript = second / "projects" / "-home-dev" / SESSION.name
    shutil.copy(SESSION, transcript)
    event = {"hook_event_name": "Stop", "session_id": SESSION.stem, "transcript_path": str(transcript)}
    assert run(["sh", "-c", command["command"]], moved, json.dumps(event)).returncode == 0
    log = Path(env["FUNES_HOME"]) / "logs" / "claude-hook.log"
    text = log.read_text(encoding="utf-8")
    assert f"CLAUDE_CONFIG_DIR was {first} at install, is {second} now" in text, text
    spooled = Path(env["FUNES_HOME"]) / "spool" / "claude"
    deadline = time.monotonic() + PATIENCE  # a hang guard, not a speed goal
    while "converted" not in log.read_text(encoding="utf-8") and not list(spooled.glob("*.funes.jsonl")):
        assert time.monotonic() < deadline, log.read_text(encoding="utf-8")
        time.sleep(0.5)

    checked = run([str(FUNES), "integrations", "check", "claude"], moved)
    assert checked.returncode == 1
    assert f"MISMATCH  CLAUDE_CONFIG_DIR was {first} at install, is {second} now" in checked.stdout, (
        checked.stdout
    )
    back = run([str(FUNES), "integrations", "check", "claude"], {**env, "CLAUDE_CONFIG_DIR": str(first)})
    assert back.returncode == 0, back.stdout

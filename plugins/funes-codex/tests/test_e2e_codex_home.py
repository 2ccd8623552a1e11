"""End to end with the real Codex CLI: a custom ``CODEX_HOME`` and an archived session (issue 19).

``CODEX_HOME`` lies outside HOME. Before funes is installed, the user had a Codex session and
archived it (``codex archive ID`` moves the rollout to ``$CODEX_HOME/archived_sessions/``). Install
must find it there (the seed indexes it), ``integrations info`` must say where it reads and why, and
a new session must still be captured by the hook in that ``CODEX_HOME``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from funes_contracts.agent_cli import npm_agent
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

FUNES = Path(sys.executable).parent / "funes"
ARCHIVED = "narwhal trombone 8812"
LIVE = "axolotl harmonica 3391"


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args!r} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def found(env: dict[str, str], cwd: Path, needle: str) -> bool:
    argv = [str(FUNES), "recall", needle, "--harness", "codex", "--profile", "lexical", "--json"]
    done = run(argv, env, cwd)  # exits 1 while there is no index at all
    return done.returncode == 0 and needle in done.stdout


def test_codex_home_and_archived_sessions(tmp_path: Path) -> None:
    codex = npm_agent("codex")
    home, codex_home = tmp_path / "home", tmp_path / "codex-home"
    funes_home, project = tmp_path / "funes-home", tmp_path / "project"
    for folder in (home, codex_home, project):
        folder.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "FUNES_", "PYTEST_"))}
    env.update(
        HOME=str(home),
        CODEX_HOME=str(codex_home),
        FUNES_HOME=str(funes_home),
        FUNES_EMBEDDER="hash",
        FAKE_API_KEY="sk-fake",
        PATH=f"{codex.parent}{os.pathsep}{env.get('PATH', '')}",
    )
    exec_argv = [str(codex), "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"]
    with FakeModel(reply="Noted.") as model:
        (codex_home / "config.toml").write_text(
            'model = "gpt-5-codex"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
            f'name = "Fake"\nbase_url = "{model.url}/v1"\nwire_api = "responses"\nenv_key = "FAKE_API_KEY"\n',
            encoding="utf-8",
        )
        ok(run([*exec_argv, f"Remember the {ARCHIVED}."], env, project))
        rollout = next((codex_home / "sessions").rglob("rollout-*.jsonl"))
        session_id = rollout.stem[-36:]
        ok(run([str(codex), "archive", session_id], env, project))
        assert (codex_home / "archived_sessions" / rollout.name).is_file(), "codex archive moved the rollout"
        assert not rollout.exists()

        info = ok(run([str(FUNES), "integrations", "info", "codex"], env, project))
        assert (
            f"{codex_home / 'archived_sessions'} (rollouts `codex archive` moved), from $CODEX_HOME" in info
        ), info
        ok(run([str(FUNES), "integrations", "install", "codex"], env, project))
        assert not (home / ".codex").exists(), "nothing was written to the default ~/.codex"
        assert found(env, project, ARCHIVED), "the archived session was seeded and indexed"

        ok(run([*exec_argv, f"And the {LIVE}."], env, project))
        ended = time.monotonic()
    while not found(env, project, LIVE):
        log = funes_home / "logs" / "codex-hook.log"
        assert time.monotonic() < ended + 30, (
            log.read_text(errors="replace") if log.is_file() else "no hook log"
        )
        time.sleep(0.5)
    ok(run([str(FUNES), "integrations", "remove", "codex"], env, project))

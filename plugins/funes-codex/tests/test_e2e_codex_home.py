"""End to end with the real Codex CLI: a custom ``CODEX_HOME`` and an archived session (issue 19).

``CODEX_HOME`` lies outside HOME. Before funes is installed, the user had a Codex session and
archived it (``codex archive ID`` moves the rollout to ``$CODEX_HOME/archived_sessions/``). Install
must find it there (the seed indexes it), ``integrations info`` must say where it reads and why, and
a new session must still be captured by the hook in that ``CODEX_HOME``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from funes_contracts.agent_cli import agent_world, funes, ok, recalled, run, wait_until_recalled
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

ARCHIVED = "narwhal trombone 8812"
LIVE = "axolotl harmonica 3391"


def test_codex_home_and_archived_sessions(tmp_path: Path) -> None:
    codex_home = tmp_path / "codex-home"
    codex, home, _, project, env = agent_world(
        tmp_path,
        "codex",
        folders=[codex_home],
        drop=("CODEX_",),
        CODEX_HOME=str(codex_home),
        FAKE_API_KEY="sk-fake",
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

        info = funes("integrations", "info", "codex", env=env, cwd=project)
        assert (
            f"{codex_home / 'archived_sessions'} (rollouts `codex archive` moved), from $CODEX_HOME" in info
        ), info
        funes("integrations", "install", "codex", env=env, cwd=project)
        assert not (home / ".codex").exists(), "nothing was written to the default ~/.codex"
        seeded = recalled(env, project, ARCHIVED, ARCHIVED, "--harness", "codex")
        assert seeded, "the archived session was seeded and indexed"

        ok(run([*exec_argv, f"And the {LIVE}."], env, project))
        ended = time.monotonic()
    wait_until_recalled(env, project, LIVE, LIVE, "--harness", "codex", since=ended)
    funes("integrations", "remove", "codex", env=env, cwd=project)

"""End to end with the real aider (aider-chat, pinned by funes-memory-contracts), offline, on the fake model.

aider has no hooks and no MCP client, so the loop a user relies on is: aider writes
``.aider.chat.history.md`` in the repository; ``funes integrations install aider --path DIR``
registers the folder, converts the history (local times read as local) and indexes it; recall then
finds the model's answer, by the repository's remote too (``--repo``: the ``cwd`` is the history
file's folder); ``remove`` has nothing of aider's to undo.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from funes_contracts.agent_cli import agent_world, funes, ok, recalled, run
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

#: Only the model's answer says this: recall finding it proves the session was converted and indexed.
ANSWER = "the pelican checksum drifts"
#: aider asks its model database for a context window; this answers locally (no download).
METADATA = {
    "openai/fake-model": {
        "max_input_tokens": 32000,
        "max_output_tokens": 4096,
        "input_cost_per_token": 0,
        "output_cost_per_token": 0,
        "litellm_provider": "openai",
        "mode": "chat",
    }
}


def _git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True, timeout=60)


def test_an_aider_session_is_converted_indexed_and_found_by_repo(tmp_path: Path) -> None:
    world = agent_world(tmp_path, "aider", drop=("AIDER_", "OPENAI_"))
    project, env = world.project, world.env
    _git(project, "init", "-q")
    _git(project, "remote", "add", "origin", "https://github.com/acme/parser.git")
    (project / "tokenizer.py").write_text("def split(line):\n    in_quotes = False\n", encoding="utf-8")
    metadata = tmp_path / "model-metadata.json"
    metadata.write_text(json.dumps(METADATA), encoding="utf-8")

    with FakeModel(tool_pattern=r"$^", reply=f"Found it: {ANSWER} when quotes reset.") as model:
        session = run(
            [
                world.agent,
                "--model",
                "openai/fake-model",
                "--openai-api-base",
                f"{model.url}/v1",
                "--openai-api-key",
                "sk-fake",
                "--model-metadata-file",
                metadata,
                "--no-check-update",
                "--no-analytics",
                "--no-show-release-notes",
                "--no-show-model-warnings",
                "--no-gitignore",
                "--no-auto-commits",
                "--map-tokens",
                "0",
                "--yes-always",
                "--no-pretty",
                "--no-stream",
                "--message",
                "Why does the CSV parser drop quoted commas?",
            ],
            env,
            project,
            timeout=300,
        )
        ok(session)
        assert any(r["method"] == "POST" for r in model.requests), "aider never asked the model"

    history = project / ".aider.chat.history.md"
    assert ANSWER in history.read_text(encoding="utf-8")

    installed = funes("integrations", "install", "aider", "--path", project, env=env)
    assert "aider: installed" in installed
    assert not (world.home / ".aider.conf.yml").exists(), "a converter-only install writes no config"
    assert recalled(env, project, ANSWER, ANSWER, "--harness", "aider")
    assert recalled(env, project, ANSWER, ANSWER, "--repo", "acme/parser"), "the cwd gives the repo facet"

    removed = funes("integrations", "remove", "aider", env=env)
    assert "removed" in removed
    assert history.read_text(encoding="utf-8").count(ANSWER) == 1, "the history is aider's, untouched"

"""End to end with the real Continue CLI (``cn``, pinned by funes-memory-contracts), offline.

1. the user's ``config.yaml`` names a local model (the fake one); ``funes integrations install
   continue`` adds funes' MCP server to it and changes nothing else;
2. ``cn -p`` runs a real session in which the model calls funes' ``recall`` and gets funes'
   answer back;
3. installing again (what a user, or ``funes index`` with the sessions folder registered, does:
   ``cn`` fires no hooks) converts the new session, and recall finds what only it says;
4. ``funes integrations remove continue`` gives back ``config.yaml`` byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from funes_contracts.agent_cli import agent_world, funes, ok, recalled, run
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

#: Only the model's answer in the new session says this.
ANSWER = "the heron ledger balances"


def _tool_results(requests: list[dict[str, Any]]) -> list[str]:
    found = []
    for request in requests:
        body = request.get("body")
        for message in body.get("messages", []) if isinstance(body, dict) else []:
            if isinstance(message, dict) and message.get("role") == "tool":
                content = message.get("content")
                found.append(content if isinstance(content, str) else json.dumps(content))
    return found


def test_a_continue_session_calls_funes_and_is_remembered(tmp_path: Path) -> None:
    world = agent_world(tmp_path, "continue", drop=("CONTINUE_",))
    env = dict(world.env, CONTINUE_CLI_DISABLE_TELEMETRY="1")
    config = world.home / ".continue" / "config.yaml"
    config.parent.mkdir(parents=True)

    with FakeModel(tool_pattern=r"(^|_)recall$", tool_args={"query": "quoted commas"}, reply=ANSWER) as model:
        config.write_text(
            "# the user's own Continue config, written before funes is installed\n"
            "name: local\nversion: 1.0.0\nschema: v1\nmodels:\n"
            f"  - name: fake\n    provider: openai\n    model: fake-model\n    apiBase: {model.url}/v1\n"
            "    apiKey: sk-fake\n    roles: [chat]\n",
            encoding="utf-8",
        )
        before = config.read_bytes()
        installed = funes("integrations", "install", "continue", env=env)
        assert "continue: added the funes MCP server" in installed
        assert "# funes-continue" in config.read_text(encoding="utf-8")

        session = run(
            [world.agent, "--config", config, "-p", "Why does the CSV parser drop quoted commas?", "--auto"],
            env,
            world.project,
            timeout=300,
        )
        assert ANSWER in ok(session)
        assert model.requests[0].get("answered_tool"), "funes' recall was not offered on the first request"
        results = _tool_results(model.requests)
        assert results and all("MEMORY-HIT" not in r for r in results), results

    assert len(list((world.home / ".continue" / "sessions").glob("*-*.json"))) == 1
    funes("integrations", "install", "continue", env=env)
    assert recalled(env, world.project, ANSWER, ANSWER, "--harness", "continue")

    removed = funes("integrations", "remove", "continue", env=env)
    assert "removed" in removed
    assert config.read_bytes() == before, "config.yaml is not back to its original bytes"

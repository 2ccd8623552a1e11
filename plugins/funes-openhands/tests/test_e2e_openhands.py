"""End to end with the real OpenHands CLI (``openhands``, pinned by funes-contracts), offline.

OpenHands needs Python 3.12 or newer; the tests run on 3.11, so the kit makes its virtualenv from
the machine's newer Python (:func:`funes_contracts.agent_cli.newer_python`).

1. the user's ``mcp.json`` lists a server of their own; ``funes integrations install openhands``
   adds ``mcpServers.funes``;
2. ``openhands --headless`` runs a real conversation against the fake model (named by ``LLM_*``
   with ``--override-with-envs``), in which the model calls ``recall`` (OpenHands' bare name for an
   MCP tool, with the ``security_risk`` argument OpenHands requires) and receives a passage;
3. ``funes index`` (OpenHands has no hook funes installs) converts the new conversation: a phrase
   only the prompt held becomes recallable;
4. ``funes integrations remove openhands`` gives ``mcp.json`` back byte for byte.

OpenHands tries to fetch its public skills from GitHub at start; offline that fails and it goes on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from funes_contracts.agent_cli import agent_world, funes, ok, recalled, run
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

#: Said only in the prompt: recall finding it proves the conversation was converted and indexed.
MARKER = "heron quarry lantern 4417"
#: The user's own mcp.json before funes is installed, as `openhands mcp add` writes it. Their server
#: is disabled: enabled, `gh-mcp` (not installed here) fails to start, and in that run OpenHands
#: offered the model no funes tool either.
OWN_MCP = """{
  "mcpServers": {
    "github": {
      "command": "gh-mcp",
      "args": ["--read-only"],
      "env": {},
      "transport": "stdio",
      "enabled": false
    }
  }
}
"""


def test_openhands_calls_funes_and_its_conversation_is_remembered(tmp_path: Path) -> None:
    # The packaged embedder: OpenHands starts `funes mcp` without its own environment.
    openhands, home, _, project, env = agent_world(
        tmp_path,
        "openhands",
        drop=("OPENHANDS_", "LLM_"),
        embedder=None,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        OPENHANDS_SUPPRESS_BANNER="1",
    )
    config = home / ".openhands" / "mcp.json"
    conversations = home / ".openhands" / "conversations"
    conversations.mkdir(parents=True)
    config.write_text(OWN_MCP, encoding="utf-8")

    with FakeModel(
        tool_pattern=r"^recall$",
        tool_args={"query": "Postgres sensor readings", "security_risk": "LOW"},
        reply="Recalled it.",
    ) as model:
        funes("index", Path(__file__).resolve().parents[3] / "examples" / "sessions", env=env, cwd=project)
        installed = funes(
            "integrations", "install", "openhands", "--path", conversations, env=env, cwd=project
        )
        assert "added the funes MCP server" in installed and "keeps conversations" in installed, installed
        llm = {"LLM_MODEL": "openai/fake-model", "LLM_BASE_URL": f"{model.url}/v1", "LLM_API_KEY": "sk-fake"}
        prompt = f"What did we decide about storage? {MARKER}"
        argv = [openhands, "--headless", "--override-with-envs", "--always-approve", "-t", prompt]
        out = ok(run(argv, {**env, **llm}, project, timeout=600))

    offered = [t.get("function", {}).get("name") for t in model.requests[0]["body"].get("tools", [])]
    assert model.requests[0].get("answered_tool") == "recall", (
        f"funes' recall was not offered at once: {offered}"
    )
    assert model.saw("sensor readings for tidepool"), "the tool result holds no passage of the memory"
    assert "Recalled it." in out
    written = list(conversations.glob("*/base_state.json"))
    assert len(written) == 1, written

    funes("index", env=env, cwd=project)
    assert recalled(env, project, MARKER, "4417", "--harness", "openhands"), (
        "the conversation was not indexed"
    )

    removed = funes("integrations", "remove", "openhands", env=env, cwd=project)
    assert "removed the funes MCP server" in removed, removed
    assert config.read_text(encoding="utf-8") == OWN_MCP, "mcp.json is not back to its original bytes"
    assert recalled(env, project, MARKER, "4417"), "remove keeps the memory"

"""End to end with the real Mistral Vibe (``mistral-vibe``, pinned by funes-contracts), offline.

Vibe needs Python 3.12 or newer; the tests run on 3.11, so the kit makes Vibe's virtualenv from the
machine's newer Python (:func:`funes_contracts.agent_cli.newer_python`).

1. the user's ``config.toml`` names a local model (the fake one, OpenAI chat completions) and a
   server of their own; ``funes integrations install vibe --path SESSIONS`` appends funes'
   ``[[mcp_servers]]`` item and registers the session folder;
2. ``vibe -p`` runs a real session in which the model calls ``funes_recall`` and receives a passage
   of the memory;
3. ``funes index`` (Vibe's hooks are experimental and funes installs none) converts the new session
   from ``messages.jsonl``: a phrase only the prompt held becomes recallable;
4. ``funes integrations remove vibe`` gives ``config.toml`` back byte for byte.

Vibe 2.26 runs its "unified harness" by default, which keeps sessions in another store
(``logs/session/unified/<id>/``) that funes-vibe does not read yet; ``--legacy-harness`` selects the
engine that writes ``logs/session/session_<time>_<id>/messages.jsonl`` (README, "Not yet").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from funes_contracts.agent_cli import agent_world, funes, ok, recalled, run
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

#: Said only in the prompt: recall finding it proves the session was converted and indexed.
MARKER = "heron quarry lantern 4417"
#: The user's own config.toml before funes is installed; {url} is the fake model's.
OWN_CONFIG = """# my own Vibe config, written before funes is installed
active_model = "fake"
enable_telemetry = false
enable_update_checks = false
enable_auto_update = false

[[providers]]
name = "fake"
api_base = "{url}/v1"
api_key_env_var = "FAKE_API_KEY"

[[models]]
name = "fake-model"
provider = "fake"
alias = "fake"

[[mcp_servers]]
name = "github"
transport = "stdio"
command = "gh-mcp"
args = ["--read-only"]   # keep this comment
"""


def test_vibe_calls_funes_and_its_session_is_remembered(tmp_path: Path) -> None:
    # The packaged embedder (not the tests' hash one): Vibe starts `funes mcp` with a filtered
    # environment, so FUNES_EMBEDDER would not reach it.
    vibe, home, _, project, env = agent_world(
        tmp_path, "vibe", drop=("VIBE_", "MISTRAL_"), embedder=None, FAKE_API_KEY="sk-fake"
    )
    config = home / ".vibe" / "config.toml"
    sessions = home / ".vibe" / "logs" / "session"
    sessions.mkdir(parents=True)

    with FakeModel(
        tool_pattern=r"^funes_recall$", tool_args={"query": "Postgres sensor readings"}, reply="Recalled it."
    ) as model:
        own = OWN_CONFIG.format(url=model.url)
        config.write_text(own, encoding="utf-8")
        funes("index", Path(__file__).resolve().parents[3] / "examples" / "sessions", env=env, cwd=project)
        installed = funes("integrations", "install", "vibe", "--path", sessions, env=env, cwd=project)
        assert "added the funes MCP server" in installed and "keeps sessions" in installed, installed
        assert config.read_text(encoding="utf-8").startswith(own), "the user's bytes come first, unchanged"

        prompt = f"What did we decide about storage? {MARKER}"
        argv = [vibe, "-p", prompt, "--auto-approve", "--trust", "--legacy-harness"]
        out = ok(run(argv, env, project, timeout=300))

    assert model.requests[0].get("answered_tool") == "funes_recall", "funes' recall was not offered at once"
    answers = [m for r in model.requests for m in r["body"].get("messages", []) if m.get("role") == "tool"]
    assert model.saw("sensor readings for tidepool"), (
        f"the tool result holds no passage of the memory: {answers}"
    )
    assert "Recalled it." in out
    written = list(sessions.glob("session_*/messages.jsonl"))
    assert len(written) == 1, written

    funes("index", env=env, cwd=project)
    assert recalled(env, project, MARKER, "4417", "--harness", "vibe"), "the new session was not indexed"

    removed = funes("integrations", "remove", "vibe", env=env, cwd=project)
    assert "removed the funes MCP server" in removed, removed
    assert config.read_text(encoding="utf-8") == own, "config.toml is not back to its original bytes"
    assert recalled(env, project, MARKER, "4417"), "remove keeps the memory"

"""``funes ask --agent codex`` end to end: the real Codex CLI against the scripted fake model.

A throwaway ``CODEX_HOME`` whose ``config.toml`` names the fake model as provider, requires an MCP
server that records that it started (``required = true``: left on, Codex would refuse to run
without it), and turns hooks on with a ``Stop`` hook that records that it fired; a small memory
(the example sessions, hash embedder). ``funes ask`` must hand the recalled passages to the model
in one prompt, print the model's answer, start neither the server nor the hook, and write no
rollout. Skipped only when npm or the registry cannot be reached.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from funes_contracts.agent_cli import FUNES, agent_world, funes, marker_server, ok, run
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
QUESTION = "why did the ARM build break"
FROM_EXAMPLES = "musllinux aarch64 wheel"
ANSWER = "It broke because orjson has no musl wheel for aarch64.\nSessions: 8d41b7e2"


def test_ask_codex_answers_from_passages_without_mcp_or_hooks(tmp_path: Path) -> None:
    assert FUNES.is_file(), f"{FUNES} is missing: run the tests with the workspace's venv"
    codex_home = tmp_path / "home" / ".codex"
    _, _, _, cwd, env = agent_world(
        tmp_path,
        "codex",
        folders=[codex_home],
        drop=("CODEX_",),
        CODEX_HOME=str(codex_home),
        FAKE_API_KEY="sk-fake",
    )
    started, hooked = tmp_path / "mcp-started", tmp_path / "hook-fired"
    server = marker_server(tmp_path / "marker_server.py", started)
    stop = [{"hooks": [{"type": "command", "command": f"echo fired >> {hooked}"}]}]
    (codex_home / "hooks.json").write_text(json.dumps({"hooks": {"Stop": stop}}), encoding="utf-8")
    funes("index", REPO / "examples" / "sessions", env=env)

    with FakeModel(reply=ANSWER) as model:
        (codex_home / "config.toml").write_text(
            'model = "gpt-5-codex"\n'
            'model_provider = "fake"\n'
            "\n"
            "[features]\n"
            "hooks = true\n"
            "\n"
            "[model_providers.fake]\n"
            'name = "Fake local model"\n'
            f'base_url = "{model.url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "FAKE_API_KEY"\n'
            "\n"
            '[mcp_servers."marker.server"]\n'
            f"command = {json.dumps(server[0])}\n"
            f"args = {json.dumps(server[1:])}\n"
            "required = true\n",
            encoding="utf-8",
        )
        done = run([FUNES, "ask", QUESTION, "--agent", "codex"], env, cwd)
    assert ok(done) == ANSWER + "\n", done.stdout
    assert "asking Codex" in done.stderr

    bodies = [r["body"] for r in model.requests if r["method"] == "POST" and r["path"].endswith("/responses")]
    assert bodies, "the model was never asked"
    prompt = json.dumps(bodies[0], ensure_ascii=False)
    assert FROM_EXAMPLES in prompt, "the prompt holds the recalled passages"
    assert f"Question: {QUESTION}" in prompt and "== RECALLED PASSAGES ==" in prompt
    offered = [str(t.get("name") or t.get("type")) for body in bodies for t in body.get("tools") or []]
    assert not any(name.startswith("mcp") for name in offered), f"MCP tools were offered: {offered}"
    assert not {"exec_command", "shell", "web_search"} & set(offered), (
        f"a shell or the web was offered: {offered}"
    )
    assert not started.exists(), "an MCP server was started"
    assert not hooked.exists(), "a Codex hook fired"
    assert not (codex_home / "sessions").exists() or not list((codex_home / "sessions").rglob("*.jsonl")), (
        "a rollout was written"
    )

"""``funes ask --agent claude`` end to end: the real Claude Code CLI against the scripted fake model.

A throwaway HOME whose Claude Code config would start an MCP server (a marker that records that it
ran) and fire a ``Stop`` hook (a marker too); a small memory (the example sessions, hash
embedder). ``funes ask`` must hand the recalled passages to the model in one prompt, print the
model's answer, and start neither the MCP server nor the hook, write no session transcript and
offer the model no tool. Skipped only when npm or the registry cannot be reached.
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
#: In the example sessions (not in the question): the passages reached the model.
FROM_EXAMPLES = "musllinux aarch64 wheel"
ANSWER = "It broke because orjson has no musl wheel for aarch64.\nSessions: 8d41b7e2"


def test_ask_claude_answers_from_passages_without_mcp_or_hooks(tmp_path: Path) -> None:
    assert FUNES.is_file(), f"{FUNES} is missing: run the tests with the workspace's venv"
    _, home, _, cwd, env = agent_world(
        tmp_path,
        "claude",
        folders=[tmp_path / "home" / ".claude"],
        drop=("ANTHROPIC_", "CLAUDE_"),
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    started, hooked = tmp_path / "mcp-started", tmp_path / "hook-fired"
    command, *args = marker_server(tmp_path / "marker_server.py", started)
    (home / ".claude.json").write_text(
        json.dumps({"mcpServers": {"marker": {"type": "stdio", "command": command, "args": args}}}),
        encoding="utf-8",
    )
    stop = [{"hooks": [{"type": "command", "command": f"echo fired >> {hooked}"}]}]
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": stop, "SessionEnd": stop}}), encoding="utf-8"
    )
    # The same MCP server in a project file of the folder funes ask runs from.
    (cwd / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"project": {"command": command, "args": args}}}),
        encoding="utf-8",
    )
    funes("index", REPO / "examples" / "sessions", env=env)

    with FakeModel(reply=ANSWER) as model:
        env.update(ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-ant-fake")
        done = run([FUNES, "ask", QUESTION, "--agent", "claude"], env, cwd)
    assert ok(done) == ANSWER + "\n", done.stdout
    assert "asking Claude Code" in done.stderr

    messages = [
        r["body"] for r in model.requests if r["method"] == "POST" and r["path"].endswith("/messages")
    ]
    assert messages, "the model was never asked"
    prompt = json.dumps(messages[0], ensure_ascii=False)
    assert FROM_EXAMPLES in prompt, "the prompt holds the recalled passages"
    assert f"Question: {QUESTION}" in prompt and "== RECALLED PASSAGES ==" in prompt
    assert all(not body.get("tools") for body in messages), "the model was offered tools"
    assert not started.exists(), "an MCP server was started"
    assert not hooked.exists(), "a Claude Code hook fired"
    assert not list((home / ".claude").rglob("*.jsonl")), "a session transcript was written"

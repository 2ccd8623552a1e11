"""``funes ask --agent claude`` end to end: the real Claude Code CLI against the scripted fake model.

A throwaway HOME whose Claude Code config would start an MCP server (a marker that records that it
ran) and fire a ``Stop`` hook (a marker too); a small memory (the example sessions, hash
embedder). ``funes ask`` must hand the recalled passages to the model in one prompt, print the
model's answer, and start neither the MCP server nor the hook, write no session transcript and
offer the model no tool. Skipped only when npm or the registry cannot be reached.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from funes_contracts.agent_cli import npm_agent
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
FUNES = Path(sys.executable).parent / "funes"
QUESTION = "why did the ARM build break"
#: In the example sessions (not in the question): the passages reached the model.
FROM_EXAMPLES = "musllinux aarch64 wheel"
ANSWER = "It broke because orjson has no musl wheel for aarch64.\nSessions: 8d41b7e2"
MARKER_SERVER = """\
import pathlib, sys
pathlib.Path(sys.argv[1]).write_text("started\\n")
for _ in sys.stdin:
    pass
"""


def test_ask_claude_answers_from_passages_without_mcp_or_hooks(tmp_path: Path) -> None:
    claude = npm_agent("claude")
    assert FUNES.is_file(), f"{FUNES} is missing: run the tests with the workspace's venv"
    home, funes_home, cwd = tmp_path / "home", tmp_path / "funes-home", tmp_path / "cwd"
    (home / ".claude").mkdir(parents=True)
    cwd.mkdir()
    server, started, hooked = tmp_path / "marker_server.py", tmp_path / "mcp-started", tmp_path / "hook-fired"
    server.write_text(MARKER_SERVER, encoding="utf-8")
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "marker": {
                        "type": "stdio",
                        "command": sys.executable,
                        "args": [str(server), str(started)],
                    }
                }
            }
        ),
        encoding="utf-8",
    )
    stop = [{"hooks": [{"type": "command", "command": f"echo fired >> {hooked}"}]}]
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": stop, "SessionEnd": stop}}), encoding="utf-8"
    )
    # The same MCP server in a project file of the folder funes ask runs from.
    (cwd / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {"project": {"command": sys.executable, "args": [str(server), str(started)]}}}
        ),
        encoding="utf-8",
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE_", "FUNES_", "PYTEST_"))
    }
    env.update(
        HOME=str(home),
        FUNES_HOME=str(funes_home),
        FUNES_EMBEDDER="hash",
        PATH=os.pathsep.join([str(claude.parent), env.get("PATH", "")]),
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    indexed = subprocess.run(
        [str(FUNES), "index", str(REPO / "examples" / "sessions")], env=env, capture_output=True, text=True
    )
    assert indexed.returncode == 0, indexed.stderr

    with FakeModel(reply=ANSWER) as model:
        env.update(ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-ant-fake")
        done = subprocess.run(
            [str(FUNES), "ask", QUESTION, "--agent", "claude"],
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert done.returncode == 0, f"funes ask exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert done.stdout == ANSWER + "\n", done.stdout
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

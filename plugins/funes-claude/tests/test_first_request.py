"""Claude Code's non-blocking MCP start includes funes' tools in the first request of `claude -p` (issue 16).

Claude Code connects MCP servers without waiting for them: a server that has not listed its tools
when the first model request goes out (~0.3 s after start) is missing from it. The real CLI runs
against the scripted fake model, **without** ``MCP_CONNECTION_NONBLOCKING``; the first
``/v1/messages`` request must offer ``mcp__funes__recall``, and the model's call to it must reach
the memory. (With the SDK server alone, ``FUNES_MCP_FRONT=0``, it did not: see docs/benchmarks.md.)
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

FUNES = Path(sys.executable).parent / "funes"


def test_first_request_of_claude_p_offers_funes_tools(tmp_path: Path) -> None:
    claude = npm_agent("claude")
    home, project, funes_home = tmp_path / "home", tmp_path / "project", tmp_path / "funes-home"
    home.mkdir()
    project.mkdir()
    server = {"type": "stdio", "command": str(FUNES), "args": ["mcp"], "env": {"FUNES_HOME": str(funes_home)}}
    (home / ".claude.json").write_text(
        json.dumps({"mcpServers": {"funes": server}, "hasCompletedOnboarding": True}), encoding="utf-8"
    )
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "FUNES_", "MCP_"))
    }
    env.update(HOME=str(home), DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    with FakeModel(tool_pattern=r"mcp__funes__recall$", tool_args={"query": "anything"}, reply="ok") as model:
        done = subprocess.run(
            [str(claude), "-p", "hello", "--output-format", "json", "--allowedTools", "mcp__funes__recall"],
            env={**env, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-fake"},
            cwd=project,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        posts = [r for r in model.requests if r["method"] == "POST" and r["path"].endswith("/messages")]
        first = [t.get("name") for t in (posts[0]["body"].get("tools") or [])]
        assert "mcp__funes__recall" in first, first
        assert model.tool_calls_made() >= 1
        seen = json.dumps([r["body"] for r in posts[1:]])
        assert "no index yet" in seen, "the call reached funes (an empty memory says how to build one)"

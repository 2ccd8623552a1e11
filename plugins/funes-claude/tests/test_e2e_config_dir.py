"""End to end with the real Claude Code CLI and ``CLAUDE_CONFIG_DIR`` (issue 19).

With ``CLAUDE_CONFIG_DIR`` set, Claude Code keeps transcripts, ``settings.json`` and even its
``.claude.json`` in that folder. The test puts it outside HOME and proves that install, the seed,
the MCP registration, the Stop hook and remove all use it, and that nothing is written to the
default places (``~/.claude``, ``~/.claude.json``).
"""

from __future__ import annotations

import json
import shutil
import time
from importlib import resources
from pathlib import Path

import pytest

from funes_contracts.agent_cli import agent_world, funes, ok, recalled, run, wait_until_recalled
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

FIXTURES = Path(str(resources.files("funes_claude.contract_fixtures")))
MARKER = "wombat periscope 5309"
SEEDED = "FLUSH_TIMEOUT"


def test_claude_config_dir_end_to_end(tmp_path: Path) -> None:
    config_dir = tmp_path / "claude-config"
    claude, home, _, project, env = agent_world(
        tmp_path,
        "claude",
        drop=("ANTHROPIC_", "CLAUDE_"),
        CLAUDE_CONFIG_DIR=str(config_dir),
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    existing = config_dir / "projects" / "-home-dev-src-tidepool"
    existing.mkdir(parents=True)
    shutil.copy(FIXTURES / "cases" / "basic" / "5d1c7a3e-2b4f-4c8e-9a61-0f3b8d2e7c45.jsonl", existing)
    settings = config_dir / "settings.json"
    original = '{\n  "model": "sonnet"\n}\n'
    settings.write_text(original, encoding="utf-8")

    info = funes("integrations", "info", "claude", env=env, cwd=project)
    assert f"{config_dir}/.claude.json (user-scope MCP servers), from $CLAUDE_CONFIG_DIR" in info, info
    funes("integrations", "install", "claude", env=env, cwd=project)
    assert "funes_claude.hook" in settings.read_text(encoding="utf-8")
    assert "funes" in json.loads((config_dir / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists(), (
        "nothing in the default places"
    )
    assert recalled(env, project, SEEDED, SEEDED), "the session under CLAUDE_CONFIG_DIR was seeded"

    with FakeModel(
        tool_pattern=r"mcp__funes__recall$", tool_args={"query": "FLUSH_TIMEOUT"}, reply="Recalled."
    ) as model:
        session_env = {
            **env,
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "sk-ant-fake",
            "MCP_CONNECTION_NONBLOCKING": "0",
            "MCP_CONNECT_TIMEOUT_MS": "60000",
        }
        argv = [
            str(claude),
            "-p",
            f"What was the flush timeout? {MARKER}",
            "--allowedTools",
            "mcp__funes__recall",
        ]
        ok(run(argv, session_env, project))
        ended = time.monotonic()
    assert model.tool_calls_made() >= 1, (
        "Claude Code found funes' MCP server in CLAUDE_CONFIG_DIR/.claude.json"
    )
    assert list((config_dir / "projects").rglob("*.jsonl")), "the new transcript is under CLAUDE_CONFIG_DIR"

    wait_until_recalled(env, project, MARKER, "5309", since=ended)

    funes("integrations", "remove", "claude", env=env, cwd=project)
    assert settings.read_text(encoding="utf-8") == original
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists()

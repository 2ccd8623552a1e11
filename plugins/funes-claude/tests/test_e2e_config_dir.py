"""End to end with the real Claude Code CLI and ``CLAUDE_CONFIG_DIR`` (issue 19).

With ``CLAUDE_CONFIG_DIR`` set, Claude Code keeps transcripts, ``settings.json`` and even its
``.claude.json`` in that folder. The test puts it outside HOME and proves that install, the seed,
the MCP registration, the Stop hook and remove all use it, and that nothing is written to the
default places (``~/.claude``, ``~/.claude.json``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from funes_contracts.agent_cli import npm_agent
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

FIXTURES = Path(__file__).resolve().parents[1] / "funes_claude" / "contract_fixtures"
FUNES = Path(sys.executable).parent / "funes"
MARKER = "wombat periscope 5309"
SEEDED = "FLUSH_TIMEOUT"


def run(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args!r} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def found(env: dict[str, str], cwd: Path, query: str, needle: str) -> bool:
    return needle in ok(
        run([str(FUNES), "recall", query, "--profile", "lexical", "-k", "3", "--json"], env, cwd)
    )


def test_claude_config_dir_end_to_end(tmp_path: Path) -> None:
    claude = npm_agent("claude")
    home, config_dir = tmp_path / "home", tmp_path / "claude-config"
    funes_home, project = tmp_path / "funes-home", tmp_path / "project"
    for folder in (home, project):
        folder.mkdir(parents=True)
    existing = config_dir / "projects" / "-home-dev-src-tidepool"
    existing.mkdir(parents=True)
    shutil.copy(FIXTURES / "cases" / "basic" / "5d1c7a3e-2b4f-4c8e-9a61-0f3b8d2e7c45.jsonl", existing)
    settings = config_dir / "settings.json"
    original = '{\n  "model": "sonnet"\n}\n'
    settings.write_text(original, encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE_", "FUNES_", "PYTEST_"))
    }
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(config_dir),
        FUNES_HOME=str(funes_home),
        FUNES_EMBEDDER="hash",
        PATH=os.pathsep.join([str(claude.parent), env.get("PATH", "")]),
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )

    info = ok(run([str(FUNES), "integrations", "info", "claude"], env, project))
    assert f"{config_dir}/.claude.json (user-scope MCP servers), from $CLAUDE_CONFIG_DIR" in info, info
    ok(run([str(FUNES), "integrations", "install", "claude"], env, project, timeout=300))
    assert "funes_claude.hook" in settings.read_text(encoding="utf-8")
    assert "funes" in json.loads((config_dir / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists(), (
        "nothing in the default places"
    )
    assert found(env, project, SEEDED, SEEDED), "the session under CLAUDE_CONFIG_DIR was seeded"

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

    while not found(env, project, MARKER, "5309"):
        assert time.monotonic() < ended + 30, (funes_home / "logs" / "claude-hook.log").read_text(
            errors="replace"
        )
        time.sleep(0.5)

    ok(run([str(FUNES), "integrations", "remove", "claude"], env, project))
    assert settings.read_text(encoding="utf-8") == original
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists()

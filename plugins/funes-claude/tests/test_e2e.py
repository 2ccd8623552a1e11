"""End to end with the real Claude Code CLI (2.1.197, from npm) against the scripted fake model.

One throwaway HOME, FUNES_HOME and project folder; the real ``funes`` of this environment; the
real ``claude`` binary on PATH (so registration goes through ``claude mcp add``). The test walks
the whole life of the integration and checks each step from the outside:

1. a small memory is indexed (the example sessions) and a Claude session already lies in
   ``~/.claude/projects``; the user's own ``settings.json`` is written;
2. ``funes integrations install claude`` registers the MCP server, adds the hooks, seeds the
   spool with the existing session and indexes it (a phrase only it contains is recallable);
3. ``claude mcp list`` shows funes ``✔ Connected``;
4. ``claude -p`` runs a real session in which the fake model calls ``mcp__funes__recall`` and
   receives a passage of the example sessions;
5. the ``Stop`` hook converts that new session and indexes it in the background: a phrase that
   only the prompt contained becomes recallable;
6. ``funes integrations remove claude``: ``claude mcp list`` no longer shows funes and
   ``settings.json`` is back to its original bytes.

``FUNES_EMBEDDER=hash`` is exported so every funes process (the MCP server Claude Code starts,
the indexers the hooks start) uses the fast test embedder. Skipped only when npm or the registry
cannot be reached (``funes_contracts.agent_cli``).
"""

from __future__ import annotations

import json
import shutil
import time
from importlib import resources
from itertools import pairwise
from pathlib import Path

import pytest

from funes_contracts.agent_cli import FUNES, agent_world, ok, recalled, run, wait_until_recalled
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
FIXTURES = Path(str(resources.files("funes_claude.contract_fixtures")))
#: Only the prompt of the new session contains these words.
MARKER = "quokka lighthouse semaphore 7731"
#: Only the session that existed before install contains this.
SEEDED = "FLUSH_TIMEOUT"
#: In the example sessions, found by the fake model's query.
EXAMPLE_PHRASE = "sensor readings for tidepool"
ORIGINAL_SETTINGS = (
    '{\n  "model": "sonnet",\n  "env": {\n    "TIDEPOOL_ENV": "dev"\n  },\n'
    '  "hooks": {\n    "PreToolUse": [\n      {\n        "matcher": "Bash",\n        "hooks": [\n'
    '          {"type": "command", "command": "true", "timeout": 5}\n        ]\n      }\n    ]\n  }\n}\n'
)


def test_claude_code_end_to_end(tmp_path: Path) -> None:
    assert FUNES.is_file(), f"{FUNES} is missing: run the tests with the workspace's venv"
    claude, home, funes_home, project, env = agent_world(
        tmp_path,
        "claude",
        drop=("ANTHROPIC_", "CLAUDE_"),
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    existing = home / ".claude" / "projects" / "-home-dev-src-tidepool"
    existing.mkdir(parents=True)
    shutil.copy(FIXTURES / "cases" / "basic" / "5d1c7a3e-2b4f-4c8e-9a61-0f3b8d2e7c45.jsonl", existing)
    settings = home / ".claude" / "settings.json"
    settings.write_text(ORIGINAL_SETTINGS, encoding="utf-8")
    timings: dict[str, float] = {}

    def step(name: str) -> None:
        timings[name] = time.monotonic()

    # 1. A small memory.
    step("index examples")
    ok(run([str(FUNES), "index", str(REPO / "examples" / "sessions"), "--wait"], env, project))

    # 2. Install: register, hook, seed the existing session, first index.
    step("install")
    out = ok(run([str(FUNES), "integrations", "install", "claude"], env, project, timeout=300))
    assert "claude mcp add" in out, f"the registrar should use the claude CLI on PATH:\n{out}"
    hooks = json.loads(settings.read_text(encoding="utf-8"))["hooks"]
    assert set(hooks) == {"PreToolUse", "Stop", "SubagentStop", "SessionEnd"}
    assert "funes_claude.hook" in hooks["Stop"][0]["hooks"][0]["command"]
    assert recalled(env, project, SEEDED, SEEDED), "install seeded and indexed the existing session"

    # 3. Claude Code sees the server.
    step("claude mcp list")
    listed = ok(run([str(claude), "mcp", "list"], env, project))
    assert any(line.startswith("funes:") and "✔ Connected" in line for line in listed.splitlines()), listed

    # 4. A real session that recalls from the memory.
    step("claude -p")
    with FakeModel(
        tool_pattern=r"mcp__funes__recall$",
        tool_args={"query": "Postgres embedded sensor readings"},
        reply="Recalled it.",
    ) as model:
        # Only the session gets a key: with one and no base URL, `claude mcp …` waits ~20 s on
        # api.anthropic.com, which this sandbox cannot reach. And `-p` connects MCP servers
        # without waiting for them (the first request goes out without tools from a server still
        # starting): MCP_CONNECTION_NONBLOCKING=0 makes it wait, so a loaded CI machine, where
        # `funes mcp` takes seconds to start, does not make the test flaky.
        session_env = {
            **env,
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "sk-ant-fake",
            "MCP_CONNECTION_NONBLOCKING": "0",
            "MCP_CONNECT_TIMEOUT_MS": "60000",
        }
        argv = [str(claude), "-p", f"What did we decide about storage? {MARKER}", "--output-format", "json"]
        done = run([*argv, "--allowedTools", "mcp__funes__recall"], session_env, project, timeout=180)
        session_ended = time.monotonic()
        result = json.loads(ok(done))
    assert model.tool_calls_made() >= 1, "the fake model asked for mcp__funes__recall"
    assert not result.get("permission_denials"), result
    seen = json.dumps([r["body"] for r in model.requests if r.get("body")], ensure_ascii=False)
    assert EXAMPLE_PHRASE in seen, "the tool result the model received holds a passage of the memory"
    assert EXAMPLE_PHRASE in str(result.get("result")), result.get("result")

    # 5. The hooks converted and indexed the new session in the background.
    step("hook indexed")
    wait_until_recalled(env, project, MARKER, "7731", since=session_ended)
    log = (funes_home / "logs" / "claude-hook.log").read_text(encoding="utf-8")
    assert "Stop: " in log and "worker" in log, log

    # 6. Remove: registration and hooks go, the user's settings come back byte for byte.
    step("remove")
    ok(run([str(FUNES), "integrations", "remove", "claude"], env, project))
    listed = ok(run([str(claude), "mcp", "list"], env, project))
    assert not any(line.startswith("funes:") for line in listed.splitlines()), listed
    assert settings.read_text(encoding="utf-8") == ORIGINAL_SETTINGS
    assert recalled(env, project, MARKER, "7731"), "remove keeps the memory"
    step("end")

    names = list(timings)
    print("\n".join(f"{a}: {timings[b] - timings[a]:.1f} s" for a, b in pairwise(names)))

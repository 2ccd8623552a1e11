"""End to end with the real Codex CLI (pinned by funes-memory-contracts), offline against the fake model.

One session proves the whole loop a user relies on:

1. a small memory is indexed (the repository's ``examples/sessions``, hash embedder);
2. ``funes integrations install codex`` wires hooks and the MCP server into a throwaway
   ``CODEX_HOME`` that already holds the user's provider settings;
3. ``codex exec`` runs a real session in which the model calls ``mcp__funes__recall`` on the
   *first* request and gets a real answer from funes (the fake model is sent a
   ``function_call_output`` quoting the examples);
4. the ``Stop`` hook converts that session into the spool and indexes it in the background,
   so ``funes recall`` finds a phrase only that session contains;
5. ``funes integrations remove codex`` gives back ``config.toml`` byte for byte and deletes the
   ``hooks.json`` it created.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from funes_contracts.agent_cli import npm_agent, wait_until_recalled
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples" / "sessions"
FUNES = Path(sys.executable).parent / "funes"
#: Only the new Codex session says this; recall finding it proves the hook indexed the session.
NEW_PHRASE = "quokka lighthouse semaphore"
#: What the model asks funes' recall for, and a phrase of the examples (not of the query or the
#: prompt) that funes' answer must quote.
QUERY = "why did the ARM build break"
FROM_EXAMPLES = "musllinux aarch64 wheel"


def _run(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def _ok(done: subprocess.CompletedProcess[str], what: str) -> str:
    assert done.returncode == 0, (
        f"{what} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout


def _tool_outputs(requests: list[dict[str, Any]]) -> list[str]:
    """The text of every function_call_output the model was sent."""
    found = []
    for request in requests:
        body = request.get("body")
        items = body.get("input") if isinstance(body, dict) else None
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                output = item.get("output")
                found.append(output if isinstance(output, str) else json.dumps(output))
    return found


def test_codex_session_recalls_and_is_remembered(tmp_path: Path) -> None:
    codex = npm_agent("codex")
    if not EXAMPLES.is_dir():
        pytest.skip(f"{EXAMPLES} is missing (not a source checkout)")
    home = tmp_path / "home"
    codex_home = home / ".codex"
    funes_home = tmp_path / "funes-home"
    project = tmp_path / "project"
    for folder in (codex_home, project):
        folder.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("FUNES_BIN", "FUNES_LOAD_PLUGINS")}
    env.update(
        HOME=str(home),
        CODEX_HOME=str(codex_home),
        FUNES_HOME=str(funes_home),
        FUNES_EMBEDDER="hash",
        FAKE_API_KEY="sk-fake",
        PATH=f"{codex.parent}{os.pathsep}{env.get('PATH', '')}",
    )
    config = codex_home / "config.toml"
    hooks = codex_home / "hooks.json"

    with FakeModel(
        tool_pattern=r"mcp__funes__recall$", tool_args={"query": QUERY}, reply="Recalled."
    ) as model:
        config.write_text(
            "# the user's own provider settings, written before funes is installed\n"
            'model = "gpt-5-codex"\n'
            'model_provider = "fake"\n'
            "\n"
            "[model_providers.fake]\n"
            'name = "Fake local model"\n'
            f'base_url = "{model.url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "FAKE_API_KEY"\n',
            encoding="utf-8",
        )
        before = config.read_bytes()

        _ok(_run([str(FUNES), "index", str(EXAMPLES), "--wait"], env, project), "funes index examples")
        installed = _ok(_run([str(FUNES), "integrations", "install", "codex"], env, project), "install")
        assert "codex: added the funes MCP server" in installed
        assert hooks.is_file() and "funes_codex.hook" in hooks.read_text(encoding="utf-8")

        prompt = f"Before we start on the {NEW_PHRASE}: what broke the ARM build last time?"
        session = _run(
            [
                str(codex),
                "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-hook-trust",
                "--json",
                prompt,
            ],
            env,
            project,
        )
        _ok(session, "codex exec")
        ended = time.monotonic()

        first = next(r for r in model.requests if r["method"] == "POST")
        assert first.get("answered_tool") == "mcp__funes__recall", (
            "funes' recall tool was not offered on the first request"
        )
        outputs = _tool_outputs(model.requests)
        assert any(FROM_EXAMPLES in out for out in outputs), (
            f"the model never got funes' answer quoting the examples: {outputs}"
        )

    rollouts = list((codex_home / "sessions").rglob("rollout-*.jsonl"))
    assert len(rollouts) == 1, rollouts

    wait_until_recalled(env, project, NEW_PHRASE, NEW_PHRASE, "--harness", "codex", since=ended)

    removed = _ok(_run([str(FUNES), "integrations", "remove", "codex"], env, project), "remove")
    assert "removed" in removed
    assert config.read_bytes() == before, "config.toml is not back to its original bytes"
    assert not hooks.exists(), "hooks.json was created by install and must be gone after remove"

"""End to end with the real GitHub Copilot CLI (@github/copilot, pinned by funes-contracts), offline.

Copilot's own offline mode with a custom provider (``COPILOT_OFFLINE``, ``COPILOT_PROVIDER_*``)
needs no GitHub account: the fake model on 127.0.0.1 is the provider. A throwaway HOME and a
``COPILOT_HOME`` outside it (to prove it is honoured):

1. a small memory is indexed (the repository's examples, hash embedder);
2. ``funes integrations install copilot`` adds ``mcpServers.funes`` to ``mcp-config.json`` and the
   ``agentStop`` and ``sessionEnd`` hooks to the user's ``settings.json``;
3. ``copilot -p`` runs a real session in which the model calls ``funes-recall`` on the first
   request and receives a passage of the examples;
4. the ``agentStop`` hook converts the session's ``events.jsonl`` into the spool and indexes it
   in the background: a phrase only the prompt held becomes recallable;
5. ``funes integrations remove copilot`` gives ``settings.json`` back byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from funes_contracts.agent_cli import npm_agent
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
FUNES = Path(sys.executable).parent / "funes"
MARKER = "quokka lighthouse semaphore 6632"
EXAMPLE_PHRASE = "sensor readings for tidepool"


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
    out = ok(run([str(FUNES), "recall", query, "--profile", "lexical", "-k", "3", "--json"], env, cwd))
    return needle in out


def test_copilot_end_to_end(tmp_path: Path) -> None:
    copilot = npm_agent("copilot")
    home, copilot_home = tmp_path / "home", tmp_path / "copilot-home"
    funes_home, project = tmp_path / "funes-home", tmp_path / "project"
    for folder in (home, copilot_home, project):
        folder.mkdir(parents=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("COPILOT_", "GH_", "GITHUB_", "FUNES_", "PYTEST_"))
    }
    env.update(
        HOME=str(home),
        COPILOT_HOME=str(copilot_home),
        FUNES_HOME=str(funes_home),
        FUNES_EMBEDDER="hash",
        COPILOT_AUTO_UPDATE="false",
        PATH=os.pathsep.join([str(copilot.parent), env.get("PATH", "")]),
    )
    settings = copilot_home / "settings.json"
    original = '{\n  "banner": "never",\n  "beep": false\n}\n'
    settings.write_text(original, encoding="utf-8")

    ok(run([str(FUNES), "index", str(REPO / "examples" / "sessions")], env, project))
    ok(run([str(FUNES), "integrations", "install", "copilot"], env, project, timeout=300))
    wired = json.loads(settings.read_text(encoding="utf-8"))
    assert "agentStop" in wired["hooks"], wired
    servers = json.loads((copilot_home / "mcp-config.json").read_text(encoding="utf-8"))["mcpServers"]
    assert servers["funes"]["args"][-1] == "mcp", servers

    with FakeModel(
        tool_pattern=r"^funes-recall$",
        tool_args={"query": "Postgres embedded sensor readings"},
        reply="Recalled it.",
    ) as model:
        session_env = {
            **env,
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": model.url + "/v1",
            "COPILOT_PROVIDER_API_KEY": "sk-fake",
            "COPILOT_MODEL": "fake-model",
        }
        started = time.monotonic()
        argv = [str(copilot), "--allow-all-tools", "-p", f"What did we decide about storage? {MARKER}"]
        ok(run(argv, session_env, project, timeout=300))
        ended = time.monotonic()
        print(f"copilot -p took {ended - started:.1f} s")

    if not any(r.get("answered_tool") == "funes-recall" for r in model.requests):
        logs = " ".join(p.read_text(errors="replace") for p in (copilot_home / "logs").glob("*.log"))
        if "-32022" in logs and "2026-07-28" in logs:
            # Copilot 1.0.102's connector first offers the 2026-07-28 MCP handshake and, when the
            # server is slow to answer (a loaded machine), falls back to a 2025-11-25 `initialize`
            # on the same connection, which the mcp SDK (2.3, bound to the first protocol it saw)
            # refuses. A known interop race between the two, not funes' wiring: say so, loudly.
            pytest.skip("Copilot's MCP handshake fallback raced the mcp SDK (error -32022); see the README")
        pytest.fail("funes-recall was never called")
    seen = json.dumps([r["body"] for r in model.requests if r.get("body")], ensure_ascii=False)
    assert EXAMPLE_PHRASE in seen, "the tool result the model received holds a passage of the memory"
    assert list((copilot_home / "session-state").glob("*/events.jsonl")), "sessions live in COPILOT_HOME"

    deadline = ended + 30
    while not found(env, project, MARKER, "6632"):
        if time.monotonic() > deadline:
            logs = funes_home / "logs"
            shown = (
                {p.name: p.read_text(errors="replace")[-2000:] for p in logs.iterdir()}
                if logs.is_dir()
                else {}
            )
            pytest.fail(f"the Copilot session was not recallable 30 s after it ended; logs: {shown}")
        time.sleep(0.5)

    ok(run([str(FUNES), "integrations", "remove", "copilot"], env, project))
    assert settings.read_text(encoding="utf-8") == original, "settings.json is back to its original bytes"
    assert found(env, project, MARKER, "6632"), "remove keeps the memory"

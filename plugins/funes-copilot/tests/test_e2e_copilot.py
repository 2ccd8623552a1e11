"""End to end with the real GitHub Copilot CLI (@github/copilot, pinned by funes-contracts), offline.

Copilot's own offline mode with a custom provider (``COPILOT_OFFLINE``, ``COPILOT_PROVIDER_*``)
needs no GitHub account: the fake model on 127.0.0.1 is the provider. A throwaway HOME and a
``COPILOT_HOME`` outside it (to prove it is honoured):

1. a small memory is indexed (the repository's examples, hash embedder);
2. ``funes integrations install copilot`` adds ``mcpServers.funes`` to ``mcp-config.json`` and the
   ``agentStop`` and ``sessionEnd`` hooks to the user's ``settings.json``;
3. ``copilot -p`` runs a real session in which the model calls ``funes-recall`` on the first
   request and receives a passage of the examples. ``funes mcp`` loads its MCP SDK
   :data:`SDK_DELAY` seconds late, as on a loaded machine: longer than Copilot's 10 s wait for
   its ``server/discover`` probe, after which Copilot falls back to ``initialize`` on the same
   connection. Before funes' MCP front answered the probe itself, that fallback met ``-32022``
   and Copilot dropped funes (see ``docs/mcp.md``);
4. the ``agentStop`` hook converts the session's ``events.jsonl`` into the spool and indexes it
   in the background: a phrase only the prompt held becomes recallable;
5. ``funes integrations remove copilot`` gives ``settings.json`` back byte for byte.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from funes_contracts.agent_cli import agent_world, funes, ok, recalled, run, slow_mcp_sdk, wait_until_recalled
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
MARKER = "quokka lighthouse semaphore 6632"
EXAMPLE_PHRASE = "sensor readings for tidepool"
#: How late ``funes mcp`` loads its SDK: past Copilot's 10 s wait for the discover probe.
SDK_DELAY = 12


def test_copilot_end_to_end(tmp_path: Path) -> None:
    copilot_home = tmp_path / "copilot-home"
    copilot, _, _, project, env = agent_world(
        tmp_path,
        "copilot",
        folders=[copilot_home],
        drop=("COPILOT_", "GH_", "GITHUB_"),
        COPILOT_HOME=str(copilot_home),
        COPILOT_AUTO_UPDATE="false",
    )
    settings = copilot_home / "settings.json"
    original = '{\n  "banner": "never",\n  "beep": false\n}\n'
    settings.write_text(original, encoding="utf-8")

    funes("index", REPO / "examples" / "sessions", env=env, cwd=project)
    funes("integrations", "install", "copilot", env=env, cwd=project)
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
            "PYTHONPATH": slow_mcp_sdk(tmp_path / "slow-sdk", SDK_DELAY),
        }
        started = time.monotonic()
        argv = [str(copilot), "--allow-all-tools", "-p", f"What did we decide about storage? {MARKER}"]
        ok(run(argv, session_env, project, timeout=300))
        ended = time.monotonic()
        print(f"copilot -p took {ended - started:.1f} s")

    logs = " ".join(p.read_text(errors="replace") for p in (copilot_home / "logs").glob("*.log"))
    assert "-32022" not in logs, "Copilot's fallback handshake was refused"
    assert model.called("funes-recall"), f"funes-recall was never called; Copilot's log: {logs[-3000:]}"
    assert ended - started >= SDK_DELAY, "the tool call waited for the slow SDK (else nothing was proven)"
    assert model.saw(EXAMPLE_PHRASE), "the tool result the model received holds a passage of the memory"
    assert list((copilot_home / "session-state").glob("*/events.jsonl")), "sessions live in COPILOT_HOME"

    wait_until_recalled(env, project, MARKER, "6632", since=ended)

    funes("integrations", "remove", "copilot", env=env, cwd=project)
    assert settings.read_text(encoding="utf-8") == original, "settings.json is back to its original bytes"
    assert recalled(env, project, MARKER, "6632"), "remove keeps the memory"

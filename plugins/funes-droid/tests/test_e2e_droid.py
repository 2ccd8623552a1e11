"""End to end with the real Factory Droid (``droid``, pinned by funes-contracts) against the fake model.

A throwaway HOME and a ``FACTORY_HOME_OVERRIDE`` outside it (to prove it is honoured), a FUNES_HOME
and a project folder:

1. a small memory is indexed (the repository's examples, hash embedder);
2. ``funes integrations install droid`` adds the ``Stop`` and ``SessionEnd`` hooks to the user's
   ``settings.json`` (which already holds their model and a hook of their own) and
   ``mcpServers.funes`` to their ``mcp.json`` (which holds a server of their own);
3. ``droid exec`` runs a real session in which the fake model (OpenAI chat completions, Droid's
   ``generic-chat-completion-api``) loads ``funes___recall`` with Droid's ``ToolSearch`` (Droid
   defers MCP tools), calls it and receives a passage of the examples;
4. the ``Stop`` hook converts the session file into the spool and indexes it in the background:
   a phrase only the prompt held becomes recallable;
5. ``funes integrations remove droid`` gives both files back byte for byte.

Why it does not race Droid's MCP start-up: ``droid exec`` starts MCP servers in the background and
may send the first request before ``funes mcp`` has listed its tools (the model then never hears of
funes; an earlier version of this test failed 1 run in 3 so). The user's settings say
``"blockOnMcpLoad": true``, which makes Droid wait for its servers before it asks the model, and
the test checks that the first request already named funes' tool. What a loaded machine does by
chance is made certain: ``funes mcp`` loads its MCP SDK :data:`SDK_DELAY` seconds late, which
without the setting loses the race in every run (the first request then offers no funes tool).
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
MARKER = "quokka lighthouse semaphore 6638"
EXAMPLE_PHRASE = "sensor readings for tidepool"
TOOL = "funes___recall"
#: How late ``funes mcp`` loads its MCP SDK in the session, as on a loaded machine: without
#: ``blockOnMcpLoad`` Droid then asks the model before funes' tools are listed, every time.
SDK_DELAY = 6.0


def test_droid_end_to_end(tmp_path: Path) -> None:
    factory_home = tmp_path / "factory-home"
    droid, home, _, project, env = agent_world(
        tmp_path,
        "droid",
        folders=[factory_home / ".factory"],
        drop=("FACTORY_", "DROID_"),
        FACTORY_HOME_OVERRIDE=str(factory_home),
        FACTORY_DROID_AUTO_UPDATE_ENABLED="0",
    )
    settings = factory_home / ".factory" / "settings.json"
    mcp = factory_home / ".factory" / "mcp.json"
    own_mcp = (
        "{\n"
        '  "mcpServers": {\n'
        '    "github": {"type": "stdio", "command": "gh-mcp", "args": ["--read-only"], "disabled": true}\n'
        "  }\n"
        "}\n"
    )
    mcp.write_text(own_mcp, encoding="utf-8")

    with FakeModel(
        tool_pattern=rf"^{TOOL}$",
        tool_args={"query": "Postgres embedded sensor readings"},
        reply="Recalled it.",
        loader="ToolSearch",
    ) as model:
        own_settings = (
            "{\n"
            '  "model": "custom:fake-model",\n'
            '  "blockOnMcpLoad": true,\n'
            '  "customModels": [\n'
            '    {"model": "fake-model", "displayName": "Fake", "apiKey": "sk-fake",\n'
            f'     "baseUrl": "{model.url}/v1", "provider": "generic-chat-completion-api",\n'
            '     "maxOutputTokens": 4096}\n'
            "  ],\n"
            '  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}\n'
            "}\n"
        )
        settings.write_text(own_settings, encoding="utf-8")

        funes("index", REPO / "examples" / "sessions", env=env, cwd=project)
        installed = funes("integrations", "install", "droid", env=env, cwd=project)
        assert "keeps sessions" in installed, installed  # the retention line
        hooks = json.loads(settings.read_text(encoding="utf-8"))["hooks"]
        assert [len(hooks["Stop"]), len(hooks["SessionEnd"])] == [2, 1], hooks
        assert "funes_droid.hook" in hooks["Stop"][1]["hooks"][0]["command"]
        servers = json.loads(mcp.read_text(encoding="utf-8"))["mcpServers"]
        assert servers["funes"]["args"][-1] == "mcp" and "github" in servers, servers

        started = time.monotonic()
        argv = [droid, "exec", "-m", "custom:fake-model", "--auto", "high"]
        session_env = {**env, "PYTHONPATH": slow_mcp_sdk(tmp_path / "slow-sdk", SDK_DELAY)}
        prompt = f"What did we decide about storage? {MARKER}"
        out = ok(run([*argv, prompt], session_env, project, timeout=300))
        ended = time.monotonic()
        print(f"droid exec took {ended - started:.1f} s")

    assert model.requests[0].get("answered_tool") == "ToolSearch", "funes' tool was not listed at once"
    assert model.called(TOOL), "funes___recall was never called"
    assert model.saw(EXAMPLE_PHRASE), "the tool result the model received holds a passage of the memory"
    assert "Recalled it." in out
    sessions = list((factory_home / ".factory" / "sessions").glob("*/*.jsonl"))
    assert sessions, "sessions live in FACTORY_HOME_OVERRIDE"
    assert not (home / ".factory" / "sessions").exists(), "nothing went to HOME/.factory"

    wait_until_recalled(env, project, MARKER, "6638", since=ended)

    funes("integrations", "remove", "droid", env=env, cwd=project)
    assert settings.read_text(encoding="utf-8") == own_settings, "settings.json is back to its bytes"
    assert mcp.read_text(encoding="utf-8") == own_mcp, "mcp.json is back to its original bytes"
    assert recalled(env, project, MARKER, "6638"), "remove keeps the memory"

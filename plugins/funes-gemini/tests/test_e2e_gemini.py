"""End to end with the real Gemini CLI (@google/gemini-cli, pinned by funes-contracts) against the fake model.

A throwaway HOME and a ``GEMINI_CLI_HOME`` outside it (to prove it is honoured), a FUNES_HOME and a
project folder:

1. a small memory is indexed (the repository's examples, hash embedder);
2. ``funes integrations install gemini`` adds ``mcpServers.funes`` and the ``AfterAgent`` and
   ``SessionEnd`` hooks to the user's ``settings.json``, which already holds their auth choice;
3. ``gemini -p`` runs a real session in which the fake model (speaking the Gemini API) calls
   ``mcp_funes_recall`` on the first request and receives a passage of the examples;
4. the ``AfterAgent`` hook converts the session's chat file into the spool and indexes it in the
   background: a phrase only the prompt held becomes recallable;
5. ``funes integrations remove gemini`` gives ``settings.json`` back byte for byte.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from funes_contracts.agent_cli import agent_world, funes, ok, recalled, run, wait_until_recalled
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
MARKER = "quokka lighthouse semaphore 5521"
EXAMPLE_PHRASE = "sensor readings for tidepool"


def test_gemini_end_to_end(tmp_path: Path) -> None:
    gemini_home = tmp_path / "gemini-home"
    gemini, _, _, project, env = agent_world(
        tmp_path,
        "gemini",
        folders=[gemini_home / ".gemini"],
        drop=("GEMINI_", "GOOGLE_"),
        GEMINI_CLI_HOME=str(gemini_home),
        GEMINI_API_KEY="fake-key",
    )
    settings = gemini_home / ".gemini" / "settings.json"
    # Current setting names only: Gemini rewrites the whole file when it migrates a deprecated one
    # (``general.disableAutoUpdate`` -> ``enableAutoUpdate``), which no byte comparison survives.
    original = (
        "{\n"
        '  "security": {"auth": {"selectedType": "gemini-api-key"}},\n'
        '  "privacy": {"usageStatisticsEnabled": false},\n'
        '  "general": {"enableAutoUpdate": false}\n'
        "}\n"
    )
    settings.write_text(original, encoding="utf-8")

    funes("index", REPO / "examples" / "sessions", env=env, cwd=project)
    funes("integrations", "install", "gemini", env=env, cwd=project)
    wired = json.loads(settings.read_text(encoding="utf-8"))
    assert wired["mcpServers"]["funes"]["args"][-1] == "mcp", wired
    assert "AfterAgent" in wired["hooks"], wired

    with FakeModel(
        tool_pattern=r"^mcp_funes_recall$",
        tool_args={"query": "Postgres embedded sensor readings"},
        reply="Recalled it.",
    ) as model:
        session_env = {**env, "GOOGLE_GEMINI_BASE_URL": model.url}
        started = time.monotonic()
        argv = [str(gemini), "--skip-trust", "--approval-mode", "yolo", "-m", "gemini-2.5-flash"]
        ok(
            run(
                [*argv, "-p", f"What did we decide about storage? {MARKER}"],
                session_env,
                project,
                timeout=300,
            )
        )
        ended = time.monotonic()
        print(f"gemini -p took {ended - started:.1f} s")

    assert model.called("mcp_funes_recall"), "recall was never called"
    assert model.saw(EXAMPLE_PHRASE), "the tool result the model received holds a passage of the memory"
    assert list((gemini_home / ".gemini" / "tmp").rglob("chats/session-*.jsonl")), (
        "chats live in GEMINI_CLI_HOME"
    )

    wait_until_recalled(env, project, MARKER, "5521", since=ended)

    funes("integrations", "remove", "gemini", env=env, cwd=project)
    assert settings.read_text(encoding="utf-8") == original, "settings.json is back to its original bytes"
    assert recalled(env, project, MARKER, "5521"), "remove keeps the memory"

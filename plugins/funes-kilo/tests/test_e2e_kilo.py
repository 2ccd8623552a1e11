"""End to end with the real Kilo Code CLI (@kilocode/cli, pinned by funes-contracts) against the fake model.

One throwaway HOME whose XDG dirs are moved elsewhere (``XDG_CONFIG_HOME``, ``XDG_DATA_HOME``), to
prove they are honoured, a FUNES_HOME and a project folder:

1. a small memory is indexed (the repository's examples, hash embedder);
2. ``funes integrations install kilo`` adds ``mcp.funes`` to the user's ``kilo.json``
   (which already holds their provider settings) and writes the capture plugin;
3. ``kilo run`` runs a real session in which the fake model calls ``funes_recall`` on the
   first request and receives a passage of the examples;
4. the plugin's ``session.idle`` handler converts the session from Kilo's database (kilo.db) into the
   spool and indexes it in the background: a phrase only the prompt held becomes recallable;
5. ``funes integrations remove kilo`` gives ``kilo.json`` back byte for byte and deletes
   the plugin file.
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
MARKER = "quokka lighthouse semaphore 4417"
EXAMPLE_PHRASE = "sensor readings for tidepool"


def test_kilo_end_to_end(tmp_path: Path) -> None:
    config_home, data_home = tmp_path / "xdg-config", tmp_path / "xdg-data"
    kilo, _, _, project, env = agent_world(
        tmp_path,
        "kilo",
        folders=[config_home / "kilo", data_home],
        drop=("KILO_", "OPENCODE_", "XDG_"),
        XDG_CONFIG_HOME=str(config_home),
        XDG_DATA_HOME=str(data_home),
        KILO_DISABLE_MODELS_FETCH="1",
        KILO_DISABLE_AUTOUPDATE="1",
        KILO_TELEMETRY_LEVEL="off",
    )
    config = config_home / "kilo" / "kilo.json"
    plugin = config_home / "kilo" / "plugins" / "funes.js"

    with FakeModel(
        tool_pattern=r"^funes_recall$",
        tool_args={"query": "Postgres embedded sensor readings"},
        reply="Recalled it.",
    ) as model:
        original = (
            "{\n"
            '  "$schema": "https://kilo.ai/config.json",\n'
            '  "model": "fake/fake-model",\n'
            '  "autoupdate": false,\n'
            '  "provider": {\n'
            '    "fake": {\n'
            '      "npm": "@ai-sdk/openai-compatible",\n'
            '      "name": "Fake",\n'
            f'      "options": {{"baseURL": "{model.url}/v1", "apiKey": "sk-fake"}},\n'
            '      "models": {"fake-model": {"name": "Fake model"}}\n'
            "    }\n"
            "  }\n"
            "}\n"
        )
        config.write_text(original, encoding="utf-8")

        funes("index", REPO / "examples" / "sessions", env=env, cwd=project)
        assert "kilo" in funes("integrations", "install", "kilo", env=env, cwd=project)
        wired = json.loads(config.read_text(encoding="utf-8"))
        assert wired["mcp"]["funes"]["command"][-1] == "mcp", wired
        assert plugin.is_file() and "session.idle" in plugin.read_text(encoding="utf-8")

        started = time.monotonic()
        ok(run([kilo, "run", f"What did we decide about storage? {MARKER}"], env, project, timeout=300))
        ended = time.monotonic()
        print(f"kilo run took {ended - started:.1f} s")

    assert model.called("funes_recall"), "funes_recall was never called"
    assert model.saw(EXAMPLE_PHRASE), "the tool result the model received holds a passage of the memory"
    assert list((data_home / "kilo").glob("kilo*.db")), "Kilo kept its database in XDG_DATA_HOME"

    wait_until_recalled(env, project, MARKER, "4417", since=ended)

    # Kilo rewrites its own config at start (it migrates bash permissions into it, pretty-printed),
    # so the bytes to come back are the ones Kilo left, without funes' entry.
    left = json.loads(config.read_text(encoding="utf-8"))
    print("kilo.json as Kilo left it:", left)
    del left["mcp"]["funes"]
    funes("integrations", "remove", "kilo", env=env, cwd=project)
    after = json.loads(config.read_text(encoding="utf-8"))
    assert "funes" not in after.get("mcp", {}), "mcp.funes is gone"
    assert {k: v for k, v in after.items() if k != "mcp"} == {k: v for k, v in left.items() if k != "mcp"}
    assert after.get("mcp", {}) == left["mcp"], "the rest of kilo.json is as Kilo left it"
    assert not plugin.exists(), "the capture plugin is gone"
    assert recalled(env, project, MARKER, "4417"), "remove keeps the memory"

"""End to end with the real Kilo Code CLI (@kilocode/cli, pinned by funes-contracts) against the fake model.

Kilo is an OpenCode fork: :func:`~funes_opencode.contract_fixtures.end_to_end.wired_session` runs
the same session as OpenCode's test, with ``kilo.json`` and Kilo's database (``kilo.db``). Then
``funes integrations remove kilo`` takes out funes' entry and leaves the rest of ``kilo.json`` as
Kilo left it, and deletes the plugin file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from funes_contracts.agent_cli import funes, recalled
from funes_opencode.contract_fixtures.end_to_end import MARKER, wired_session

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]


def test_kilo_end_to_end(tmp_path: Path) -> None:
    config, _, plugin, env, project = wired_session(
        tmp_path,
        "kilo",
        examples=REPO / "examples" / "sessions",
        drop=("KILO_", "OPENCODE_"),
        schema="https://kilo.ai/config.json",
        KILO_DISABLE_MODELS_FETCH="1",
        KILO_DISABLE_AUTOUPDATE="1",
        KILO_TELEMETRY_LEVEL="off",
    )

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

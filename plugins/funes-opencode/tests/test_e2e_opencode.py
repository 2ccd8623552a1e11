"""End to end with the real OpenCode CLI (opencode-ai, pinned by funes-contracts) against the fake model.

:func:`~funes_opencode.contract_fixtures.end_to_end.wired_session` indexes a small memory, runs
``funes integrations install opencode`` on a user's ``opencode.json`` (whose XDG dirs are moved, to
prove they are honoured), runs a real ``opencode run`` in which the fake model recalls, and waits
until the capture plugin has indexed the session. Then ``funes integrations remove opencode``
gives ``opencode.json`` back byte for byte and deletes the plugin file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from funes_contracts.agent_cli import funes, recalled
from funes_opencode.contract_fixtures.end_to_end import MARKER, wired_session

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]


def test_opencode_end_to_end(tmp_path: Path) -> None:
    config, original, plugin, env, project = wired_session(
        tmp_path,
        "opencode",
        examples=REPO / "examples" / "sessions",
        drop=("OPENCODE_",),
        schema="https://opencode.ai/config.json",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_AUTOUPDATE="1",
    )

    funes("integrations", "remove", "opencode", env=env, cwd=project)
    assert config.read_text(encoding="utf-8") == original, "opencode.json is back to its original bytes"
    assert not plugin.exists(), "the capture plugin is gone"
    assert recalled(env, project, MARKER, "4417"), "remove keeps the memory"

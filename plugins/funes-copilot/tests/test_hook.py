"""The Copilot hook: ``agentStop`` names the events file, ``sessionEnd`` only the session."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

from funes_copilot.hook import locate

CASE = Path(str(resources.files("funes_copilot.contract_fixtures"))) / "cases" / "basic"
SID = "3c9d2e1f-7a6b-4c5d-8e9f-0a1b2c3d4e5f"


def test_agent_stop_names_its_transcript(tmp_path: Path) -> None:
    events = str(CASE / SID / "events.jsonl")
    found = locate({"sessionId": SID, "transcriptPath": events}, {"HOME": str(tmp_path)})
    assert found is not None and found.paths == (events,) and found.what == "agentStop"


def test_session_end_is_found_in_copilot_home(tmp_path: Path) -> None:
    home, copilot_home = tmp_path / "home", tmp_path / "copilot"
    home.mkdir()
    shutil.copytree(CASE / SID, copilot_home / "session-state" / SID)
    env = {"HOME": str(home), "COPILOT_HOME": str(copilot_home)}
    found = locate({"sessionId": SID, "reason": "complete"}, env)
    assert found is not None and found.paths == (str(copilot_home / "session-state" / SID / "events.jsonl"),)
    assert locate({"sessionId": SID}, {"HOME": str(home)}) is None, "not under the default ~/.copilot"
    assert locate({"sessionId": "../../etc"}, env) is None

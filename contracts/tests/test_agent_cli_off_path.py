"""The registrar contract runs with the agent's own CLI off PATH (it checks the config-file path)."""

from __future__ import annotations

import os
from pathlib import Path

from funes_contracts.wiring import path_without


def _exe(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)


def test_path_without_drops_only_the_folders_holding_the_program(tmp_path: Path) -> None:
    _exe(tmp_path / "a", "agentx")
    _exe(tmp_path / "b", "other")
    _exe(tmp_path / "c", "agentx")
    path = os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b"), "", str(tmp_path / "c")])
    assert path_without("agentx", path) == str(tmp_path / "b")
    assert path_without("nothing-like-it", path) == os.pathsep.join(
        [str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "c")]
    )

"""Shared by the kit's own tests: running the contract suite in a fresh pytest, as ``check`` does."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from funes_core.wiring.integrations.check import suite_command

#: ``run_suite(tmp_path, source, *pytest_args, pythonpath=None) -> (process, report results)``.
RunSuite = Callable[..., tuple[subprocess.CompletedProcess[str], list[dict[str, str]]]]


def _run_suite(
    tmp_path: Path, source: str, *extra: str, pythonpath: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, str]]]:
    module = tmp_path / "test_broken_plugins.py"
    module.write_text(textwrap.dedent(source), encoding="utf-8")
    report = tmp_path / "report.json"
    argv, env = suite_command(module, report, os.environ, *extra)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH", "")]))
    done = subprocess.run(
        argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    results = json.loads(report.read_text())["results"] if report.exists() else []
    return done, results


@pytest.fixture
def run_suite() -> RunSuite:
    """Run a test module's ``source`` under the kit's pytest plugin alone; its JSON report's results."""
    return _run_suite

"""The repository keeps its promises: README commands, CI script, linters."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## The two commands.*?```bash\n(.*?)```", text, re.S)
    assert block, "README has a 'The two commands' section with a bash block"
    return [line for line in block.group(1).splitlines() if line.strip() and not line.startswith("#")]


def test_readme_has_exactly_two_commands() -> None:
    assert len(readme_commands()) == 2


def test_ci_runs_the_readme_install_and_test_command() -> None:
    install, test = readme_commands()
    ci = (ROOT / ".ci" / "run").read_text()
    ci_lines = [line.strip() for line in ci.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert test in ci_lines, "CI must run exactly the README's test command"
    # CI installs with the same steps as the README (minus the demo), with the lock enforced.
    for step in install.split(" && ")[:2]:
        assert any(line.startswith(step) for line in ci_lines), step


@pytest.mark.slow
def test_readme_main_job_runs(tmp_path: Path) -> None:
    """The README's first command ends with the demo; run it against a throwaway FUNES_HOME."""
    install = readme_commands()[0]
    demo = install.split(" && ")[-1]
    assert demo.endswith("examples/demo.sh")
    env = {
        **os.environ,
        "FUNES_HOME": str(tmp_path / "home"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    proc = subprocess.run(
        ["bash", str(ROOT / "examples" / "demo.sh")],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 rejected" in proc.stdout


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    assert path, f"{name} is installed in the dev environment"
    return path


def test_ruff_clean() -> None:
    proc = subprocess.run([_tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run([_tool("ruff"), "format", "--check", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_mypy_strict_clean_on_core_and_contracts() -> None:
    proc = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_mypy_strict_clean_as_seen_from_windows_and_macos(platform: str) -> None:
    """The type checker with another platform's standard library: a call that platform lacks
    (``os.fchmod`` on Windows, ``time.tzset``) fails here, not on a user's machine."""
    cache = ROOT / ".mypy_cache" / f"platform-{platform}"
    command = [_tool("mypy"), "--platform", platform, "--cache-dir", str(cache)]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_plugin_importing_a_core_module_fails_lint() -> None:
    """plugins/ruff.toml: a plugin imports only ``funes_core``'s public API, never a room of the core."""

    def lint(source: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [_tool("ruff"), "check", "--stdin-filename", "plugins/funes-echo/funes_echo/probe.py", "-"],
            input=source,
            capture_output=True,
            text=True,
            cwd=ROOT,
        )

    header = '"""Probe."""\n\nfrom __future__ import annotations\n\n'
    private = lint(header + "from funes_core.host.api import Converter\n\n__all__ = ['Converter']\n")
    assert private.returncode == 1 and "TID251" in private.stdout, private.stdout
    public = lint(header + "from funes_core import Converter\n\n__all__ = ['Converter']\n")
    assert public.returncode == 0, public.stdout

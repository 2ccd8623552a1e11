"""Install real agent CLIs (from npm or PyPI) into a cache folder, for end-to-end tests.

The versions are pinned: an end-to-end test proves an integration against one known release,
and a new release of the agent is a deliberate bump, not a surprise in CI. The cache folder
(``$FUNES_AGENT_CACHE``, default ``~/.cache/funes-test-agents``) survives between runs, so only the
first run pays for the download. When the registry cannot be reached, the test is skipped with
the reason (and only then).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["AGENTS", "agent_cache", "npm_agent", "pypi_agent"]

#: id -> (registry, package, version, executable)
AGENTS: dict[str, tuple[str, str, str, str]] = {
    "claude": ("npm", "@anthropic-ai/claude-code", "2.1.197", "claude"),
    "codex": ("npm", "@openai/codex", "0.171.0", "codex"),
    "pi": ("npm", "@mariozechner/pi-coding-agent", "0.73.1", "pi"),
    "hermes": ("pypi", "hermes-agent[mcp]", "0.19.0", "hermes"),
    "opencode": ("npm", "opencode-ai", "1.18.33", "opencode"),
    "gemini": ("npm", "@google/gemini-cli", "0.61.0", "gemini"),
    "copilot": ("npm", "@github/copilot", "1.0.102", "copilot"),
}


def agent_cache() -> Path:
    root = os.environ.get("FUNES_AGENT_CACHE") or str(Path.home() / ".cache" / "funes-test-agents")
    return Path(root)


def _skip_if_unreachable(proc: subprocess.CompletedProcess[str], what: str) -> None:
    text = (proc.stdout or "") + (proc.stderr or "")
    offline = (
        "ENOTFOUND",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "ETIMEDOUT",
        "network",
        "Could not find a version",
        "No matching distribution",
        "Temporary failure in name resolution",
        "connection",
    )
    if any(marker.lower() in text.lower() for marker in offline):
        pytest.skip(f"{what} could not be installed: the registry is unreachable ({text.strip()[-200:]})")
    raise RuntimeError(f"installing {what} failed (exit {proc.returncode}):\n{text[-2000:]}")


def npm_agent(agent_id: str) -> Path:
    """The path of the agent's executable, installing the pinned npm package on first use."""
    registry, package, version, exe = AGENTS[agent_id]
    assert registry == "npm"
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed, so {package} cannot be installed")
    prefix = agent_cache() / f"{agent_id}-{version}"
    binary = prefix / "node_modules" / ".bin" / exe
    if binary.exists():
        return binary
    prefix.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"{package}@{version}",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0 or not binary.exists():
        _skip_if_unreachable(proc, f"{package}@{version}")
    return binary


def pypi_agent(agent_id: str) -> Path:
    """The path of the agent's executable, installed in its own virtualenv on first use."""
    registry, package, version, exe = AGENTS[agent_id]
    assert registry == "pypi"
    venv = agent_cache() / f"{agent_id}-{version}-venv"
    binary = venv / "bin" / exe
    if binary.exists():
        return binary
    uv = shutil.which("uv")
    if uv:
        make = subprocess.run(
            [uv, "venv", "--python", sys.executable, str(venv)], capture_output=True, text=True
        )
        if make.returncode != 0:
            raise RuntimeError(make.stderr)
        cmd = [uv, "pip", "install", "--python", str(venv / "bin" / "python"), f"{package}=={version}"]
    else:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        cmd = [str(venv / "bin" / "python"), "-m", "pip", "install", f"{package}=={version}"]
    name, _, extra = package.partition("[")
    if extra:
        cmd[-1] = f"{name}[{extra.rstrip(']')}]=={version}"
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0 or not binary.exists():
        shutil.rmtree(venv, ignore_errors=True)
        _skip_if_unreachable(proc, f"{package}=={version}")
    return binary

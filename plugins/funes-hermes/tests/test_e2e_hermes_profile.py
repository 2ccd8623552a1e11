"""End to end with the real Hermes CLI and a non-default profile (issue 19).

The user made a profile (``hermes profile create work``) and made it sticky (``hermes profile use
work``): Hermes then keeps that profile's config and ``state.db`` in ``~/.hermes/profiles/work``.
``funes integrations install hermes`` must wire *that* profile's ``config.yaml`` (and say so in
``integrations info``), and a ``hermes -z`` session in it must be captured by the hook.

The real embedding model is used (Hermes starts MCP servers and hooks with a filtered environment,
so a test-only embedder choice would not reach them).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from funes_contracts.agent_cli import pypi_agent
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

FUNES = Path(sys.executable).parent / "funes"
PROMPT = "What did we decide about the capybara lantern rota for the workshop?"


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (
        f"{' '.join(argv[:4])} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout


def test_hermes_sticky_profile(tmp_path: Path) -> None:
    hermes = pypi_agent("hermes")
    home, funes_home, project = tmp_path / "home", tmp_path / "funes", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FUNES_", "HERMES_", "PYTEST_"))}
    env.update(
        HOME=str(home),
        FUNES_HOME=str(funes_home),
        PATH=os.pathsep.join([str(hermes.parent), str(FUNES.parent), env.get("PATH", "")]),
    )
    run([str(hermes), "profile", "create", "work"], env)
    run([str(hermes), "profile", "use", "work"], env)
    profile = home / ".hermes" / "profiles" / "work"
    assert (home / ".hermes" / "active_profile").read_text().strip() == "work"

    with FakeModel(reply="Noted.") as model:
        config = profile / "config.yaml"
        config.write_text(
            "model: {default: fake-model, provider: custom, "
            f'base_url: "{model.url}/v1", api_key: sk-fake}}\n'
            "hooks_auto_accept: true\n",
            encoding="utf-8",
        )
        info = run([str(FUNES), "integrations", "info", "hermes"], env)
        assert f"path config: {config} (hooks and MCP servers), from profile work" in info, info
        run([str(FUNES), "integrations", "install", "hermes", "--no-index"], env)
        wired = config.read_text(encoding="utf-8")
        assert "funes_hermes.hook" in wired, "the sticky profile's config was wired"
        assert not (home / ".hermes" / "config.yaml").exists(), "the default profile was left alone"

        run([str(hermes), "-z", PROMPT], env, cwd=project)
        ended = time.monotonic()
    assert (profile / "state.db").is_file(), "Hermes kept the session in the profile"

    while True:
        argv = [str(FUNES), "recall", "capybara lantern rota", "--profile", "lexical"]
        found = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120).stdout
        if "capybara lantern rota" in found:  # (recall exits 1 until the hook's index exists)
            break
        logs = funes_home / "logs"
        shown = {p.name: p.read_text()[-1500:] for p in logs.iterdir()} if logs.is_dir() else {}
        assert time.monotonic() < ended + 60, f"the profile's session was not indexed: {found}\n{shown}"
        time.sleep(1)
    run([str(FUNES), "integrations", "remove", "hermes"], env)

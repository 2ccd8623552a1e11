"""End to end with the real Hermes CLI and a non-default profile (issue 19).

The user made a profile (``hermes profile create work``) and made it sticky (``hermes profile use
work``): Hermes then keeps that profile's config and ``state.db`` in ``~/.hermes/profiles/work``.
``funes integrations install hermes`` must wire *that* profile's ``config.yaml`` (and say so in
``integrations info``), and a ``hermes -z`` session in it must be captured by the hook.

The real embedding model is used (Hermes starts MCP servers and hooks with a filtered environment,
so a test-only embedder choice would not reach them).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from funes_contracts.agent_cli import FUNES, agent_world, funes, ok, run, wait_until_recalled
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

PROMPT = "What did we decide about the capybara lantern rota for the workshop?"


def test_hermes_sticky_profile(tmp_path: Path) -> None:
    hermes, home, _, project, env = agent_world(
        tmp_path, "hermes", drop=("HERMES_",), path=[FUNES.parent], embedder=None
    )

    def hermes_ok(*args: str, cwd: Path | None = None) -> str:
        return ok(run([hermes, *args], env, cwd, timeout=300))

    hermes_ok("profile", "create", "work")
    hermes_ok("profile", "use", "work")
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
        info = funes("integrations", "info", "hermes", env=env)
        assert f"path config: {config} (hooks and MCP servers), from profile work" in info, info
        funes("integrations", "install", "hermes", "--no-index", env=env)
        wired = config.read_text(encoding="utf-8")
        assert "funes_hermes.hook" in wired, "the sticky profile's config was wired"
        assert not (home / ".hermes" / "config.yaml").exists(), "the default profile was left alone"

        hermes_ok("-z", PROMPT, cwd=project)
        ended = time.monotonic()
    assert (profile / "state.db").is_file(), "Hermes kept the session in the profile"

    wait_until_recalled(env, None, "capybara lantern rota", "capybara lantern rota", since=ended)
    funes("integrations", "remove", "hermes", env=env)

"""End to end with the real Hermes CLI (hermes-agent 0.19.0 from PyPI) against the fake model.

One throwaway HOME, HERMES_HOME (outside HOME, to prove it is honoured) and FUNES_HOME:

1. a small memory is indexed from the repository's examples;
2. ``funes integrations install hermes`` wires the MCP server and the per-turn hook;
3. ``hermes -z`` runs a real session in which the model calls funes' ``recall`` over MCP and
   gets a real answer from that memory;
4. the ``on_session_end`` hook converts the new session and indexes it in the background, so
   ``funes recall`` finds what was said in it;
5. ``funes integrations remove hermes`` gives config.yaml back its original bytes.

The real embedding model is used throughout: Hermes starts MCP servers with a filtered
environment (PATH, HOME, ...), so a test-only ``FUNES_EMBEDDER=hash`` would not reach
``funes mcp`` and the memory would be refused as built by another model.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from funes_contracts.agent_cli import PATIENCE, pypi_agent
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
FUNES = Path(sys.executable).parent / "funes"
#: In the examples' memory (the flaky-flush session), so the recall answer proves the round trip.
REMEMBERED = "database is locked"
#: Said only in the Hermes session, so finding it proves the hook indexed that session.
NEW_PROMPT = "What did we decide about the pelican migration schedule for the aviary?"


def run(argv: list[str], env: dict[str, str], *, cwd: Path | None = None, stdin: int | None = None) -> str:
    done = subprocess.run(
        argv, env=env, cwd=cwd, stdin=stdin, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, (
        f"{' '.join(argv[:3])} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout


def tool_messages(model: FakeModel) -> list[str]:
    found = []
    for request in model.requests:
        body = request.get("body")
        for message in body.get("messages", []) if isinstance(body, dict) else []:
            if message.get("role") == "tool":
                found.append(str(message.get("content")))
    return found


def test_a_real_hermes_session_recalls_and_is_remembered(tmp_path: Path) -> None:
    hermes = pypi_agent("hermes")
    home, hermes_home, funes_home, project = (tmp_path / n for n in ("home", "hermes", "funes", "project"))
    for folder in (home, hermes_home, project):
        folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FUNES_", "HERMES_"))}
    env.update(
        HOME=str(home),
        HERMES_HOME=str(hermes_home),
        FUNES_HOME=str(funes_home),
        PATH=os.pathsep.join([str(hermes.parent), str(FUNES.parent), env.get("PATH", "")]),
    )

    with FakeModel(
        tool_pattern=r"recall$", tool_args={"query": "flaky flush database is locked"}, reply="Recalled it."
    ) as model:
        original = (
            "# Hermes, as the user set it up.\n"
            "model: {default: fake-model, provider: custom, "
            f'base_url: "{model.url}/v1", api_key: sk-fake}}\n'
            "hooks_auto_accept: true   # scripted runs cannot answer Hermes' approval prompt\n"
            "\n"
            "mcp_servers:\n"
            "  parked: {command: /bin/false, enabled: false}   # the user's own, left alone\n"
        ).encode()
        config = hermes_home / "config.yaml"
        config.write_bytes(original)

        run([str(FUNES), "index", str(REPO / "examples" / "sessions"), "--wait"], env)
        run([str(FUNES), "integrations", "install", "hermes"], env)
        wired = config.read_text(encoding="utf-8")
        assert "funes_hermes.hook --funes-home" in wired and "funes: {command:" in wired

        started = time.monotonic()
        answer = run([str(hermes), "-z", NEW_PROMPT], env, cwd=project, stdin=subprocess.DEVNULL)
        print(f"hermes -z took {time.monotonic() - started:.1f}s")

    assert model.tool_calls_made() >= 1, "the model never called funes' recall"
    results = tool_messages(model)
    assert any(REMEMBERED in r for r in results), f"recall did not answer from the memory: {results}"
    assert "Recalled it." in answer

    # The hook ran inside Hermes' turn; the indexing it started runs on its own. Poll recall.
    deadline = time.monotonic() + PATIENCE  # a hang guard, not a speed goal
    while True:
        found = run([str(FUNES), "recall", "pelican migration schedule for the aviary"], env)
        first_hit = found.split("\n---\n")[0]
        if (
            " hermes " in first_hit and "pelican migration schedule" in first_hit
        ) or time.monotonic() > deadline:
            break
        time.sleep(1)
    logs = funes_home / "logs"
    shown = {p.name: p.read_text()[-2000:] for p in logs.iterdir()} if logs.is_dir() else {}
    assert " hermes " in first_hit and "pelican migration schedule" in first_hit, f"{found}\n{shown}"
    assert not list((funes_home / "spool" / "hermes").glob("*.funes.jsonl")), "the spool was drained"

    run([str(FUNES), "integrations", "remove", "hermes"], env)
    assert config.read_bytes() == original


def test_funes_entries_survive_hermes_rewriting_its_config(tmp_path: Path) -> None:
    """``hermes config set`` re-writes config.yaml through Hermes' YAML dumper (comments and funes'
    markers are lost); funes must still see its entries as wired and remove exactly them."""
    hermes = pypi_agent("hermes")
    home, hermes_home, funes_home = tmp_path / "home", tmp_path / "hermes", tmp_path / "funes"
    home.mkdir()
    hermes_home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FUNES_", "HERMES_"))}
    env.update(HOME=str(home), HERMES_HOME=str(hermes_home), FUNES_HOME=str(funes_home))
    config = hermes_home / "config.yaml"
    config.write_text("# mine\nmodel: {default: fake-model, provider: custom}\n")

    run([str(FUNES), "integrations", "install", "hermes", "--no-index"], env)
    run([str(hermes), "config", "set", "display.skin", "default"], env)
    rewritten = config.read_text(encoding="utf-8")
    assert "# funes-hermes" not in rewritten and "skin: default" in rewritten, rewritten
    listed = run([str(FUNES), "integrations", "info", "hermes"], env)
    assert "hooks: wired" in listed and "mcp: wired" in listed, listed

    run([str(FUNES), "integrations", "remove", "hermes"], env)
    import yaml  # type: ignore[import-untyped]

    left = yaml.safe_load(config.read_text(encoding="utf-8"))
    assert "funes" not in (left.get("mcp_servers") or {})
    assert not any("hermes hook" in str(e) for e in (left.get("hooks") or {}).get("on_session_end") or [])
    assert left["display"] == {"skin": "default"} and left["model"]["default"] == "fake-model"

"""End to end with the real pi CLI (pinned, from npm) against the project's scripted fake model.

One throwaway HOME, FUNES_HOME and pi agent folder (``PI_CODING_AGENT_DIR`` points at a
non-default place, to prove every part honours it). The story:

1. a small memory is indexed from ``examples/sessions`` (hash embedder: no model download);
2. ``funes integrations install pi`` wires pi;
3. ``pi -p`` runs a real session: the fake model calls ``mcp__funes__recall`` and must receive a
   passage of the examples back through the extension's MCP bridge;
4. the extension's turn_end/session_shutdown hook indexes the new session in the background:
   ``funes recall`` finds a word only that session contains, and its last answer too;
5. ``funes integrations remove pi`` gives pi's config back byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from funes_contracts import files
from funes_contracts.agent_cli import PATIENCE, npm_agent
from funes_contracts.fake_model import FakeModel

pytestmark = [pytest.mark.agent_cli, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
FUNES = Path(sys.executable).parent / "funes"
#: A word only the new pi session contains.
TOKEN = "quokka-lighthouse-4417"
#: What the fake model searches for, and a phrase of the examples that answers it.
QUERY = "sensor readings buoys"
EXPECTED_PHRASE = "sensor readings for tidepool"
REPLY = "Recalled it."

#: The user's pi settings, laid out as no JSON library would write them.
ORIGINAL_SETTINGS = (
    '{\n    "theme": "dark",\n    "defaultThinkingLevel": "off",\n'
    '    "packages": [ "npm:@acme/none@0.0.1" ]\n}\n'
)


def _pi_env(pi: Path, home: Path, funes_home: Path, agent: Path) -> dict[str, str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed, so pi cannot run")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "FUNES_"))}
    folders = [str(pi.parent), str(Path(node).parent), str(FUNES.parent), "/usr/bin", "/bin"]
    env.update(
        HOME=str(home),
        FUNES_HOME=str(funes_home),
        FUNES_EMBEDDER="hash",
        PI_CODING_AGENT_DIR=str(agent),
        PI_OFFLINE="1",
        PI_SKIP_VERSION_CHECK="1",
        PI_TELEMETRY="0",
        PATH=os.pathsep.join(dict.fromkeys(folders)),
    )
    return env


def _run(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _models_json(model: FakeModel) -> str:
    provider = {
        "baseUrl": model.url + "/v1",
        "api": "openai-completions",
        "apiKey": "sk-fake",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model"}],
    }
    return json.dumps({"providers": {"fake": provider}}, indent=2) + "\n"


def _tool_results(model: FakeModel) -> list[str]:
    found = []
    for request in model.requests:
        body: dict[str, Any] = request.get("body") or {}
        for message in body.get("messages", []):
            if message.get("role") == "tool":
                found.append(json.dumps(message.get("content"), ensure_ascii=False))
    return found


def _offered(model: FakeModel) -> set[str]:
    names = set()
    for request in model.requests:
        for tool in (request.get("body") or {}).get("tools", []):
            names.add((tool.get("function") or {}).get("name") or tool.get("name"))
    return names


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    pi = npm_agent("pi")
    home, funes_home, project = tmp_path / "home", tmp_path / "funes-home", tmp_path / "project"
    agent = home / ".config" / "pi-agent"
    for folder in (home, project, agent):
        folder.mkdir(parents=True)
    return {
        "pi": pi,
        "home": home,
        "funes_home": funes_home,
        "project": project,
        "agent": agent,
        "env": _pi_env(pi, home, funes_home, agent),
    }


def test_pi_recalls_through_funes_and_its_turns_are_indexed(world: dict[str, Any]) -> None:
    env, project, agent = world["env"], world["project"], world["agent"]
    done = _run([str(FUNES), "index", str(REPO / "examples" / "sessions"), "--wait"], env, project)
    assert done.returncode == 0, done.stderr

    (agent / "settings.json").write_text(ORIGINAL_SETTINGS, encoding="utf-8")
    with FakeModel(tool_pattern=r"recall$", tool_args={"query": QUERY}, reply=REPLY) as model:
        (agent / "models.json").write_text(_models_json(model), encoding="utf-8")
        before = files.snapshot(agent)

        done = _run([str(FUNES), "integrations", "install", "pi"], env, project)
        assert done.returncode == 0, done.stdout + done.stderr
        extension = world["funes_home"] / "integrations" / "pi-extension"

        prompt = f"What did we decide about storing readings? Remember the code word {TOKEN}."
        done = _run([str(world["pi"]), "--offline", "-p", "--model", "fake/fake-model", prompt], env, project)
        assert done.returncode == 0, done.stdout + done.stderr
        assert REPLY in done.stdout

        assert "mcp__funes__recall" in _offered(model), f"offered: {sorted(_offered(model))}"
        assert model.tool_calls_made() == 1
        results = _tool_results(model)
        assert any(EXPECTED_PHRASE in r for r in results), f"the model saw: {results}"

    sessions = sorted((agent / "sessions").rglob("*.jsonl"))
    assert len(sessions) == 1, "pi wrote its session into PI_CODING_AGENT_DIR"
    session_id = sessions[0].stem

    # The hook runs detached: wait until the whole session is in the memory (a hang guard).
    deadline = time.monotonic() + PATIENCE
    read = ""
    while time.monotonic() < deadline:
        read = _run([str(FUNES), "get", session_id], env, project).stdout
        if TOKEN in read and REPLY in read:
            break
        time.sleep(0.5)
    assert TOKEN in read, f"the new session was not indexed:\n{read}"
    assert EXPECTED_PHRASE in read and REPLY in read, f"the session's later turns are missing:\n{read}"
    found = _run([str(FUNES), "recall", TOKEN], env, project).stdout
    assert TOKEN in found and session_id in found, f"recall does not find the new session:\n{found}"

    done = _run([str(FUNES), "integrations", "remove", "pi"], env, project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (agent / "settings.json").read_text(encoding="utf-8") == ORIGINAL_SETTINGS
    after = files.snapshot(agent)
    assert {k: after.get(k) for k in before} == before, "pi's config is back to its original bytes"
    added = {k for k in after if k not in before and not k.startswith("sessions/")}
    assert added <= {"auth.json"}, f"left behind in pi's folder: {sorted(added)}"  # auth.json: pi's own
    assert not extension.exists()


def test_a_broken_funes_never_breaks_pi(world: dict[str, Any]) -> None:
    """The MCP server failing at start costs pi its memory tools, nothing else."""
    env, project, agent = world["env"], world["project"], world["agent"]
    done = _run([str(FUNES), "integrations", "install", "pi", "--no-seed", "--no-index"], env, project)
    assert done.returncode == 0, done.stdout + done.stderr
    config_path = world["funes_home"] / "integrations" / "pi-extension" / "funes.json"
    config = json.loads(config_path.read_text())
    config["mcp"]["argv"] = [sys.executable, "-c", "import sys; sys.exit(3)"]
    config_path.write_text(json.dumps(config))
    with FakeModel(tool_pattern=r"recall$", reply=REPLY) as model:
        (agent / "models.json").write_text(_models_json(model), encoding="utf-8")
        done = _run(
            [str(world["pi"]), "--offline", "-p", "--model", "fake/fake-model", "hello"], env, project
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert REPLY in done.stdout
    # The extension noticed the exit itself, rather than waiting for a request to time out.
    assert "funes memory tools unavailable: funes mcp exited (3)" in done.stderr, done.stderr
    assert not any(name.startswith("mcp__funes__") for name in _offered(model))

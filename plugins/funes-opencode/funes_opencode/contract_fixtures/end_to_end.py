"""The real-CLI session of an OpenCode-family agent (OpenCode, and its fork Kilo Code) against the fake model.

Both CLIs keep their config in ``$XDG_CONFIG_HOME/<id>/<id>.json``, their sessions in
``$XDG_DATA_HOME/<id>/<id>*.db`` and load ``plugins/funes.js`` from the config folder, so their
end-to-end tests share everything up to removing the integration: :func:`wired_session` runs it.
Each test then removes the integration and checks what its agent leaves of the config (OpenCode
leaves the bytes alone; Kilo rewrites them at start). It needs the contract kit (a dev dependency).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import NamedTuple

from funes_contracts.agent_cli import agent_world, funes, ok, run, wait_until_recalled
from funes_contracts.fake_model import FakeModel

__all__ = ["MARKER", "WiredSession", "wired_session"]

#: A phrase only the prompt holds: recallable once the capture plugin has indexed the session.
MARKER = "quokka lighthouse semaphore 4417"
EXAMPLE_PHRASE = "sensor readings for tidepool"


class WiredSession(NamedTuple):
    """What :func:`wired_session` leaves: a user whose agent is still wired, its memory captured."""

    config: Path
    #: The user's own ``<id>.json``, before funes was installed.
    original: str
    #: The capture plugin (``plugins/funes.js``).
    plugin: Path
    env: dict[str, str]
    project: Path


def wired_session(
    tmp_path: Path, agent_id: str, *, examples: Path, drop: tuple[str, ...], schema: str, **extra: str
) -> WiredSession:
    """Install funes into a throwaway user of ``agent_id``, run one real session, wait for its capture.

    1. a small memory is indexed from ``examples`` (the repository's sample sessions, hash embedder);
    2. ``funes integrations install <id>`` adds ``mcp.funes`` to ``<id>.json`` (which already holds
       the user's provider settings, with ``$schema`` ``schema``) and writes the capture plugin;
    3. ``<id> run`` runs a session in which the fake model calls ``funes_recall`` and receives a
       passage of the examples;
    4. the plugin's ``session.idle`` handler converts the session from the agent's database into
       the spool and indexes it in the background: :data:`MARKER` becomes recallable.

    ``drop`` and ``extra`` are the agent's own environment variables to leave out and to set.
    """
    config_home, data_home = tmp_path / "xdg-config", tmp_path / "xdg-data"
    agent, _, _, project, env = agent_world(
        tmp_path,
        agent_id,
        folders=[config_home / agent_id, data_home],
        drop=(*drop, "XDG_"),
        XDG_CONFIG_HOME=str(config_home),
        XDG_DATA_HOME=str(data_home),
        **extra,
    )
    config = config_home / agent_id / f"{agent_id}.json"
    plugin = config_home / agent_id / "plugins" / "funes.js"

    with FakeModel(
        tool_pattern=r"^funes_recall$",
        tool_args={"query": "Postgres embedded sensor readings"},
        reply="Recalled it.",
    ) as model:
        original = (
            "{\n"
            f'  "$schema": "{schema}",\n'
            '  "model": "fake/fake-model",\n'
            '  "autoupdate": false,\n'
            '  "provider": {\n'
            '    "fake": {\n'
            '      "npm": "@ai-sdk/openai-compatible",\n'
            '      "name": "Fake",\n'
            f'      "options": {{"baseURL": "{model.url}/v1", "apiKey": "sk-fake"}},\n'
            '      "models": {"fake-model": {"name": "Fake model"}}\n'
            "    }\n"
            "  }\n"
            "}\n"
        )
        config.write_text(original, encoding="utf-8")

        funes("index", examples, env=env, cwd=project)
        assert agent_id in funes("integrations", "install", agent_id, env=env, cwd=project)
        wired = json.loads(config.read_text(encoding="utf-8"))
        assert wired["mcp"]["funes"]["command"][-1] == "mcp", wired
        assert plugin.is_file() and "session.idle" in plugin.read_text(encoding="utf-8")

        started = time.monotonic()
        ok(run([agent, "run", f"What did we decide about storage? {MARKER}"], env, project, timeout=300))
        ended = time.monotonic()
        print(f"{agent_id} run took {ended - started:.1f} s")

    assert model.called("funes_recall"), "funes_recall was never called"
    assert model.saw(EXAMPLE_PHRASE), "the tool result the model received holds a passage of the memory"
    databases = list((data_home / agent_id).glob(f"{agent_id}*.db"))
    assert databases, f"{agent_id} kept its database in XDG_DATA_HOME"

    wait_until_recalled(env, project, MARKER, "4417", since=ended)
    return WiredSession(config, original, plugin, env, project)

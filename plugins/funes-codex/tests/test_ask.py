"""funes-codex's half of ``funes ask``: the isolated command line and the JSON-events reader.

The sample events come from a real ``codex exec --json`` run (Codex 0.171.0, against the fake
model); the end-to-end test (test_ask_e2e_codex.py) drives the real CLI.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from funes_codex.ask import ask_answer, ask_argv, configured_servers
from funes_codex.wiring import CodexToolRegistrar
from funes_core import ConfigError, InstallContext, IntegrationError

EVENTS = [
    {"type": "thread.started", "thread_id": "01a2324e-9a1c-7ee1-a0d0-610cca1bdd21"},
    {
        "type": "item.completed",
        "item": {"id": "item_0", "type": "error", "message": "Model metadata for `gpt-5-codex` not found."},
    },
    {"type": "turn.started"},
    {
        "type": "item.completed",
        "item": {"id": "item_1", "type": "agent_message", "text": "The ARM build broke on musl."},
    },
    {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 5}},
]


def lines(events: list[dict[str, object]]) -> list[str]:
    return [json.dumps(e) + "\n" for e in events]


def test_without_mcp_servers_the_command_line_only_switches_hooks_tools_and_sessions_off(
    tmp_path: Path,
) -> None:
    argv = ask_argv("/opt/bin/codex", tmp_path / "config.toml")
    assert argv[:3] == ["/opt/bin/codex", "exec", "--json"]
    assert argv[-1] == "-", "the prompt comes on stdin"
    assert "--ephemeral" in argv
    disabled = {argv[i + 1] for i, word in enumerate(argv) if word == "--disable"}
    assert disabled == {"hooks", "shell_tool", "apps", "plugins"}
    assert not any(word.startswith("mcp_servers") for word in argv)


def test_every_configured_mcp_server_is_switched_off_by_name(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[mcp_servers.funes]\ncommand = "funes"\nargs = ["mcp"]\n\n'
        '[mcp_servers."team.docs"]\ncommand = "docs-mcp"\n',
        encoding="utf-8",
    )
    assert configured_servers(config) == ["funes", "team.docs"]
    argv = ask_argv("codex", config)
    override = argv[argv.index("-c", argv.index('web_search="disabled"')) + 1]
    key, _, value = override.partition("=")
    assert key == "mcp_servers"
    assert tomllib.loads(f"x = {value}")["x"] == {
        "funes": {"enabled": False},
        "team.docs": {"enabled": False},
    }


def test_an_unreadable_config_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[mcp_servers\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"config\.toml: cannot read it to switch its MCP servers off"):
        ask_argv("codex", config)


def test_the_registrar_reads_the_codex_home_of_the_context(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('[mcp_servers.mem]\ncommand = "x"\n', encoding="utf-8")
    ctx = InstallContext(home=tmp_path, funes_home=tmp_path / ".funes", funes_command=("funes",))
    registrar = CodexToolRegistrar()
    assert registrar.ask_cli == "codex"
    assert 'mcp_servers={"mem"={enabled=false}}' in registrar.ask_argv("codex", ctx)
    assert "".join(registrar.ask_answer(lines(EVENTS))) == "The ARM build broke on musl."


def test_agent_messages_are_the_answer_errors_items_are_not() -> None:
    two = [
        *EVENTS[:4],
        {"type": "item.completed", "item": {"type": "agent_message", "text": "Sessions: 8d41b7e2"}},
    ]
    assert list(ask_answer(lines(two))) == ["The ARM build broke on musl.", "\n\nSessions: 8d41b7e2"]
    assert list(ask_answer(["not json\n", *lines(EVENTS)])) == ["The ARM build broke on musl."]


@pytest.mark.parametrize(
    "event",
    [
        {"type": "turn.failed", "error": {"message": "stream disconnected before completion"}},
        {"type": "error", "message": "stream disconnected before completion"},
    ],
)
def test_a_failed_turn_is_an_integration_error(event: dict[str, object]) -> None:
    with pytest.raises(
        IntegrationError, match=r"^Codex reported an error: stream disconnected before completion$"
    ):
        list(ask_answer(lines([EVENTS[0], event])))

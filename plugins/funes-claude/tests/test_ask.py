"""funes-claude's half of ``funes ask``: the isolated command line and the stream-json reader.

The sample events are trimmed from a real ``claude -p --output-format stream-json --verbose
--include-partial-messages`` run (Claude Code 2.1.197, against the fake model); the end-to-end
test (test_ask_e2e.py) drives the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from funes_claude.ask import ask_answer, ask_argv
from funes_claude.wiring import ClaudeToolRegistrar
from funes_core import InstallContext, IntegrationError

SID = "73a315a5-9900-4253-b6f0-e66afa0ac882"
STREAM = [
    {
        "type": "system",
        "subtype": "init",
        "cwd": "/tmp/funes-ask-x",
        "session_id": SID,
        "tools": [],
        "mcp_servers": [],
    },
    {"type": "system", "subtype": "status", "status": "requesting", "session_id": SID},
    {
        "type": "stream_event",
        "event": {"type": "message_start", "message": {"role": "assistant", "content": []}},
    },
    {
        "type": "stream_event",
        "event": {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    },
    {
        "type": "stream_event",
        "event": {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "The ARM build "},
        },
    },
    {
        "type": "stream_event",
        "event": {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "broke on musl."},
        },
    },
    {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "The ARM build broke on musl."}],
        },
    },
    {"type": "stream_event", "event": {"type": "content_block_stop", "index": 0}},
    {"type": "stream_event", "event": {"type": "message_stop"}},
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "The ARM build broke on musl.",
        "session_id": SID,
    },
]


def lines(events: list[dict[str, object]]) -> list[str]:
    return [json.dumps(e) + "\n" for e in events]


def test_the_command_line_starts_no_mcp_server_tool_hook_or_session() -> None:
    argv = ask_argv("/opt/bin/claude")
    assert argv[:2] == ["/opt/bin/claude", "-p"]
    assert argv[argv.index("--mcp-config") + 1] == '{"mcpServers":{}}' and "--strict-mcp-config" in argv
    assert argv[argv.index("--tools") + 1] == ""
    assert "--no-session-persistence" in argv
    assert json.loads(argv[argv.index("--settings") + 1]) == {"disableAllHooks": True}
    assert argv[argv.index("--output-format") + 1] == "stream-json" and "--include-partial-messages" in argv


def test_the_registrar_offers_ask(tmp_path: Path) -> None:
    ctx = InstallContext(home=tmp_path, funes_home=tmp_path / ".funes", funes_command=("funes",))
    registrar = ClaudeToolRegistrar()
    assert registrar.ask_cli == "claude"
    assert registrar.ask_argv("/x/claude", ctx) == ask_argv("/x/claude")
    assert "".join(registrar.ask_answer(lines(STREAM))) == "The ARM build broke on musl."


def test_deltas_are_printed_as_they_come_and_not_again() -> None:
    assert list(ask_answer(lines(STREAM))) == ["The ARM build ", "broke on musl."]


def test_without_deltas_the_messages_then_the_result_are_used() -> None:
    no_deltas = [e for e in STREAM if e["type"] != "stream_event"]
    assert list(ask_answer(lines(no_deltas))) == ["The ARM build broke on musl."]
    only_result = [STREAM[0], STREAM[-1]]
    assert list(ask_answer(lines(only_result))) == ["The ARM build broke on musl."]


def test_noise_lines_are_skipped() -> None:
    noisy = ["warning: something\n", "[1, 2]\n", *lines(STREAM)]
    assert "".join(ask_answer(noisy)) == "The ARM build broke on musl."


def test_an_error_result_is_an_integration_error() -> None:
    failed = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "Invalid API key · Please run /login",
    }
    with pytest.raises(
        IntegrationError, match=r"^Claude Code reported an error: Invalid API key · Please run /login$"
    ):
        list(ask_answer(lines([STREAM[0], failed])))

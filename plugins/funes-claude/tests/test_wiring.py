"""The wiring's details beyond the contract: the hook command, the marker, Claude Code's CLI.

The contract suite proves the byte-for-byte guarantees on a realistic config; these tests pin
what is specific to Claude Code: what the hook runs, how funes-claude recognises (only) its own
hooks and server, what happens around hooks and servers the user wrote, and registration
through the real ``claude mcp`` CLI.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sys
from importlib import resources
from pathlib import Path

import pytest

from funes_claude.wiring import (
    HOOK_EVENTS,
    ClaudeHookInstaller,
    ClaudeToolRegistrar,
    hook_argv,
    hook_command,
    is_funes_hook,
)
from funes_contracts.agent_cli import npm_agent
from funes_core import ConfigError, InstallContext, IntegrationError, WiringState

FIXTURES = Path(str(resources.files("funes_claude.contract_fixtures")))
FUNES = "/opt/funes/bin/funes"


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> InstallContext:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no claude CLI unless a test puts one there
    return InstallContext(home=home, funes_home=tmp_path / "funes home", funes_command=(FUNES,))


def settings(ctx: InstallContext) -> Path:
    return ctx.home / ".claude" / "settings.json"


def write_settings(ctx: InstallContext, data: object) -> str:
    text = json.dumps(data, indent=2) + "\n"
    settings(ctx).parent.mkdir(parents=True, exist_ok=True)
    settings(ctx).write_text(text, encoding="utf-8")
    return text


# -- hooks -----------------------------------------------------------------------------------------


def test_the_hook_runs_this_interpreter_with_the_funes_home_and_command(ctx: InstallContext) -> None:
    argv = hook_argv(ctx)
    assert argv == [
        sys.executable,
        "-I",
        "-m",
        "funes_claude.hook",
        "--funes-home",
        str(ctx.funes_home),
        "--",
        FUNES,
    ]
    assert shlex.split(hook_command(ctx)) == argv, "quoted for the shell Claude Code runs it with"
    ClaudeHookInstaller().install(ctx)
    data = json.loads(settings(ctx).read_text(encoding="utf-8"))
    for event in HOOK_EVENTS:
        assert data["hooks"][event] == [
            {"hooks": [{"type": "command", "command": hook_command(ctx), "timeout": 15}]}
        ]


@pytest.mark.parametrize(
    ("hook", "ours"),
    [
        ({"type": "command", "command": "/v/bin/python -m funes_claude.hook --funes-home /x -- funes"}, True),
        ({"type": "command", "command": "'/a b/python' -m funes_claude.hook -- funes"}, True),
        ({"type": "command", "command": "echo funes_claude.hook"}, False),
        ({"type": "command", "command": "python -m funes_claude.hooks"}, False),
        ({"type": "command", "command": "python -m funes_claude.hook 'unbalanced"}, False),
        ({"type": "prompt", "prompt": "-m funes_claude.hook"}, False),
        ({"type": "command"}, False),
        ("python -m funes_claude.hook", False),
    ],
)
def test_only_command_hooks_running_the_module_are_ours(hook: object, ours: bool) -> None:
    assert is_funes_hook(hook) is ours


def test_a_hook_the_user_put_into_our_group_survives_removal(ctx: InstallContext) -> None:
    ClaudeHookInstaller().install(ctx)
    data = json.loads(settings(ctx).read_text(encoding="utf-8"))
    data["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "say done"})
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "mine"}]})
    write_settings(ctx, data)
    assert ClaudeHookInstaller().status(ctx).state is WiringState.WIRED
    assert ClaudeHookInstaller().uninstall(ctx).changed
    left = json.loads(settings(ctx).read_text(encoding="utf-8"))
    assert left == {
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": "say done"}]},
                {"hooks": [{"type": "command", "command": "mine"}]},
            ]
        }
    }


def test_the_users_hooks_come_first_and_stay_untouched(ctx: InstallContext) -> None:
    original = (FIXTURES / "config-home" / ".claude" / "settings.json").read_text(encoding="utf-8")
    settings(ctx).parent.mkdir(parents=True)
    settings(ctx).write_text(original, encoding="utf-8")
    ClaudeHookInstaller().install(ctx)
    text = settings(ctx).read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["hooks"]["Stop"][0]["hooks"][0]["command"] == "notify-send 'Claude is done'"
    assert is_funes_hook(data["hooks"]["Stop"][1]["hooks"][0])
    assert data["hooks"]["PreToolUse"] == json.loads(original)["hooks"]["PreToolUse"]
    assert text.startswith(original[: original.index('"hooks"')]), "everything before hooks is as it was"
    assert '\n      {\n        "hooks": [\n          {\n            "type": "command",' in text, (
        "laid out like the rest of the file"
    )


def test_another_funes_home_makes_the_hooks_outdated_and_install_refreshes_them(ctx: InstallContext) -> None:
    installer = ClaudeHookInstaller()
    installer.install(ctx)
    moved = dataclasses.replace(ctx, funes_home=ctx.funes_home.parent / "elsewhere")
    status = installer.status(moved)
    assert status.state is WiringState.OUTDATED and "Stop" in status.detail
    assert installer.install(moved).summary.startswith("updated")
    assert [is_funes_hook(h) for h in _all_hooks(settings(ctx))] == [True, True, True]
    assert installer.status(moved).state is WiringState.WIRED


def _all_hooks(path: Path) -> list[object]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [hook for groups in data["hooks"].values() for group in groups for hook in group["hooks"]]


def test_a_partial_install_is_outdated(ctx: InstallContext) -> None:
    ClaudeHookInstaller().install(ctx)
    data = json.loads(settings(ctx).read_text(encoding="utf-8"))
    del data["hooks"]["SessionEnd"]
    write_settings(ctx, data)
    status = ClaudeHookInstaller().status(ctx)
    assert status.state is WiringState.OUTDATED and "SessionEnd" in status.detail
    ClaudeHookInstaller().install(ctx)
    assert ClaudeHookInstaller().status(ctx).state is WiringState.WIRED


def test_disabled_hooks_are_mentioned(ctx: InstallContext) -> None:
    write_settings(ctx, {"disableAllHooks": True})
    ClaudeHookInstaller().install(ctx)
    status = ClaudeHookInstaller().status(ctx)
    assert status.state is WiringState.WIRED and "disableAllHooks" in status.detail


@pytest.mark.parametrize(
    "data",
    [{"hooks": "none"}, {"hooks": {"Stop": {"hooks": []}}}, {"hooks": []}],
    ids=["hooks-a-string", "event-an-object", "hooks-an-array"],
)
def test_a_hooks_section_of_the_wrong_shape_is_refused_untouched(ctx: InstallContext, data: object) -> None:
    text = write_settings(ctx, data)
    for action in (ClaudeHookInstaller().install, ClaudeHookInstaller().uninstall):
        with pytest.raises(ConfigError, match=r"settings\.json"):
            action(ctx)
    assert settings(ctx).read_text(encoding="utf-8") == text
    assert ClaudeHookInstaller().status(ctx).state is WiringState.BROKEN


# -- MCP server ------------------------------------------------------------------------------------


def state(ctx: InstallContext) -> Path:
    return ctx.home / ".claude.json"


def test_the_file_entry_is_exactly_what_claude_mcp_add_writes(ctx: InstallContext) -> None:
    bound = dataclasses.replace(ctx, memory="team/memory")
    ClaudeToolRegistrar().register(bound)
    entry = json.loads(state(ctx).read_text(encoding="utf-8"))["mcpServers"]["funes"]
    assert entry == {
        "type": "stdio",
        "command": FUNES,
        "args": ["mcp", "team/memory"],
        "env": {},
    }


def test_a_funes_server_the_user_registered_for_something_else_is_left_alone(ctx: InstallContext) -> None:
    theirs = {"mcpServers": {"funes": {"type": "stdio", "command": "npx", "args": ["funes-weather"]}}}
    state(ctx).write_text(json.dumps(theirs), encoding="utf-8")
    with pytest.raises(ConfigError, match="funes-claude did not write it"):
        ClaudeToolRegistrar().register(ctx)
    assert not ClaudeToolRegistrar().unregister(ctx).changed
    assert json.loads(state(ctx).read_text(encoding="utf-8")) == theirs
    assert ClaudeToolRegistrar().status(ctx).state is WiringState.NOT_WIRED
    assert ClaudeToolRegistrar().registered_command(ctx) is None


def _fake_claude(folder: Path, script: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "claude"
    exe.write_text(f"#!{sys.executable}\n{script}", encoding="utf-8")
    exe.chmod(0o755)
    return exe


def test_a_failing_claude_cli_is_reported_in_one_line(ctx: InstallContext, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _fake_claude(
        bin_dir, "import sys\nprint('MCP server funes already exists', file=sys.stderr)\nsys.exit(1)\n"
    )
    with_cli = dataclasses.replace(ctx, extra_env={"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"})
    assert ClaudeToolRegistrar.claude_cli(with_cli) == str(bin_dir / "claude")
    with pytest.raises(
        IntegrationError, match=r"claude mcp add funes -s user -- .* failed \(exit 1\): MCP server"
    ):
        ClaudeToolRegistrar().register(with_cli)
    assert not state(ctx).exists(), "nothing written behind the CLI's back"


@pytest.mark.slow
@pytest.mark.agent_cli
def test_registration_through_the_real_claude_cli(ctx: InstallContext) -> None:
    claude = npm_agent("claude")
    env = {
        "PATH": f"{claude.parent}{os.pathsep}/usr/bin:/bin",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    with_cli = dataclasses.replace(ctx, extra_env=env)
    registrar = ClaudeToolRegistrar()
    outcome = registrar.register(with_cli)
    assert outcome.changed and "claude mcp add" in outcome.summary
    assert registrar.registered_command(with_cli) == [FUNES, "mcp"]
    data = json.loads(state(ctx).read_text(encoding="utf-8"))
    assert "firstStartTime" in data, "Claude Code itself wrote its state file"
    assert not registrar.register(with_cli).changed, "already registered: the CLI is not run again"
    assert registrar.status(with_cli).state is WiringState.WIRED
    bound = dataclasses.replace(with_cli, memory="team/memory")
    assert registrar.status(bound).state is WiringState.OUTDATED
    assert registrar.register(bound).summary.startswith("updated")
    assert registrar.registered_command(bound) == [FUNES, "mcp", "team/memory"]
    assert registrar.unregister(bound).changed
    assert registrar.registered_command(bound) is None
    assert not json.loads(state(ctx).read_text(encoding="utf-8")).get("mcpServers")
    assert not registrar.unregister(bound).changed

"""funes-codex's wiring in detail: what Codex needs, ownership, CODEX_HOME.

The TOML editor itself is tested in the core: tests/test_configedit_toml.py.
"""

from __future__ import annotations

import json
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from funes_codex.agent import CODEX
from funes_codex.wiring import GRACE_MS, HOOK_MODULE, CodexHookInstaller, CodexToolRegistrar, hook_command
from funes_core import ConfigError, InstallContext, WiringState

# -- the registrar ------------------------------------------------------------------------------


@pytest.fixture
def ctx(tmp_path: Path) -> InstallContext:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    return InstallContext(home=home, funes_home=tmp_path / "fh", funes_command=("/opt/funes/bin/funes",))


def test_the_server_table_has_what_codex_needs_from_the_first_request(ctx: InstallContext) -> None:
    CodexToolRegistrar().register(ctx)
    config = tomllib.loads((ctx.home / ".codex" / "config.toml").read_text(encoding="utf-8"))
    assert config["mcp_optional_startup_grace_ms"] == GRACE_MS
    assert config["mcp_servers"]["funes"] == {
        "command": "/opt/funes/bin/funes",
        "args": ["mcp"],
        "env": {"FUNES_HOME": str(ctx.funes_home)},
        "env_vars": ["FUNES_EMBEDDER", "FUNES_LOG"],
        "default_tools_approval_mode": "approve",
    }
    assert oct((ctx.home / ".codex" / "config.toml").stat().st_mode & 0o777) == "0o600"


def test_the_users_own_grace_is_kept_and_left_alone(ctx: InstallContext) -> None:
    config = ctx.home / ".codex" / "config.toml"
    original = "mcp_optional_startup_grace_ms = 0\n"
    config.write_text(original, encoding="utf-8")
    registrar = CodexToolRegistrar()
    registrar.register(ctx)
    assert tomllib.loads(config.read_text(encoding="utf-8"))["mcp_optional_startup_grace_ms"] == 0
    assert registrar.status(ctx).state is WiringState.WIRED
    registrar.unregister(ctx)
    assert config.read_text(encoding="utf-8") == original


def test_a_funes_server_the_user_registered_is_never_touched(ctx: InstallContext) -> None:
    config = ctx.home / ".codex" / "config.toml"
    original = '[mcp_servers.funes]\ncommand = "funes"\nargs = ["mcp"]\n'
    config.write_text(original, encoding="utf-8")
    registrar = CodexToolRegistrar()
    with pytest.raises(ConfigError, match="funes-codex did not write it"):
        registrar.register(ctx)
    assert registrar.unregister(ctx).changed is False
    assert registrar.registered_command(ctx) is None
    assert registrar.status(ctx).state is WiringState.NOT_WIRED
    assert config.read_text(encoding="utf-8") == original


def test_losing_the_grace_makes_the_registration_outdated(ctx: InstallContext) -> None:
    registrar = CodexToolRegistrar()
    registrar.register(ctx)
    config = ctx.home / ".codex" / "config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text("\n".join(x for x in text.split("\n") if "grace" not in x), encoding="utf-8")
    assert registrar.status(ctx).state is WiringState.OUTDATED
    assert registrar.register(ctx).changed is True
    assert registrar.status(ctx).state is WiringState.WIRED


# -- the hook installer -------------------------------------------------------------------------


def test_the_hook_command_runs_the_light_module_with_this_interpreter(ctx: InstallContext) -> None:
    words = shlex.split(hook_command(ctx))
    assert words[:4] == [sys.executable, "-I", "-m", HOOK_MODULE]
    assert words[4:] == ["--funes-home", str(ctx.funes_home), "--", "/opt/funes/bin/funes"]


def test_hooks_go_to_stop_and_session_end(ctx: InstallContext) -> None:
    CodexHookInstaller().install(ctx)
    data = json.loads((ctx.home / ".codex" / "hooks.json").read_text(encoding="utf-8"))
    group = {"hooks": [{"type": "command", "command": hook_command(ctx)}]}
    assert data == {"hooks": {"Stop": [group], "SessionEnd": [group]}}


def test_a_hook_the_user_mixed_into_our_group_keeps_it_theirs(ctx: InstallContext) -> None:
    path = ctx.home / ".codex" / "hooks.json"
    mine = {"type": "command", "command": "notify-send done"}
    shared = {"hooks": [{"type": "command", "command": hook_command(ctx)}, mine]}
    original = json.dumps({"hooks": {"Stop": [shared]}}, indent=2) + "\n"
    path.write_text(original, encoding="utf-8")
    installer = CodexHookInstaller()
    assert installer.status(ctx).state is WiringState.NOT_WIRED
    installer.install(ctx)
    installer.uninstall(ctx)
    assert path.read_text(encoding="utf-8") == original


def test_hooks_under_a_non_object_are_refused(ctx: InstallContext) -> None:
    path = ctx.home / ".codex" / "hooks.json"
    path.write_text('{"hooks": {"Stop": "notify-send"}}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"hooks\.json"):
        CodexHookInstaller().install(ctx)
    assert CodexHookInstaller().status(ctx).state is WiringState.BROKEN


# -- CODEX_HOME ---------------------------------------------------------------------------------


def test_codex_home_applies_to_the_process_home_only(tmp_path: Path) -> None:
    me = tmp_path / "me"
    environ = {"HOME": str(me), "CODEX_HOME": str(tmp_path / "ch")}
    assert CODEX.locate("home", me, environ=environ).path == tmp_path / "ch"
    assert CODEX.locate("home", me, environ=environ).source == "CODEX_HOME"
    assert (
        CODEX.path("home", tmp_path / "someone-else", environ=environ) == tmp_path / "someone-else" / ".codex"
    )
    assert CODEX.locate("home", me, environ={"HOME": str(me)}).source == "default"
    pinned = CODEX.path("home", tmp_path / "x", {"CODEX_HOME": str(tmp_path / "pinned")}, environ={})
    assert pinned == tmp_path / "pinned"


def test_a_context_naming_its_codex_home_is_wired_there(ctx: InstallContext, tmp_path: Path) -> None:
    pinned = InstallContext(
        ctx.home, ctx.funes_home, ctx.funes_command, extra_env={"CODEX_HOME": str(tmp_path / "ch")}
    )
    CodexHookInstaller().install(pinned)
    CodexToolRegistrar().register(pinned)
    assert sorted(p.name for p in (tmp_path / "ch").iterdir()) == ["config.toml", "hooks.json"]
    assert list((ctx.home / ".codex").iterdir()) == []

"""funes-hermes' own wiring details: what Hermes will read, ownership, HERMES_HOME, byte-exact removal.

The YAML adapter's text surgery itself is tested in the core (tests/test_configedit_yaml.py).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from funes_core import ConfigError, InstallContext, WiringState
from funes_hermes import HermesHookInstaller, HermesToolRegistrar
from funes_hermes.wiring import HOOK_MODULE

FUNES = ("/opt/funes/bin/funes",)


@pytest.fixture(autouse=True)
def _no_hermes_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_HOME", raising=False)


@pytest.fixture
def ctx(tmp_path: Path) -> InstallContext:
    home = tmp_path / "home"
    (home / ".hermes").mkdir(parents=True)
    return InstallContext(home=home, funes_home=tmp_path / "fh", funes_command=FUNES)


def config(ctx: InstallContext) -> Path:
    return ctx.home / ".hermes" / "config.yaml"


def both(ctx: InstallContext) -> None:
    HermesToolRegistrar().register(ctx)
    HermesHookInstaller().install(ctx)


LAYOUTS = [
    "",
    "\n",
    "# only comments, no final line break",
    "model: {default: m, provider: custom}   # inline comment\n\ntoolsets: [a, b]\n",
    "mcp_servers: {}\nhooks: {}\n",
    "mcp_servers:\nhooks:\n",
    "mcp_servers:\n  other: {command: x}\nhooks:\n  on_session_end:\n  - command: mine\n",
    'hooks:\n  on_session_end: [{command: "mine"}]\n  pre_tool_call: []\n',
    "hooks: {on_session_start: [{command: a}]}\nmcp_servers: {x: {command: y}}",
    "a: 1\r\nmcp_servers:\r\n  other:\r\n    command: x\r\n",
    "\ufeffmodel: m\n",
    "---\nmodel: m\n",
    "  indented: true\n  deeper: {a: 1}\n",
    "# c\nmodel: m  # no final line break",
    "mcp_servers:",
]


@pytest.mark.parametrize("original", LAYOUTS)
@pytest.mark.parametrize("order", ["registrar-first", "installer-first"])
def test_install_then_remove_restores_every_byte(ctx: InstallContext, original: str, order: str) -> None:
    path = config(ctx)
    path.write_bytes(original.encode("utf-8"))
    registrar, installer = HermesToolRegistrar(), HermesHookInstaller()
    adds = [registrar.register, installer.install]
    removals = [registrar.unregister, installer.uninstall]
    if order == "installer-first":
        adds.reverse()
        removals.reverse()
    for add in adds:
        assert add(ctx).changed
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["mcp_servers"]["funes"] == {
        "command": FUNES[0],
        "args": ["mcp"],
        "env": {"FUNES_HOME": str(ctx.funes_home)},
    }
    assert {"command": shlex.join(ctx.hook_argv(HOOK_MODULE))} in data["hooks"]["on_session_end"]
    before = yaml.safe_load(original) or {}
    for key, value in before.items():
        if key not in ("mcp_servers", "hooks"):
            assert data[key] == value
    for drop in removals:  # removed in the same order, so the file sees every combination
        assert drop(ctx).changed
    assert path.read_bytes() == original.encode("utf-8")


def test_a_file_funes_created_is_deleted_again(ctx: InstallContext) -> None:
    both(ctx)
    assert oct(config(ctx).stat().st_mode & 0o777) == "0o600", "config.yaml may hold API keys"
    HermesHookInstaller().uninstall(ctx)
    HermesToolRegistrar().unregister(ctx)
    assert not config(ctx).exists()


def test_a_file_funes_created_stays_when_the_user_added_to_it(ctx: InstallContext) -> None:
    HermesToolRegistrar().register(ctx)
    path = config(ctx)
    path.write_text(path.read_text() + "  mine: {command: my-server}\nmodel: m\n")
    HermesToolRegistrar().unregister(ctx)
    assert yaml.safe_load(path.read_text()) == {
        "mcp_servers": {"mine": {"command": "my-server"}},
        "model": "m",
    }


def test_the_files_mode_is_kept_and_a_symlink_stays_a_symlink(ctx: InstallContext, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "hermes.yaml"
    real.parent.mkdir()
    real.write_text("model: m\n")
    real.chmod(0o640)
    config(ctx).symlink_to(real)
    both(ctx)
    assert config(ctx).is_symlink() and "funes" in real.read_text()
    assert oct(real.stat().st_mode & 0o777) == "0o640"


def test_the_hook_runs_the_hook_module_with_this_funes_home(ctx: InstallContext) -> None:
    HermesHookInstaller().install(ctx)
    entry = yaml.safe_load(config(ctx).read_text())["hooks"]["on_session_end"][0]
    assert shlex.split(entry["command"]) == ctx.hook_argv(HOOK_MODULE)
    assert set(entry) == {"command"}, (
        "Hermes' default timeout (60 s) is plenty for a hook that returns at once"
    )


def test_paths_are_quoted_for_hermes_shlex_split(tmp_path: Path) -> None:
    odd = InstallContext(
        home=tmp_path / "h o m e",
        funes_home=tmp_path / "fünes 'home'",
        funes_command=("/opt/my funes/funes",),
    )
    HermesHookInstaller().install(odd)
    HermesToolRegistrar().register(odd)
    data = yaml.safe_load(config(odd).read_text(encoding="utf-8"))
    argv = shlex.split(os.path.expanduser(data["hooks"]["on_session_end"][0]["command"]))
    assert argv == odd.hook_argv(HOOK_MODULE)
    assert HermesToolRegistrar().registered_command(odd) == ["/opt/my funes/funes", "mcp"]
    assert config(odd).read_bytes().isascii()


def test_status_says_when_hermes_has_not_allowed_the_hook_yet(ctx: InstallContext) -> None:
    installer = HermesHookInstaller()
    outcome = installer.install(ctx)
    assert "asks you to allow it" in outcome.summary
    status = installer.status(ctx)
    assert status.state is WiringState.WIRED and "not yet allowed" in status.detail
    command = shlex.join(ctx.hook_argv(HOOK_MODULE))
    allowlist = {"approvals": [{"event": "on_session_end", "command": command, "approved_at": "x"}]}
    (ctx.home / ".hermes" / "shell-hooks-allowlist.json").write_text(json.dumps(allowlist))
    assert "not yet allowed" not in installer.status(ctx).detail


def test_hooks_auto_accept_counts_as_allowed(ctx: InstallContext) -> None:
    config(ctx).write_text("hooks_auto_accept: true\n")
    assert "asks you" not in HermesHookInstaller().install(ctx).summary
    assert HermesHookInstaller().status(ctx).detail.endswith("config.yaml")


def test_a_funes_server_the_user_wrote_is_never_touched(ctx: InstallContext) -> None:
    original = "mcp_servers:\n  funes: {command: funes, args: [mcp]}\n"
    config(ctx).write_text(original)
    with pytest.raises(ConfigError, match="funes-hermes did not write it"):
        HermesToolRegistrar().register(ctx)
    assert HermesToolRegistrar().unregister(ctx).changed is False
    assert HermesToolRegistrar().registered_command(ctx) is None
    assert HermesToolRegistrar().status(ctx).state is WiringState.NOT_WIRED
    assert config(ctx).read_text() == original


def test_a_hook_the_user_wrote_is_kept(ctx: InstallContext) -> None:
    original = 'hooks:\n  on_session_end:\n    - {command: "/usr/local/bin/notify"}\n'
    config(ctx).write_text(original)
    HermesHookInstaller().install(ctx)
    commands = [e["command"] for e in yaml.safe_load(config(ctx).read_text())["hooks"]["on_session_end"]]
    assert commands[1] == "/usr/local/bin/notify" and HOOK_MODULE in commands[0]
    HermesHookInstaller().uninstall(ctx)
    assert config(ctx).read_text() == original


def test_the_users_additions_next_to_funes_survive_removal(ctx: InstallContext) -> None:
    config(ctx).write_text("model: m\n")
    both(ctx)
    path = config(ctx)
    text = path.read_text().replace("model: m\n", "model: m\nhooks_auto_accept: true\n")
    text = text.replace(
        "mcp_servers:  # funes-hermes\n", "mcp_servers:  # funes-hermes\n  mine: {command: x}\n"
    )
    path.write_text(text)
    HermesToolRegistrar().unregister(ctx)
    HermesHookInstaller().uninstall(ctx)
    assert yaml.safe_load(path.read_text()) == {
        "model": "m",
        "hooks_auto_accept": True,
        "mcp_servers": {"mine": {"command": "x"}},
    }


def test_reinstalling_for_another_funes_replaces_the_entries(ctx: InstallContext) -> None:
    config(ctx).write_text("model: m\n")
    both(ctx)
    other = InstallContext(ctx.home, ctx.funes_home, ("/usr/bin/funes",), memory="team/mem")
    assert HermesToolRegistrar().status(other).state is WiringState.OUTDATED
    both(other)
    data = yaml.safe_load(config(ctx).read_text())
    assert data["mcp_servers"]["funes"]["args"] == ["mcp", "team/mem"]
    assert len(data["hooks"]["on_session_end"]) == 1
    HermesToolRegistrar().unregister(other)
    HermesHookInstaller().uninstall(other)
    assert config(ctx).read_text() == "model: m\n"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("mcp_servers: [a, b]\n", "'mcp_servers' is not a mapping"),
        ("mcp_servers: null\n", "'mcp_servers' is not a mapping"),
        ("hooks:\n  on_session_end: run-me\n", "'hooks.on_session_end' is not a list"),
        ("- a\n- b\n", "does not hold a YAML mapping"),
        ("a: 1\n---\nb: 2\n", "is not valid YAML"),
        ("a: [1, 2\n", "is not valid YAML"),
        ("a: !python/object:os.system x\n", "is not valid YAML"),
        (
            "mcp_servers: &servers\n  a: {command: x}\nbackup: *servers\n",
            "cannot be edited without rewriting",
        ),
    ],
)
def test_unusable_configs_are_refused_untouched(ctx: InstallContext, text: str, problem: str) -> None:
    path = config(ctx)
    path.write_text(text)
    part = HermesHookInstaller() if "hooks" in text else HermesToolRegistrar()
    with pytest.raises(ConfigError, match=problem) as err:
        part.install(ctx) if isinstance(part, HermesHookInstaller) else part.register(ctx)
    assert str(path) in str(err.value)
    assert path.read_text() == text


def test_a_non_utf8_config_is_refused(ctx: InstallContext) -> None:
    config(ctx).write_bytes(b"model: \xff\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        HermesToolRegistrar().register(ctx)
    assert HermesToolRegistrar().status(ctx).state is WiringState.BROKEN


def test_hermes_home_and_context_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, relocated = tmp_path / "home", tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HERMES_HOME", str(relocated))
    own = InstallContext(home=home, funes_home=tmp_path / "fh", funes_command=FUNES)
    assert HermesToolRegistrar().config_paths(own) == [relocated / "config.yaml"]
    throwaway = InstallContext(home=tmp_path / "other", funes_home=tmp_path / "fh", funes_command=FUNES)
    assert HermesToolRegistrar().config_paths(throwaway) == [tmp_path / "other" / ".hermes" / "config.yaml"]
    pinned = InstallContext(throwaway.home, throwaway.funes_home, FUNES, extra_env={"HERMES_HOME": "/x/h"})
    assert HermesHookInstaller().config_paths(pinned) == [Path("/x/h/config.yaml")]


REWRITTEN_BY_HERMES = """\
hooks:
  on_session_end:
    - command: /usr/local/bin/notify
    - command: {hook}
mcp_servers:
  funes:
    command: /opt/funes/bin/funes
    args:
      - mcp
    env:
      FUNES_HOME: {fh}
  other:
    command: x
model:
  default: m
display:
  skin: default
"""


def test_entries_are_still_recognised_after_hermes_rewrote_the_file(ctx: InstallContext) -> None:
    """``hermes config set``/``hermes mcp add`` re-write config.yaml: no markers, block style."""
    path = config(ctx)
    hook = shlex.join(ctx.hook_argv(HOOK_MODULE))
    path.write_text(REWRITTEN_BY_HERMES.format(fh=ctx.funes_home, hook=hook))
    registrar, installer = HermesToolRegistrar(), HermesHookInstaller()
    assert registrar.status(ctx).state is WiringState.WIRED
    assert installer.status(ctx).state is WiringState.WIRED
    assert registrar.register(ctx).changed is False and installer.install(ctx).changed is False
    assert registrar.registered_command(ctx) == [*FUNES, "mcp"]
    assert registrar.unregister(ctx).changed and installer.uninstall(ctx).changed
    assert yaml.safe_load(path.read_text()) == {
        "hooks": {"on_session_end": [{"command": "/usr/local/bin/notify"}]},
        "mcp_servers": {"other": {"command": "x"}},
        "model": {"default": "m"},
        "display": {"skin": "default"},
    }


def test_a_rewritten_entry_for_another_funes_is_replaced(ctx: InstallContext) -> None:
    path = config(ctx)
    old_hook = "/old/funes hermes hook --funes-home /elsewhere"  # what funes-hermes 0.1 recorded
    path.write_text(
        REWRITTEN_BY_HERMES.format(fh="/elsewhere", hook=old_hook).replace(
            "/opt/funes/bin/funes", "/old/funes"
        )
    )
    assert HermesToolRegistrar().status(ctx).state is WiringState.OUTDATED
    both(ctx)
    data = yaml.safe_load(path.read_text())
    assert data["mcp_servers"]["funes"]["command"] == FUNES[0]
    assert [shlex.split(e["command"])[0] for e in data["hooks"]["on_session_end"]] == [
        sys.executable,
        "/usr/local/bin/notify",
    ], "the old hook is replaced (block lists get funes' entry first)"


@pytest.mark.parametrize(
    "original", ["mcp_servers: {}\nhooks: {}\n", "hooks: {on_session_end: [{command: a}]}\n"]
)
def test_refreshing_in_flow_style_then_removing_restores_the_bytes(
    ctx: InstallContext, original: str
) -> None:
    config(ctx).write_text(original)
    both(InstallContext(ctx.home, ctx.funes_home, ("/old/funes",), memory="m/x"))
    both(ctx)
    HermesToolRegistrar().unregister(ctx)
    HermesHookInstaller().uninstall(ctx)
    assert config(ctx).read_text() == original

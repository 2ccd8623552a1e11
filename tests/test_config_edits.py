"""Agent config edits (issue 13 item 6): exact restores, clear refusals, all or nothing.

Every first-party integration goes through the core's managed entries, so these cases are proved
on the real plugins: files that existed (even empty) come back byte for byte, a read-only file
or a dangling link is refused with the reason and nothing changes, and a multi-file install
refuses before it changes any file.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from funes_claude import ClaudeHookInstaller, ClaudeToolRegistrar
from funes_codex import CodexHookInstaller, CodexToolRegistrar
from funes_core import ConfigError, HookInstaller, InstallContext, ToolRegistrar
from funes_core.host.manager import load_plugins
from funes_core.wiring.integrations.common import UI, InstallError, Orchestrator
from funes_core.wiring.integrations.install import install
from funes_echo import EchoHookInstaller, EchoToolRegistrar
from funes_hermes import HermesHookInstaller, HermesToolRegistrar
from funes_pi import PiHookInstaller

Part = HookInstaller | ToolRegistrar


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> InstallContext:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no agent CLI: the file path is what is tested
    for var in ("CODEX_HOME", "HERMES_HOME", "PI_CODING_AGENT_DIR"):
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    return InstallContext(home=home, funes_home=tmp_path / "funes-home", funes_command=("/opt/funes",))


def _add(part: Part) -> Callable[[InstallContext], object]:
    return part.install if isinstance(part, HookInstaller) else part.register


def _remove(part: Part) -> Callable[[InstallContext], object]:
    return part.uninstall if isinstance(part, HookInstaller) else part.unregister


EMPTY_CASES = [
    (
        ClaudeHookInstaller,
        ".claude/settings.json",
        ["{}", "{}\n", '{"hooks":{"Stop":[]}}', '{"hooks": {}}\n', '{"hooks": {}, "a": 1}\n'],
    ),
    (CodexHookInstaller, ".codex/hooks.json", ["{}", '{\n  "hooks": {}\n}\n', '{"hooks":{"Stop":[]}}']),
    (ClaudeToolRegistrar, ".claude.json", ["{}", '{"mcpServers": {}}\n']),
    (EchoToolRegistrar, ".echo/mcp.json", ["{}", '{"mcpServers": {}}\n']),
    (CodexToolRegistrar, ".codex/config.toml", ["", "\n", "# only a comment\n"]),
    (HermesHookInstaller, ".hermes/config.yaml", ["", "{}\n", "hooks: {}\n", "hooks:\n"]),
    (HermesToolRegistrar, ".hermes/config.yaml", ["", "{}\n", "mcp_servers: {}\n"]),
    (PiHookInstaller, ".pi/agent/settings.json", ["{}", '{"packages": []}\n']),
]


@pytest.mark.parametrize(
    ("cls", "rel", "original"),
    [(cls, rel, text) for cls, rel, texts in EMPTY_CASES for text in texts],
    ids=lambda v: v if isinstance(v, str) else getattr(v, "__name__", None),
)
def test_a_file_that_existed_comes_back_byte_for_byte_even_empty(
    ctx: InstallContext, cls: type[Part], rel: str, original: str
) -> None:
    path = ctx.home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(original, encoding="utf-8")
    part = cls()
    _add(part)(ctx)
    assert path.read_text(encoding="utf-8") != original
    _remove(part)(ctx)
    assert path.exists(), "a file the user had is never deleted"
    assert path.read_text(encoding="utf-8") == original


READ_ONLY = [
    (ClaudeHookInstaller, ".claude/settings.json", '{"a": 1}\n'),
    (CodexToolRegistrar, ".codex/config.toml", "a = 1\n"),
    (HermesHookInstaller, ".hermes/config.yaml", "a: 1\n"),
    (EchoHookInstaller, ".echo/config.json", '{"a": 1}\n'),
    (PiHookInstaller, ".pi/agent/settings.json", '{"a": 1}\n'),
]


@pytest.mark.parametrize(("cls", "rel", "original"), READ_ONLY, ids=lambda v: getattr(v, "__name__", None))
def test_a_read_only_config_is_refused_saying_why(
    ctx: InstallContext, cls: type[Part], rel: str, original: str
) -> None:
    path = ctx.home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(original, encoding="utf-8")
    path.chmod(0o444)
    with pytest.raises(ConfigError, match=r"is read-only \(mode 0444\)") as err:
        _add(cls())(ctx)
    assert str(path) in str(err.value)
    assert path.read_text(encoding="utf-8") == original and (path.stat().st_mode & 0o777) == 0o444
    assert not (ctx.funes_home / "integrations" / f"{cls.id}.wiring.json").exists()


DANGLING = [
    (ClaudeHookInstaller, ".claude/settings.json"),
    (ClaudeToolRegistrar, ".claude.json"),
    (CodexToolRegistrar, ".codex/config.toml"),
    (HermesHookInstaller, ".hermes/config.yaml"),
    (EchoHookInstaller, ".echo/config.json"),
    (PiHookInstaller, ".pi/agent/settings.json"),
]


@pytest.mark.parametrize(("cls", "rel"), DANGLING, ids=lambda v: getattr(v, "__name__", None))
def test_a_dangling_symlink_is_refused_and_nothing_is_created(
    ctx: InstallContext, tmp_path: Path, cls: type[Part], rel: str
) -> None:
    link = ctx.home / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "dotfiles" / "missing" / "config"
    link.symlink_to(target)
    with pytest.raises(ConfigError, match=r"is a symbolic link to .*, which does not exist"):
        _add(cls())(ctx)
    assert link.is_symlink() and not target.parent.exists(), "no folder, no stub, the link untouched"
    assert cls().status(ctx).state.value == "broken"


def test_a_symlink_to_a_real_file_is_edited_through(ctx: InstallContext, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"theme": "dark"}\n')
    link = ctx.home / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    ClaudeHookInstaller().install(ctx)
    assert link.is_symlink() and "funes_claude.hook" in real.read_text()
    ClaudeHookInstaller().uninstall(ctx)
    assert real.read_text() == '{"theme": "dark"}\n'


def _orchestrator() -> tuple[Orchestrator, list[str]]:
    lines: list[str] = []
    ui = UI(out=lines.append, err=lines.append, is_terminal=lambda: False, confirm=lambda q: False)
    return Orchestrator(pm=load_plugins(stderr=io.StringIO()), ui=ui), lines


@pytest.fixture
def claude_state(ctx: InstallContext, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``~/.claude.json`` of ``ctx``'s HOME, as Claude Code left it, with this process in that HOME."""
    monkeypatch.setenv("HOME", str(ctx.home))
    monkeypatch.setenv("FUNES_HOME", str(ctx.funes_home))
    state = ctx.home / ".claude.json"
    state.write_text('{"numStartups": 3}\n')
    return state


def test_a_multi_file_install_changes_nothing_when_one_file_is_refused(
    ctx: InstallContext, claude_state: Path
) -> None:
    """Claude's registrar edits ~/.claude.json first; a malformed settings.json must stop it."""
    state = claude_state
    settings = ctx.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": ')
    orch, _ = _orchestrator()
    with pytest.raises(InstallError, match=r"settings\.json: is not valid JSON"):
        install(orch, "claude", installed_only=True, seed=False, index=False)
    assert state.read_text() == '{"numStartups": 3}\n', "nothing was changed before the refusal"
    assert settings.read_text() == '{"hooks": '


def test_a_part_failing_midway_puts_every_file_back(
    ctx: InstallContext, claude_state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = claude_state

    def boom(self: ClaudeHookInstaller, ctx: InstallContext) -> object:
        raise OSError("disk full")

    monkeypatch.setattr(ClaudeHookInstaller, "install", boom)
    orch, _ = _orchestrator()
    with pytest.raises(InstallError, match="disk full"):
        install(orch, "claude", installed_only=True, seed=False, index=False)
    assert state.read_text() == '{"numStartups": 3}\n', "the registrar's edit was undone"
    assert not (ctx.home / ".claude" / "settings.json").exists()
    assert not (ctx.funes_home / "integrations" / "claude.wiring.json").exists()

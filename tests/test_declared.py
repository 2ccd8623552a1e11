"""The wiring an agent declares, built by the core: the rules plugins no longer write themselves.

The behaviour every declared part shares (idempotence, exact removal, refusals) is the contract
kit's to check on each plugin; these tests pin the declarations' own rules: a location's preferred
sibling, an MCP entry that takes its command as one list, what makes a plugin file funes', and
whose a matcher group is when the user added a handler to funes' group.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from funes_core import (
    Agent,
    AgentHookInstaller,
    AgentToolRegistrar,
    ConfigError,
    Hooks,
    InstallContext,
    Location,
    McpServer,
    PluginFile,
    PluginFileInstaller,
    Slot,
    WiringState,
)

#: A made-up agent declaring each of the three (its plugin file's body is OpenCode's capture plugin:
#: any package resource holding ``{hook_argv}`` would do).
AGENT = Agent(
    "acme",
    "Acme",
    2,
    locations=(
        Location("home", ".acme", ("ACME_HOME",)),
        Location("config", "acme.json", (), "home", "", ("acme.jsonc",)),
    ),
    mcp=McpServer("config", {"command": Slot.MCP_ARGV, "on": True}, ("mcp",)),
    plugin_file=PluginFile("home", "funes_opencode:capture.js", "acme.hook"),
)


class AcmeRegistrar(AgentToolRegistrar, agent=AGENT):
    """The registrar under test."""


class AcmeInstaller(PluginFileInstaller, agent=AGENT):
    """The installer under test."""


@pytest.fixture
def ctx(tmp_path: Path) -> InstallContext:
    (tmp_path / "home" / ".acme").mkdir(parents=True)
    return InstallContext(tmp_path / "home", tmp_path / "fh", ("funes",))


def test_a_preferred_sibling_wins_only_when_it_exists_and_nothing_relocated_the_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert AGENT.locate("config", home, environ={}).path == home / ".acme" / "acme.json"
    (home / ".acme").mkdir(parents=True)
    (home / ".acme" / "acme.jsonc").write_text("{}")
    assert AGENT.locate("config", home, environ={}).path == home / ".acme" / "acme.jsonc"
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "acme.jsonc").write_text("{}")
    relocated = AGENT.locate("config", home, {"ACME_HOME": str(moved)}, environ={})
    assert relocated.path == moved / "acme.json", "a relocated place is taken as given"


def test_an_argv_entry_is_funes_when_its_list_runs_mcp(ctx: InstallContext) -> None:
    registrar = AcmeRegistrar()
    assert registrar.ours({"command": ["funes", "mcp", "team/m"]})
    assert not registrar.ours({"command": ["funes", "serve"]})
    assert not registrar.ours({"command": "funes", "args": ["mcp"]}), "the declared shape is a list"
    registrar.register(InstallContext(ctx.home, ctx.funes_home, ("funes",), memory="team/m"))
    written = json.loads((ctx.home / ".acme" / "acme.json").read_text())
    assert written == {"mcp": {"funes": {"command": ["funes", "mcp", "team/m"], "on": True}}}
    assert registrar.registered_command(ctx) == ["funes", "mcp", "team/m"]


def test_a_plugin_file_is_funes_by_its_first_line_only(ctx: InstallContext) -> None:
    installer = AcmeInstaller()
    path = ctx.home / ".acme" / "plugins" / "funes.js"
    installer.install(ctx)
    text = path.read_text()
    assert text.startswith("// funes-acme: captures each Acme turn into funes' memory.\n// created: [")
    assert json.dumps(ctx.hook_argv("acme.hook")) in text and "{hook_argv}" not in text
    assert installer.status(ctx).state is WiringState.WIRED
    path.write_text("// my own plugin\n" + text)
    assert installer.status(ctx).state is WiringState.BROKEN
    with pytest.raises(ConfigError, match="funes did not write it"):
        installer.install(ctx)
    with pytest.raises(ConfigError, match="not the plugin funes wrote"):
        installer.uninstall(ctx)
    assert path.read_text().startswith("// my own plugin"), "the user's file is left alone"


def test_removal_takes_away_the_folders_install_created(ctx: InstallContext) -> None:
    installer = AcmeInstaller()
    installer.install(ctx)
    assert (ctx.home / ".acme" / "plugins").is_dir()
    assert installer.uninstall(ctx).changed
    assert not (ctx.home / ".acme" / "plugins").exists()
    assert (ctx.home / ".acme").is_dir(), "a folder that was there stays"


def _grouped(per_handler: bool) -> type[AgentHookInstaller]:
    hooks = Hooks("config", {"type": "command", "command": Slot.HOOK}, ("Stop",), "acme.hook", grouped=True)
    agent = replace(AGENT, hooks=replace(hooks, per_handler=per_handler))

    class Installer(AgentHookInstaller, agent=agent):
        """A grouped hook installer, recognising funes' handlers one by one or whole groups only."""

    return Installer


@pytest.mark.parametrize("per_handler", [True, False])
def test_a_group_the_user_mixed_a_handler_into(ctx: InstallContext, per_handler: bool) -> None:
    installer = _grouped(per_handler)()
    path = ctx.home / ".acme" / "acme.json"
    installer.install(ctx)
    ours = json.loads(path.read_text())["hooks"]["Stop"][0]["hooks"][0]
    mixed = {"hooks": [ours, {"type": "command", "command": "notify-send done"}]}
    path.write_text(json.dumps({"hooks": {"Stop": [mixed]}}))
    wired = installer.status(ctx).state is WiringState.WIRED
    assert wired is per_handler, "one by one, funes' handler in the user's group counts as installed"
    installer.uninstall(ctx)
    left = json.loads(path.read_text())["hooks"]["Stop"]
    assert left == ([{"hooks": [mixed["hooks"][1]]}] if per_handler else [mixed])

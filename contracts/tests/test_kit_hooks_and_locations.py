"""The hook and location requirements catch a broken per-turn hook, and parts that ignore where the agent is.

Each broken part below is funes-codex's (or funes-claude's) with one plausible bug: a hook that
prints, picks the newest session, forgets ``--index``, waits for its worker, ignores the recorded
FUNES_HOME or crashes on an empty stdin; a converter or hook that ignores ``CODEX_HOME`` or
``CLAUDE_CONFIG_DIR``, or leaves out archived sessions. The suite runs in a fresh pytest (as
``funes integrations check`` runs it) and each must fail exactly the requirements listed, its own
among them; the unbroken plugins pass them all, and echo (whose agent runs funes itself) skips
the hook requirements with a capability as its reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

RunSuite = Callable[..., Any]

BROKEN = """
import sys
from pathlib import Path

import kit_mutants
from funes_claude import ClaudeConverter, ClaudeHookInstaller
from funes_codex import CodexConverter, CodexHookInstaller
from funes_contracts import ConverterContract, HookInstallerContract, PluginContract
from funes_echo import EchoConverter, EchoHookInstaller


class IgnoresCodexHome(kit_mutants.IgnoresCodexHome, CodexConverter):
    pass


class ForgetsArchived(kit_mutants.ForgetsArchived, CodexConverter):
    pass


class IgnoresClaudeConfigDir(ClaudeConverter):
    def session_roots(self, home):
        return [home / ".claude" / "projects"]


class TestIgnoresCodexHome(PluginContract):
    converter_cls = IgnoresCodexHome
    installer_cls = CodexHookInstaller


class TestForgetsArchived(ConverterContract):
    converter_cls = ForgetsArchived
    fixtures_dir = TestIgnoresCodexHome.fixtures_dir


class TestIgnoresClaudeConfigDir(PluginContract):
    converter_cls = IgnoresClaudeConfigDir
    installer_cls = ClaudeHookInstaller


def hook_case(module):
    def hook_argv(self, module_name, ctx):
        # Not installed, so not importable under -I: run from this folder, on PYTHONPATH.
        home = str(ctx.funes_home)
        return [sys.executable, "-m", module_name, "--funes-home", home, "--", *ctx.funes_command]

    return type(
        f"Test_{module}",
        (HookInstallerContract,),
        {
            "installer_cls": CodexHookInstaller,
            "converter_cls": CodexConverter,
            "hook_module": module,
            "hook_argv": hook_argv,
        },
    )


for _module in MODULES:
    globals()[f"Test_{_module}"] = hook_case(_module)


class TestCodex(PluginContract):
    converter_cls = CodexConverter
    installer_cls = CodexHookInstaller


class TestClaude(PluginContract):
    converter_cls = ClaudeConverter
    installer_cls = ClaudeHookInstaller


class TestEcho(PluginContract):
    converter_cls = EchoConverter
    installer_cls = EchoHookInstaller
"""

#: The new requirements each broken part must fail, and nothing else among them.
EXPECTED = {
    "Test_kitmut_prints": {"hook:quiet"},
    "Test_kitmut_newest": {"hook:event", "hook:spool", "hook:indexer", "location:hook"},
    "Test_kitmut_no_index": {"hook:indexer"},
    "Test_kitmut_waits": {"hook:indexer"},
    "Test_kitmut_env_home": {"hook:spool"},
    "Test_kitmut_strict_stdin": {"hook:quiet"},
    "Test_kitmut_locate_default": {"location:hook"},
    # Moved, its folder is not found: by discovery, and so by the hook's run in the moved HOME.
    "TestIgnoresCodexHome": {"location:env", "location:hook"},
    "TestForgetsArchived": {"location:every-session"},
    "TestIgnoresClaudeConfigDir": {"location:env", "location:hook"},
    "TestCodex": set(),
    "TestClaude": set(),
    "TestEcho": set(),
}
NEW_ROLES = ("hook:", "location:")


@pytest.mark.slow
def test_each_hook_or_location_bug_fails_its_requirements(
    tmp_path: Path, run_suite: RunSuite, hook_mutants: Callable[[Path], list[str]]
) -> None:
    source = f"MODULES = {hook_mutants(tmp_path)!r}\n" + BROKEN
    done, results = run_suite(
        tmp_path, source, "-k", "hook_ or location or every_session", pythonpath=tmp_path
    )
    failed: dict[str, set[str]] = {name: set() for name in EXPECTED}
    skipped: dict[str, dict[str, str]] = {}
    for result in results:
        cls = result["class"].split("::")[0]
        assert result["outcome"] != "error", result
        owner = next((n for n in EXPECTED if result["test"].startswith(n + "::")), cls)
        if result["requirement"].startswith(NEW_ROLES) and result["outcome"] == "failed":
            failed.setdefault(owner, set()).add(result["requirement"])
        if result["outcome"] == "skipped":
            skipped.setdefault(owner, {})[result["requirement"]] = result["reason"]
    assert failed == EXPECTED, done.stdout[-5000:]
    echo = skipped.get("TestEcho", {})
    for rid in ("hook:event", "hook:spool", "hook:indexer", "hook:quiet"):
        assert echo.get(rid, "").startswith(
            "capability hook-module: EchoHookInstaller installs no hook module"
        )
    assert echo.get("location:env", "").startswith("capability location-env")
    assert not skipped.get("TestCodex") and not skipped.get("TestClaude"), "nothing skipped for them"

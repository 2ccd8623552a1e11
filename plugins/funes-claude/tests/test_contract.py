"""funes-claude passes the whole funes plugin contract: the kit's classes, subclassed.

The registrar prefers the ``claude`` CLI when it is on PATH, and Claude Code then rewrites its
whole state file (``firstStartTime``, ``machineID``, backups), which no byte-for-byte check can
survive; so the registrar declares ``agent_cli = "claude"`` and the kit runs its contract with
``claude`` off PATH, against the file fallback.
The CLI path is proved end to end with the real Claude Code (``test_e2e.py``).
"""

from __future__ import annotations

from pathlib import Path

from funes_claude import ClaudeConverter, ClaudeHookInstaller, ClaudeToolRegistrar
from funes_contracts import ConverterContract, HookInstallerContract, ToolRegistrarContract

FIXTURES = Path(__file__).resolve().parents[1] / "funes_claude" / "contract_fixtures"


class TestClaudeConverter(ConverterContract):
    converter_cls = ClaudeConverter
    fixtures_dir = FIXTURES


class TestClaudeHookInstaller(HookInstallerContract):
    installer_cls = ClaudeHookInstaller
    config_home = FIXTURES / "config-home"


class TestClaudeToolRegistrar(ToolRegistrarContract):
    registrar_cls = ClaudeToolRegistrar
    config_home = FIXTURES / "config-home"

"""funes-codex passes the whole funes plugin contract: the kit's classes, subclassed."""

from __future__ import annotations

from pathlib import Path

from funes_codex import CodexConverter, CodexHookInstaller, CodexToolRegistrar
from funes_contracts import ConverterContract, HookInstallerContract, ToolRegistrarContract

FIXTURES = Path(__file__).resolve().parents[1] / "funes_codex" / "contract_fixtures"


class TestCodexConverter(ConverterContract):
    converter_cls = CodexConverter
    fixtures_dir = FIXTURES


class TestCodexHookInstaller(HookInstallerContract):
    installer_cls = CodexHookInstaller
    config_home = FIXTURES / "config-home"


class TestCodexToolRegistrar(ToolRegistrarContract):
    registrar_cls = CodexToolRegistrar
    config_home = FIXTURES / "config-home"

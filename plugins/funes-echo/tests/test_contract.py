"""funes-echo passes the whole funes plugin contract: the kit's classes, subclassed."""

from __future__ import annotations

from pathlib import Path

from funes_contracts import ConverterContract, HookInstallerContract, ToolRegistrarContract
from funes_echo import EchoConverter, EchoHookInstaller, EchoToolRegistrar

FIXTURES = Path(__file__).resolve().parents[1] / "funes_echo" / "contract_fixtures"


class TestEchoConverter(ConverterContract):
    converter_cls = EchoConverter
    fixtures_dir = FIXTURES


class TestEchoHookInstaller(HookInstallerContract):
    installer_cls = EchoHookInstaller
    config_home = FIXTURES / "config-home"


class TestEchoToolRegistrar(ToolRegistrarContract):
    registrar_cls = EchoToolRegistrar
    config_home = FIXTURES / "config-home"

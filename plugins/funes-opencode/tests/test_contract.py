"""funes-memory-opencode passes the funes plugin contract: the kit's classes, pointed at this plugin."""

from __future__ import annotations

from pathlib import Path

from funes_opencode import OpenCodeConverter, OpenCodeHookInstaller, OpenCodeToolRegistrar

from funes_contracts import PluginContract

FIXTURES = Path(__file__).resolve().parents[1] / "funes_opencode" / "contract_fixtures"


class TestOpenCode(PluginContract):
    converter_cls = OpenCodeConverter
    installer_cls = OpenCodeHookInstaller
    registrar_cls = OpenCodeToolRegistrar
    fixtures_dir = FIXTURES

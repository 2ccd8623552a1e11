"""funes-memory-copilot passes the funes plugin contract: the kit's classes, pointed at this plugin."""

from __future__ import annotations

from pathlib import Path

from funes_copilot import CopilotConverter, CopilotHookInstaller, CopilotToolRegistrar

from funes_contracts import PluginContract

FIXTURES = Path(__file__).resolve().parents[1] / "funes_copilot" / "contract_fixtures"


class TestCopilot(PluginContract):
    converter_cls = CopilotConverter
    installer_cls = CopilotHookInstaller
    registrar_cls = CopilotToolRegistrar
    fixtures_dir = FIXTURES

"""funes-memory-gemini passes the funes plugin contract: the kit's classes, pointed at this plugin."""

from __future__ import annotations

from pathlib import Path

from funes_gemini import GeminiConverter, GeminiHookInstaller, GeminiToolRegistrar

from funes_contracts import PluginContract

FIXTURES = Path(__file__).resolve().parents[1] / "funes_gemini" / "contract_fixtures"


class TestGemini(PluginContract):
    converter_cls = GeminiConverter
    installer_cls = GeminiHookInstaller
    registrar_cls = GeminiToolRegistrar
    fixtures_dir = FIXTURES

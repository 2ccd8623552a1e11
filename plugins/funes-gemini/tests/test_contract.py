"""funes-memory-gemini passes the funes plugin contract: the kit's classes, pointed at this plugin."""

from __future__ import annotations

from funes_contracts import PluginContract
from funes_gemini import GeminiConverter, GeminiHookInstaller, GeminiToolRegistrar


class TestGemini(PluginContract):
    converter_cls = GeminiConverter
    installer_cls = GeminiHookInstaller
    registrar_cls = GeminiToolRegistrar

"""funes-memory-codex passes the whole funes plugin contract: the kit's classes, pointed at this plugin."""

from __future__ import annotations

from funes_codex import CodexConverter, CodexHookInstaller, CodexToolRegistrar
from funes_contracts import PluginContract


class TestCodex(PluginContract):
    converter_cls = CodexConverter
    installer_cls = CodexHookInstaller
    registrar_cls = CodexToolRegistrar

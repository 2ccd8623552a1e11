"""funes-memory-copilot passes the funes plugin contract: the kit's classes, pointed at this plugin."""

from __future__ import annotations

from funes_contracts import PluginContract
from funes_copilot import CopilotConverter, CopilotHookInstaller, CopilotToolRegistrar


class TestCopilot(PluginContract):
    converter_cls = CopilotConverter
    installer_cls = CopilotHookInstaller
    registrar_cls = CopilotToolRegistrar

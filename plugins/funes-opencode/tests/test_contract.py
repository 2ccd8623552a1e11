"""funes-memory-opencode passes the funes plugin contract: the kit's classes, pointed at this plugin."""

from __future__ import annotations

from funes_contracts import PluginContract
from funes_opencode import OpenCodeConverter, OpenCodeHookInstaller, OpenCodeToolRegistrar


class TestOpenCode(PluginContract):
    converter_cls = OpenCodeConverter
    installer_cls = OpenCodeHookInstaller
    registrar_cls = OpenCodeToolRegistrar

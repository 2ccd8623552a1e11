"""funes-memory-openhands passes the funes plugin contract: the kit's classes, pointed at this plugin.

The fixtures are found through the converter's ``contract_fixtures`` package.
"""

from __future__ import annotations

from funes_contracts import PluginContract
from funes_openhands import OpenhandsConverter, OpenhandsToolRegistrar


class TestOpenhands(PluginContract):
    converter_cls = OpenhandsConverter
    registrar_cls = OpenhandsToolRegistrar

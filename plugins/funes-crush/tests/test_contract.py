"""funes-memory-crush passes the funes plugin contract: the kit's classes, pointed at this plugin."""

from __future__ import annotations

from funes_contracts import PluginContract
from funes_crush import CrushConverter, CrushToolRegistrar


class TestCrush(PluginContract):
    converter_cls = CrushConverter
    registrar_cls = CrushToolRegistrar

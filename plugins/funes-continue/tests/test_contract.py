"""funes-memory-continue passes the funes plugin contract: the kit's classes, pointed at this plugin."""

from __future__ import annotations

from funes_continue import ContinueConverter, ContinueToolRegistrar
from funes_contracts import PluginContract


class TestContinue(PluginContract):
    converter_cls = ContinueConverter
    registrar_cls = ContinueToolRegistrar

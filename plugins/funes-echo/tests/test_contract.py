"""funes-memory-echo passes the whole funes plugin contract: the kit's classes, pointed at this plugin."""

from __future__ import annotations

from funes_contracts import PluginContract
from funes_echo import EchoConverter, EchoHookInstaller, EchoToolRegistrar


class TestEcho(PluginContract):
    converter_cls = EchoConverter
    installer_cls = EchoHookInstaller
    registrar_cls = EchoToolRegistrar

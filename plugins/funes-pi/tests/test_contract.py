"""funes-memory-pi passes the whole funes plugin contract: the kit's classes, pointed at this plugin.

pi's sessions hold raw U+2028: the kit's variants come from ``funes_pi.contract_fixtures``.
"""

from __future__ import annotations

from funes_contracts import PluginContract
from funes_pi import PiConverter, PiHookInstaller, PiToolRegistrar


class TestPi(PluginContract):
    converter_cls = PiConverter
    installer_cls = PiHookInstaller
    registrar_cls = PiToolRegistrar

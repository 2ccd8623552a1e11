"""funes-memory-kilo passes the funes plugin contract: the kit's classes, pointed at this plugin.

The fixtures are found through the converter's ``contract_fixtures`` package.
"""

from __future__ import annotations

from funes_contracts import PluginContract
from funes_kilo import KiloConverter, KiloHookInstaller, KiloToolRegistrar


class TestKilo(PluginContract):
    converter_cls = KiloConverter
    installer_cls = KiloHookInstaller
    registrar_cls = KiloToolRegistrar

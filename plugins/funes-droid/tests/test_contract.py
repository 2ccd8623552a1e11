"""funes-memory-droid passes the funes plugin contract: the kit's classes, pointed at this plugin.

The fixtures are found through the converter's ``contract_fixtures`` package.
"""

from __future__ import annotations

from funes_contracts import PluginContract
from funes_droid import DroidConverter, DroidHookInstaller, DroidToolRegistrar


class TestDroid(PluginContract):
    converter_cls = DroidConverter
    installer_cls = DroidHookInstaller
    registrar_cls = DroidToolRegistrar

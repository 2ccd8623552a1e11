"""funes-memory-aider passes the funes plugin contract: the kit's classes, pointed at this plugin.

The fixtures are found through the converter's ``contract_fixtures`` package.
"""

from __future__ import annotations

from funes_aider import AiderConverter
from funes_contracts import PluginContract


class TestAider(PluginContract):
    converter_cls = AiderConverter

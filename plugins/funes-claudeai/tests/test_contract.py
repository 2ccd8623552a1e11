"""funes-memory-claudeai passes the funes plugin contract: the kit's classes, pointed at this plugin.

The fixtures are found through the converter's ``contract_fixtures`` package.
"""

from __future__ import annotations

from funes_claudeai import ClaudeaiConverter
from funes_contracts import PluginContract


class TestClaudeai(PluginContract):
    converter_cls = ClaudeaiConverter

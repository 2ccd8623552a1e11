"""funes-memory-hermes passes the whole funes plugin contract: the kit's classes, pointed at this plugin.

Hermes' transcripts are SQLite databases: the kit's variants (earlier, torn, corrupt, long) come
from the functions in ``funes_hermes.contract_fixtures``, which the kit finds by itself.
"""

from __future__ import annotations

import pytest

from funes_contracts import PluginContract
from funes_hermes import HermesConverter, HermesHookInstaller, HermesToolRegistrar


@pytest.fixture(autouse=True)
def _no_hermes_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own HERMES_HOME must play no part in these tests."""
    monkeypatch.delenv("HERMES_HOME", raising=False)


class TestHermes(PluginContract):
    converter_cls = HermesConverter
    installer_cls = HermesHookInstaller
    registrar_cls = HermesToolRegistrar

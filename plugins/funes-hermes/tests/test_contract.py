"""funes-hermes passes the whole funes plugin contract: the kit's classes, subclassed.

Hermes' transcripts are SQLite databases, not JSON lines, so the three variants the kit derives
from each case (the session as it was earlier, a torn last record, an unreadable record) are
made by :mod:`funes_hermes.fixtures`, in SQL on the copied ``state.db``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from funes_contracts import ConverterContract, HookInstallerContract, ToolRegistrarContract
from funes_hermes import HermesConverter, HermesHookInstaller, HermesToolRegistrar, fixtures

FIXTURES = Path(__file__).resolve().parents[1] / "funes_hermes" / "contract_fixtures"


@pytest.fixture(autouse=True)
def _no_hermes_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own HERMES_HOME must play no part in these tests."""
    monkeypatch.delenv("HERMES_HOME", raising=False)


class TestHermesConverter(ConverterContract):
    converter_cls = HermesConverter
    fixtures_dir = FIXTURES

    def make_earlier(self, folder: Path) -> bool:
        return fixtures.make_earlier(folder)

    def make_torn(self, folder: Path) -> bool:
        return fixtures.make_torn(folder)

    def make_corrupt(self, folder: Path) -> bool:
        return fixtures.make_corrupt(folder)


class TestHermesHookInstaller(HookInstallerContract):
    installer_cls = HermesHookInstaller
    config_home = FIXTURES / "config-home"


class TestHermesToolRegistrar(ToolRegistrarContract):
    registrar_cls = HermesToolRegistrar
    config_home = FIXTURES / "config-home"

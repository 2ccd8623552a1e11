"""pytest plugin entry point of funes-contracts: registers markers and ships every fixture."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requirement(id): the contract requirement a test checks")

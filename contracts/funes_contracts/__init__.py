"""funes-memory-contracts: the conformance suite that funes plugins (and funes' own stores) run.

Subclass the ``*Contract`` classes in your plugin's tests; every fixture they need ships with
this distribution through its pytest plugin (entry point ``pytest11``), so there is no conftest
to copy. Each test names the requirement it checks (``funes_contracts.requirements``), which is
what ``funes integrations check <id>`` reports on.
"""

from __future__ import annotations

from typing import Any

import pytest

from funes_contracts.converter import ConverterContract
from funes_contracts.requirements import REQUIREMENTS, Requirement
from funes_contracts.wiring import HookInstallerContract, ToolRegistrarContract, list_mcp_tools

CONTRACT_VERSION = 1

#: Mark a test with the requirement it checks: ``@requirement("converter:golden")``.
requirement = pytest.mark.requirement

__all__ = [
    "CONTRACT_VERSION",
    "REQUIREMENTS",
    "ConverterContract",
    "HookInstallerContract",
    "Requirement",
    "StoreContract",
    "ToolRegistrarContract",
    "list_mcp_tools",
    "requirement",
]


def __getattr__(name: str) -> Any:
    # StoreContract pulls in numpy and the embedder: import it only when asked for, so loading
    # this package (which pytest does for every run, through the pytest11 plugin) stays cheap.
    if name == "StoreContract":
        from funes_contracts.store import StoreContract

        return StoreContract
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

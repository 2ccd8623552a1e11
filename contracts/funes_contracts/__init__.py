"""funes-memory-contracts: the conformance suite that funes plugins (and funes' own stores) run.

Subclass the ``*Contract`` classes in your plugin's tests; every fixture they need ships with
this distribution through its pytest plugin (entry point ``pytest11``), so there is no conftest
to copy. Each test names the requirement it checks (``funes_contracts.requirements``), which is
what ``funes integrations check <id>`` reports on.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from funes_contracts.converter import ConverterContract
from funes_contracts.requirements import REQUIREMENTS, Requirement
from funes_contracts.wiring import HookInstallerContract, ToolRegistrarContract, list_mcp_tools
from funes_core import lazy_exports
from funes_core.host.api import CONTRACT_VERSION as _CORE_CONTRACT
from funes_core.host.api import Converter, HookInstaller, ToolRegistrar

# StoreContract pulls in numpy and the embedder: these load only when asked for (lazy_exports reads
# this block back), so loading this package, which pytest does for every run through the pytest11
# plugin, stays cheap.
if TYPE_CHECKING:
    from funes_contracts.models import EmbedderContract as EmbedderContract
    from funes_contracts.models import RerankerContract as RerankerContract
    from funes_contracts.store import StoreContract as StoreContract

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

CONTRACT_VERSION = _CORE_CONTRACT


class PluginContract:
    """The whole contract for one integration, in one class (like pandas' ``ExtensionTests``).

    Name the plugin's classes; the converter, hook-installer and tool-registrar contracts are
    generated as nested test classes (pytest collects those). ``fixtures_dir`` defaults to the
    folder of the converter's ``contract_fixtures`` package, ``config_home`` to its
    ``config-home``::

        class TestEcho(PluginContract):
            converter_cls = EchoConverter
            installer_cls = EchoHookInstaller
            registrar_cls = EchoToolRegistrar

    Leave out a role the integration does not have. Override one of the contract's methods (a
    mutator, say) by subclassing the matching contract yourself instead.
    """

    converter_cls: ClassVar[type[Converter] | None] = None
    installer_cls: ClassVar[type[HookInstaller] | None] = None
    registrar_cls: ClassVar[type[ToolRegistrar] | None] = None
    fixtures_dir: ClassVar[Path | None] = None
    config_home: ClassVar[Path | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.fixtures_dir is None and cls.converter_cls is not None:
            from funes_contracts.check import fixtures_of

            cls.fixtures_dir = fixtures_of(cls.converter_cls)
        fixtures = Path(cls.fixtures_dir) if cls.fixtures_dir is not None else None
        home = cls.config_home
        if home is None and fixtures is not None and (fixtures / "config-home").is_dir():
            home = fixtures / "config-home"
        if cls.converter_cls is not None:
            cls.TestConverter = type(  # type: ignore[attr-defined]
                "TestConverter",
                (ConverterContract,),
                {"converter_cls": cls.converter_cls, "fixtures_dir": fixtures, "__module__": cls.__module__},
            )
        if cls.installer_cls is not None:
            cls.TestHookInstaller = type(  # type: ignore[attr-defined]
                "TestHookInstaller",
                (HookInstallerContract,),
                {
                    "installer_cls": cls.installer_cls,
                    "config_home": home,
                    "converter_cls": cls.converter_cls,
                    "fixtures_dir": fixtures,
                    "__module__": cls.__module__,
                },
            )
        if cls.registrar_cls is not None:
            cls.TestToolRegistrar = type(  # type: ignore[attr-defined]
                "TestToolRegistrar",
                (ToolRegistrarContract,),
                {"registrar_cls": cls.registrar_cls, "config_home": home, "__module__": cls.__module__},
            )


#: Mark a test with the requirement it checks: ``@requirement("converter:golden")``.
requirement = pytest.mark.requirement

__all__ = [
    "CONTRACT_VERSION",
    "REQUIREMENTS",
    "ConverterContract",
    "EmbedderContract",
    "HookInstallerContract",
    "PluginContract",
    "Requirement",
    "RerankerContract",
    "StoreContract",
    "ToolRegistrarContract",
    "list_mcp_tools",
    "requirement",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)

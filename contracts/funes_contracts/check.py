"""Build contract test classes for an *installed* plugin (what ``funes integrations check`` runs).

The generated test module calls :func:`contract_classes` with an integration id; the classes
returned subclass the kit's contracts with the plugin's registered classes and, when the
converter names a ``contract_fixtures`` package, the sample sessions and config it ships.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from funes_contracts.converter import ConverterContract
from funes_contracts.wiring import HookInstallerContract, ToolRegistrarContract
from funes_core.host.api import Converter
from funes_core.host.manager import load_plugins

__all__ = ["contract_classes", "fixtures_of"]


def fixtures_of(converter: type[Converter] | None) -> Path | None:
    """The folder of the converter's ``contract_fixtures`` package, when it is a real folder."""
    if converter is None or not converter.contract_fixtures:
        return None
    try:
        root = resources.files(converter.contract_fixtures)
    except ModuleNotFoundError:
        return None
    return root if isinstance(root, Path) and root.is_dir() else None


def contract_classes(ident: str) -> dict[str, type]:
    """``{"TestConverter": …, "TestHookInstaller": …, "TestToolRegistrar": …}`` for one integration."""
    integ = load_plugins().integration(ident)
    if integ is None:
        raise LookupError(f"no installed plugin provides {ident!r}")
    fixtures = fixtures_of(integ.converter)
    config_home = fixtures / "config-home" if fixtures and (fixtures / "config-home").is_dir() else None
    out: dict[str, type] = {}
    if integ.converter is not None:
        out["TestConverter"] = type(
            "TestConverter",
            (ConverterContract,),
            {"converter_cls": integ.converter, "fixtures_dir": fixtures},
        )
    if integ.hook_installer is not None:
        out["TestHookInstaller"] = type(
            "TestHookInstaller",
            (HookInstallerContract,),
            {
                "installer_cls": integ.hook_installer,
                "config_home": config_home,
                "converter_cls": integ.converter,
                "fixtures_dir": fixtures,
            },
        )
    if integ.tool_registrar is not None:
        out["TestToolRegistrar"] = type(
            "TestToolRegistrar",
            (ToolRegistrarContract,),
            {"registrar_cls": integ.tool_registrar, "config_home": config_home},
        )
    return out

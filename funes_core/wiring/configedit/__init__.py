"""Editing agents' config files without touching any byte that is not ours.

:mod:`.managed` is what an integration builds on: :class:`ManagedEntry` declares one value funes
owns in one file, :class:`ManagedWiring` turns a list of them into a hook installer's or tool
registrar's install, remove and status. The formats are adapters over :mod:`.base`'s protocol:
:mod:`.json` (its own byte-exact editor), :mod:`.toml` (tomlkit checks every edit) and
:mod:`.yaml` (PyYAML locates and checks every edit).
"""

from __future__ import annotations

from funes_core.wiring.configedit.base import Adapter, Added, ConfigFile, EditError, Ledger, Place, shown_path
from funes_core.wiring.configedit.json import JsonFormat
from funes_core.wiring.configedit.managed import ManagedEntry, ManagedWiring, runs_module

__all__ = [
    "Adapter",
    "Added",
    "ConfigFile",
    "EditError",
    "JsonFormat",
    "Ledger",
    "ManagedEntry",
    "ManagedWiring",
    "Place",
    "runs_module",
    "shown_path",
]

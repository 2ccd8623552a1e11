"""funes-hermes: the funes integration for Hermes (hermes-agent).

A converter for Hermes' session database (``state.db``), a per-turn shell hook and the MCP
registration, both in Hermes' ``config.yaml``. See README.md. The public classes are imported
lazily: Hermes runs ``python -m funes_hermes.hook`` after every turn, which imports this package
first and must not pay for the converter and the wiring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import lazy_exports

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

# The public names, once, each ``as`` itself: type checkers read them, lazy_exports loads them on use.
if TYPE_CHECKING:
    from funes_hermes.converter import HermesConverter as HermesConverter
    from funes_hermes.wiring import HermesHookInstaller as HermesHookInstaller
    from funes_hermes.wiring import HermesToolRegistrar as HermesToolRegistrar

__getattr__, __dir__ = lazy_exports(__name__, __file__)

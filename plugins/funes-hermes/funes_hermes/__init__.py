"""funes-hermes: the funes integration for Hermes (hermes-agent).

A converter for Hermes' session database (``state.db``), a per-turn shell hook and the MCP
registration, both in Hermes' ``config.yaml``. See README.md.
"""

from __future__ import annotations

from funes_hermes.converter import HermesConverter
from funes_hermes.wiring import HermesHookInstaller, HermesToolRegistrar

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

__all__ = ["HermesConverter", "HermesHookInstaller", "HermesToolRegistrar"]

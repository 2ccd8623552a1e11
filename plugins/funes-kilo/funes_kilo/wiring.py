"""Wires funes into the Kilo Code CLI as the agent declares it: a capture plugin file, and ``mcp.funes``."""

from __future__ import annotations

from funes_core import AgentToolRegistrar, PluginFileInstaller
from funes_kilo.agent import AGENT

__all__ = ["KiloHookInstaller", "KiloToolRegistrar"]


class KiloHookInstaller(PluginFileInstaller, agent=AGENT):
    """Writes (and removes) the capture plugin ``funes.js`` in Kilo's plugin folder."""


class KiloToolRegistrar(AgentToolRegistrar, agent=AGENT):
    """Records ``mcp.funes = {"type": "local", "command": [..., "mcp"], "enabled": true}``."""

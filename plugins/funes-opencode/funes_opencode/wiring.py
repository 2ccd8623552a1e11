"""Wires funes into OpenCode as the agent declares it: a capture plugin file, and ``mcp.funes``."""

from __future__ import annotations

from funes_core import AgentToolRegistrar, PluginFileInstaller
from funes_opencode.agent import AGENT

__all__ = ["OpenCodeHookInstaller", "OpenCodeToolRegistrar"]


class OpenCodeHookInstaller(PluginFileInstaller, agent=AGENT):
    """Writes (and removes) the capture plugin ``funes.js`` in OpenCode's plugin folder."""


class OpenCodeToolRegistrar(AgentToolRegistrar, agent=AGENT):
    """Records ``mcp.funes = {"type": "local", "command": [..., "mcp"], "enabled": true}``."""

"""Wires funes into echo as the agent declares it: a hook in config.json, an MCP server in mcp.json."""

from __future__ import annotations

from funes_core import AgentHookInstaller, AgentToolRegistrar
from funes_echo.agent import ECHO

__all__ = ["EchoHookInstaller", "EchoToolRegistrar"]


class EchoHookInstaller(AgentHookInstaller, agent=ECHO):
    """Adds ``hooks.funes`` to ``~/.echo/config.json``: on every turn end, convert and index."""


class EchoToolRegistrar(AgentToolRegistrar, agent=ECHO):
    """Adds ``mcpServers.funes`` (``funes mcp [MEMORY]``) to ``~/.echo/mcp.json``."""

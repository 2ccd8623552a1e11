"""funes' MCP server in OpenHands' ``mcp.json``, as ``AGENT`` declares it.

The core builds it from the declaration: ``mcpServers.funes`` added with every other byte of the
user's file kept, and exactly that entry taken out again on removal.
"""

from __future__ import annotations

from funes_core import AgentToolRegistrar
from funes_openhands.agent import AGENT

__all__ = ["OpenhandsToolRegistrar"]


class OpenhandsToolRegistrar(AgentToolRegistrar, agent=AGENT):
    """Records ``mcpServers.funes`` = ``{"command", "args": [..., "mcp"], "env", "transport": "stdio"}``."""

"""funes' hooks (``settings.json``) and MCP server (``mcp-config.json``) in the Copilot CLI, as declared."""

from __future__ import annotations

from funes_copilot.agent import AGENT
from funes_core import AgentHookInstaller, AgentToolRegistrar

__all__ = ["CopilotHookInstaller", "CopilotToolRegistrar"]


class CopilotHookInstaller(AgentHookInstaller, agent=AGENT):
    """Appends funes' hook to ``hooks.agentStop`` and ``hooks.sessionEnd``."""


class CopilotToolRegistrar(AgentToolRegistrar, agent=AGENT):
    """Records ``mcpServers.funes`` = ``funes mcp [MEMORY]`` in ``mcp-config.json``."""

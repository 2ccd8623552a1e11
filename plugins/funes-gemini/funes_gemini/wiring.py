"""funes' hooks and MCP server in the Gemini CLI's ``settings.json``, as the agent declares them."""

from __future__ import annotations

from funes_core import AgentHookInstaller, AgentToolRegistrar
from funes_gemini.agent import AGENT

__all__ = ["GeminiHookInstaller", "GeminiToolRegistrar"]


class GeminiHookInstaller(AgentHookInstaller, agent=AGENT):
    """Appends funes' group to ``hooks.AfterAgent`` and ``hooks.SessionEnd``."""


class GeminiToolRegistrar(AgentToolRegistrar, agent=AGENT):
    """Records ``mcpServers.funes`` = ``funes mcp [MEMORY]``."""

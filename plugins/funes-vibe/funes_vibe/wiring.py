"""funes' MCP server in Mistral Vibe's ``config.toml``, as ``AGENT`` declares it.

The core builds it from the declaration: one ``[[mcp_servers]]`` item appended at the end of the
file after a marker comment, every other byte of the user's file left as it was, and exactly that
item taken out again on removal.
"""

from __future__ import annotations

from funes_core import AgentToolRegistrar
from funes_vibe.agent import AGENT

__all__ = ["VibeToolRegistrar"]


class VibeToolRegistrar(AgentToolRegistrar, agent=AGENT):
    """Appends ``[[mcp_servers]]`` ``name = "funes"``, ``transport = "stdio"``, ``command``, ``args``."""

"""funes' MCP server in Crush's global ``crush.json``, as the agent declares it."""

from __future__ import annotations

from funes_core import AgentToolRegistrar
from funes_crush.agent import AGENT

__all__ = ["CrushToolRegistrar"]


class CrushToolRegistrar(AgentToolRegistrar, agent=AGENT):
    """Records ``mcp.funes`` = ``{type: stdio, command, args, env: {FUNES_HOME}}``."""

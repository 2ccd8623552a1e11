"""funes' MCP server in the Continue CLI's ``config.yaml``, as the agent declares it."""

from __future__ import annotations

from funes_continue.agent import AGENT
from funes_core import AgentToolRegistrar

__all__ = ["ContinueToolRegistrar"]


class ContinueToolRegistrar(AgentToolRegistrar, agent=AGENT):
    """Adds ``{name: funes, command, args, env: {FUNES_HOME}}`` to ``mcpServers`` in config.yaml."""

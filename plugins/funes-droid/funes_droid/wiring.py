"""funes' hooks in Droid's ``settings.json`` and its MCP server in ``mcp.json``, as ``AGENT`` declares.

The core builds both from the declaration (byte-preserving edits, idempotence, exact removal,
status, refusing a malformed, read-only or dangling file, and the one rule for which entry is
funes'): every unrelated line of the user's files stays as it was.
"""

from __future__ import annotations

from funes_core import AgentHookInstaller, AgentToolRegistrar
from funes_droid.agent import AGENT

__all__ = ["DroidHookInstaller", "DroidToolRegistrar"]


class DroidHookInstaller(AgentHookInstaller, agent=AGENT):
    """Appends funes' group to ``hooks.Stop`` and ``hooks.SessionEnd`` in ``settings.json``."""


class DroidToolRegistrar(AgentToolRegistrar, agent=AGENT):
    """Records ``mcpServers.funes`` = ``{"type": "stdio", "command", "args": [..., "mcp"]}`` in mcp.json."""

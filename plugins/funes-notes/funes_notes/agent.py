"""Who funes-notes is: declared once, used by the converter (the only part it has)."""

from __future__ import annotations

from funes_core import Agent, Capabilities

__all__ = ["NOTES"]

#: Nothing to discover (notes are the folders named with ``--path``) and nothing to wire: no hook,
#: no MCP server (your notes are recalled through the other agents' funes tools).
NOTES = Agent(
    id="notes",
    label="Notes (Markdown and text files)",
    contract_version=2,  # the plugin contract this integration was written and checked for
    capabilities=Capabilities(discover=False, memory_binding=False),
)

"""Who funes-claudeai is: an importer of Claude.ai's data export, declared once, used by the converter.

Claude.ai keeps chats on Anthropic's servers, not on this machine: what funes reads is the
archive Settings → Privacy → Export data mails you, unpacked wherever you put it. So there is
nothing to discover under the HOME (``discover=False``: users register the export with
``--path``), nothing to wire (no hooks, no MCP client: ``memory_binding=False``) and no local
place to declare. Every time in the export carries its ``Z``, so nothing is local time.
"""

from __future__ import annotations

from funes_core import Agent, Capabilities

__all__ = ["AGENT", "EXPORT_NAME"]

#: The file of the export that holds the conversations (beside users.json and projects.json).
EXPORT_NAME = "conversations.json"

AGENT = Agent(
    id="claudeai",
    label="Claude.ai",
    contract_version=2,
    capabilities=Capabilities(discover=False, memory_binding=False, local_time=False),
    locations=(),
)

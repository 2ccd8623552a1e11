"""Who funes-chatgpt is: an importer of ChatGPT's data export, declared once, used by the converter.

ChatGPT keeps chats on OpenAI's servers, not on this machine: what funes reads is the archive
Settings → Data controls → Export data mails you, unpacked wherever you put it. So there is
nothing to discover under the HOME (``discover=False``: users register the export with
``--path``), nothing to wire (no hooks, no MCP client: ``memory_binding=False``), and no local
place to declare. Every time in the export is an epoch number, so nothing is local time.
"""

from __future__ import annotations

from funes_core import Agent, Capabilities

__all__ = ["AGENT", "EXPORT_NAME"]

#: The file of the export that holds the conversations (beside user.json, chat.html, …).
EXPORT_NAME = "conversations.json"

AGENT = Agent(
    id="chatgpt",
    label="ChatGPT",
    contract_version=2,
    capabilities=Capabilities(discover=False, memory_binding=False, local_time=False),
    locations=(),
)

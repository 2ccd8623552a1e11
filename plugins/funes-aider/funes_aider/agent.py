"""Who funes-aider is, and where aider keeps things: declared once, used by the converter.

aider keeps no folder of sessions: each repository holds its own ``.aider.chat.history.md`` (at
the git root, else where aider started), so there is nothing to discover under the HOME
(``discover=False``: users register the folders their repositories are in with ``--path``). Its
session headers carry the machine's local time without an offset (``local_time=True``). aider has
no hooks and no MCP client, so funes-aider is a converter only (``memory_binding=False``).
"""

from __future__ import annotations

from funes_core import Agent, Capabilities, Location

__all__ = ["AGENT", "HISTORY_NAME"]

#: The history file's name in every repository (aider's ``--chat-history-file`` default).
HISTORY_NAME = ".aider.chat.history.md"

AGENT = Agent(
    id="aider",
    label="aider",
    contract_version=2,
    capabilities=Capabilities(discover=False, memory_binding=False, local_time=True),
    locations=(
        Location("config", ".aider.conf.yml", holds="settings (chat-history-file, restore-chat-history)"),
        Location("state", ".aider", holds="caches and analytics (no transcripts)"),
    ),
)

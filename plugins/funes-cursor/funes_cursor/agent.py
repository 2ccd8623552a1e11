"""Who funes-cursor is: an importer of Cursor's chat store, declared once, used by the converter.

Cursor keeps its chats (the Chat/Composer/Agent panel) in a SQLite key-value store,
``User/globalStorage/state.vscdb`` under its settings folder (``~/.config/Cursor`` on Linux,
``~/Library/Application Support/Cursor`` on macOS, ``%APPDATA%\\Cursor`` on Windows). Cursor is a
desktop IDE with no CLI here to prove hooks or an MCP registration against, so funes only reads
that store, registered with ``--path`` (``discover=False``, ``memory_binding=False``). Its times
are epoch milliseconds, so nothing is local time.
"""

from __future__ import annotations

from funes_core import Agent, Capabilities

__all__ = ["AGENT", "STORE_NAME"]

#: The database file holding the chats (beside it Cursor keeps ``state.vscdb.backup``, not read).
STORE_NAME = "state.vscdb"

AGENT = Agent(
    id="cursor",
    label="Cursor",
    contract_version=2,
    capabilities=Capabilities(discover=False, memory_binding=False, local_time=False),
    locations=(),
)

"""funes-memory-claude passes the whole funes plugin contract: the kit's classes, pointed at this plugin.

The registrar prefers the ``claude`` CLI when it is on PATH, and Claude Code then rewrites its
whole state file, which no byte-for-byte check can survive; so the registrar declares
``agent_cli = "claude"`` and the kit runs its contract with ``claude`` off PATH, against the file
fallback. The CLI path is proved end to end with the real Claude Code (``test_e2e.py``).
"""

from __future__ import annotations

from funes_claude import ClaudeConverter, ClaudeHookInstaller, ClaudeToolRegistrar
from funes_contracts import PluginContract


class TestClaude(PluginContract):
    converter_cls = ClaudeConverter
    installer_cls = ClaudeHookInstaller
    registrar_cls = ClaudeToolRegistrar

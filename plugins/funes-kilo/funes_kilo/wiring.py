"""Wires funes into the Kilo Code CLI: a capture plugin file, and ``mcp.funes`` in ``kilo.json``.

Kilo keeps OpenCode's plugin system (every ``*.js`` of ``~/.config/kilo/plugins`` loaded at start,
the ``session.idle`` event at the end of each turn) and its ``mcp`` config block, so the wiring is
OpenCode's (:mod:`funes_opencode.wiring`) with Kilo's names: the plugin starts
``python -I -m funes_kilo.hook``, and the MCP server goes into ``$KILO_CONFIG``, else
``kilo.jsonc`` when it exists, else ``kilo.json``.
"""

from __future__ import annotations

from funes_kilo.agent import AGENT
from funes_opencode.wiring import OpenCodeHookInstaller, OpenCodeToolRegistrar

__all__ = ["HEADER", "HOOK_MODULE", "KiloHookInstaller", "KiloToolRegistrar"]

HOOK_MODULE = "funes_kilo.hook"
HEADER = "// funes-kilo: captures each Kilo Code CLI turn into funes' memory."


class KiloHookInstaller(OpenCodeHookInstaller, agent=AGENT):
    """Writes (and removes) the capture plugin ``funes.js`` in Kilo's plugin folder."""

    header = HEADER
    hook_module = HOOK_MODULE


class KiloToolRegistrar(OpenCodeToolRegistrar, agent=AGENT):
    """Records ``mcp.funes = {"type": "local", "command": [..., "mcp"], "enabled": true}``."""

    jsonc_name = "kilo.jsonc"

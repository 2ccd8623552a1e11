"""funes-memory-vibe: the funes integration for Mistral Vibe: a converter of its sessions and its MCP server.

The converter is imported lazily, so loading the plugin on every ``funes`` start stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import lazy_exports

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

# The public names, once, each ``as`` itself: type checkers read them, lazy_exports loads them on use.
if TYPE_CHECKING:
    from funes_vibe.converter import VibeConverter as VibeConverter
    from funes_vibe.wiring import VibeToolRegistrar as VibeToolRegistrar

__getattr__, __dir__ = lazy_exports(__name__, __file__)

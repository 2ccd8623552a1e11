"""funes-memory-openhands: the funes integration for OpenHands: its conversations and MCP server.

The converter is imported lazily, so loading the plugin on every ``funes`` start stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import lazy_exports

# The public names, written once: each is imported ``as`` itself for the type checkers, and
# lazy_exports reads these lines back to load a name only when it is asked for.
if TYPE_CHECKING:
    from funes_openhands.converter import OpenhandsConverter as OpenhandsConverter
    from funes_openhands.wiring import OpenhandsToolRegistrar as OpenhandsToolRegistrar

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

__getattr__, __dir__ = lazy_exports(__name__, __file__)

"""funes-memory-opencode: the funes integration for OpenCode (converter, per-turn hook, MCP registration).

The public classes are imported lazily: the agent runs ``python -m funes_opencode.hook`` after every
turn, which imports this package first, and that must not pay for the converter and the wiring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import lazy_exports

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

# The public names, once, each ``as`` itself: type checkers read them, lazy_exports loads them on use.
if TYPE_CHECKING:
    from funes_opencode.converter import OpenCodeConverter as OpenCodeConverter
    from funes_opencode.wiring import OpenCodeHookInstaller as OpenCodeHookInstaller
    from funes_opencode.wiring import OpenCodeToolRegistrar as OpenCodeToolRegistrar

__getattr__, __dir__ = lazy_exports(__name__, __file__)

"""funes integration for Claude Code: converter, per-turn hooks and MCP registration.

The names below are imported lazily: Claude Code runs ``python -m funes_claude.hook`` after
every turn, and that must not pay for the converter and the wiring it does not use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import lazy_exports

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

# The public names, once, each ``as`` itself: type checkers read them, lazy_exports loads them on use.
if TYPE_CHECKING:
    from funes_claude.converter import ClaudeConverter as ClaudeConverter
    from funes_claude.wiring import ClaudeHookInstaller as ClaudeHookInstaller
    from funes_claude.wiring import ClaudeToolRegistrar as ClaudeToolRegistrar

__getattr__, __dir__ = lazy_exports(__name__, __file__)

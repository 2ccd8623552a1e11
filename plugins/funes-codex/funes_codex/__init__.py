"""funes-codex: the funes integration for the Codex CLI (converter, hooks, MCP registration).

The public classes are imported lazily: the per-turn hook runs ``python -m funes_codex.hook``,
which imports this package first, and must not pay for the converter and the wiring on every
turn of every Codex session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import lazy_exports

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

# The public names, once, each ``as`` itself: type checkers read them, lazy_exports loads them on use.
if TYPE_CHECKING:
    from funes_codex.converter import CodexConverter as CodexConverter
    from funes_codex.wiring import CodexHookInstaller as CodexHookInstaller
    from funes_codex.wiring import CodexToolRegistrar as CodexToolRegistrar

__getattr__, __dir__ = lazy_exports(__name__, __file__)

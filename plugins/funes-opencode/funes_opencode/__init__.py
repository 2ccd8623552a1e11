"""funes-memory-opencode: the funes integration for OpenCode (converter, per-turn hook, MCP registration).

The public classes are imported lazily: the agent runs ``python -m funes_opencode.hook`` after every
turn, which imports this package first, and that must not pay for the converter and the wiring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

if TYPE_CHECKING:
    from funes_opencode.converter import OpenCodeConverter
    from funes_opencode.wiring import OpenCodeHookInstaller, OpenCodeToolRegistrar

__all__ = ["OpenCodeConverter", "OpenCodeHookInstaller", "OpenCodeToolRegistrar"]


def __getattr__(name: str) -> Any:
    if name == "OpenCodeConverter":
        from funes_opencode.converter import OpenCodeConverter

        return OpenCodeConverter
    if name in ("OpenCodeHookInstaller", "OpenCodeToolRegistrar"):
        from funes_opencode import wiring

        return getattr(wiring, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

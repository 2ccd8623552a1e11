"""funes-memory-continue: the funes integration for the Continue CLI (converter, MCP registration).

The public classes are imported lazily, so loading the plugin on every ``funes`` start stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

if TYPE_CHECKING:
    from funes_continue.converter import ContinueConverter
    from funes_continue.wiring import ContinueToolRegistrar

__all__ = ["ContinueConverter", "ContinueToolRegistrar"]


def __getattr__(name: str) -> Any:
    if name == "ContinueConverter":
        from funes_continue.converter import ContinueConverter

        return ContinueConverter
    if name == "ContinueToolRegistrar":
        from funes_continue.wiring import ContinueToolRegistrar

        return ContinueToolRegistrar
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

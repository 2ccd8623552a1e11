"""funes-memory-crush: the funes integration for Crush (converter, MCP registration).

The public classes are imported lazily, so loading the plugin on every ``funes`` start stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

if TYPE_CHECKING:
    from funes_crush.converter import CrushConverter
    from funes_crush.wiring import CrushToolRegistrar

__all__ = ["CrushConverter", "CrushToolRegistrar"]


def __getattr__(name: str) -> Any:
    if name == "CrushConverter":
        from funes_crush.converter import CrushConverter

        return CrushConverter
    if name == "CrushToolRegistrar":
        from funes_crush.wiring import CrushToolRegistrar

        return CrushToolRegistrar
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

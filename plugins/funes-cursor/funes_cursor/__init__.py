"""funes-memory-cursor: the funes integration for Cursor: a converter of its sessions (nothing to wire).

The converter is imported lazily, so loading the plugin on every ``funes`` start stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

if TYPE_CHECKING:
    from funes_cursor.converter import CursorConverter

__all__ = ["CursorConverter"]


def __getattr__(name: str) -> Any:
    if name == "CursorConverter":
        from funes_cursor.converter import CursorConverter

        return CursorConverter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

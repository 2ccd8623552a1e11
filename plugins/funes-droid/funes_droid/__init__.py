"""funes-memory-droid: the funes integration for Factory Droid (converter, per-turn hook, MCP registration).

The public classes are imported lazily: the agent runs ``python -m funes_droid.hook`` after every
turn, which imports this package first, and that must not pay for the converter and the wiring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

if TYPE_CHECKING:
    from funes_droid.converter import DroidConverter
    from funes_droid.wiring import DroidHookInstaller, DroidToolRegistrar

__all__ = ["DroidConverter", "DroidHookInstaller", "DroidToolRegistrar"]


def __getattr__(name: str) -> Any:
    if name == "DroidConverter":
        from funes_droid.converter import DroidConverter

        return DroidConverter
    if name in ("DroidHookInstaller", "DroidToolRegistrar"):
        from funes_droid import wiring

        return getattr(wiring, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

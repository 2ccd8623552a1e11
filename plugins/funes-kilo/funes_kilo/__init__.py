"""funes-memory-kilo: the funes integration for Kilo Code CLI (converter, per-turn hook, MCP registration).

The public classes are imported lazily: the agent runs ``python -m funes_kilo.hook`` after every
turn, which imports this package first, and that must not pay for the converter and the wiring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

if TYPE_CHECKING:
    from funes_kilo.converter import KiloConverter
    from funes_kilo.wiring import KiloHookInstaller, KiloToolRegistrar

__all__ = ["KiloConverter", "KiloHookInstaller", "KiloToolRegistrar"]


def __getattr__(name: str) -> Any:
    if name == "KiloConverter":
        from funes_kilo.converter import KiloConverter

        return KiloConverter
    if name in ("KiloHookInstaller", "KiloToolRegistrar"):
        from funes_kilo import wiring

        return getattr(wiring, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

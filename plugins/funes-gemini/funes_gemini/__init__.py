"""funes-memory-gemini: the funes integration for Gemini CLI (converter, per-turn hook, MCP registration).

The public classes are imported lazily: the agent runs ``python -m funes_gemini.hook`` after every
turn, which imports this package first, and that must not pay for the converter and the wiring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

if TYPE_CHECKING:
    from funes_gemini.converter import GeminiConverter
    from funes_gemini.wiring import GeminiHookInstaller, GeminiToolRegistrar

__all__ = ["GeminiConverter", "GeminiHookInstaller", "GeminiToolRegistrar"]


def __getattr__(name: str) -> Any:
    if name == "GeminiConverter":
        from funes_gemini.converter import GeminiConverter

        return GeminiConverter
    if name in ("GeminiHookInstaller", "GeminiToolRegistrar"):
        from funes_gemini import wiring

        return getattr(wiring, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

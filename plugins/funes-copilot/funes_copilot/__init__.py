"""funes-memory-copilot: the funes integration for the GitHub Copilot CLI (converter, hook, MCP).

The public classes are imported lazily: the agent runs ``python -m funes_copilot.hook`` after every
turn, which imports this package first, and that must not pay for the converter and the wiring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

if TYPE_CHECKING:
    from funes_copilot.converter import CopilotConverter
    from funes_copilot.wiring import CopilotHookInstaller, CopilotToolRegistrar

__all__ = ["CopilotConverter", "CopilotHookInstaller", "CopilotToolRegistrar"]


def __getattr__(name: str) -> Any:
    if name == "CopilotConverter":
        from funes_copilot.converter import CopilotConverter

        return CopilotConverter
    if name in ("CopilotHookInstaller", "CopilotToolRegistrar"):
        from funes_copilot import wiring

        return getattr(wiring, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

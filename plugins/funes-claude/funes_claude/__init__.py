"""funes integration for Claude Code: converter, per-turn hooks and MCP registration.

The names below are imported lazily: Claude Code runs ``python -m funes_claude.hook`` after
every turn, and that must not pay for the converter and the wiring it does not use.
"""

from __future__ import annotations

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the name)
if TYPE_CHECKING:
    from funes_claude.converter import ClaudeConverter
    from funes_claude.wiring import ClaudeHookInstaller, ClaudeToolRegistrar

__all__ = ["ClaudeConverter", "ClaudeHookInstaller", "ClaudeToolRegistrar"]


def __getattr__(name: str) -> object:
    if name == "ClaudeConverter":
        from funes_claude.converter import ClaudeConverter

        return ClaudeConverter
    if name in ("ClaudeHookInstaller", "ClaudeToolRegistrar"):
        from funes_claude import wiring

        return getattr(wiring, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

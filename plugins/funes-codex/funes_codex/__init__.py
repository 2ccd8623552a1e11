"""funes-codex: the funes integration for the Codex CLI (converter, hooks, MCP registration).

The public classes are imported lazily: the per-turn hook runs ``python -m funes_codex.hook``,
which imports this package first, and must not pay for ``funes_core`` (tens of milliseconds) on
every turn of every Codex session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

if TYPE_CHECKING:
    from funes_codex.converter import CodexConverter
    from funes_codex.wiring import CodexHookInstaller, CodexToolRegistrar

__all__ = ["CodexConverter", "CodexHookInstaller", "CodexToolRegistrar"]


def __getattr__(name: str) -> Any:
    if name == "CodexConverter":
        from funes_codex.converter import CodexConverter

        return CodexConverter
    if name in ("CodexHookInstaller", "CodexToolRegistrar"):
        from funes_codex import wiring

        return getattr(wiring, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

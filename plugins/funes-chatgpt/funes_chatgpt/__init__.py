"""funes-memory-chatgpt: the funes integration for ChatGPT: a converter of its sessions (nothing to wire).

The converter is imported lazily, so loading the plugin on every ``funes`` start stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

if TYPE_CHECKING:
    from funes_chatgpt.converter import ChatgptConverter

__all__ = ["ChatgptConverter"]


def __getattr__(name: str) -> Any:
    if name == "ChatgptConverter":
        from funes_chatgpt.converter import ChatgptConverter

        return ChatgptConverter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

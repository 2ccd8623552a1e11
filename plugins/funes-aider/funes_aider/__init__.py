"""funes-memory-aider: the funes integration for aider: a converter of its sessions (nothing to wire).

The converter is imported lazily, so loading the plugin on every ``funes`` start stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import lazy_exports

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

# The public names, once, each ``as`` itself: type checkers read them, lazy_exports loads them on use.
if TYPE_CHECKING:
    from funes_aider.converter import AiderConverter as AiderConverter

__getattr__, __dir__ = lazy_exports(__name__, __file__)

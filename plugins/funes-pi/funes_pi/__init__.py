"""funes-pi: the funes integration for pi (the coding agent ``@mariozechner/pi-coding-agent``).

It converts pi's session files into funes turns, and wires funes into pi through a small pi
extension (pi has no hooks and no MCP of its own): every turn is indexed in the background, and
funes' MCP tools are offered to the model as ``mcp__funes__recall`` and friends. See README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import lazy_exports

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

# The public names, once, each ``as`` itself: type checkers read them, lazy_exports loads them on use.
if TYPE_CHECKING:
    from funes_pi.converter import PiConverter as PiConverter
    from funes_pi.wiring import PiHookInstaller as PiHookInstaller
    from funes_pi.wiring import PiToolRegistrar as PiToolRegistrar

__getattr__, __dir__ = lazy_exports(__name__, __file__)

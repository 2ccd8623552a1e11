"""funes-pi: the funes integration for pi (the coding agent ``@mariozechner/pi-coding-agent``).

It converts pi's session files into funes turns, and wires funes into pi through a small pi
extension (pi has no hooks and no MCP of its own): every turn is indexed in the background, and
funes' MCP tools are offered to the model as ``mcp__funes__recall`` and friends. See README.md.
"""

from __future__ import annotations

from funes_pi.converter import PiConverter
from funes_pi.wiring import PiHookInstaller, PiToolRegistrar

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

__all__ = ["PiConverter", "PiHookInstaller", "PiToolRegistrar"]

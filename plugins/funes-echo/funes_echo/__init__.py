"""funes-echo: the reference funes integration, for a made-up agent called echo.

It is small on purpose: the worked example of the plugin tutorial (docs/plugins/tutorial.md)
and the fixture of funes' own plugin-host tests. See README.md for echo's file formats.
"""

from __future__ import annotations

from funes_echo.converter import EchoConverter
from funes_echo.wiring import EchoHookInstaller, EchoToolRegistrar

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

__all__ = ["EchoConverter", "EchoHookInstaller", "EchoToolRegistrar"]

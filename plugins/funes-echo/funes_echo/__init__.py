"""funes-echo: the reference funes integration, for a made-up agent called echo.

It is small on purpose: the worked example of the plugin tutorial (docs/plugins/tutorial.md)
and the fixture of funes' own plugin-host tests. See README.md for echo's file formats.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import lazy_exports

#: This distribution's version: the one place it is written (hatch reads it for the build).
__version__ = "0.1.0"

# The public names, once, each ``as`` itself: type checkers read them, lazy_exports loads them on use.
if TYPE_CHECKING:
    from funes_echo.converter import EchoConverter as EchoConverter
    from funes_echo.wiring import EchoHookInstaller as EchoHookInstaller
    from funes_echo.wiring import EchoToolRegistrar as EchoToolRegistrar

__getattr__, __dir__ = lazy_exports(__name__, __file__)

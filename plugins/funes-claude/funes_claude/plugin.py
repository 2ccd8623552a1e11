"""Hook implementations of funes-claude: what the ``funes`` entry point loads.

funes imports this module on every start, so it imports only the classes it registers (and
they import only ``funes_core``'s public API and the standard library).
"""

from __future__ import annotations

from collections.abc import Iterable

from funes_claude.converter import ClaudeConverter
from funes_claude.wiring import ClaudeHookInstaller, ClaudeToolRegistrar
from funes_core import Converter, HookInstaller, ToolRegistrar, hookimpl


@hookimpl
def funes_register_converters() -> Iterable[type[Converter]]:
    return [ClaudeConverter]


@hookimpl
def funes_register_hook_installers() -> Iterable[type[HookInstaller]]:
    return [ClaudeHookInstaller]


@hookimpl
def funes_register_tool_registrars() -> Iterable[type[ToolRegistrar]]:
    return [ClaudeToolRegistrar]

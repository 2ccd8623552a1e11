"""Hook implementations of funes-claude: what the ``funes`` entry point loads.

funes imports this module on every start, so it imports only the classes it registers (and
they import only ``funes_core``'s public API and the standard library).
"""

from __future__ import annotations

from funes_core import integration_hooks

#: The three registration hooks, from the part classes (imported when funes asks for them).
funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = integration_hooks(
    "funes_claude.converter:ClaudeConverter",
    "funes_claude.wiring:ClaudeHookInstaller",
    "funes_claude.wiring:ClaudeToolRegistrar",
)

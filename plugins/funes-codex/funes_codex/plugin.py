"""Hook implementations of funes-codex: what the ``funes`` entry point loads.

Loaded on every ``funes`` start, so it imports only the light parts; ``tomlkit`` and the wiring
are imported when funes asks for the classes.
"""

from __future__ import annotations

from funes_core import integration_hooks

#: The three registration hooks, from the part classes (imported when funes asks for them).
funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = integration_hooks(
    "funes_codex.converter:CodexConverter",
    "funes_codex.wiring:CodexHookInstaller",
    "funes_codex.wiring:CodexToolRegistrar",
)

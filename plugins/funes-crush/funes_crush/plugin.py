"""The hooks funes calls on this plugin (the ``funes`` entry point). Cheap to import: the part
classes are imported only when funes asks for them.

No hook installer: Crush's only hook event is ``PreToolUse`` (before a tool runs), nothing after
a turn, so new sessions come in with ``funes index`` once the project folders are registered
with ``--path``.
"""

from __future__ import annotations

from funes_core import integration_hooks

funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = integration_hooks(
    "funes_crush.converter:CrushConverter",
    "funes_crush.wiring:CrushToolRegistrar",
)

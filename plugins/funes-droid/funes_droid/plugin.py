"""The hooks funes calls on this plugin (the ``funes`` entry point). Cheap to import: the part
classes are imported only when funes asks for them."""

from __future__ import annotations

from funes_core import integration_hooks

funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = integration_hooks(
    "funes_droid.converter:DroidConverter",
    "funes_droid.wiring:DroidHookInstaller",
    "funes_droid.wiring:DroidToolRegistrar",
)

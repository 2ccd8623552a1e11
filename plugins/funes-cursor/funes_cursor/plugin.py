"""The hooks funes calls on this plugin (the ``funes`` entry point). Cheap to import: the part
classes are imported only when funes asks for them."""

from __future__ import annotations

from funes_core import integration_hooks

# A converter only: Cursor is a desktop IDE with no CLI on this machine to prove wiring against, so
# nothing is written into its config (no hook installer, no tool registrar) and `funes integrations
# remove` has nothing to undo. Its chat store is read by every `funes index` from the --path given.
funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = integration_hooks(
    "funes_cursor.converter:CursorConverter",
)

"""The hooks funes calls on this plugin (the ``funes`` entry point). Cheap to import: the part
classes are imported only when funes asks for them."""

from __future__ import annotations

from funes_core import integration_hooks

# A converter only: Mistral Vibe has no hooks and no MCP client, so nothing is written into its config
# (no hook installer, no tool registrar is registered) and `funes integrations remove` has nothing
# to undo. New sessions are read by every `funes index` from the paths registered with --path.
funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = integration_hooks(
    "funes_vibe.converter:VibeConverter",
)

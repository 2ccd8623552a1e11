"""The hooks funes calls on this plugin (the ``funes`` entry point). Cheap to import: the part
classes are imported only when funes asks for them."""

from __future__ import annotations

from funes_core import integration_hooks

# A converter and a tool registrar (funes' MCP server in mcp.json). No hook installer: OpenHands has
# no per-turn hook funes can use, so new conversations are read by every `funes index`.
funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = integration_hooks(
    "funes_openhands.converter:OpenhandsConverter",
    "funes_openhands.wiring:OpenhandsToolRegistrar",
)

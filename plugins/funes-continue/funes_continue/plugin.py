"""The hooks funes calls on this plugin (the ``funes`` entry point). Cheap to import: the part
classes are imported only when funes asks for them.

No hook installer: the Continue CLI 1.5.47 reads Claude-style hooks from ``settings.json`` but
never fires them (see the README), so new sessions come in with ``funes index`` (the sessions
folder registered with ``--path``) or another ``funes integrations install continue``.
"""

from __future__ import annotations

from funes_core import integration_hooks

funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = integration_hooks(
    "funes_continue.converter:ContinueConverter",
    "funes_continue.wiring:ContinueToolRegistrar",
)

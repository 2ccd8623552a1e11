"""Hook implementations of funes-pi: what the ``funes`` entry point loads on every start.

Keep it cheap to import: the classes import only ``funes_core``'s public API. (funes-pi adds no
command: the extension runs ``funes integrations convert pi``, and ``funes integrations
sessions pi`` lists pi's sessions.)
"""

from __future__ import annotations

from funes_core import integration_hooks

#: The three registration hooks, from the part classes (imported when funes asks for them).
funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = integration_hooks(
    "funes_pi.converter:PiConverter",
    "funes_pi.wiring:PiHookInstaller",
    "funes_pi.wiring:PiToolRegistrar",
)

"""One line of hook implementations for an integration's parts.

Every plugin's ``plugin.py`` used to spell out the same three hook implementations, one per role.
:func:`integration_hooks` makes them from the part classes (or ``"module:Class"`` strings, imported
only when funes asks for the parts, so loading the plugin stays cheap)::

    funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = (
        integration_hooks("funes_acme.converter:AcmeConverter", "funes_acme.wiring:AcmeHookInstaller",
                          "funes_acme.wiring:AcmeToolRegistrar")
    )

pluggy finds hook implementations by attribute name, which is why the three names are assigned
in the plugin module itself. A part that fits no role is refused by the plugin manager, as a
hand-written hook returning it would be.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

from funes_core.host.api import Converter, HookInstaller, IntegrationPart, ToolRegistrar
from funes_core.host.hookspecs import hookimpl

__all__ = ["integration_hooks"]

Hook = Callable[[], Iterable[type[IntegrationPart]]]


def _load(spec: type[IntegrationPart] | str) -> type[IntegrationPart]:
    if not isinstance(spec, str):
        return spec
    module, _, name = spec.partition(":")
    loaded: type[IntegrationPart] = getattr(importlib.import_module(module), name)
    return loaded


def integration_hooks(*parts: type[IntegrationPart] | str) -> tuple[Hook, Hook, Hook]:
    """The ``funes_register_converters/hook_installers/tool_registrars`` implementations for ``parts``."""
    cache: list[type[IntegrationPart]] = []

    def of(base: type[IntegrationPart]) -> list[type[IntegrationPart]]:
        if not cache:
            cache.extend(_load(part) for part in parts)
        return [cls for cls in cache if issubclass(cls, base)]

    def funes_register_converters() -> Iterable[type[IntegrationPart]]:
        return of(Converter)

    def funes_register_hook_installers() -> Iterable[type[IntegrationPart]]:
        return of(HookInstaller)

    def funes_register_tool_registrars() -> Iterable[type[IntegrationPart]]:
        return of(ToolRegistrar)

    return (
        hookimpl(funes_register_converters),
        hookimpl(funes_register_hook_installers),
        hookimpl(funes_register_tool_registrars),
    )

"""Hook implementations of funes-hermes: what the ``funes`` entry point loads.

Kept cheap to import (funes loads it on every start): the classes it registers need only the
standard library until they edit a config, and the command imports its module when it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes_core import hookimpl, integration_hooks

if TYPE_CHECKING:
    import typer

#: The three registration hooks, from the part classes (imported when funes asks for them).
funes_register_converters, funes_register_hook_installers, funes_register_tool_registrars = integration_hooks(
    "funes_hermes.converter:HermesConverter",
    "funes_hermes.wiring:HermesHookInstaller",
    "funes_hermes.wiring:HermesToolRegistrar",
)


@hookimpl
def funes_register_commands(app: typer.Typer) -> None:
    from funes_hermes.cli import app as hermes_app

    app.add_typer(hermes_app)

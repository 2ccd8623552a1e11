"""Hook implementations of funes-hermes: what the ``funes`` entry point loads.

Kept cheap to import (funes loads it on every start): the classes it registers need only the
standard library until they edit a config, and the command imports its module when it runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from funes_core import Converter, HookInstaller, ToolRegistrar, hookimpl
from funes_hermes.converter import HermesConverter
from funes_hermes.wiring import HermesHookInstaller, HermesToolRegistrar

if TYPE_CHECKING:
    import typer


@hookimpl
def funes_register_converters() -> Iterable[type[Converter]]:
    return [HermesConverter]


@hookimpl
def funes_register_hook_installers() -> Iterable[type[HookInstaller]]:
    return [HermesHookInstaller]


@hookimpl
def funes_register_tool_registrars() -> Iterable[type[ToolRegistrar]]:
    return [HermesToolRegistrar]


@hookimpl
def funes_register_commands(app: typer.Typer) -> None:
    from funes_hermes.cli import app as hermes_app

    app.add_typer(hermes_app)

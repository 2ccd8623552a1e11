"""Hook implementations of funes-echo: what the ``funes`` entry point loads.

Keep this module cheap to import: funes loads it on every start. The classes it registers
import only ``funes_core``'s public API; the command's imports happen when it runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from funes_core import Converter, HookInstaller, ToolRegistrar, hookimpl
from funes_echo.converter import EchoConverter
from funes_echo.wiring import EchoHookInstaller, EchoToolRegistrar

if TYPE_CHECKING:
    import typer


@hookimpl
def funes_register_converters() -> Iterable[type[Converter]]:
    return [EchoConverter]


@hookimpl
def funes_register_hook_installers() -> Iterable[type[HookInstaller]]:
    return [EchoHookInstaller]


@hookimpl
def funes_register_tool_registrars() -> Iterable[type[ToolRegistrar]]:
    return [EchoToolRegistrar]


@hookimpl
def funes_register_commands(app: typer.Typer) -> None:
    import typer

    echo_app = typer.Typer(
        name="echo", help="Commands of the echo integration (funes-echo).", no_args_is_help=True
    )

    @echo_app.command("sessions")
    def sessions() -> None:
        """List echo's sessions on this machine, newest first."""
        from funes_core import InstallContext

        home = InstallContext.from_environment().home
        refs = EchoConverter().discover(home)
        if not refs:
            typer.echo(f"no echo sessions under {home / '.echo' / 'sessions'}")
        for ref in refs:
            typer.echo(f"{ref.session_id}\t{ref.path}")

    app.add_typer(echo_app)

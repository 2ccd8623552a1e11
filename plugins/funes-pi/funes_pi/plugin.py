"""Hook implementations of funes-pi: what the ``funes`` entry point loads on every start.

Keep it cheap to import: the classes import only ``funes_core``'s public API (typer is already
loaded by funes' own CLI), and the ``pi`` commands import their helpers when they run.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer

from funes_core import Converter, HookInstaller, ToolRegistrar, hookimpl
from funes_pi.converter import PiConverter
from funes_pi.wiring import PiHookInstaller, PiToolRegistrar


@hookimpl
def funes_register_converters() -> Iterable[type[Converter]]:
    return [PiConverter]


@hookimpl
def funes_register_hook_installers() -> Iterable[type[HookInstaller]]:
    return [PiHookInstaller]


@hookimpl
def funes_register_tool_registrars() -> Iterable[type[ToolRegistrar]]:
    return [PiToolRegistrar]


@hookimpl
def funes_register_commands(app: typer.Typer) -> None:
    pi_app = typer.Typer(name="pi", help="Commands of the pi integration (funes-pi).", no_args_is_help=True)

    @pi_app.command("hook")
    def hook(
        session_file: Annotated[Path, typer.Argument(help="The pi session file (.jsonl) that just grew.")],
        index: Annotated[
            bool, typer.Option("--index/--no-index", help="Start `funes index --harness pi` afterwards.")
        ] = True,
    ) -> None:
        """Convert one pi session into the spool and index it (run by the pi extension)."""
        from funes_pi.hook import run_hook

        raise typer.Exit(run_hook(session_file, index=index))

    @pi_app.command("sessions")
    def sessions() -> None:
        """List pi's sessions on this machine, newest first."""
        from funes_core import InstallContext

        home = InstallContext.from_environment().home
        refs = PiConverter().discover(home)
        if not refs:
            typer.echo("no pi sessions found")
        for ref in refs:
            typer.echo(f"{ref.session_id}\t{ref.path}")

    app.add_typer(pi_app)

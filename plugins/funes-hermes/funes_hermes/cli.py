"""``funes hermes …``: the commands funes-hermes adds to the funes CLI.

Imported only while funes builds its CLI (``funes_register_commands``), never by the classes the
plugin registers, so loading the plugin stays cheap.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from funes_core import InstallContext

__all__ = ["app"]

app = typer.Typer(
    name="hermes", help="Commands of the Hermes integration (funes-hermes).", no_args_is_help=True
)


@app.command("hook")
def hook(
    funes_home: Annotated[
        Path | None,
        typer.Option("--funes-home", help="The FUNES_HOME to spool into (default: this environment's)."),
    ] = None,
) -> None:
    """Run by Hermes after each turn: convert the session named on stdin, index in the background.

    Always exits 0, so a memory problem never disturbs Hermes; problems are written to
    $FUNES_HOME/logs/hermes-hook.log.
    """
    from funes_hermes.hook import run

    home = funes_home or InstallContext.from_environment().funes_home
    raise typer.Exit(run(sys.stdin.buffer.read(), home.expanduser().absolute(), os.environ))


@app.command("sessions")
def sessions() -> None:
    """List Hermes' sessions on this machine, newest first."""
    from funes_hermes.converter import HermesConverter

    home = InstallContext.from_environment().home
    converter = HermesConverter()
    refs = converter.discover(home)
    if not refs:
        typer.echo(f"no Hermes sessions in {converter.session_roots(home)[0]}")
    for ref in refs:
        typer.echo(f"{ref.session_id}\t{ref.path}")

"""``funes hermes hook``: what configs written by funes-hermes 0.1 run after each turn (kept working).

Newer installs record ``python -I -m funes_hermes.hook`` (faster: no funes start-up); this command
does the same through the core's hook runtime, so a Hermes config that was not refreshed yet (its
status says ``outdated``) still indexes every turn. Imported only while funes builds its CLI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["app"]

app = typer.Typer(
    name="hermes", help="Commands of the Hermes integration (funes-memory-hermes).", no_args_is_help=True
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
    from funes_core import InstallContext, run_hook
    from funes_hermes.hook import locate

    home = ["--funes-home", str(funes_home)] if funes_home else []
    this_funes = InstallContext.from_environment().funes_command  # the funes Hermes just started
    raise typer.Exit(run_hook("hermes", locate, [*home, "--", *this_funes]))

"""``funes status``: a memory health report (text, or ``--json`` for scripts).

The report is :mod:`funes_core.read.status`'s (the MCP ``status`` tool prints the same); this
command exists apart from the other read verbs because its exit status says whether a memory the
user named exists.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from funes_core.read.status import STATUS_HELP

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    @app.command("status", help=STATUS_HELP)
    def status(
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
        memory: Annotated[
            str | None,
            typer.Option(
                "--memory",
                "-m",
                help="Memory to report on: 'local' (default), a remote's name, or a memory folder.",
            ),
        ] = None,
    ) -> None:
        from funes_core.home import HomeError
        from funes_core.read.status import collect_status
        from funes_core.share.memory import UnknownMemoryError
        from funes_core.share.remotes import RemoteConfigError

        try:
            report = collect_status(memory)
        except (HomeError, UnknownMemoryError, RemoteConfigError) as exc:
            typer.echo(f"funes: {exc}", err=True)
            raise typer.Exit(1) from None
        if as_json:
            typer.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
        else:
            typer.echo(report.render(), nl=False)
        # A memory the user named that does not exist is an error; the default one is just empty.
        raise typer.Exit(0 if report.exists or report.is_default else 1)

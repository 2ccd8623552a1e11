"""``funes status``: a memory health report (text, or ``--json`` for scripts)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

__all__ = ["register"]

STATUS_HELP = """\
Report on a memory: model, chunks, sessions, agents, embeddings still owed, spool files waiting
to be indexed, files refused by the indexer, when it was last written and its size on disk.
"""


def register(app: typer.Typer) -> None:
    @app.command("status", help=STATUS_HELP)
    def status(
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
        memory: Annotated[
            str | None,
            typer.Option(
                "--memory", "-m", help="Memory to report on: 'local' (default), or a memory folder."
            ),
        ] = None,
    ) -> None:
        from funes_core.home import HomeError
        from funes_core.read.status import collect_status

        try:
            report = collect_status(memory)
        except HomeError as exc:
            typer.echo(f"funes: {exc}", err=True)
            raise typer.Exit(1) from None
        if as_json:
            typer.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
        else:
            typer.echo(report.render(), nl=False)
        # A memory the user named that does not exist is an error; the default one is just empty.
        raise typer.Exit(0 if report.exists or report.is_default else 1)

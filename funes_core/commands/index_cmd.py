"""``funes index``: validate turns files and store them in the memory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from funes_core.sources import CheckReport, PreparedFile, format_counts
from funes_core.turns import TurnsFormatError

__all__ = ["register"]

INDEX_HELP = """\
Validate turns files and store them in the memory.

PATH is a .funes.jsonl file or a folder searched recursively. With --check nothing is written:
each file is validated whole and chunked, and a report says what indexing would store.
"""


def _check(path: Path) -> int:
    def show(item: PreparedFile | TurnsFormatError) -> None:
        if isinstance(item, TurnsFormatError):
            typer.echo(str(item))
            return
        typer.echo(f"ok {item.path}: {len(item.parsed.turns)} turns, {len(item.chunks)} chunks")
        for note in item.parsed.warnings:
            typer.echo(f"warning: {note}", err=True)

    from funes_core.sources import default_redactor

    report = CheckReport.run(path, redactor=default_redactor(), on_file=show)
    redactions = report.redactions
    red = f"{sum(redactions.values())} redactions"
    if redactions:
        red += f" ({format_counts(redactions)})"
    typer.echo(
        f"checked {len(report.ok) + len(report.rejected)} files: {len(report.ok)} ok, "
        f"{len(report.rejected)} rejected; {report.turns} turns, {report.chunks} chunks, "
        f"{report.duplicate_ids} duplicate ids, {red}"
    )
    return 1 if report.rejected else 0


def register(app: typer.Typer) -> None:
    @app.command("index", help=INDEX_HELP)
    def index(
        path: Annotated[Path | None, typer.Argument(help="A .funes.jsonl file or a folder of them.")] = None,
        check: Annotated[
            bool, typer.Option("--check", help="Validate and count only; write nothing.")
        ] = False,
    ) -> None:
        if path is None or not check:
            raise typer.BadParameter("only --check PATH is available in this build", param_hint="PATH")
        if not path.exists():
            typer.echo(f"funes: no such file or folder: {path}", err=True)
            raise typer.Exit(1)
        raise typer.Exit(_check(path))

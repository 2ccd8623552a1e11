"""``funes stats``: the local usage figures funes keeps under ``$FUNES_HOME/stats`` (numbers only)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

__all__ = ["STATS_HELP", "register"]

STATS_HELP = """\
Local usage figures: recalls by interface (CLI, MCP, ask), latency p50/p95, hits returned,
budget used, triggers fired, index runs and their throughput.

Kept in $FUNES_HOME/stats/ and never sent anywhere. Only numbers are recorded, never the text of a
query, unless you turn that on with --queries on (--queries off also removes the queries already
kept). The log is bounded (about 1 MiB) and rotated. --record off stops recording altogether (so
does FUNES_STATS=off in the environment); --reset deletes the figures.

A file that cannot be read is moved aside (<name>.corrupt-<time>) and started afresh; the command
then says so and exits 1.
"""


class Switch(StrEnum):
    ON = "on"
    OFF = "off"


def register(app: typer.Typer) -> None:
    @app.command("stats", help=STATS_HELP)
    def stats_cmd(
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
        reset: Annotated[bool, typer.Option("--reset", help="Delete the recorded figures.")] = False,
        record: Annotated[
            Switch | None, typer.Option("--record", help="Turn recording on or off.", case_sensitive=False)
        ] = None,
        queries: Annotated[
            Switch | None,
            typer.Option(
                "--queries", help="Keep the text of recall queries (off by default).", case_sensitive=False
            ),
        ] = None,
    ) -> None:
        from dataclasses import replace

        from funes_core import telemetry
        from funes_core.home import Home, HomeError

        try:
            folder = telemetry.stats_dir(Home.resolve().root)
        except HomeError as exc:
            typer.echo(f"funes: {exc}", err=True)
            raise typer.Exit(1) from None
        try:
            events, settings = telemetry.load(folder)
        except telemetry.StatsCorruptError as exc:
            typer.echo(f"funes: {exc}", err=True)
            raise typer.Exit(1) from None
        if reset:
            telemetry.reset(folder)
            typer.echo(f"stats reset: deleted the recorded figures in {folder}")
            events = []
        if record is not None or queries is not None:
            new = settings
            if record is not None:
                new = replace(new, record=record is Switch.ON)
            if queries is not None:
                new = replace(new, queries=queries is Switch.ON)
            telemetry.write_settings(folder, new)
            if settings.queries and not new.queries:
                removed = telemetry.forget_queries(folder)
                typer.echo(f"query recording off: removed {removed} recorded queries")
                events, _ = telemetry.load(folder)
            settings = new
        summary = telemetry.summarise(events, settings)
        if as_json:
            typer.echo(telemetry.summary_json(summary, folder), nl=False)
        else:
            typer.echo(telemetry.render(summary, folder), nl=False)

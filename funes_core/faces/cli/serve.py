"""``funes serve``: run, start, stop or ask after the memory service of this ``$FUNES_HOME``.

The service itself is :mod:`funes_core.serve.service`; this module is its command line. Agents'
``funes mcp`` fronts start the service on demand, so running it by hand is only needed to keep it
warm for CLI reads, or to watch it in the foreground.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

__all__ = ["register"]

SERVE_HELP = """\
Run the memory service: one process per FUNES_HOME that holds the memory, the model and the store
open, so agent sessions (funes mcp) and CLI reads share one warm copy instead of loading their own.

It listens on a Unix socket inside FUNES_HOME (run/serve.sock, 0600, never TCP) and exits after
--idle without a client. `funes mcp` starts it on demand; the CLI read verbs use it when it runs
(--no-service reads in-process). With no option it runs in the foreground until stopped.
"""


def register(app: typer.Typer) -> None:
    @app.command("serve", help=SERVE_HELP)
    def serve_cmd(
        status: Annotated[
            bool, typer.Option("--status", help="Say whether it runs: pid, version, uptime, RSS, clients.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="With --status: one JSON object.")] = False,
        start: Annotated[
            bool, typer.Option("--start", help="Start it in the background (if none runs) and return.")
        ] = False,
        stop: Annotated[bool, typer.Option("--stop", help="Stop the running service.")] = False,
        idle: Annotated[
            str | None,
            typer.Option(
                "--idle",
                help="Exit after this long without a client: seconds, or 90s, 30m, 2h; 0 = never "
                "(default: FUNES_SERVE_IDLE, else 30m).",
            ),
        ] = None,
    ) -> None:
        from funes_core.home import Home, HomeError
        from funes_core.serve import client, wire

        try:
            home = Home.resolve()
        except HomeError as exc:
            typer.echo(f"funes: {exc}", err=True)
            raise typer.Exit(1) from None
        if sum((status, start, stop)) > 1:
            typer.echo("funes serve: choose one of --status, --start, --stop", err=True)
            raise typer.Exit(2)
        seconds = wire.idle_seconds()
        if idle is not None:
            try:
                seconds = wire.parse_duration(idle)
            except ValueError as exc:
                typer.echo(f"funes serve: --idle {exc}", err=True)
                raise typer.Exit(2) from None
        if status:
            line, info = client.service_line(home.root)
            if as_json:
                typer.echo(json.dumps({"running": info is not None, **(info or {})}, indent=2))
            else:
                typer.echo(line)
                if info is not None:
                    typer.echo(f"socket: {info.get('socket')}")
            raise typer.Exit(0 if info is not None else 1)
        if stop:
            pid = client.stop_service(home.root)
            typer.echo(
                "funes serve: no service was running" if pid is None else f"funes serve: stopped pid {pid}"
            )
            return
        if start:
            import os

            os.environ[wire.IDLE_ENV] = str(seconds)
            try:
                conn = client.ensure_service(home.root)
            except client.ServiceUnavailableError as exc:
                typer.echo(f"funes serve: {exc}", err=True)
                raise typer.Exit(1) from None
            conn.close()
            typer.echo(f"funes serve: {client.service_line(home.root)[0].removeprefix('service: ')}")
            return
        from funes_core.serve.service import run_service

        def announce(text: str) -> None:
            typer.echo(text, err=True)

        code = run_service(home, idle=seconds, announce=announce, foreground=True)
        raise typer.Exit(code)

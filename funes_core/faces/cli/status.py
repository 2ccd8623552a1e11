"""``funes status``: a memory health report (text, or ``--json`` for scripts).

The report is :mod:`funes_core.read.status`'s (the MCP ``status`` tool prints the same); this
command exists apart from the other read verbs because its exit status says whether a memory the
user named exists. It ends with a line on the memory service (``funes serve``) when one runs (pid,
version, uptime, RSS, clients) or cannot be used; the report and that line come from the service
then. The console script's fast path (:mod:`funes_core.faces.cli.fast`) prints the same without
building the app.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from funes_core.faces.cli.fast import JSON_FLAG, service_spec, status_output
from funes_core.faces.cli.read import MemoryOpt, NoServiceOpt, via_service
from funes_core.read.status import STATUS_HELP

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    @app.command("status", help=STATUS_HELP)
    def status(
        as_json: Annotated[bool, typer.Option(JSON_FLAG, help="Print one JSON object.")] = False,
        memory: MemoryOpt = None,
        no_service: NoServiceOpt = False,
    ) -> None:
        from funes_core.serve.client import service_line

        reply = (
            via_service({"verb": "status", "memory": memory})
            if not no_service and service_spec(memory)
            else None
        )
        if reply is not None and reply.get("ok"):
            data, text, code = reply["json"], str(reply["text"]), int(reply["exit"])
            line, info = str(reply["line"]), reply["info"]
        else:
            if reply is not None:  # the service's own one-line error
                typer.echo(f"funes: {reply.get('error')}", err=True)
                raise typer.Exit(1)
            data, text, code = _in_process(memory)
            line, info = service_line()
        typer.echo(status_output(data, text, line, info, as_json), nl=False)
        raise typer.Exit(code)


def _in_process(memory: str | None) -> tuple[dict[str, Any], str, int]:
    from funes_core.home import HomeError
    from funes_core.read.status import collect_status
    from funes_core.share.memory import UnknownMemoryError
    from funes_core.share.remotes import RemoteConfigError

    try:
        report = collect_status(memory)
    except (HomeError, UnknownMemoryError, RemoteConfigError) as exc:
        typer.echo(f"funes: {exc}", err=True)
        raise typer.Exit(1) from None
    # A memory the user named that does not exist is an error; the default one is just empty.
    return report.to_json(), report.render(), 0 if report.exists or report.is_default else 1

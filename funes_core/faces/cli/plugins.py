"""``funes plugins``: which plugins funes found, where from, and what they register."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from funes_core.host.manager import FunesPluginManager

__all__ = ["register"]

HELP = """\
List the plugins funes found (entry-point group `funes`): distribution, version, status, the
hooks each implements and the integration ids it registers.

FUNES_LOAD_PLUGINS=a,b loads only those (an empty value loads none); FUNES_DISABLED_PLUGINS=a,b
blocks some; FUNES_TRACE_PLUGINS=1 traces hook calls.
"""


def register(app: typer.Typer, pm: FunesPluginManager) -> None:
    @app.command("plugins", help=HELP)
    def plugins(
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        infos = pm.plugins()
        if as_json:
            typer.echo(json.dumps([info.to_json() for info in infos], indent=2))
            return
        if not infos:
            typer.echo("no plugins installed; see `funes integrations list` for what is available")
            return
        for info in infos:
            status = f"{info.status}: {info.error}" if info.error else info.status
            typer.echo(f"{info.name} ({info.origin}): {status}")
            if info.hooks:
                typer.echo(f"  hooks: {', '.join(info.hooks)}")
            by_id: dict[str, list[str]] = {}
            for role, ids in info.ids.items():
                for ident in ids:
                    by_id.setdefault(ident, []).append(role)
            for ident, roles in sorted(by_id.items()):
                refused = " (refused: claimed by another plugin too)" if ident in info.conflicts else ""
                typer.echo(f"  id {ident}: {', '.join(roles)}{refused}")

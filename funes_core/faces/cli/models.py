"""``funes models``: the embedding and reranking models funes can use, and fetching their weights."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from funes_core.host.manager import FunesPluginManager

__all__ = ["register"]

HELP = """\
The embedding models (for `funes index --rebuild --model NAME`) and rerankers (for
FUNES_RERANKER=NAME) that the installed plugins offer, and which of them are on this machine.

The packaged all-MiniLM-L6-v2 is the default and always here. fastembed's catalogue (a
multilingual MiniLM, BAAI/bge-small-en-v1.5, e5, ...) needs its weights on disk: funes never
downloads while indexing or recalling. `funes models pull NAME` fetches them where the network
allows; or copy the model's files into $FUNES_HOME/models/<org>--<name>/.
"""

PULL_HELP = """\
Download a catalogue model's weights into $FUNES_HOME/cache/fastembed (needs the network).
"""


def register(app: typer.Typer, pm: FunesPluginManager) -> None:
    models_app = typer.Typer(help=HELP, invoke_without_command=True, no_args_is_help=False)

    @models_app.callback(invoke_without_command=True)
    def models(
        ctx: typer.Context,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        if ctx.invoked_subcommand is not None:
            return
        from funes_core.home import Home
        from funes_core.models.base import ModelError
        from funes_core.models.registry import providers, use_manager

        use_manager(pm)
        home = Home.resolve()
        rows = []
        for kind in ("embedder", "reranker"):
            for provider in providers(kind, pm):
                for info in provider.models():
                    try:
                        instance = (
                            provider.cls.open(info.name, cache_dir=home.cache_dir)  # no load: a check
                        )
                        instance.check()
                        here = True
                    except ModelError:
                        here = False
                    rows.append(
                        {
                            "kind": kind,
                            "name": info.name,
                            "dim": info.dim or None,
                            "languages": info.languages,
                            "size_mb": info.size_mb,
                            "provider": provider.cls.id,
                            "plugin": provider.plugin,
                            "on_this_machine": here,
                            "description": info.description,
                        }
                    )
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
            return
        for row in rows:
            mark = "here   " if row["on_this_machine"] else "missing"
            dim = f"{row['dim']}-d " if row["dim"] else ""
            typer.echo(f"{row['kind']:8} {mark} {row['name']}  ({dim}{row['languages']}, {row['provider']})")

    @models_app.command("pull", help=PULL_HELP)
    def pull(
        name: Annotated[str, typer.Argument(help="A catalogue model name, as `funes models` lists it.")],
        reranker: Annotated[bool, typer.Option("--reranker", help="NAME is a reranker.")] = False,
    ) -> None:
        from funes_core.home import Home
        from funes_core.models.base import ModelError
        from funes_core.models.catalog import pull as fetch

        home = Home.resolve()
        try:
            where = fetch("reranker" if reranker else "embedder", name, home.cache_dir)
        except ModelError as exc:
            typer.echo(f"funes: {exc}", err=True)
            raise typer.Exit(1) from None
        # Broad on purpose: the download's failures (no network, a hub error) become one line.
        except Exception as exc:
            typer.echo(f"funes: could not download {name}: {type(exc).__name__}: {exc}", err=True)
            raise typer.Exit(1) from None
        typer.echo(f"{name}: weights in {where}")

    app.add_typer(models_app, name="models")

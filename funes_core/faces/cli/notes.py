"""``funes remember`` / ``funes forget``: keyword triggers, kept append-only."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["register"]

REMEMBER_HELP = """\
Pin a hint to a keyword: any recall whose query names KEYWORD (as a whole word, any case)
prints `trigger KEYWORD: HINT` before its hits. Stored as an ordinary note turn, so recall and
get find it too. Remembering a keyword again replaces its hint (the newest note wins).
"""


def _write(keyword: str, hint: str | None) -> None:
    from funes_core.home import Home, HomeError, LockBusyError
    from funes_core.ingest.engine import IndexOptions, IndexRunError, run_index
    from funes_core.ingest.notes import append_note
    from funes_core.models.vectors import ModelMismatchError

    try:
        home = Home.resolve().ensure()
        path = append_note(home, keyword, hint)
        run_index(IndexOptions(path=path), home=home, lock_wait=15.0, warn=lambda m: None)
    except ValueError as exc:
        typer.echo(f"funes: {exc}", err=True)
        raise typer.Exit(1) from None
    except (LockBusyError, IndexRunError, ModelMismatchError, HomeError) as exc:
        typer.echo(f"funes: {exc}", err=True)
        raise typer.Exit(1) from None


def register(app: typer.Typer) -> None:
    @app.command("remember", help=REMEMBER_HELP)
    def remember_cmd(
        keyword: Annotated[str, typer.Argument(help="The word that fires the trigger.")],
        hint: Annotated[str, typer.Option("--hint", help="What to surface when the keyword comes up.")],
    ) -> None:
        _write(keyword, hint)
        typer.echo(f"remembered trigger {' '.join(keyword.split())}")

    @app.command("forget", help="Retire a keyword trigger (appends a tombstone; history is kept).")
    def forget_cmd(keyword: Annotated[str, typer.Argument(help="The trigger's keyword.")]) -> None:
        from funes_core.home import Home
        from funes_core.read.handle import Memory, MemoryUnavailableError
        from funes_core.read.triggers import live

        try:
            store = Memory.resolve(None, home=Home.resolve()).store()
            keywords = {t.keyword.casefold() for t in live(store)}
        except MemoryUnavailableError:  # no memory yet: no live trigger to forget
            keywords = set()
        name = " ".join(keyword.split())
        if name.casefold() not in keywords:
            typer.echo(f"funes: no live trigger {name!r} (see `funes triggers`)", err=True)
            raise typer.Exit(1)
        _write(keyword, None)
        typer.echo(f"forgot trigger {name}")

"""``funes suggest``: propose keyword triggers from the memory, and add the chosen ones."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from funes_core.faces.cli.read import MemoryOpt
from funes_core.read.suggest import DEFAULT_LIMIT

__all__ = ["SUGGEST_HELP", "choose", "register"]

SUGGEST_HELP = """\
Propose keyword triggers from what the memory holds: identifiers that recur across sessions but
are not everywhere (CONSTANTS, snake_case, CamelCase, paths/like/this.py, --flags, TICKET-123).

Each suggestion shows its shape, in how many sessions it appears, how often, its score and the
passage of its first mention with a `→ get` line. The score is (df - 1) × ln(N / df), with N the
sessions scanned and df those mentioning the name: 0 for a name seen once or everywhere, highest
for names that recur in a few sessions. Text, thinking and tool calls are scanned, not tool
results; live triggers are left out. No model is involved.

--apply asks at a terminal which ones to add (numbers, `all`, or nothing) and remembers each with
a hint pointing at its first mention; --yes adds them all without asking (for scripts).
"""


def choose(answer: str, count: int) -> list[int] | None:
    """Parse the answer to "add which?": ``all``, numbers (``1 3 5``, ``1,3``, ``2-4``), or none.

    Returns 0-based indexes, ``[]`` for none, ``None`` when the answer cannot be read.
    """
    text = answer.strip().lower()
    if text in ("", "none", "n", "no"):
        return []
    if text in ("all", "a", "y", "yes"):
        return list(range(count))
    picked: list[int] = []
    for part in text.replace(",", " ").split():
        low, dash, high = part.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            return None
        first, last = int(low), int(high or low)
        if not 1 <= first <= last <= count:
            return None
        picked.extend(i - 1 for i in range(first, last + 1) if i - 1 not in picked)
    return picked


def register(app: typer.Typer) -> None:
    @app.command("suggest", help=SUGGEST_HELP)
    def suggest_cmd(
        limit: Annotated[
            int, typer.Option("--limit", "-n", min=1, max=200, help="How many suggestions to show.")
        ] = DEFAULT_LIMIT,
        apply: Annotated[bool, typer.Option("--apply", help="Ask which ones to add, then add them.")] = False,
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="With --apply: add them all, no question.")
        ] = False,
        memory: MemoryOpt = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    ) -> None:
        from funes_core.models.vectors import ModelMismatchError
        from funes_core.read.common import VerbError
        from funes_core.read.handle import Memory, MemoryUnavailableError
        from funes_core.read.suggest import SuggestArgs, format_suggestions, hint_for, run, suggestions_json

        def fail(message: object) -> typer.Exit:
            typer.echo(f"funes: {message}", err=True)
            return typer.Exit(1)

        if apply and memory not in (None, "local"):
            raise fail("--apply adds triggers to the local memory: drop --memory to use it")
        if yes and not apply:
            raise fail("--yes only goes with --apply")
        interactive = sys.stdin.isatty() and sys.stderr.isatty()
        if apply and not yes and not interactive:
            raise fail(
                "--apply asks which suggestions to add, and there is no terminal; add --yes to add them all"
            )
        try:
            mem = Memory.resolve(memory)
            found, total = run(mem, SuggestArgs(limit=limit))
        except (VerbError, MemoryUnavailableError, ModelMismatchError) as exc:
            raise fail(exc) from None
        typer.echo(
            suggestions_json(found, total, mem.label)
            if as_json
            else format_suggestions(found, total, mem.label),
            nl=False,
        )
        if not apply or not found:
            return
        if yes:
            picked = list(range(len(found)))
        else:
            while (
                picked_or_none := choose(
                    typer.prompt(
                        "Add which? (numbers like 1 3 5-7, 'all', or Enter for none)",
                        default="",
                        show_default=False,
                        err=True,
                    ),
                    len(found),
                )
            ) is None:
                typer.echo(f"answer with numbers from 1 to {len(found)}, 'all', or nothing", err=True)
            picked = picked_or_none
        if not picked:
            typer.echo("no trigger added", err=True)
            return
        _remember([(found[i].keyword, hint_for(found[i], mem.label)) for i in picked])


def _remember(pairs: list[tuple[str, str]]) -> None:
    """Append one remember note per keyword, then index them once (what `funes remember` does)."""
    from funes_core.home import Home, LockBusyError
    from funes_core.ingest.engine import IndexOptions, IndexRunError, run_index
    from funes_core.ingest.notes import append_note
    from funes_core.models.vectors import ModelMismatchError

    home = Home.resolve().ensure()
    try:
        path = None
        for keyword, hint in pairs:
            path = append_note(home, keyword, hint)
        assert path is not None
        run_index(IndexOptions(path=path), home=home, lock_wait=15.0, warn=lambda m: None)
    except ValueError as exc:
        typer.echo(f"funes: {exc}", err=True)
        raise typer.Exit(1) from None
    except (LockBusyError, IndexRunError, ModelMismatchError) as exc:
        typer.echo(f"funes: {exc}", err=True)
        raise typer.Exit(1) from None
    for keyword, _ in pairs:
        typer.echo(f"remembered trigger {keyword}")

"""Read verbs on the command line: recall, get, sessions, scan, sketch, triggers.

Thin wrappers: each resolves the memory, calls :mod:`funes_core.read.verbs` (the same functions the MCP
server calls) and prints the text. Errors are one line on stderr and exit status 1.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from funes_core.store.handle import Memory

__all__ = ["register"]

MemoryOpt = Annotated[
    str | None,
    typer.Option("--memory", "-m", help="Memory to read: 'local' (default), or a path to a memory folder."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of the agent text.")]
FromOpt = Annotated[int | None, typer.Option("--from", min=0, help="First turn (seq) to read, inclusive.")]
ToOpt = Annotated[int | None, typer.Option("--to", min=0, help="Last turn (seq) to read, inclusive.")]
SinceOpt = Annotated[str | None, typer.Option("--since", help="From this day on, YYYY-MM-DD (inclusive).")]
UntilOpt = Annotated[str | None, typer.Option("--until", help="Up to this day, YYYY-MM-DD (inclusive).")]


def _run(produce: Callable[[], str]) -> None:
    """Print a verb's text, or its error as one line on stderr with exit status 1."""
    from funes_core.read.verbs import VerbError
    from funes_core.store.base import ModelMismatchError
    from funes_core.store.handle import MemoryUnavailableError

    try:
        text = produce()
    except (VerbError, MemoryUnavailableError, ModelMismatchError) as exc:
        typer.echo(f"funes: {exc}", err=True)
        raise typer.Exit(1) from None
    sys.stdout.write(text)
    sys.stdout.flush()


def _memory(spec: str | None) -> Memory:
    # Imported here: the memory stack pulls in numpy and the store, which --help never needs.
    from funes_core.store.handle import Memory

    return Memory.resolve(spec)


RECALL_HELP = """\
Search the memory: hybrid (BM25 + vectors) recall of verbatim passages with provenance.

The words of QUERY are joined with spaces. Each hit shows when and where it was said, a `→ get`
line to read around it, the whole passage, and a preview of neighbouring turns. Filters apply
before ranking. --budget/--level pack the best hits into a token budget without cutting any.
"""


def register(app: typer.Typer) -> None:
    @app.command("recall", help=RECALL_HELP)
    def recall_cmd(
        query: Annotated[list[str], typer.Argument(help="What to look for.")],
        k: Annotated[int, typer.Option("-k", "--k", min=1, help="Hits to show.")] = 8,
        candidates: Annotated[
            int, typer.Option("--candidates", min=1, help="Candidates per search leg.")
        ] = 30,
        neighbors: Annotated[
            int,
            typer.Option("--neighbors", min=0, help="Neighbouring turns (±seq) previewed under each hit."),
        ] = 1,
        harness: Annotated[
            str | None, typer.Option("--harness", help="Only this agent (claude, codex, …).")
        ] = None,
        role: Annotated[
            str | None, typer.Option("--role", help="Only this role (user, assistant, tool).")
        ] = None,
        block_type: Annotated[
            str | None,
            typer.Option("--type", help="Only this block type: text, thinking, tool_use, tool_result."),
        ] = None,
        repo: Annotated[str | None, typer.Option("--repo", help="Only this repository, owner/name.")] = None,
        since: SinceOpt = None,
        until: UntilOpt = None,
        half_life: Annotated[
            float | None,
            typer.Option(
                "--half-life", min=0, help="Freshness half-life in days; 0 disables (default: profile's)."
            ),
        ] = None,
        profile: Annotated[
            str, typer.Option("--profile", help="Fusion weights: balanced, semantic, lexical, recent.")
        ] = "balanced",
        fusion: Annotated[
            str,
            typer.Option("--fusion", help="How the legs combine: relative (scores rescaled per leg) or rrf."),
        ] = "relative",
        budget: Annotated[
            int | None, typer.Option("--budget", min=1, help="Token budget for the output.")
        ] = None,
        level: Annotated[
            str | None,
            typer.Option(
                "--level", help="Named budget: minimal 300, lean 800, balanced 1500, rich 3000, full 5000."
            ),
        ] = None,
        memory: MemoryOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        from funes_core.read import verbs

        _run(
            lambda: verbs.recall_text(
                _memory(memory),
                " ".join(query),
                k=k,
                candidates=candidates,
                neighbors=neighbors,
                harness=harness,
                role=role,
                block_type=block_type,
                repo=repo,
                since=since,
                until=until,
                half_life=half_life,
                profile=profile,
                budget=budget,
                level=level,
                fusion=fusion,
                as_json=as_json,
            )
        )

    @app.command("triggers", help="List the live keyword triggers, newest first.")
    def triggers_cmd(memory: MemoryOpt = None, as_json: JsonOpt = False) -> None:
        from funes_core.read import verbs

        _run(lambda: verbs.triggers_text(_memory(memory), as_json=as_json))

    @app.command("get", help="Read turns of one session verbatim (20 turns from --from by default).")
    def get_cmd(
        session_id: Annotated[
            str, typer.Argument(help="The session id (from a recall hit or `funes sessions`).")
        ],
        from_: FromOpt = None,
        to: ToOpt = None,
        memory: MemoryOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        from funes_core.read import verbs

        _run(lambda: verbs.get_text(_memory(memory), session_id, from_=from_, to=to, as_json=as_json))

    @app.command("sessions", help="List sessions, oldest first, with their opening request.")
    def sessions_cmd(
        repo: Annotated[str | None, typer.Option("--repo", help="Only this repository, owner/name.")] = None,
        harness: Annotated[str | None, typer.Option("--harness", help="Only this agent.")] = None,
        since: SinceOpt = None,
        until: UntilOpt = None,
        limit: Annotated[int, typer.Option("--limit", help="Rows to show (1-200).")] = 50,
        offset: Annotated[
            int, typer.Option("--offset", min=0, help="Skip this many of the most recent.")
        ] = 0,
        memory: MemoryOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        from funes_core.read import verbs

        _run(
            lambda: verbs.sessions_text(
                _memory(memory),
                repo=repo,
                harness=harness,
                since=since,
                until=until,
                limit=limit,
                offset=offset,
                as_json=as_json,
            )
        )

    @app.command("scan", help="Find every literal occurrence of NEEDLE in one session (not a regex).")
    def scan_cmd(
        needle: Annotated[str, typer.Argument(help="The literal text to find.")],
        session_id: Annotated[str, typer.Argument(help="The session to search.")],
        ignore_case: Annotated[
            bool, typer.Option("-i", "--ignore-case", help="Match regardless of case.")
        ] = False,
        context: Annotated[
            int, typer.Option("--context", min=0, help="Characters of context each side.")
        ] = 100,
        from_: FromOpt = None,
        to: ToOpt = None,
        memory: MemoryOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        from funes_core.read import verbs

        _run(
            lambda: verbs.scan_text(
                _memory(memory),
                needle,
                session_id,
                from_=from_,
                to=to,
                ignore_case=ignore_case,
                context=context,
                as_json=as_json,
            )
        )

    @app.command("sketch", help="A query-free digest of one session: its most distinctive passages.")
    def sketch_cmd(
        session_id: Annotated[str, typer.Argument(help="The session to digest.")],
        units: Annotated[int, typer.Option("--units", help="Passages to pick (clamped to 40).")] = 8,
        max_chars: Annotated[int, typer.Option("--max-chars", help="Characters for all passages.")] = 8000,
        from_: FromOpt = None,
        to: ToOpt = None,
        memory: MemoryOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        from funes_core.read import verbs

        _run(
            lambda: verbs.sketch_text(
                _memory(memory),
                session_id,
                units=units,
                max_chars=max_chars,
                from_=from_,
                to=to,
                as_json=as_json,
            )
        )

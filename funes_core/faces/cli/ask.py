"""``funes ask``: recall passages and let an installed agent answer from them, streamed."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from funes_core.faces.cli.read import MemoryOpt
from funes_core.read.ask import ASK_K

if TYPE_CHECKING:
    from funes_core.host.manager import FunesPluginManager

__all__ = ["ASK_HELP", "register"]

ASK_HELP = """\
Answer a question from the memory, in a few sentences, with an installed agent.

funes recalls passages for QUESTION (k 8, candidates 30, neighbours 1) and hands them, with
the question, to Claude Code or Codex run once, non-interactively, in an empty temporary
folder: no MCP servers (it cannot recurse into funes), no hooks and no saved session (the
prompt, which quotes your memory, does not come back as a new session), no tools.
The answer is printed as it arrives and ends with the sessions it used; read them with
`funes get`.

--agent picks the agent (default: the first of claude, codex whose program is on PATH).
Nothing is started when the question is empty, the memory cannot be read, recall finds no
passage or the agent's program is missing: each is one line on stderr and exit status 1, as is
an agent that fails. --print-prompt prints the prompt instead of running an agent.
"""


def register(app: typer.Typer, pm: FunesPluginManager) -> None:
    @app.command("ask", help=ASK_HELP)
    def ask_cmd(
        question: Annotated[list[str], typer.Argument(help="The question, in words.", show_default=False)],
        agent: Annotated[
            str | None, typer.Option("--agent", "-a", help="The agent to ask: claude or codex.")
        ] = None,
        k: Annotated[
            int, typer.Option("-k", "--k", min=1, max=100, help="How many passages to put in the prompt.")
        ] = ASK_K,
        memory: MemoryOpt = None,
        print_prompt: Annotated[
            bool, typer.Option("--print-prompt", help="Print the prompt and exit; run no agent.")
        ] = False,
    ) -> None:
        from funes_core import telemetry
        from funes_core.host.api import InstallContext
        from funes_core.host.ask import AskError, choose_agent, run_agent
        from funes_core.models.vectors import ModelMismatchError
        from funes_core.read.ask import AskArgs, build_prompt, passages
        from funes_core.read.common import VerbError
        from funes_core.read.handle import MemoryUnavailableError, resolve_memories

        def fail(message: object) -> typer.Exit:
            typer.echo(f"funes: {message}", err=True)
            return typer.Exit(1)

        text = " ".join(" ".join(question).split())
        if not text:
            raise fail("the question is empty: say what you want to know")
        try:
            chosen = None if print_prompt else choose_agent(pm, agent)
            with telemetry.measure("recall", face="ask"):
                found = passages(resolve_memories(memory), AskArgs(question=text, k=k))
        except (AskError, VerbError, MemoryUnavailableError, ModelMismatchError) as exc:
            raise fail(exc) from None
        for note in found.notes:
            typer.echo(f"funes: note: {note}", err=True)
        prompt = build_prompt(text, found)
        if chosen is None:
            sys.stdout.write(prompt)
            return
        typer.echo(
            f"funes: asking {chosen.label} ({chosen.program}) with {found.hits} passages "
            f"from {len(found.sessions)} sessions…",
            err=True,
        )
        ended_with_newline = True

        def write(piece: str) -> None:
            nonlocal ended_with_newline
            if piece:
                sys.stdout.write(piece)
                sys.stdout.flush()
                ended_with_newline = piece.endswith("\n")

        try:
            run_agent(chosen, prompt, InstallContext.from_environment(), write)
        except AskError as exc:
            if not ended_with_newline:
                sys.stdout.write("\n")
            raise fail(exc) from None
        except KeyboardInterrupt:
            if not ended_with_newline:
                sys.stdout.write("\n")
            typer.echo("funes: interrupted", err=True)
            raise typer.Exit(130) from None
        if not ended_with_newline:
            sys.stdout.write("\n")
        sys.stdout.flush()

"""Read verbs on the command line: recall, get, sessions, scan, sketch, triggers.

Each command is built from its verb's one declaration (:class:`funes_core.read.common.Verb`): the
arguments dataclass gives the flags, defaults, bounds and help, so the CLI and the MCP server
cannot drift apart. A command resolves the memory, calls the verb's ``run`` and prints its text;
errors are one line on stderr and exit status 1. When the memory service runs (``funes serve``)
and can answer for this process, the command asks it instead and prints the bytes it returns (the
same the in-process run prints: the service runs the same verb); ``--no-service`` reads here.
Most such runs never reach this module: the console script's fast path
(:mod:`funes_core.faces.cli.fast`) asks the service before the app is built, from the same
declarations, and falls back to these commands whenever it is not sure. ``status`` has its own
command (:mod:`funes_core.faces.cli.status`) because its exit status reports a missing memory.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from funes_core.faces.cli.fast import JSON_FLAG, MEMORY_FLAGS, NO_SERVICE_FLAG, read_request, service_spec
from funes_core.read import get, recall, scan, sessions, sketch, triggers
from funes_core.read.common import ParamField, Verb, fields_of

__all__ = ["READ_VERBS", "MemoryOpt", "register"]

#: The read verbs the CLI binds, in help order.
READ_VERBS: tuple[Verb[Any], ...] = (
    recall.VERB,
    triggers.VERB,
    get.VERB,
    sessions.VERB,
    scan.VERB,
    sketch.VERB,
)

#: ``--memory``/``-m``, declared once for every command that reads a memory (the read verbs,
#: status, suggest, ask, export), so its spelling and help cannot drift between them.
MemoryOpt = Annotated[
    str | None,
    typer.Option(
        *MEMORY_FLAGS,
        help="Memory to read: 'local' (default), a remote's name (funes remote list), a path to a "
        "memory folder; recall and ask also take several, comma-separated (local,team), ranked as one list.",
    ),
]
JsonOpt = Annotated[bool, typer.Option(JSON_FLAG, help="Print one JSON document instead of the agent text.")]
NoServiceOpt = Annotated[
    bool,
    typer.Option(
        NO_SERVICE_FLAG,
        help="Read in this process even when the memory service (funes serve) runs; FUNES_SERVICE=off "
        "does the same for every command.",
    ),
]


def via_service(request: dict[str, Any]) -> dict[str, Any] | None:
    """The memory service's reply to a read, or ``None`` to read in-process (see ``client.ask``)."""
    try:
        json.dumps(request)
    except (TypeError, ValueError):
        return None
    from funes_core.serve.client import ask

    return ask(request)


def _run(produce: Callable[[], str]) -> None:
    """Print a verb's text, or its error as one line on stderr with exit status 1."""
    from funes_core.models.vectors import ModelMismatchError
    from funes_core.read.common import VerbError
    from funes_core.read.handle import MemoryUnavailableError

    try:
        text = produce()
    except (VerbError, MemoryUnavailableError, ModelMismatchError) as exc:
        typer.echo(f"funes: {exc}", err=True)
        raise typer.Exit(1) from None
    sys.stdout.write(text)
    sys.stdout.flush()


def _cli_parameter(field: ParamField) -> inspect.Parameter:
    """The typer parameter for one declared field: an option when it has flags, else an argument."""
    p = field.param
    kind: Any = (
        typer.Option(*p.flags, help=p.help, min=p.ge, max=p.le) if p.flags else typer.Argument(help=p.help)
    )
    annotation: Any = list[str] if p.words else field.type
    default = inspect.Parameter.empty if field.required else field.default
    return inspect.Parameter(
        field.name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[annotation, kind], default=default
    )


def command_for(verb: Verb[Any]) -> Callable[..., None]:
    """A typer callback whose signature is ``verb``'s declared arguments plus ``--memory`` and ``--json``."""
    fields = fields_of(verb.args)
    words = {f.name for f in fields if f.param.words}

    def command(**kwargs: Any) -> None:
        from funes_core.read.handle import resolve_memories

        spec, as_json = kwargs.pop("memory"), kwargs.pop("as_json")
        no_service = kwargs.pop("no_service")
        for name in words:
            kwargs[name] = " ".join(kwargs[name])

        def produce() -> str:
            from funes_core.read.common import VerbError
            from funes_core.telemetry import measure

            if not no_service and service_spec(spec):
                reply = via_service(read_request(verb.name, kwargs, spec, as_json))
                if reply is not None:
                    if not reply.get("ok"):
                        raise VerbError(str(reply.get("error")))
                    return str(reply.get("text", ""))

            args = verb.args(**kwargs)
            memory = resolve_memories(spec)
            with measure(verb.name, face="cli"):
                return verb.call(memory, args, as_json=as_json)

        _run(produce)

    params = [_cli_parameter(f) for f in fields]
    params += [
        inspect.Parameter("memory", inspect.Parameter.KEYWORD_ONLY, annotation=MemoryOpt, default=None),
        inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, annotation=JsonOpt, default=False),
        inspect.Parameter(
            "no_service", inspect.Parameter.KEYWORD_ONLY, annotation=NoServiceOpt, default=False
        ),
    ]
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__name__ = f"{verb.name}_cmd"
    return command


def register(app: typer.Typer) -> None:
    for verb in READ_VERBS:
        app.command(verb.name, help=verb.cli_help)(command_for(verb))

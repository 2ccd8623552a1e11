"""The CLI's fast path: a read verb answered by the running memory service before the typer app is built.

Why. A fresh ``funes recall`` spends most of a second importing typer, rich and pydantic, building
the app and loading every plugin before it asks the memory service anything; the service then
answers in a few tens of milliseconds. Here the console script (:mod:`funes_core.faces.cli.main`)
first tries, with the standard library only, to read the command line itself: when it is a read
verb (``recall``, ``get``, ``sessions``, ``scan``, ``sketch``, ``triggers``, ``status``) with
options this module fully understands, and a service runs that can answer for this process, the
service's reply is printed exactly as the typer command would print it (same bytes on stdout and
stderr, same exit status). Anything else falls back to the full typer app, unchanged: ``--help``,
an unknown or misspelt option, a bad or out-of-range value, an option value that starts with a
dash, a short-option cluster, a memory given as a path, ``--no-service`` or ``FUNES_SERVICE=off``,
no service, a service of another version or settings, or a failure mid-call. When in doubt, the
typer app decides: it gives the precise usage error, and the in-process answer.
``FUNES_CLI_FAST=0`` turns the fast path off.

``funes ui`` takes this path too (:func:`parse_ui`, then :mod:`funes_core.faces.cli.ui_front`):
the memory service hosts the viewer, and this process only prints its address and waits.

One declaration. The verbs' options are declared once, in each verb's arguments dataclass
(:mod:`funes_core.read`); the typer commands are built from those declarations at run time, and so
is ``fast_verbs.json``, the snapshot this module parses with (importing the verb modules would cost
about what this path saves). ``tests/test_cli_fast.py`` regenerates the snapshot from the
declarations and fails when it differs (``python -m funes_core.faces.cli.fast --write`` rewrites
it), and checks on generated command lines that this parser and typer's agree whenever this one
accepts. The options every read verb adds (``--memory``/``-m``, ``--json``, ``--no-service``) are
declared here and used by the typer commands too.

Parsing follows click's rules for what it accepts: options may come before, between or after the
positional arguments; ``--opt value`` and ``--opt=value`` for long options, ``-k 3`` and ``-k3``
for short ones; a repeated option's last value wins; ``--`` ends the options; a lone ``-`` is a
positional argument.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, TextIO

__all__ = [
    "JSON_FLAG",
    "MEMORY_FLAGS",
    "NO_SERVICE_FLAG",
    "SPEC_FILE",
    "STATUS",
    "SWITCH_ENV",
    "UI",
    "UI_NO_OPEN_FLAG",
    "UI_OPEN_FLAG",
    "UI_PORT_FLAG",
    "answer",
    "parse",
    "parse_ui",
    "read_request",
    "record_spec",
    "service_json",
    "service_spec",
    "status_output",
]

#: The options every read verb takes besides its own (the typer commands use these names too).
MEMORY_FLAGS = ("--memory", "-m")
JSON_FLAG = "--json"
NO_SERVICE_FLAG = "--no-service"
#: ``funes status``: no verb parameters, only the three options above.
STATUS = "status"
#: ``funes ui`` and its own options (its typer command is declared with these names).
UI = "ui"
UI_OPEN_FLAG = "--open"
UI_NO_OPEN_FLAG = "--no-open"
UI_PORT_FLAG = "--port"

SPEC_FILE = Path(__file__).with_name("fast_verbs.json")
#: ``FUNES_CLI_FAST=0`` turns the fast path off: every command line builds the typer app.
SWITCH_ENV = "FUNES_CLI_FAST"

#: A memory spec the service may be asked about: ``local`` and remote names, never a path (a
#: relative path means the caller's folder, which the service does not share).
_SERVICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
#: What ``int()``/``float()`` read exactly as click's types do; anything else falls back.
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: click strips these (``echo`` to something that is not a terminal); so does :func:`_echo`.
_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")


def service_spec(spec: str | None) -> bool:
    """Whether ``--memory spec`` names memories the service can read for this process."""
    if spec is None:
        return True
    parts = [part.strip() for part in spec.split(",")]
    return all(_SERVICE_NAME.fullmatch(p) and not os.path.exists(p) for p in parts)


def read_request(verb: str, args: dict[str, Any], memory: str | None, as_json: bool) -> dict[str, Any]:
    """What a read verb's command asks the service (``args``: every declared parameter, words joined)."""
    return {"verb": verb, "args": args, "memory": memory, "as_json": as_json}


def service_json(info: dict[str, Any] | None) -> dict[str, Any]:
    """The ``service`` entry of ``funes status --json``, from the service's ``info`` (``None``: none)."""
    if info is None:
        return {"running": False}
    keep = ("pid", "version", "uptime", "rss", "clients", "socket", "started", "idle")
    return {"running": True, **{k: info.get(k) for k in keep}}


def status_output(
    data: dict[str, Any], text: str, line: str, info: dict[str, Any] | None, as_json: bool
) -> str:
    """What ``funes status`` prints: the report and its service line, or the JSON document."""
    from funes_core.serve.client import NOT_RUNNING

    if as_json:
        return json.dumps({**data, "service": service_json(info)}, indent=2, ensure_ascii=False) + "\n"
    # No line when none runs: the report is whole without it (`funes serve --status` says so).
    return text + ("" if line.startswith(NOT_RUNNING) else line + "\n")


# -- the snapshot of the verbs' declarations ---------------------------------------------------------


def record_spec() -> dict[str, Any]:
    """The read verbs' parameters as this module parses them, from their one declaration.

    Raises ``TypeError`` for a declaration the parser does not handle (a new type, an optional
    positional argument, a flag of another shape): extend :func:`parse` first, then the snapshot.
    """
    import dataclasses

    from funes_core.faces.cli.read import READ_VERBS
    from funes_core.read.common import fields_of

    verbs: dict[str, Any] = {}
    for verb in READ_VERBS:
        params: list[dict[str, Any]] = []
        for field in fields_of(verb.args):
            p = field.param
            kinds = {str: "str", int: "int", float: "float", bool: "bool"}
            options = [t for t in getattr(field.type, "__args__", (field.type,)) if t is not type(None)]
            if len(options) != 1 or options[0] not in kinds:
                raise TypeError(f"{verb.name}.{field.name}: the fast path reads no {field.type}")
            kind = kinds[options[0]]
            for flag in p.flags:
                if not (re.fullmatch(r"--[a-z][a-z0-9-]*", flag) or re.fullmatch(r"-[a-zA-Z]", flag)):
                    raise TypeError(f"{verb.name}.{field.name}: the fast path reads no flag {flag!r}")
            if kind == "bool" and (not p.flags or field.default is not False):
                raise TypeError(f"{verb.name}.{field.name}: a bool must be a flag that defaults to off")
            if not p.flags and (not field.required or (p.words and kind != "str")):
                raise TypeError(f"{verb.name}.{field.name}: the fast path reads required positionals only")
            entry: dict[str, Any] = {"name": field.name, "flags": list(p.flags), "type": kind}
            if p.words:
                entry["words"] = True
            if p.ge is not None:
                entry["ge"] = p.ge
            if p.le is not None:
                entry["le"] = p.le
            if field.default is not dataclasses.MISSING:
                json.dumps(field.default)  # a default the request carries must be JSON
                entry["default"] = field.default
            params.append(entry)
        if sum(1 for e in params if e.get("words")) > 1 or (
            any(e.get("words") for e in params) and sum(1 for e in params if not e["flags"]) > 1
        ):
            raise TypeError(f"{verb.name}: a words argument must be the only positional one")
        verbs[verb.name] = params
    return {"verbs": verbs}


_SPEC: list[dict[str, Any] | None] = [None]


def _spec() -> dict[str, Any]:
    if _SPEC[0] is None:
        _SPEC[0] = json.loads(SPEC_FILE.read_text(encoding="utf-8"))
    assert _SPEC[0] is not None
    return _SPEC[0]


# -- parsing ---------------------------------------------------------------------------------------------


_COMMON: tuple[dict[str, Any], ...] = (
    {"name": "memory", "flags": list(MEMORY_FLAGS), "type": "str", "default": None},
    {"name": "as_json", "flags": [JSON_FLAG], "type": "bool", "default": False},
    {"name": "no_service", "flags": [NO_SERVICE_FLAG], "type": "bool", "default": False},
)


def _convert(param: dict[str, Any], value: str) -> tuple[bool, Any]:
    """``(True, value)`` as click converts and bounds it, or ``(False, None)`` when click would refuse."""
    kind = param["type"]
    if kind == "str":
        return True, value
    if kind == "int" and _INT.fullmatch(value):
        number: float = int(value)
    elif kind == "float" and _FLOAT.fullmatch(value):
        number = float(value)
    else:
        return False, None
    if ("ge" in param and number < param["ge"]) or ("le" in param and number > param["le"]):
        return False, None
    return True, number


def parse(argv: list[str]) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
    """``(verb, arguments, common options)`` when ``argv`` is a read verb this module fully reads.

    ``arguments`` holds every declared parameter of the verb (defaults filled in, words joined by
    spaces), as the typer command passes them on; ``None`` means: let the typer app decide.
    """
    if not argv:
        return None
    verb, rest = argv[0], argv[1:]
    declared = _spec()["verbs"].get(verb) if verb != STATUS else []
    if declared is None:
        return None
    read = _options(rest, [*declared, *_COMMON])
    if read is None:
        return None
    values, positional = read
    arguments = [p for p in declared if not p["flags"]]
    if arguments and arguments[0].get("words"):
        if not positional:
            return None  # typer: "Missing argument"
        values[arguments[0]["name"]] = " ".join(positional)
    elif len(positional) != len(arguments):
        return None  # a missing argument, or an extra one
    else:
        values.update(zip((p["name"] for p in arguments), positional, strict=True))
    args = {p["name"]: values.get(p["name"], p.get("default")) for p in declared}
    common = {p["name"]: values.get(p["name"], p["default"]) for p in _COMMON}
    return verb, args, common


_UI_OPTIONS: tuple[dict[str, Any], ...] = (
    {"name": "memory", "flags": list(MEMORY_FLAGS), "type": "str", "default": None},
    {"name": "open", "flags": [UI_OPEN_FLAG], "type": "bool", "default": False},
    {"name": "no_open", "flags": [UI_NO_OPEN_FLAG], "type": "bool", "default": False},
    {"name": "port", "flags": [UI_PORT_FLAG], "type": "int", "ge": 0, "le": 65535, "default": 0},
    {"name": "no_service", "flags": [NO_SERVICE_FLAG], "type": "bool", "default": False},
)


def parse_ui(argv: list[str]) -> dict[str, Any] | None:
    """``funes ui``'s options (``memory``, ``port``, ``open_browser``, ``no_service``) when this
    module fully reads ``argv`` (``ui`` and its options); ``None``: let the typer app decide."""
    if argv[:1] != [UI]:
        return None
    read = _options(argv[1:], list(_UI_OPTIONS))
    if read is None:
        return None
    values, positional = read
    if positional or (values.get("open") and values.get("no_open")):
        return None  # an extra argument; both --open and --no-open (typer: the last one wins)
    return {
        "memory": values.get("memory"),
        "port": values.get("port", 0),
        "open_browser": not values.get("no_open"),
        "no_service": bool(values.get("no_service")),
    }


def _options(rest: list[str], params: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]] | None:
    """``(option values by name, positional arguments)`` read from ``rest`` as click reads them;
    ``None`` for anything it does not fully read (typer then decides)."""
    long: dict[str, dict[str, Any]] = {}
    short: dict[str, dict[str, Any]] = {}
    for declared in params:
        for flag in declared["flags"]:
            (long if flag.startswith("--") else short)[flag] = declared
    values: dict[str, Any] = {}
    positional: list[str] = []
    only_arguments = False
    i = 0
    while i < len(rest):
        token = rest[i]
        i += 1
        if only_arguments or token == "-" or not token.startswith("-"):
            positional.append(token)
            continue
        if token == "--":
            only_arguments = True
            continue
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            param = long.get(name)
            explicit = bool(eq)
        else:
            name, value = token[:2], token[2:]
            param = short.get(name)
            explicit = bool(value)
        if param is None:
            return None  # --help, -h, a misspelling, another verb's option: typer says what
        if param["type"] == "bool":
            if explicit:
                return None  # --json=1, or a cluster of short flags
            values[param["name"]] = True
            continue
        if not explicit:
            if i >= len(rest):
                return None  # typer: "Option requires an argument"
            value = rest[i]
            i += 1
        if value.startswith(("-", "=")):
            return None  # typer takes it as the value; when in doubt, typer decides
        ok, converted = _convert(param, value)
        if not ok:
            return None
        values[param["name"]] = converted
    return values, positional


# -- answering -------------------------------------------------------------------------------------------


def _utf8(stream: TextIO | None) -> bool:
    import codecs

    try:
        return stream is not None and codecs.lookup(stream.encoding).name == "utf-8"
    except (AttributeError, LookupError, TypeError):
        return False


def _echo(text: str, *, err: bool = False) -> None:
    """``typer.echo(text, nl=False)`` for a str: ANSI codes stripped off a terminal, then flushed."""
    stream = sys.stderr if err else sys.stdout
    if text and not stream.isatty():
        text = _ANSI.sub("", text)
    stream.write(text)
    stream.flush()


class _Pacified:
    """A stream whose flush ignores a closed pipe (click's answer to ``funes recall | head``)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def answer(argv: list[str]) -> int | None:
    """Answer ``argv`` through the running service: the exit status, or ``None`` to fall back.

    Prints nothing before it knows it answers (then exactly what the typer command prints), so a
    fall-back run starts from a clean slate. Once this process asked the service in vain, the typer
    command does not ask again (:func:`funes_core.serve.client.stop_asking`).
    """
    if os.environ.get(SWITCH_ENV, "1") == "0":
        return None
    if not (_utf8(sys.stdout) and _utf8(sys.stderr)):
        return None  # click would re-wrap the streams: let it
    try:
        for token in argv:
            token.encode("utf-8")
    except UnicodeEncodeError:
        return None  # bytes that are not UTF-8 in the command line
    ui = parse_ui(argv)
    if ui is not None:
        from funes_core.faces.cli.ui_front import answer as view

        return view(**ui)
    parsed = parse(argv)
    if parsed is None:
        return None
    verb, args, common = parsed
    memory, as_json = common["memory"], bool(common["as_json"])
    if common["no_service"] or not service_spec(memory):
        return None
    from funes_core.serve import client

    if verb == STATUS:
        request: dict[str, Any] = {"verb": STATUS, "memory": memory}
    else:
        request = read_request(verb, args, memory, as_json)
    try:
        reply = client.ask(request)
        if reply is None:
            client.stop_asking()
            return None
        if not reply.get("ok"):  # the verb's own one-line error
            _echo(f"funes: {reply.get('error')}\n", err=True)
            return 1
        if verb == STATUS:
            data, info = reply["json"], reply["info"]
            _echo(status_output(data, str(reply["text"]), str(reply["line"]), info, as_json))
            return int(reply["exit"])
        sys.stdout.write(str(reply.get("text", "")))
        sys.stdout.flush()
        return 0
    except KeyboardInterrupt:
        return 130  # as typer exits on Ctrl-C
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        sys.stdout = _Pacified(sys.stdout)
        sys.stderr = _Pacified(sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    """``python -m funes_core.faces.cli.fast [--write]``: print (or rewrite) ``fast_verbs.json``."""
    from funes_core.files import snapshot_main

    return snapshot_main(SPEC_FILE, record_spec(), sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    raise SystemExit(main())

"""What the read verbs share: parameter declarations, units and turns, days, hints and errors.

Each verb module (:mod:`~funes_core.read.recall`, ``get``, ``sessions``, ``scan``, ``sketch``,
``status``, ``triggers``) declares its parameters once, as an *arguments dataclass* whose fields
carry a :class:`Param`; the CLI and the MCP server both build their signatures from that one
declaration (:func:`fields_of`), so a flag's name, default, bounds and help cannot drift between
the two faces. A verb is described to the faces by a :class:`Verb`.

Everything here works on *units*: one unit is one whole block of one turn, its splits stitched
back together (:func:`funes_core.ingest.chunking.stitch`). Stored text is already rendered
(``[tool_use Bash] …``) and is never re-rendered. A user asking to read a session wants blocks,
not the 1,200-character pieces the embedder needed.

Errors a caller made (an unknown session, a bad parameter) raise :class:`VerbError`, whose message
is the one line to show (``no session <id> in <label>``); the CLI prints it and exits 1, the MCP
server turns it into an error result. Results that are merely empty (a range outside the session,
no match) are not errors: they render as their documented messages. Readers never take the store
lock: the memory is append-only, so a read that races a writer sees the old rows or the new ones.

Imports stay light (no numpy, no store): the CLI builds its commands from these declarations on
every start, including the per-turn hooks' ``funes`` calls.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar

from funes_core.ingest.chunking import stitch
from funes_core.safetext import one_line, shell_word, unescape

if TYPE_CHECKING:
    from funes_core.read.handle import Memory, Readable
    from funes_core.store.base import Row, Store

__all__ = [
    "MAX_OUTPUT_CHARS",
    "SCAFFOLDING_PREFIXES",
    "SPLIT_GAP",
    "AsOf",
    "FromSeq",
    "HarnessFilter",
    "Param",
    "ParamField",
    "RepoFilter",
    "SessionId",
    "Since",
    "StoreReading",
    "ToSeq",
    "TurnView",
    "Unit",
    "Until",
    "Verb",
    "VerbError",
    "check_window",
    "collapse",
    "dump",
    "fields_of",
    "get_hint",
    "get_ref",
    "in_window",
    "injected",
    "is_scaffolding",
    "no_turns",
    "opening_unit",
    "parse_as_of",
    "parse_day",
    "session8",
    "session_rows",
    "turn_keys",
    "turns_of",
    "units_of",
]

#: Every read verb's text output stops before it would pass this many characters (code points).
MAX_OUTPUT_CHARS = 40_000

#: Joins two stored splits of one block whose neighbour between them is missing (a row lost to
#: ``scrub``): stitching them would silently glue distant text together, so the gap is shown.
SPLIT_GAP = "\n…\n"

#: Text the harness injects into a *user* turn, which is never the user's ask: slash-command
#: echoes and their output (Claude Code ``<command-name>``, ``<local-command-stdout>``), the
#: ``Caveat:`` preface of those, system reminders, hook output, IDE context, bash-mode echoes,
#: interruption markers and compaction summaries (Claude Code); environment context, user
#: instructions, AGENTS.md preambles and turn-aborted markers (Codex). Matched as prefixes of the
#: block's text with leading whitespace removed. Reference open question 6 leaves the list to us.
SCAFFOLDING_PREFIXES: tuple[str, ...] = (
    "<command-",
    "<local-command-",
    "<system-reminder>",
    "Caveat:",
    "<user-prompt-submit-hook>",
    "<ide_opened_file>",
    "<ide_selection>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "[Request interrupted by user",
    "This session is being continued from a previous conversation",
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<turn_aborted>",
    "# AGENTS.md instructions",
)


class VerbError(ValueError):
    """A read verb could not run; the message is the one line shown to the user or agent."""


# -- parameter declarations ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Param:
    """One verb parameter, declared once for every face.

    ``flags`` are its command-line option names (none: a positional argument); ``wire`` is its
    name over MCP and in messages when the Python name differs (``from_`` travels as ``from``);
    ``ge``/``le`` bound numbers on both faces; ``choices`` close a string to a set of values (the
    verb still checks, so a bad value gets the verb's own one-line message); ``min_length`` refuses
    an empty string over MCP; ``words`` makes the command line take several words joined by spaces.
    """

    help: str
    flags: tuple[str, ...] = ()
    wire: str | None = None
    ge: float | None = None
    le: float | None = None
    choices: tuple[str, ...] | None = None
    min_length: int | None = None
    words: bool = False


@dataclass(frozen=True, slots=True)
class ParamField:
    """A field of an arguments dataclass, as a face binds it."""

    name: str
    type: Any
    param: Param
    #: ``dataclasses.MISSING`` for a required field.
    default: Any

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING

    @property
    def wire(self) -> str:
        return self.param.wire or self.name


def fields_of(args_type: type[Any]) -> list[ParamField]:
    """The :class:`Param`-annotated fields of an arguments dataclass, in declaration order."""
    hints = typing.get_type_hints(args_type, include_extras=True)
    out: list[ParamField] = []
    for f in dataclasses.fields(args_type):
        if f.metadata.get("face") is False:  # a programmatic knob (e.g. recall's legs), on no face
            continue
        hint = hints[f.name]
        params = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Param)]
        if len(params) != 1:
            raise TypeError(f"{args_type.__name__}.{f.name} needs exactly one Param annotation")
        out.append(ParamField(f.name, typing.get_args(hint)[0], params[0], f.default))
    return out


ArgsT = TypeVar("ArgsT")


@dataclass(frozen=True, slots=True)
class Verb(Generic[ArgsT]):
    """A read verb as the faces see it: its name, arguments, runner and its two help texts."""

    name: str
    args: type[ArgsT]
    #: ``run(memory, args, as_json=...)`` → the agent text (or the ``--json`` document).
    run: Callable[..., str]
    #: ``funes <name> --help``: for a person at a terminal.
    cli_help: str
    #: The MCP tool description: for a model deciding when to call it.
    tool_help: str
    #: Whether it reads several memories at once (``--memory local,team``); the others read one.
    many: bool = False

    def call(self, memory: Readable, args: ArgsT, *, as_json: bool = False) -> str:
        """``run`` over what the face opened: a set of memories only for a verb that reads ``many``."""
        return str(self.run(memory if self.many else memory.one(self.name), args, as_json=as_json))


ResultT = TypeVar("ResultT")


@dataclass(frozen=True, slots=True)
class StoreReading(Generic[ArgsT, ResultT]):
    """A verb that reads one open store, as ``get``, ``sessions``, ``scan`` and ``sketch`` do.

    Each of them is three steps: find its result in the store (``read``), then render it as the
    agent text (``render``) or as the ``--json`` document (``to_json``), both told the memory's
    label for their hints. Declaring the steps here gives every such verb the same two entry points,
    so they cannot drift: :meth:`text` over a store already open (the tests, other faces) and
    :meth:`run` over a :class:`~funes_core.read.handle.Memory` (the ``run`` of its :class:`Verb`).
    """

    read: Callable[[Store, str, ArgsT], ResultT]
    render: Callable[[ResultT, str], str]
    to_json: Callable[[ResultT, str], str]

    def text(self, store: Store, label: str, args: ArgsT, *, as_json: bool = False) -> str:
        """The verb over an open store: the agent text, or its ``--json`` document."""
        result = self.read(store, label, args)
        return self.to_json(result, label) if as_json else self.render(result, label)

    def run(self, memory: Memory, args: ArgsT, *, as_json: bool = False) -> str:
        """The verb over a memory, opened on this first use (``funes <verb>`` / the MCP tool)."""
        return self.text(memory.store(), memory.label, args, as_json=as_json)


#: Parameters several verbs share, declared here once.
SessionId = Annotated[str, Param("The session id (from a recall hit or `sessions`).", min_length=1)]
FromSeq = Annotated[int | None, Param("First turn (seq) to read, inclusive.", ("--from",), wire="from", ge=0)]
ToSeq = Annotated[int | None, Param("Last turn (seq) to read, inclusive.", ("--to",), ge=0)]
Since = Annotated[str | None, Param("From this day on, YYYY-MM-DD (UTC, inclusive).", ("--since",))]
Until = Annotated[str | None, Param("Up to this day, YYYY-MM-DD (UTC, inclusive).", ("--until",))]
HarnessFilter = Annotated[str | None, Param("Only this agent (claude, codex, …).", ("--harness",))]
RepoFilter = Annotated[str | None, Param("Only this repository, owner/name.", ("--repo",))]
AsOf = Annotated[
    str | None,
    Param(
        "Ask as of this moment instead of now: YYYY-MM-DD (the end of that day, UTC) or an ISO time "
        "(2026-03-01T09:00+02:00; no offset means UTC). Time words ('yesterday') and freshness are "
        "read against it, and passages of later days are left out.",
        ("--as-of",),
    ),
]


def parse_day(value: str | None, flag: str) -> date | None:
    """``YYYY-MM-DD`` → date, with an error naming the flag; ``None`` or ``""`` → ``None``."""
    if value is None or value == "":
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise VerbError(f"{flag}: {value!r} is not a date (YYYY-MM-DD)") from None


def parse_as_of(value: str | None, now: datetime, flag: str = "--as-of") -> datetime | None:
    """``--as-of``'s moment as an aware UTC datetime; ``None`` or ``""`` → ``None`` (now).

    A bare day means the end of that day in UTC (so "as of 1 March" includes 1 March), today's
    end being capped at ``now``; a time with an offset is converted to UTC, one without is UTC.
    A moment after ``now`` is refused: the memory cannot be asked what it will hold.
    """
    if value is None or value == "":
        return None
    text = value.strip()
    try:
        if len(text) == 10:  # YYYY-MM-DD
            day = date.fromisoformat(text)
            moment = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1, microseconds=-1)
            if day == now.astimezone(UTC).date():
                moment = now.astimezone(UTC)
        else:
            parsed = datetime.fromisoformat(text)
            moment = (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
    except ValueError:
        raise VerbError(
            f"{flag}: {value!r} is not a date or time "
            "(YYYY-MM-DD, or an ISO time such as 2026-03-01T09:00+02:00)"
        ) from None
    if moment > now:
        stamp = now.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        raise VerbError(f"{flag}: {value!r} is in the future (it is {stamp}): give a moment up to now")
    return moment


def check_window(seq_from: int | None, seq_to: int | None) -> None:
    """Refuse a negative seq or a window whose start is after its end."""
    for name, value in (("--from", seq_from), ("--to", seq_to)):
        if value is not None and value < 0:
            raise VerbError(f"{name} must be 0 or more (got {value})")
    if seq_from is not None and seq_to is not None and seq_from > seq_to:
        raise VerbError(f"--from {seq_from} is after --to {seq_to}")


# -- hints and shared text ------------------------------------------------------------------------------


# Every field printed in agent text comes from a transcript, so it goes through
# :mod:`funes_core.safetext`: metadata on one line (``one_line``), passages with their newlines but no
# other control characters (``passage``), command arguments shell-quoted (``shell_word``). Ids stored
# since the id charset exist are unchanged by all three; older rows print safely too.


def session8(session_id: str) -> str:
    return one_line(session_id[:8])


def get_hint(session_id: str, seq: int, label: str) -> str:
    """The ``→ get`` line: a ±3-turn window around ``seq``, clamped at 0.

    The session id and the label are shell-quoted (a no-op for legal ids and ordinary paths), so a
    person who pastes the line into a shell runs exactly ``funes get`` on that session.
    """
    return (
        f"  → get {shell_word(session_id)} --from {max(seq - 3, 0)} --to {seq + 3} "
        f"--memory {shell_word(label)}"
    )


def get_ref(session_id: str, seq: int, label: str) -> str:
    """The ``get`` hint as a bare command (``get <id> --from …``), for JSON documents."""
    return get_hint(session_id, seq, label).strip().removeprefix("→ ")


def no_turns(session_id: str, total: int) -> str:
    return f"no turns in that range of session {one_line(session_id)} (it holds {total})"


def dump(doc: dict[str, Any]) -> str:
    """A ``--json`` document: indented, UTF-8 kept, one trailing newline."""
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


# -- units and turns --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unit:
    """One whole block of one turn: its splits stitched back, with the turn's provenance."""

    session_id: str
    turn_uuid: str
    seq: int
    ts: str
    role: str
    harness: str
    block_idx: int
    block_type: str
    tool_name: str | None
    taint: str
    text: str
    #: The stored rows this unit was stitched from, in split order.
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TurnView:
    """One turn as ``get`` prints it: its units in block order."""

    seq: int
    turn_uuid: str
    ts: str
    role: str
    harness: str
    units: tuple[Unit, ...]


def _join_splits(rows: Sequence[Row]) -> str:
    text = rows[0].text
    for prev, row in itertools.pairwise(rows):
        text = stitch(text, row.text) if row.split_idx == prev.split_idx + 1 else text + SPLIT_GAP + row.text
    return text


def units_of(rows: Iterable[Row]) -> list[Unit]:
    """Stitch rows into units, in reading order (seq, turn_uuid, block_idx).

    Rows are grouped by (seq, turn_uuid, block_idx) and ordered by split_idx. A duplicated
    (block, split) pair (the same chunk id stored twice, which ``doctor`` repairs) is read once.
    """
    groups: dict[tuple[int, str, int], dict[int, Row]] = {}
    for row in rows:
        groups.setdefault((row.seq, row.turn_uuid, row.block_idx), {}).setdefault(row.split_idx, row)
    units: list[Unit] = []
    for key in sorted(groups):
        splits = [groups[key][i] for i in sorted(groups[key])]
        first = splits[0]
        units.append(
            Unit(
                session_id=first.session_id,
                turn_uuid=first.turn_uuid,
                seq=first.seq,
                ts=first.ts,
                role=first.role,
                harness=first.harness,
                block_idx=first.block_idx,
                block_type=first.block_type,
                tool_name=first.tool_name,
                taint=first.taint,
                text=_join_splits(splits),
                chunk_ids=tuple(r.id for r in splits),
            )
        )
    return units


def turns_of(units: Iterable[Unit]) -> list[TurnView]:
    """Group units (already in reading order) into turns keyed by (seq, turn_uuid)."""
    grouped: dict[tuple[int, str], list[Unit]] = {}
    for unit in units:
        grouped.setdefault((unit.seq, unit.turn_uuid), []).append(unit)
    turns: list[TurnView] = []
    for (seq, turn_uuid), members in sorted(grouped.items()):
        head = members[0]
        turns.append(TurnView(seq, turn_uuid, head.ts, head.role, head.harness, tuple(members)))
    return turns


def turn_keys(rows: Iterable[Row]) -> set[tuple[int, str]]:
    return {(r.seq, r.turn_uuid) for r in rows}


def session_rows(store: Store, label: str, session_id: str) -> list[Row]:
    """All of a session's rows (text only), or :class:`VerbError` when the memory has none."""
    rows = store.session_rows(session_id)
    if not rows and unescape(session_id) != session_id:
        # A hint printed for an id stored with control characters (before ids had a charset) shows
        # them escaped; reading it back finds the session.
        rows = store.session_rows(unescape(session_id))
    if not rows:
        raise VerbError(f"no session {one_line(session_id)} in {one_line(label)}")
    return rows


def in_window(rows: Iterable[Row], seq_from: int | None, seq_to: int | None) -> list[Row]:
    return [
        r for r in rows if (seq_from is None or r.seq >= seq_from) and (seq_to is None or r.seq <= seq_to)
    ]


def collapse(text: str) -> str:
    """Whitespace runs (newlines included) become one space; ends trimmed."""
    return " ".join(text.split())


def is_scaffolding(text: str) -> bool:
    """Whether a user text block is harness-injected (see :data:`SCAFFOLDING_PREFIXES`) or blank."""
    head = text.lstrip()
    return not head or head.startswith(SCAFFOLDING_PREFIXES)


def injected(unit: Unit) -> bool:
    """A user text block the harness wrote (scaffolding): never an ask, never a sketch place."""
    return unit.role == "user" and unit.block_type == "text" and is_scaffolding(unit.text)


def opening_unit(units: Sequence[Unit]) -> Unit | None:
    """The opening ask: the first user text block that is not scaffolding.

    Data whose producer has no ``user`` role (or whose user turns are all scaffolding) falls back
    to the first non-scaffolding text block of any role. Scaffolding is never a fallback: an
    echoed ``<command-name>`` says nothing about what the session was for.
    """
    texts = [u for u in units if u.block_type == "text" and not is_scaffolding(u.text)]
    for unit in texts:
        if unit.role == "user":
            return unit
    return texts[0] if texts else None

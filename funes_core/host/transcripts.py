"""Helpers for reading agents' transcripts: timestamps, ids, blank text, tolerant JSON lines and arrays.

Every converter needs the same few things, and the first five plugins each wrote their own: five
timestamp parsers that disagreed (a lowercase ``z``, seconds versus milliseconds), four "blank"
tests, four JSON-lines readers. These are the one copy, with their policies written down here
and in ``docs/turns-format.md``.

**Timestamp policy** (:func:`parse_ts`):

* the result is RFC 3339 UTC with ``Z`` (:func:`funes_core.format_ts`), or ``None`` when the
  value is not a time (the caller then falls back, usually to the previous turn's time);
* a string with an offset (``+02:00``, ``Z`` or ``z``) is converted to UTC;
* a string **without an offset is UTC**, never the machine's local time: a converter's output
  must not depend on the zone of the machine it runs on (the kit runs every converter test under
  UTC and under UTC+14 to prove it);
* a number is an epoch time; ``epoch="auto"`` reads its unit from its size (below 1e11:
  seconds, below 1e14: milliseconds, else microseconds; every date from 1973 to 5138 is read
  right), ``"s"``, ``"ms"`` and ``"us"`` force one; a numeric string is *not* an epoch (an agent
  that writes epochs as strings says so by converting first);
* a string already in that UTC form may be kept as written (``verbatim_utc=True``, what Codex
  rollouts get, so their millisecond precision survives);
* **the one exception**: an agent that writes the machine's *local* time without an offset
  (aider's ``# aider chat started at 2026-03-02 09:14:03``) declares
  ``Capabilities(local_time=True)`` and reads such strings with ``naive="local"``: they are taken
  in the zone of the machine converting them (the machine the agent ran on, for a local agent),
  with its daylight-saving rule for that date (a time a clock change repeats or skips is read
  with ``fold=0``, as Python's ``datetime.astimezone`` reads it). The kit
  then checks that a far-off zone moves exactly those times by exactly that zone's offset;
* booleans, NaN, infinities and dates outside the years 1-9999 give ``None``.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from funes_core.turns.format import Block, Turn, _clean_surrogates, format_ts, is_utc_ts, safe_id

__all__ = [
    "WHITE_SPACE",
    "FunctionCall",
    "JsonLines",
    "Skipped",
    "clean_id",
    "clean_text",
    "compact_json",
    "export_problem",
    "function_call",
    "is_blank",
    "parse_ts",
    "read_json_array",
    "read_json_lines",
    "sqlite_readonly",
]

#: The characters Unicode calls White_Space: what "blank" means in every funes converter
#: (``str.isspace`` also counts the information separators U+001C-U+001F, which are not).
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)

EpochUnit = Literal["auto", "s", "ms", "us"]
_DIVISOR = {"s": 1.0, "ms": 1e3, "us": 1e6}


def _epoch_seconds(value: float, unit: EpochUnit) -> float:
    if unit != "auto":
        return value / _DIVISOR[unit]
    size = abs(value)
    if size < 1e11:
        return float(value)
    if size < 1e14:
        return value / 1e3
    return value / 1e6


def parse_ts(
    value: object,
    *,
    epoch: EpochUnit = "auto",
    verbatim_utc: bool = False,
    naive: Literal["utc", "local"] = "utc",
) -> str | None:
    """A transcript's time as RFC 3339 UTC with ``Z``, or ``None`` (see the module's policy).

    With ``verbatim_utc`` a string already in that form (``2026-11-29T12:58:41.554Z``) is kept as
    written, with its own precision, instead of being re-rendered (``….554000Z``). ``naive``
    says how a string without an offset is read: ``"utc"`` (the policy) or ``"local"``, for an
    agent that declares ``Capabilities(local_time=True)``.
    """
    if naive not in ("utc", "local"):
        raise ValueError(f"naive must be 'utc' or 'local', not {naive!r}")
    if isinstance(value, bool):
        return None
    if verbatim_utc and isinstance(value, str) and is_utc_ts(value.strip()):
        return value.strip()
    try:
        if isinstance(value, int | float):
            if not math.isfinite(value):
                return None
            return format_ts(datetime.fromtimestamp(_epoch_seconds(value, epoch), tz=UTC))
        if isinstance(value, str) and value.strip():
            text = value.strip()
            if text[-1:] in ("z", "Z"):
                text = text[:-1] + "+00:00"
            moment = datetime.fromisoformat(text)
            if moment.tzinfo is None:
                # astimezone() on a naive datetime reads it in the machine's zone (fold=0).
                moment = moment.astimezone(UTC) if naive == "local" else moment.replace(tzinfo=UTC)
            return format_ts(moment)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def clean_id(value: object) -> str | None:
    """An id usable in the turns format, or ``None``.

    Strings and integers are accepted (stripped; ``:`` becomes ``-``, since funes builds chunk
    ids as ``session:turn:...``, then :func:`funes_core.turns.format.safe_id` maps anything
    outside the id charset deterministically); anything else, or what is empty after stripping,
    is ``None``. An id built from a clean one (``f"{uuid}@{n}"``) goes through ``safe_id`` again.
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip().replace(":", "-")
    return safe_id(text) if text else None


def is_blank(text: str) -> bool:
    """Whether ``text`` holds only Unicode White_Space (or nothing): such a block is dropped."""
    return all(char in WHITE_SPACE for char in text)


def clean_text(text: str) -> str:
    """``text`` with lone UTF-16 surrogates (from ``\\udXXX`` escapes in an agent's JSON) as U+FFFD.

    UTF-8 cannot encode them, so a turns file holding one could not be written; the same rule
    the turns reader applies.
    """
    return _clean_surrogates(text)


def compact_json(value: object) -> str:
    """``value`` as compact JSON in its own key order, non-ASCII kept (how tool inputs are stored)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def json_strings(value: object) -> Iterator[str]:
    """Every string inside a decoded JSON value, in document order (keys left out).

    What a reader takes from a JSON payload: the text a model would read in a request, or the
    values of a tool call's input.
    """
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


def _verbatim_id(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _result_text(content: object) -> str:
    """A tool result's text: the string, or the text parts of a list joined with ``\\n``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text")
        return "\n".join(t for t in texts if isinstance(t, str))
    return "" if content is None else compact_json(content)


def anthropic_blocks(
    content: object, tool_names: dict[str, str], *, clean_ids: bool = False, bare_strings: bool = True
) -> list[Block]:
    """The non-blank blocks of one message's ``content`` in Anthropic's Messages form, in order.

    Claude Code and Factory Droid record messages this way. A string is one text block; in a list,
    ``text``, ``thinking`` (its ``thinking`` text), ``tool_use`` (the ``input`` as compact JSON,
    in source key order) and ``tool_result`` (a string, or its text parts joined with ``\\n``)
    become blocks; images and documents carry no text and are left out. ``tool_names`` maps a call
    id to the name of the latest call seen so far, so a result is named after the call before it
    (a call records its name even when its input is blank). Call ids are kept as written, or
    through :func:`clean_id` with ``clean_ids``; ``bare_strings`` reads a plain string in the list
    as a text part (Claude Code's older records), otherwise it is skipped.
    """
    if isinstance(content, str):
        return [] if is_blank(content) else [Block("text", content)]
    ident = clean_id if clean_ids else _verbatim_id
    blocks: list[Block] = []
    for part in content if isinstance(content, list) else []:
        block: Block | None = None
        if isinstance(part, str) and bare_strings:
            block = Block("text", part)
        elif not isinstance(part, dict):
            continue
        elif part.get("type") == "text" and isinstance(part.get("text"), str):
            block = Block("text", part["text"])
        elif part.get("type") == "thinking" and isinstance(part.get("thinking"), str):
            block = Block("thinking", part["thinking"])
        elif part.get("type") == "tool_use":
            name = part.get("name") if isinstance(part.get("name"), str) else None
            call_id = ident(part.get("id"))
            if call_id and name:
                tool_names[call_id] = name  # before the blank check: an empty call still names
            block = Block(
                "tool_use", compact_json(part.get("input", {})), tool_name=name, tool_use_id=call_id
            )
        elif part.get("type") == "tool_result":
            call_id = ident(part.get("tool_use_id"))
            name = tool_names.get(call_id) if call_id else None
            block = Block(
                "tool_result", _result_text(part.get("content")), tool_name=name, tool_use_id=call_id
            )
        if block is not None and not is_blank(block.text):
            blocks.append(block)
    return blocks


class RecordTurns:
    """The turns of one session, built record by record from records that carry their own id.

    For an agent that appends one JSON record per message and names each (Claude Code's ``uuid``,
    Factory Droid's ``id``). Such a file can hold a record twice (a resumed session, a retried
    write): the same id with the same role and blocks yields its turn once, and the same id with
    other content is kept as ``<id>@<n>``, its n-th occurrence, so nothing the agent wrote is lost
    and nothing doubles. A record without blocks yields no turn but still counts as an occurrence,
    so ``n`` never depends on what was kept. ``seq`` counts the turns kept, in order.
    """

    def __init__(self, session_id: str, harness: str, cwd: str | None = None) -> None:
        self.session_id = session_id
        self.harness = harness
        self.cwd = cwd
        #: The turns added so far, in order.
        self.turns: list[Turn] = []
        self._emitted: dict[str, set[tuple[str, tuple[Block, ...]]]] = {}
        self._occurrences: dict[str, int] = {}

    def add(
        self, record_id: str, ts: str, role: str, blocks: Iterable[Block], parent_uuid: str | None = None
    ) -> bool:
        """Adds the turn of one record; ``False`` when it has no block or repeats one already added."""
        said = (role, tuple(blocks))
        count = self._occurrences[record_id] = self._occurrences.get(record_id, 0) + 1
        if not said[1] or said in self._emitted.get(record_id, set()):
            return False
        self._emitted.setdefault(record_id, set()).add(said)
        self.turns.append(
            Turn(
                session_id=self.session_id,
                turn_uuid=safe_id(f"{record_id}@{count}") if count > 1 else record_id,
                seq=len(self.turns),
                ts=ts,
                role=role,
                harness=self.harness,
                blocks=said[1],
                cwd=self.cwd,
                parent_uuid=parent_uuid,
            )
        )
        return True


class FunctionCall(NamedTuple):
    """One OpenAI-style tool call, read: what a ``tool_use`` block is made of."""

    name: str
    arguments: str
    call_id: str | None


def function_call(call: object) -> FunctionCall | None:
    """``{"id", "function": {"name", "arguments"}}`` (the chat/completions shape) read tolerantly.

    Several agents keep the model's tool calls exactly as the OpenAI chat API gave them (the
    Continue CLI, Mistral Vibe), so they are read once here: ``arguments`` verbatim when it is a
    non-blank string (what the model wrote, even when it is not valid JSON), else compact JSON of
    whatever is there (``{}`` for nothing or a blank string); ``None`` for a call with no named function.
    """
    function = call.get("function") if isinstance(call, dict) else None
    if (
        not isinstance(call, dict)
        or not isinstance(function, dict)
        or not isinstance(function.get("name"), str)
    ):
        return None
    args = function.get("arguments")
    if isinstance(args, str):
        text = args if args.strip() else "{}"
    else:
        text = compact_json({} if args is None else args)
    return FunctionCall(function["name"], text, clean_id(call.get("id")))


@dataclass(frozen=True, slots=True)
class Skipped:
    """A line of a JSON-lines file that was not a record, and why."""

    line: int
    reason: str


@dataclass(slots=True)
class JsonLines:
    """The readable records of a JSON-lines file, and what was skipped.

    ``records`` holds ``(position, record)`` where ``position`` counts readable records only
    (1, 2, 3, ...): ids made from it never shift when a corrupt line appears or disappears.
    """

    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def __iter__(self) -> Any:
        return iter(self.records)

    def objects(self) -> list[dict[str, Any]]:
        """The records alone, in order."""
        return [record for _, record in self.records]


def read_json_lines(
    path: Path, *, limit: int | None = None, until: Callable[[dict[str, Any]], bool] | None = None
) -> JsonLines:
    """Every JSON-object line of ``path``, tolerantly.

    ``limit`` stops after that many records, ``until`` after the first record it accepts (what a
    ``sessions_in`` needs to recognise a transcript cheaply: read up to the first message).

    The file is read as bytes and split on ``\\n`` only (U+2028 is legal inside a JSON string and
    agents write it raw); each line is decoded on its own (a bad byte becomes U+FFFD), so a torn
    multi-byte character spoils only its line. A blank line is passed over silently; a line that
    is not JSON, or not an object, is skipped and reported in :attr:`JsonLines.skipped` (the last
    line of a file without a final newline is reported as torn: the agent is probably still
    writing it). A file
    that cannot be read gives an empty result.
    """
    out = JsonLines()
    try:
        data = path.read_bytes()
    except OSError as exc:
        out.skipped.append(Skipped(0, f"unreadable: {exc.strerror or exc}"))
        return out
    lines = data.split(b"\n")
    last = len(lines)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            torn = number == last and not data.endswith(b"\n")
            out.skipped.append(Skipped(number, "torn last line" if torn else "not JSON"))
            continue
        if not isinstance(record, dict):
            out.skipped.append(Skipped(number, f"a JSON {type(record).__name__}, not an object"))
            continue
        out.records.append((len(out.records) + 1, record))
        if (limit is not None and len(out.records) >= limit) or (until is not None and until(record)):
            break
    return out


def read_json_array(path: Path) -> JsonLines:
    """The object items of a file holding one JSON array (an export's ``conversations.json``), tolerantly.

    Exports are one document, not JSON lines, yet a file being downloaded or unpacked is cut
    somewhere: ``json.load`` would give nothing at all. The items are read one by one, so those
    complete before a tear are all returned (the tear is reported in :attr:`JsonLines.skipped`
    as ``"torn"``, and nothing after it is read); an item that is not an object is skipped and
    reported, and positions count objects only, as in :func:`read_json_lines`. ``Skipped.line``
    is the 1-based item number. Bytes that are not UTF-8 become U+FFFD; a file that is not an
    array, or cannot be read, gives an empty result with the reason.
    """
    out = JsonLines()
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        out.skipped.append(Skipped(0, f"unreadable: {exc.strerror or exc}"))
        return out
    decoder = json.JSONDecoder()
    at = _skip_space(text, 0)
    if text[at : at + 1] != "[":
        out.skipped.append(Skipped(0, "not a JSON array"))
        return out
    at = _skip_space(text, at + 1)
    number = 0
    while at < len(text) and text[at] != "]":
        number += 1
        try:
            item, at = decoder.raw_decode(text, at)
        except ValueError:
            out.skipped.append(Skipped(number, "torn"))
            return out
        if isinstance(item, dict):
            out.records.append((len(out.records) + 1, item))
        else:
            out.skipped.append(Skipped(number, f"a JSON {type(item).__name__}, not an object"))
        at = _skip_space(text, at)
        if text[at : at + 1] == ",":
            at = _skip_space(text, at + 1)
        elif text[at : at + 1] != "]":
            out.skipped.append(Skipped(number + 1, "torn"))
            return out
    if at >= len(text):
        out.skipped.append(Skipped(number + 1, "torn"))
    return out


def _skip_space(text: str, at: int) -> int:
    """The index of the first character at or after ``at`` that is not JSON white space."""
    while at < len(text) and text[at] in " \t\n\r":
        at += 1
    return at


def export_problem(read: JsonLines, kept: int, what: str) -> str | None:
    """What is wrong with an export file, in one line for its user, or ``None`` when nothing is.

    ``read`` is the file's :func:`read_json_array`, ``kept`` how many of its items the converter
    recognised as ``what`` (``"ChatGPT conversations"``). Without this line a torn download, or a
    file that is not an export at all, would only show as fewer (or no) sessions to index.
    """
    reasons = {s.reason for s in read.skipped}
    if any(r.startswith("unreadable") or r == "not a JSON array" for r in reasons):
        reason = next(r for r in reasons if r.startswith("unreadable") or r == "not a JSON array")
        return f"{reason}: not an export of {what}; nothing read"
    if "torn" in reasons:
        return (
            f"cut short (a download or unzip not finished?): read the {kept} complete {what} before the cut"
        )
    if kept == 0 and (read.records or read.skipped):
        return f"holds no {what} (a JSON array of something else); nothing read"
    return None


@contextmanager
def sqlite_readonly(path: Path) -> Iterator[sqlite3.Connection | None]:
    """An agent's SQLite store, opened to read and leave no trace (``None`` when it cannot be opened).

    While the agent runs (its write-ahead log exists beside the file), ``mode=ro`` goes through
    SQLite's own locking, so rows being committed are wholly visible or not at all. With no log
    nothing is being written: the file is opened ``immutable``, so SQLite creates no ``-wal`` or
    ``-shm`` file in the user's folder. Text comes back as bytes (``text_factory``), so a converter
    decodes each row itself and one bad row cannot fail a whole query. OpenCode, Kilo, Hermes and
    Crush read their stores through it.
    """
    if not path.is_file():
        yield None
        return
    live = path.with_name(path.name + "-wal").exists()
    try:
        conn = sqlite3.connect(
            path.absolute().as_uri() + ("?mode=ro" if live else "?immutable=1"), uri=True, timeout=5
        )
    except sqlite3.Error:
        yield None
        return
    with closing(conn):
        conn.text_factory = bytes
        yield conn

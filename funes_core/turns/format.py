"""The turns format: the one input the core reads.

A turns file (``*.funes.jsonl``) holds one JSON object per line, each a :class:`Turn`. Every
integration converts its agent's own transcripts into this format, so the core never needs to
know what a Claude Code or Codex transcript looks like.

A file is accepted or rejected *whole*: one bad line rejects it, and the error names the file,
the 1-based line, the field and what is wrong. That way a half-understood file is never half
stored. The JSON Schema shipped in ``funes_core/turns/turns.schema.json`` is the published
contract; this module adds the rules a schema cannot express (a real calendar date in ``ts``,
dense ``seq`` per session, duplicate turns) and turns schema errors into one-line messages.

A turns file is untrusted input (a colleague's export, a web page, a hostile repository's
transcript), so reading it is bounded and quiet about what it holds:

- **ids** (``session_id``, ``turn_uuid``, ``parent_uuid``) come from a small safe character set
  (:data:`ID_PATTERN`): they are printed in agent text and in copy-pasteable ``get`` hints, used in
  file names and hashed into chunk ids. Producers map other ids with :func:`safe_id`;
- **sizes** are capped: a line is read up to :data:`MAX_LINE_BYTES` (strings in a longer line are cut,
  with a marker saying how much was left out), a turn keeps :data:`MAX_BLOCKS` blocks (a marker block
  says how many more there were), ``seq`` stays within :data:`MAX_SEQ`, metadata strings have
  schema ``maxLength``s;
- **messages** name ``file:line: field`` and quote at most a short, redacted, escaped excerpt of
  the offending value (:func:`quote_value`), because they are kept in ``state.json`` and shown by
  ``funes status`` and the MCP ``status`` tool, where an agent reads them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

from funes_core.files import atomic_write_text
from funes_core.safetext import one_line, shorten

__all__ = [
    "BLOCK_TYPES",
    "FORMATS",
    "ID_PATTERN",
    "MAX_BLOCKS",
    "MAX_LINE_BYTES",
    "MAX_SEQ",
    "SCHEMA_RESOURCE",
    "SESSION_ID_PATTERN",
    "TAINTS",
    "Block",
    "ParsedFile",
    "Turn",
    "TurnCheck",
    "TurnsFormatError",
    "decode_taint",
    "format_ts",
    "is_safe_id",
    "iter_turns",
    "load_schema",
    "parse_line",
    "quote_value",
    "read_turns_file",
    "safe_id",
    "turns_to_jsonl",
    "write_turns_file",
]

#: The block types a turn may carry, in the order the docs list them.
BLOCK_TYPES: tuple[str, ...] = ("text", "thinking", "tool_use", "tool_result")
#: Known versions of the format. 2 is additive: it allows the optional ``taint`` field.
FORMATS: tuple[int, ...] = (1, 2)
#: Provenance taints. ``internal`` is the user's own agent sessions; ``external`` is third-party text.
TAINTS: tuple[str, ...] = ("internal", "external")
#: Where the JSON Schema lives inside the package.
SCHEMA_RESOURCE = "turns.schema.json"

#: The largest ``seq``: 2**53 - 1, the largest integer every JSON parser reads exactly (JavaScript
#: producers included), and far enough below the store's 64-bit range that ``seq`` plus any reading
#: window never overflows.
MAX_SEQ = 2**53 - 1
#: Ids (``session_id``, ``turn_uuid``, ``parent_uuid``): ASCII letters and digits, then also ``.``,
#: ``_``, ``@`` and ``-``; 128 characters at most. Such an id is one shell word as it is (no quoting,
#: no expansion), one file name, never an option (it cannot start with ``-``) and never a hidden or
#: relative path (nor with ``.``), holds no ``:`` (the chunk id separator), and prints on one line.
#: UUIDs, ``<uuid>@<n>``, ``<id>@<updated_at without colons>`` and ``20250101_120000_abc`` all fit.
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$(?!\n)"
#: ``session_id`` is wider: a source may name sessions after documents (notes: ``notes/daily/
#: 2026-03-01.md``), so any printable character but white space and ``:`` (the chunk id
#: separator), not starting with ``-`` (an option), 512 at most. The pattern is the part a JSON
#: Schema can say; the reader also refuses what Python's ``str.isprintable`` refuses (format
#: characters: zero-width, BiDi, tags; lone surrogates; private use). Every id is escaped onto one
#: line wherever it is printed and shell-quoted in hints; the strict :data:`ID_PATTERN` is what
#: converters map foreign ids to (:func:`safe_id`).
SESSION_ID_PATTERN = r"^[^\s\x00-\x1f\x7f-\x9f:-][^\s\x00-\x1f\x7f-\x9f:]{0,511}$(?!\n)"
#: One line of a turns file is read up to this many bytes. In a longer line every JSON string is
#: cut to :data:`LONG_LINE_STRING_BYTES` with a marker saying how many bytes were left out, so a
#: huge tool output or image costs bounded memory; a line still too long after that (a million tiny
#: blocks) rejects the file.
MAX_LINE_BYTES = 16 * 1024 * 1024
#: What is kept of each string of a line longer than :data:`MAX_LINE_BYTES`.
LONG_LINE_STRING_BYTES = 256 * 1024
#: Blocks kept per turn; the rest are replaced by one text block saying how many were left out.
MAX_BLOCKS = 1000

_TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
_HARNESS_RE = re.compile(r"^[a-z0-9_-]+$")
_ID_RE = re.compile(ID_PATTERN)
_ID_FIELDS = ("session_id", "turn_uuid", "parent_uuid")
#: A quoted value in a message is at most this long (the message is one line in status output).
_QUOTE_CHARS = 60


class TurnsFormatError(ValueError):
    """A turns file that cannot be accepted.

    ``str(err)`` is the one line shown to users: ``<path>:<line>: <field>: <what is wrong>``.
    """

    def __init__(self, path: str, line: int, field_path: str, message: str) -> None:
        self.path = path
        self.line = line
        self.field = field_path
        self.message = message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {field_path}: {message}" if field_path else f"{where}: {message}")


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a turn: what was said, thought, called or returned."""

    block_type: str
    text: str
    tool_name: str | None = None
    tool_use_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"block_type": self.block_type, "text": self.text}
        if self.tool_name is not None:
            out["tool_name"] = self.tool_name
        if self.tool_use_id is not None:
            out["tool_use_id"] = self.tool_use_id
        return out


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a session, exactly as the turns format describes it."""

    session_id: str
    turn_uuid: str
    seq: int
    ts: str
    role: str
    harness: str
    blocks: tuple[Block, ...] = ()
    cwd: str | None = None
    parent_uuid: str | None = None
    taint: str = "internal"
    format: int = 1

    def to_json(self) -> dict[str, Any]:
        """The JSON object for this turn; ``format``/``taint`` appear only when they carry news."""
        out: dict[str, Any] = {}
        if self.taint != "internal" or self.format != 1:
            out["format"] = 2
        out.update(
            session_id=self.session_id,
            turn_uuid=self.turn_uuid,
            seq=self.seq,
            ts=self.ts,
            role=self.role,
            harness=self.harness,
        )
        if self.cwd is not None:
            out["cwd"] = self.cwd
        if self.parent_uuid is not None:
            out["parent_uuid"] = self.parent_uuid
        if out.get("format") == 2:
            out["taint"] = self.taint
        out["blocks"] = [b.to_json() for b in self.blocks]
        return out


@dataclass(slots=True)
class ParsedFile:
    """A turns file that was accepted, with the notes worth telling the user about."""

    path: str
    turns: list[Turn]
    warnings: list[str] = field(default_factory=list)


@cache
def load_schema() -> dict[str, Any]:
    """The published JSON Schema of one turn (a fresh parse is cached once per process)."""
    text = resources.files("funes_core.turns").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


#: The draft fastjsonschema compiles the schema as: it has every keyword the schema uses (``if``,
#: ``const``, boolean schemas; ``$defs`` is reached by its JSON pointer), and it knows no 2020-12.
_FAST_DRAFT = "http://json-schema.org/draft-07/schema#"


@cache
def _fast_check() -> Callable[[Any], Any]:
    """The schema compiled to Python code (fastjsonschema): the accepting check of every line.

    Why two validators: ``jsonschema`` walks the schema for each line (~0.2 ms a turn on a quiet
    core, a third of a first index of 200,000 turns), fastjsonschema runs generated code about six
    times faster. It only ever accepts: a line it refuses goes to ``jsonschema``, which words the
    error and has the last word, so a difference between the two can refuse nothing valid, and
    ``tests/test_turns_format.py`` checks that they refuse the same lines.
    """
    import fastjsonschema

    schema = {**load_schema(), "$schema": _FAST_DRAFT}
    check: Callable[[Any], Any] = fastjsonschema.compile(schema)
    return check


def _schema_errors(obj: dict[str, Any]) -> list[Any]:
    """``jsonschema``'s errors for ``obj``, asked only when the compiled check refuses it."""
    from fastjsonschema import JsonSchemaValueException

    try:
        _fast_check()(obj)
    except JsonSchemaValueException:
        return list(_validator().iter_errors(obj))
    return []


@cache
def _validator() -> Any:
    import jsonschema

    schema = load_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def decode_taint(value: object) -> str:
    """Map any taint value to a known one; anything not exactly ``internal`` is ``external``.

    Failing closed means a typo or a future value can never make third-party text look trusted.
    """
    return "internal" if value == "internal" else "external"


def format_ts(moment: datetime) -> str:
    """Render an aware datetime as the RFC 3339 UTC form the format requires (``…Z``)."""
    moment = moment.astimezone(UTC)
    text = moment.isoformat(timespec="microseconds" if moment.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def is_safe_id(value: str) -> bool:
    """True when ``value`` is a legal id of the format (:data:`ID_PATTERN`)."""
    return bool(_ID_RE.fullmatch(value))


def safe_id(raw: str) -> str:
    """The id to write for an agent's own id ``raw``: ``raw`` itself when it is legal, else a stable stand-in.

    For converters. An id outside :data:`ID_PATTERN` becomes its legal characters (runs of others
    as ``-``, at most 100) followed by ``-`` and 12 hex digits of its sha1, so the mapping is
    deterministic (a re-converted session keeps its ids) and two different ids never collide.
    """
    if _ID_RE.fullmatch(raw):
        return raw
    slug = re.sub(r"[^A-Za-z0-9._@-]+", "-", raw).lstrip("._@-")[:100].rstrip("-") or "id"
    digest = hashlib.sha1(raw.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()
    return f"{slug}-{digest[:12]}"


def _clean_surrogates(value: str) -> str:
    """Replace lone UTF-16 surrogates (legal in JSON escapes, illegal in UTF-8) with U+FFFD."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def _clean_optional(value: str | None) -> str | None:
    return None if value is None else _clean_surrogates(value)


def quote_value(value: Any) -> str:
    """A value from a turns file as an error message may quote it: short, redacted, one line.

    Messages are stored in ``state.json`` and shown by ``funes status`` (and to agents through the
    MCP ``status`` tool), so a secret in a malformed field must not travel with them: the value is
    JSON-encoded, run through the index-time redactor, escaped to one line and cut to 60 characters.
    """
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = _clean_surrogates(text)
    from funes_core.redact import redact  # lazy: only a refusal pays for detect-secrets

    return shorten(one_line(redact(text)[0]), _QUOTE_CHARS)


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_\-]{1,64}")


def _field_name(name: str) -> str:
    """A field name as a message may print it: an unknown name is the file's text, as untrusted as a
    value (a token, a newline, an escape sequence, 5,000 characters), so it is redacted, and anything
    but a short plain name is quoted like a value (escaped, one line, cut)."""
    if _PLAIN_NAME.fullmatch(name):
        from funes_core.redact import redact  # lazy: only a refusal pays for detect-secrets

        return redact(name)[0]
    return quote_value(name)


def _field_path(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            name = _field_name(str(part))
            out += f".{name}" if out else name
    return out


def _describe(value: Any) -> str:
    return quote_value(value)


_JSON_TYPES = {
    "string": "a string",
    "integer": "an integer",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def _schema_message(err: Any) -> tuple[str, str]:
    """Turn one jsonschema error into (field path, message) in our own words."""
    path = list(err.absolute_path)
    validator = err.validator
    if validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        name = extra[0] if extra else "?"
        where = _field_path([*path, name])
        if name in ("source_path", "workdir", "repo", "id", "chunk_id", "vector"):
            return where, "is computed by funes and must not appear in a turns file"
        return where, "unknown field"
    if validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", err.message)
        return _field_path([*path, missing[0] if missing else "?"]), "missing required field"
    where = _field_path(path)
    field_name = str(path[-1]) if path else ""
    if validator == "type":
        expected = err.validator_value
        names = [expected] if isinstance(expected, str) else list(expected)
        want = " or ".join(_JSON_TYPES.get(n, n) for n in names)
        return where, f"expected {want}, got {_describe(err.instance)}"
    if validator == "enum":
        allowed = ", ".join(str(v) for v in err.validator_value)
        if field_name == "format":
            return where, f"unknown format {_describe(err.instance)} (this funes reads {allowed})"
        return where, f"{_describe(err.instance)} is not one of {allowed}"
    if validator == "pattern":
        if field_name in _ID_FIELDS:
            return where, _id_message(err.instance, field_name)
        if field_name == "ts":
            return where, f"{_describe(err.instance)} is not an RFC 3339 UTC timestamp ending in 'Z'"
        if field_name == "harness":
            return where, f"{_describe(err.instance)} must match [a-z0-9_-]+"
        return where, f"{_describe(err.instance)} does not match {err.validator_value}"
    if validator == "minLength":
        return where, "must not be empty"
    if validator == "maxLength":
        return where, f"is {len(err.instance):,} characters long; at most {err.validator_value:,} are allowed"
    if validator == "minimum":
        return where, f"must be >= {err.validator_value}, got {_describe(err.instance)}"
    if validator == "maximum":
        return where, f"must be at most {err.validator_value}, got {_describe(err.instance)}"
    if validator is None or field_name == "taint":
        # The only boolean (false) subschema: `taint` on a format 1 turn.
        return "taint", 'is a format 2 field: add "format": 2 to the turn'
    return where, f"{_describe(err.instance)} is not valid here ({validator})"


def _id_message(value: Any, field_name: str = "turn_uuid") -> str:
    shown = _describe(value)
    if field_name == "session_id":
        return (
            f"{shown} is not a valid session id: printable characters but white space and ':', "
            "not starting with '-', 512 at most"
        )
    if isinstance(value, str) and ":" in value:
        return f"{shown} must not contain ':' (ids use letters, digits and . _ @ -)"
    return (
        f"{shown} is not a valid id: letters, digits and . _ @ -, starting with a letter or digit, "
        "128 at most"
    )


def _error_rank(err: Any) -> tuple[int, int, str]:
    # Report the most specific, earliest field first so the message points where the user looks.
    return (-len(list(err.absolute_path)), 0 if err.validator != "if" else 1, _field_path(err.absolute_path))


def _json_error(exc: json.JSONDecodeError) -> str:
    """``not valid JSON: unterminated string starting at column 9`` (the module's own words, once)."""
    msg = exc.msg[:1].lower() + exc.msg[1:]
    where = f"column {exc.colno}" if msg.endswith(" at") else f"at column {exc.colno}"
    return f"not valid JSON: {msg} {where}"


def parse_line(raw: str, *, path: str = "<input>", line: int = 0) -> Turn:
    """Parse and validate one line; raise :class:`TurnsFormatError` naming what is wrong.

    A turn with more than :data:`MAX_BLOCKS` blocks keeps the first ones (validated) plus one text
    block saying how many were left out, so a pathological turn costs bounded work downstream.
    """
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TurnsFormatError(path, line, "", _json_error(exc)) from None
    except RecursionError:
        raise TurnsFormatError(path, line, "", "not valid JSON: nested too deeply") from None
    if not isinstance(obj, dict):
        raise TurnsFormatError(path, line, "", f"expected a JSON object, got {type(obj).__name__}")
    left_out = 0
    blocks_in = obj.get("blocks")
    if isinstance(blocks_in, list) and len(blocks_in) > MAX_BLOCKS:
        left_out = len(blocks_in) - MAX_BLOCKS
        obj["blocks"] = blocks_in[:MAX_BLOCKS]
    errors = _schema_errors(obj)
    if errors:
        # "then": {"taint": false} reports at the turn level with validator False on the taint path.
        errors.sort(key=lambda e: (len(list(e.absolute_path)) == 0, _error_rank(e)))
        where, message = _schema_message(errors[0])
        raise TurnsFormatError(path, line, where, message)
    if not obj["session_id"].isprintable():
        raise TurnsFormatError(path, line, "session_id", _id_message(obj["session_id"], "session_id"))
    ts = obj["ts"]
    try:
        datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        raise TurnsFormatError(path, line, "ts", f"{_describe(ts)} is not a real date and time") from None
    blocks = [
        Block(
            block_type=b["block_type"],
            text=_clean_surrogates(b["text"]),
            tool_name=_clean_optional(b.get("tool_name")),
            tool_use_id=_clean_optional(b.get("tool_use_id")),
        )
        for b in obj["blocks"]
    ]
    if left_out:
        blocks.append(
            Block(
                "text",
                f"[… funes left out {left_out:,} more blocks of this turn: a turn keeps {MAX_BLOCKS:,} …]",
            )
        )
    return Turn(
        session_id=obj["session_id"],
        turn_uuid=obj["turn_uuid"],
        seq=obj["seq"],
        ts=ts,
        role=_clean_surrogates(obj["role"]),
        harness=obj["harness"],
        blocks=tuple(blocks),
        cwd=_clean_optional(obj.get("cwd")),
        parent_uuid=obj.get("parent_uuid"),
        taint=decode_taint(obj.get("taint", "internal")),
        format=obj.get("format", 1),
    )


class _LineTooLong(Exception):
    """A line over :data:`MAX_LINE_BYTES` even after its long strings were cut."""


@dataclass(slots=True)
class _RawLine:
    number: int
    #: Byte offset of the line's first byte in the file.
    offset: int
    #: The line without its newline; for a line over :data:`MAX_LINE_BYTES`, its compacted copy.
    data: bytes


_QUOTE = re.compile(rb'"')
_IN_STRING = re.compile(rb'["\\]')
_HIGH_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LOW_SURROGATE = re.compile(rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}")
#: How much of an over-long line is read at a time.
_PIECE = 1 << 20


class _LongLine:
    """Copies a line longer than :data:`MAX_LINE_BYTES`, cutting each JSON string in it.

    Not a parser: it follows quotes and escapes only, so that every string keeps its first
    :data:`LONG_LINE_STRING_BYTES` bytes (never splitting an escape, a surrogate pair or a UTF-8
    sequence) plus a marker naming how many bytes were left out. Valid JSON stays valid JSON, which
    then goes through the normal parser; invalid JSON stays invalid and is reported as such.
    """

    def __init__(self) -> None:
        self.out = bytearray()
        self.in_string = False
        self.kept = 0
        self.dropped = 0

    def _keep(self, run: bytes, *, atomic: bool) -> None:
        if not self.dropped and self.kept + len(run) <= LONG_LINE_STRING_BYTES:
            self.out += run
            self.kept += len(run)
            return
        cut = 0 if self.dropped or atomic else LONG_LINE_STRING_BYTES - self.kept
        while 0 < cut < len(run) and (run[cut] & 0xC0) == 0x80:
            cut -= 1  # never split a UTF-8 sequence
        self.out += run[:cut]
        self.kept += cut
        self.dropped += len(run) - cut

    def feed(self, body: bytes, final: bool) -> int:
        """Copy what can be decided of ``body``; return how many of its bytes were used."""
        limit = len(body) if final else max(0, len(body) - 12)  # an escape never straddles a piece
        while 0 < limit < len(body) and (body[limit] & 0xC0) == 0x80:
            limit -= 1  # nor does a UTF-8 sequence
        i = 0
        while i < limit:
            if not self.in_string:
                m = _QUOTE.search(body, i, limit)
                j = m.start() if m else limit
                self.out += body[i:j]
                if len(self.out) > MAX_LINE_BYTES:
                    raise _LineTooLong
                if m is None:
                    return limit
                self.out += b'"'
                self.in_string, self.kept, self.dropped = True, 0, 0
                i = j + 1
                continue
            m = _IN_STRING.search(body, i, limit)
            j = m.start() if m else limit
            if j > i:
                self._keep(body[i:j], atomic=False)
            if m is None:
                return limit
            if body[j] == 0x22:  # the closing quote
                if self.dropped:
                    self.out += (
                        f"[… funes left out {self.dropped:,} bytes of this value: a turns-file line is "
                        f"read up to {MAX_LINE_BYTES // (1024 * 1024)} MiB …]"
                    ).encode()
                self.out += b'"'
                self.in_string = False
                i = j + 1
                continue
            end = j + (6 if body[j + 1 : j + 2] == b"u" else 2)
            if _HIGH_SURROGATE.fullmatch(body, j, end) and _LOW_SURROGATE.fullmatch(body, end, end + 6):
                end += 6  # a surrogate pair is one character: kept or dropped whole
            self._keep(body[j:end], atomic=True)
            i = min(end, len(body))
        return i


def _raw_lines(fh: BinaryIO) -> Iterator[_RawLine]:
    """The lines of a binary file, split on ``\\n`` only (U+2028 is legal inside JSON), each bounded."""
    number = offset = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
            yield _RawLine(number, offset, raw[:-1] if raw.endswith(b"\n") else raw)
            offset += len(raw)
            continue
        long = _LongLine()
        size = 0
        ended = False
        while True:
            ended = raw.endswith(b"\n")
            body = raw[:-1] if ended else raw
            more = b"" if ended else fh.readline(_PIECE)
            used = long.feed(body, final=ended or not more)
            size += used
            if ended or not more:
                break
            raw = body[used:] + more
        yield _RawLine(number, offset, bytes(long.out))
        offset += size + ended


class _SeqTracker:
    """Sparse or repeated ``seq`` per session, tracked compactly while a file streams by.

    These are warnings, not rejections: a file may legitimately hold the tail of a session, and a
    re-emitted turn is deduplicated by its chunk ids anyway.
    """

    def __init__(self) -> None:
        self.seen: dict[str, dict[int, str]] = {}
        self.notes: list[str] = []

    def add(self, shown: str, turn: Turn) -> None:
        seen = self.seen.setdefault(turn.session_id, {})
        first = seen.setdefault(turn.seq, turn.turn_uuid)
        if first != turn.turn_uuid:
            self.notes.append(
                f"{shown}: session {turn.session_id}: seq {turn.seq} is used by turns "
                f"{first} and {turn.turn_uuid}"
            )

    def warnings(self, shown: str) -> list[str]:
        notes = list(self.notes)
        for sid, seen in self.seen.items():
            gaps = [(a, b) for a, b in itertools.pairwise(sorted(seen)) if b != a + 1]
            if gaps:
                a, b = gaps[0]
                more = f" (and {len(gaps) - 1} more gaps)" if len(gaps) > 1 else ""
                notes.append(f"{shown}: session {sid}: seq is not dense: jumps from {a} to {b}{more}")
        return notes


#: An extra rule a caller applies to every turn: ``(field, message)`` refuses the file at that line.
TurnCheck = Callable[[Turn], "tuple[str, str] | None"]


def iter_turns(
    path: str | os.PathLike[str],
    *,
    display: str | None = None,
    warnings: list[str] | None = None,
    check: TurnCheck | None = None,
) -> Iterator[Turn]:
    """Validate and yield the turns of a file one at a time; raise :class:`TurnsFormatError` at a bad line.

    Memory stays bounded by one line whatever the file's size, which is what lets ``funes index``
    read a 100 MB transcript in a few hundred MB. The caller decides what "whole" means: read the
    file through once (as :func:`read_turns_file` does) before storing anything from it. Notes
    (unknown taints, sparse or repeated ``seq``) are appended to ``warnings`` once the file is done.
    Blank lines are skipped. ``display`` is the path printed in messages. ``check`` adds a rule of
    the caller's (it returns ``(field, message)`` to refuse the file at that line).
    """
    shown = display if display is not None else os.fspath(path)
    tracker = _SeqTracker()
    notes: list[str] = []
    number = 0
    try:
        with Path(path).open("rb") as fh:
            for raw in _raw_lines(fh):
                number = raw.number
                if not raw.data.strip():
                    continue
                try:
                    text = raw.data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    where = f"byte {raw.offset + exc.start:,} of the file, byte {exc.start + 1:,} of the line"
                    raise TurnsFormatError(
                        shown, raw.number, "", f"not UTF-8 text ({exc.reason} at {where})"
                    ) from None
                if not text.strip():
                    continue
                turn = parse_line(text, path=shown, line=raw.number)
                problem = check(turn) if check is not None else None
                if problem is not None:
                    raise TurnsFormatError(shown, raw.number, *problem)
                if turn.taint == "external" and "taint" in text:
                    original = json.loads(text).get("taint")
                    if original not in TAINTS:
                        notes.append(
                            f"{shown}:{raw.number}: taint: unknown value {quote_value(original)} "
                            "read as 'external'"
                        )
                tracker.add(shown, turn)
                yield turn
    except _LineTooLong:
        raise TurnsFormatError(
            shown,
            number + 1,
            "",
            f"line is over {MAX_LINE_BYTES // (1024 * 1024)} MiB even with every string in it cut to "
            f"{LONG_LINE_STRING_BYTES // 1024} KiB (split the turn into several)",
        ) from None
    except OSError as exc:
        raise TurnsFormatError(shown, number, "", f"cannot read: {exc.strerror or exc}") from None
    if warnings is not None:
        warnings.extend(notes)
        warnings.extend(tracker.warnings(shown))


def read_turns_file(
    path: str | os.PathLike[str], *, display: str | None = None, check: TurnCheck | None = None
) -> ParsedFile:
    """Read and validate a whole turns file, or raise :class:`TurnsFormatError` for its first bad line.

    Blank lines are allowed (and skipped). ``display`` is the path printed in messages. The turns
    are all kept in memory; :func:`iter_turns` reads a file of any size one turn at a time.
    """
    warnings: list[str] = []
    turns = list(iter_turns(path, display=display, warnings=warnings, check=check))
    shown = display if display is not None else os.fspath(path)
    return ParsedFile(path=shown, turns=turns, warnings=warnings)


def turns_to_jsonl(turns: Iterable[Turn]) -> str:
    """Serialise turns as a turns file body (one compact JSON object per line)."""
    lines = (json.dumps(t.to_json(), ensure_ascii=False, separators=(",", ":")) for t in turns)
    # U+2028/U+2029 are legal raw in JSON but are line breaks to str.splitlines() and JavaScript:
    # escape them so every reader sees one record per line.
    return "".join(line.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + "\n" for line in lines)


def write_turns_file(
    path: str | os.PathLike[str], turns: Iterable[Turn], *, mtime: float | None = None
) -> Path:
    """Write a turns file atomically: a temp name not ending in ``.jsonl`` in the same folder, then rename.

    Readers (``funes index`` draining a spool) never see a half-written file, because they only
    read names ending in ``.jsonl``. ``mtime``, when given, is stamped on the file so that a
    spool drains the most recently active sessions first.
    """
    target = Path(path)
    atomic_write_text(target, turns_to_jsonl(turns), mtime=mtime)
    return target


def is_valid_harness(value: str) -> bool:
    """True when ``value`` is a legal harness / integration id (``[a-z0-9_-]+``)."""
    return bool(_HARNESS_RE.fullmatch(value))


def is_utc_ts(value: str) -> bool:
    """True when ``value`` is an RFC 3339 UTC timestamp with a ``Z`` suffix and a real date."""
    if not _TS_RE.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True

"""The turns format: the one input the core reads.

A turns file (``*.funes.jsonl``) holds one JSON object per line, each a :class:`Turn`. Every
integration converts its agent's own transcripts into this format, so the core never needs to
know what a Claude Code or Codex transcript looks like.

A file is accepted or rejected *whole*: one bad line rejects it, and the error names the file,
the 1-based line, the field and what is wrong. That way a half-understood file is never half
stored. The JSON Schema shipped in ``funes_core/turns/turns.schema.json`` is the published
contract; this module adds the rules a schema cannot express (a real calendar date in ``ts``,
dense ``seq`` per session, duplicate turns) and turns schema errors into one-line messages.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from funes_core.files import atomic_write_text

__all__ = [
    "BLOCK_TYPES",
    "FORMATS",
    "SCHEMA_RESOURCE",
    "TAINTS",
    "Block",
    "ParsedFile",
    "Turn",
    "TurnsFormatError",
    "decode_taint",
    "format_ts",
    "load_schema",
    "parse_line",
    "read_turns_file",
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

_TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
_HARNESS_RE = re.compile(r"^[a-z0-9_-]+$")


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


def _clean_surrogates(value: str) -> str:
    """Replace lone UTF-16 surrogates (legal in JSON escapes, illegal in UTF-8) with U+FFFD."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def _field_path(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _describe(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)


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
        if field_name in ("session_id", "turn_uuid"):
            return where, f"{_describe(err.instance)} must not contain ':'"
        if field_name == "ts":
            return where, f"{_describe(err.instance)} is not an RFC 3339 UTC timestamp ending in 'Z'"
        if field_name == "harness":
            return where, f"{_describe(err.instance)} must match [a-z0-9_-]+"
        return where, f"{_describe(err.instance)} does not match {err.validator_value}"
    if validator == "minLength":
        return where, "must not be empty"
    if validator == "minimum":
        return where, f"must be >= {err.validator_value}, got {_describe(err.instance)}"
    if validator is None or field_name == "taint":
        # The only boolean (false) subschema: `taint` on a format 1 turn.
        return "taint", 'is a format 2 field: add "format": 2 to the turn'
    return where, err.message


def _error_rank(err: Any) -> tuple[int, int, str]:
    # Report the most specific, earliest field first so the message points where the user looks.
    return (-len(list(err.absolute_path)), 0 if err.validator != "if" else 1, _field_path(err.absolute_path))


def parse_line(raw: str, *, path: str = "<input>", line: int = 0) -> Turn:
    """Parse and validate one line; raise :class:`TurnsFormatError` naming what is wrong."""
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TurnsFormatError(path, line, "", f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise TurnsFormatError(path, line, "", f"expected a JSON object, got {type(obj).__name__}")
    errors = list(_validator().iter_errors(obj))
    if errors:
        # "then": {"taint": false} reports at the turn level with validator False on the taint path.
        errors.sort(key=lambda e: (len(list(e.absolute_path)) == 0, _error_rank(e)))
        where, message = _schema_message(errors[0])
        raise TurnsFormatError(path, line, where, message)
    ts = obj["ts"]
    try:
        datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        raise TurnsFormatError(path, line, "ts", f"{ts!r} is not a real date and time") from None
    blocks = tuple(
        Block(
            block_type=b["block_type"],
            text=_clean_surrogates(b["text"]),
            tool_name=b.get("tool_name"),
            tool_use_id=b.get("tool_use_id"),
        )
        for b in obj["blocks"]
    )
    return Turn(
        session_id=obj["session_id"],
        turn_uuid=obj["turn_uuid"],
        seq=obj["seq"],
        ts=ts,
        role=obj["role"],
        harness=obj["harness"],
        blocks=blocks,
        cwd=obj.get("cwd"),
        parent_uuid=obj.get("parent_uuid"),
        taint=decode_taint(obj.get("taint", "internal")),
        format=obj.get("format", 1),
    )


def _iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open("r", encoding="utf-8", errors="strict", newline="") as fh:
        yield from enumerate(fh, start=1)


def read_turns_file(path: str | os.PathLike[str], *, display: str | None = None) -> ParsedFile:
    """Read and validate a whole turns file, or raise :class:`TurnsFormatError` for its first bad line.

    Blank lines are allowed (and skipped). ``display`` is the path printed in messages.
    """
    p = Path(path)
    shown = display if display is not None else str(path)
    turns: list[Turn] = []
    warnings: list[str] = []
    try:
        for number, raw in _iter_lines(p):
            if not raw.strip():
                continue
            turn = parse_line(raw, path=shown, line=number)
            if "taint" in raw and turn.taint == "external":
                original = json.loads(raw).get("taint")
                if original not in TAINTS:
                    warnings.append(f"{shown}:{number}: taint: unknown value {original!r} read as 'external'")
            turns.append(turn)
    except UnicodeDecodeError as exc:
        raise TurnsFormatError(shown, 0, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise TurnsFormatError(shown, 0, "", f"cannot read: {exc.strerror or exc}") from None
    warnings.extend(_seq_warnings(shown, turns))
    return ParsedFile(path=shown, turns=turns, warnings=warnings)


def _seq_warnings(shown: str, turns: Sequence[Turn]) -> list[str]:
    """Report sessions whose ``seq`` is not dense, or whose turns repeat.

    These are warnings, not rejections: a file may legitimately hold the tail of a session, and
    a re-emitted turn is deduplicated by its chunk ids anyway.
    """
    by_session: dict[str, list[Turn]] = {}
    for turn in turns:
        by_session.setdefault(turn.session_id, []).append(turn)
    notes: list[str] = []
    for sid, items in by_session.items():
        seen: dict[int, str] = {}
        for turn in items:
            if turn.seq in seen and seen[turn.seq] != turn.turn_uuid:
                notes.append(
                    f"{shown}: session {sid}: seq {turn.seq} is used by turns "
                    f"{seen[turn.seq]} and {turn.turn_uuid}"
                )
            seen.setdefault(turn.seq, turn.turn_uuid)
        seqs = sorted(seen)
        gaps = [(a, b) for a, b in itertools.pairwise(seqs) if b != a + 1]
        if gaps:
            a, b = gaps[0]
            more = f" (and {len(gaps) - 1} more gaps)" if len(gaps) > 1 else ""
            notes.append(f"{shown}: session {sid}: seq is not dense: jumps from {a} to {b}{more}")
    return notes


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

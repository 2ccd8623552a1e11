"""When this machine last pushed to each remote: ``$FUNES_HOME/push-record/<remote>.json``.

A remote itself cannot say who pushed last or from where (its versions carry no author), so the
machine that pushes keeps the record: the time the last successful push finished, what it sent
(chunks and turns) and the remote's table version after it. A failed or refused push (an
unreachable remote, the wrong-memory guard, a secret gate that held back everything) never
replaces that; it is kept beside it as ``last_failure``. The health page of ``funes ui`` shows it.

One file per remote, so two pushes to different remotes at once never lose each other's record;
each is written atomically, mode 0600 (a remote's name and its push times are the user's business).
The record is an account for the user, never the truth a push relies on: an unreadable one is
reported in one line and replaced, and failing to write it never fails the push.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes_core.files import atomic_write_text

if TYPE_CHECKING:
    from funes_core.home import Home

__all__ = [
    "RECORD_DIR",
    "LastFailure",
    "LastPush",
    "PushRecord",
    "PushRecordError",
    "forget",
    "load_record",
    "record_failure",
    "record_success",
]

RECORD_DIR = "push-record"
RECORD_VERSION = 1
#: A failure's message is at most this long in the record (it is shown on the health page).
MAX_ERROR_CHARS = 300


class PushRecordError(ValueError):
    """A push record that cannot be read; ``str()`` is the one line to show."""


@dataclass(frozen=True, slots=True)
class LastPush:
    """The last push that finished: when (UTC, ISO 8601), what it sent, the remote's version after."""

    finished: str
    chunks: int
    turns: int
    table_version: int | None = None

    @property
    def when(self) -> datetime:
        return datetime.fromisoformat(self.finished)


@dataclass(frozen=True, slots=True)
class LastFailure:
    """The last push that failed or was refused, and its one-line reason (redacted, bounded)."""

    finished: str
    error: str

    @property
    def when(self) -> datetime:
        return datetime.fromisoformat(self.finished)


@dataclass(frozen=True, slots=True)
class PushRecord:
    success: LastPush | None = None
    failure: LastFailure | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": RECORD_VERSION,
            "last_success": asdict(self.success) if self.success else None,
            "last_failure": asdict(self.failure) if self.failure else None,
        }


def record_path(home: Home, remote: str) -> Path:
    """The record's file; ``remote`` is a validated remote name (``[a-z][a-z0-9_-]*``), never a path."""
    return home.root / RECORD_DIR / f"{remote}.json"


def _iso(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("finished is not a string")
    when = datetime.fromisoformat(value)
    if when.tzinfo is None:
        raise ValueError("finished has no time zone")
    return value


def _count(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError("not a count")
    return value


def load_record(home: Home, remote: str) -> PushRecord:
    """The remote's record (empty when this machine never pushed to it). Raises :class:`PushRecordError`."""
    path = record_path(home, remote)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return PushRecord()
    except OSError as exc:
        raise PushRecordError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError:
        raise PushRecordError(f"{path} is not valid JSON; the next push to {remote} replaces it") from None
    try:
        if not isinstance(raw, dict) or raw.get("version") != RECORD_VERSION:
            raise ValueError("not a version-1 record")
        ok, bad = raw.get("last_success"), raw.get("last_failure")
        success = failure = None
        if ok is not None:
            version = ok.get("table_version")
            success = LastPush(
                _iso(ok["finished"]),
                _count(ok["chunks"]),
                _count(ok["turns"]),
                None if version is None else _count(version),
            )
        if bad is not None:
            error = bad["error"]
            if not isinstance(error, str):
                raise TypeError("error is not a string")
            failure = LastFailure(_iso(bad["finished"]), _safe(error))
    except (AttributeError, KeyError, TypeError, ValueError):
        raise PushRecordError(
            f"{path} is not a push record funes can read; the next push to {remote} replaces it"
        ) from None
    return PushRecord(success, failure)


def _safe(message: str) -> str:
    """A failure's message as shown: one line, bounded (redaction is done when it is written)."""
    from funes_core.safetext import one_line, shorten

    return shorten(one_line(message), MAX_ERROR_CHARS)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _write(home: Home, remote: str, record: PushRecord, say: Callable[[str], None]) -> None:
    from funes_core.home import ensure_private_dir

    path = record_path(home, remote)
    try:
        ensure_private_dir(path.parent)
        atomic_write_text(path, json.dumps(record.to_json(), indent=2) + "\n")
    except OSError as exc:
        say(f"funes: warning: could not record this push in {path}: {exc.strerror}")


def _previous(home: Home, remote: str, say: Callable[[str], None]) -> PushRecord:
    try:
        return load_record(home, remote)
    except PushRecordError as exc:
        say(f"funes: warning: {exc}")
        return PushRecord()


def record_success(
    home: Home,
    remote: str,
    *,
    chunks: int,
    turns: int,
    table_version: int | None,
    say: Callable[[str], None] = lambda _m: None,
) -> None:
    """Record a push that finished now; the last failure, if any, is kept (it says what happened before)."""
    before = _previous(home, remote, say)
    _write(home, remote, PushRecord(LastPush(_now(), chunks, turns, table_version), before.failure), say)


def record_failure(
    home: Home, remote: str, error: str, *, say: Callable[[str], None] = lambda _m: None
) -> None:
    """Record a push that failed or was refused now, keeping the last successful one as it was."""
    from funes_core.redact import redact  # a failure's text may quote a URI or an option

    before = _previous(home, remote, say)
    _write(home, remote, PushRecord(before.success, LastFailure(_now(), _safe(redact(error)[0]))), say)


def forget(home: Home, remote: str) -> None:
    """Drop the record of a remote that was removed (a new remote of the same name starts blank)."""
    record_path(home, remote).unlink(missing_ok=True)

"""File helpers of the contract suite: snapshots of a HOME and mutated copies of line-based transcripts.

The mutators derive the awkward inputs the suite needs (an earlier state of a growing transcript,
a torn last record, a garbage record) from an author's sample sessions, so an author whose agent
writes JSON lines ships nothing extra. Authors of other formats override the matching method of
:class:`~funes_contracts.ConverterContract` instead; for an agent that keeps its sessions in
SQLite, :func:`sqlite_fixture` builds a sample database from reviewable SQL and
:func:`sqlite_databases` opens a copied case's databases for those mutations.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import sqlite3
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "FILLER_MARK",
    "GARBAGE_RECORD",
    "complete_lines",
    "copy_case",
    "corrupt_after_first",
    "corrupt_lines",
    "cut_documents",
    "cut_inside",
    "earlier_lines",
    "golden_texts",
    "json_documents",
    "lengthen_documents",
    "lengthen_lines",
    "lengthen_value",
    "line_record_files",
    "long_filler",
    "read_only",
    "snapshot",
    "sqlite_databases",
    "sqlite_fixture",
    "strip_offsets",
    "tear_lines",
    "tear_newest_row",
]

#: What :func:`corrupt_lines` inserts: valid UTF-8, not valid JSON, like a half-flushed buffer.
GARBAGE_RECORD = '{"funes-contract": "an unreadable record", \x7f\n'

_EXPECTED = "expected.funes.jsonl"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative POSIX path -> bytes); folders are not compared."""
    if not root.exists():
        return {}
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() or (path.is_symlink() and not path.is_dir())
    }


def copy_case(case: Path, dest: Path) -> Path:
    """Copy a fixture case (without its golden files) to ``dest``, keeping mtimes; returns ``dest``."""
    shutil.copytree(case, dest, ignore=shutil.ignore_patterns(_EXPECTED, "__pycache__"), dirs_exist_ok=True)
    return dest


def line_record_files(folder: Path) -> list[Path]:
    """Files under ``folder`` holding one JSON value per line, with at least two records."""
    found: list[Path] = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        try:
            # Split on "\n" only: str.splitlines() also splits on U+2028, which agents write raw
            # inside JSON strings.
            lines = [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
        except (OSError, UnicodeDecodeError):
            continue
        if len(lines) < 2:
            continue
        try:
            for line in lines:
                json.loads(line)
        except ValueError:
            continue
        found.append(path)
    return found


def _lines(path: Path) -> list[str]:
    """The file's lines with their newline kept, split on newlines alone (not on U+2028)."""
    return list(io.StringIO(path.read_text(encoding="utf-8"), newline="\n"))


def earlier_lines(folder: Path, *, keep_all_but_last: bool = False) -> bool:
    """Cut each line-record file in ``folder`` to its first half (or, with ``keep_all_but_last``, by
    its last record): the transcript as it was earlier."""
    files = line_record_files(folder)
    for path in files:
        lines = [line for line in _lines(path) if line.strip()]
        keep = max(1, len(lines) - 1 if keep_all_but_last else len(lines) // 2)
        path.write_text("".join(lines[:keep]), encoding="utf-8")
    return bool(files)


def _longest_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return max((_longest_string(item) for item in items), key=len, default="")


def _tear_point(line: str) -> int:
    """Where to cut a JSON line: inside its longest string's text (what a reader of a half-flushed
    record sees), else at half the line."""
    try:
        longest = _longest_string(json.loads(line))
    except ValueError:
        longest = ""
    if len(longest) >= 2:
        written = json.dumps(longest, ensure_ascii=False)[1:-1]
        where = line.find(written)
        if where >= 0:
            return where + max(1, len(written) // 2)
    return max(1, len(line) // 2)


def tear_lines(folder: Path) -> bool:
    """Cut the last record of each line-record file inside its text, with no newline (a writer mid-flush)."""
    files = line_record_files(folder)
    for path in files:
        lines = [line for line in _lines(path) if line.strip()]
        last = lines[-1].rstrip("\n")
        lines[-1] = last[: _tear_point(last)]
        path.write_text("".join(lines), encoding="utf-8")
    return bool(files)


def complete_lines(folder: Path) -> bool:
    """Each line-record file without its last record: the complete records :func:`tear_lines` keeps."""
    files = line_record_files(folder)
    for path in files:
        lines = [line if line.endswith("\n") else line + "\n" for line in _lines(path) if line.strip()]
        path.write_text("".join(lines[:-1]), encoding="utf-8")
    return bool(files)


_OFFSET_TIME = re.compile(r"^(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?)(?:[zZ]|[+-]\d\d:\d\d)$")


def _naive(value: Any) -> tuple[Any, bool]:
    if isinstance(value, str):
        found = _OFFSET_TIME.match(value)
        if not found:
            return value, False
        moment = datetime.fromisoformat(value.replace("z", "+00:00").replace("Z", "+00:00"))
        utc = moment.astimezone(UTC).replace(tzinfo=None)
        fraction = "." in found.group(1)
        return utc.isoformat(timespec="milliseconds" if fraction else "seconds"), True
    if isinstance(value, dict):
        pairs = {k: _naive(v) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, any(hit for _, hit in pairs.values())
    if isinstance(value, list):
        items = [_naive(v) for v in value]
        return [v for v, _ in items], any(hit for _, hit in items)
    return value, False


def strip_offsets(folder: Path) -> bool:
    """Every time with an offset in the line-record files written without it, as its UTC wall time.

    So ``converter:timezone`` has an offset-less time to read in every case, not only where a
    fixture happens to hold one (a converter reading such a time as local is caught everywhere).
    """
    changed = False
    for path in line_record_files(folder):
        lines = [line for line in _lines(path) if line.strip()]
        out = []
        for line in lines:
            value, hit = _naive(json.loads(line))
            out.append(json.dumps(value, ensure_ascii=False) + "\n" if hit else line)
            changed |= hit
        path.write_text("".join(out), encoding="utf-8")
    return changed


def cut_inside(text: str, value: str) -> str | None:
    """``text`` (a JSON document) cut halfway through the last place it holds the string ``value``.

    What a reader sees of a document still being written: the cut falls inside the text, not
    between records. ``None`` when ``value`` is empty or not in ``text`` (as JSON writes it).
    """
    needle = json.dumps(value, ensure_ascii=False)[1:-1]
    where = text.rfind(needle) if value else -1
    return text[: where + max(1, len(needle) // 2)] if where >= 0 else None


def cut_documents(documents: Iterable[tuple[Path, Any]], value_of: Callable[[Any], str]) -> bool:
    """``make_torn`` for a format of one JSON document a file: each cut inside the string ``value_of`` names.

    ``documents`` are ``(path, parsed JSON)``; ``value_of(data)`` is the text to cut inside (the last
    one the converter keeps, say), or ``""`` to leave that file whole. Whether any file was cut.
    """
    done = False
    for path, data in documents:
        torn = cut_inside(path.read_text(encoding="utf-8"), value_of(data))
        if torn is not None:
            path.write_text(torn, encoding="utf-8")
            done = True
    return done


def corrupt_lines(folder: Path) -> bool:
    """Insert :data:`GARBAGE_RECORD` after the first record of each line-record file."""
    files = line_record_files(folder)
    for path in files:
        lines = [line if line.endswith("\n") else line + "\n" for line in _lines(path) if line.strip()]
        lines.insert(1, GARBAGE_RECORD)
        path.write_text("".join(lines), encoding="utf-8")
    return bool(files)


#: Where a long filler starts: how the kit finds what came through of it.
FILLER_MARK = "funes-contract-long-text:"


def long_filler(size: int = 70_000) -> str:
    """A long text for ``converter:long-text``: ASCII, 2-, 3- and 4-byte characters, newlines.

    Its pieces have lengths that do not divide 4096, so UTF-8 encodings of it straddle every
    4 KiB boundary with a multi-byte character somewhere.
    """
    pieces = ["lorem ipsum ", "ünïcödé ", "漢字かな ", "😀🦀 ", "tab\there ", "\n"]
    out = [FILLER_MARK]
    total = len(FILLER_MARK)
    index = 0
    while total < size:
        piece = pieces[index % len(pieces)] + str(index) + " "
        out.append(piece)
        total += len(piece)
        index += 1
    return "".join(out)[:size]


@contextlib.contextmanager
def read_only(root: Path) -> Iterator[None]:
    """Make every file under ``root`` 0444 and every folder 0555 for the duration (for non-root runs).

    As root the modes do not stop a write, which is why the converter tests also compare
    snapshots; the modes make a stray write fail loudly wherever a plugin author runs the kit.
    """
    if not root.exists():
        yield
        return
    modes: dict[Path, int] = {}
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        mode = stat.S_IMODE(path.stat().st_mode)
        modes[path] = mode
        os.chmod(path, 0o555 if path.is_dir() else 0o444)
    try:
        yield
    finally:
        for path, mode in modes.items():
            with contextlib.suppress(OSError):
                os.chmod(path, mode)


def sqlite_fixture(target: Path, script: str) -> Path:
    """Create the database ``target`` from the SQL ``script``, as an agent leaves one on disk.

    Any earlier ``target`` (and its ``-wal``/``-shm`` files) is replaced; pages are small and the
    file vacuumed, so the fixture stays small in the repository; the journal is in WAL mode.
    """
    for stale in (target, target.with_name(target.name + "-wal"), target.with_name(target.name + "-shm")):
        stale.unlink(missing_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(target)) as conn:
        conn.execute("PRAGMA page_size = 1024")
        conn.executescript(script)
        conn.commit()
        conn.execute("VACUUM")
        conn.execute("PRAGMA journal_mode = WAL")
    return target


def sqlite_databases(folder: Path, pattern: str) -> Iterator[sqlite3.Connection]:
    """Each database under ``folder`` named like ``pattern``, open; committed once the caller moves on."""
    for db in sorted(folder.rglob(pattern)):
        with closing(sqlite3.connect(db)) as conn:
            yield conn
            conn.commit()


def tear_newest_row(folder: Path, pattern: str, table: str, column: str, newest: str) -> bool:
    """``make_torn`` for a SQLite store keeping each record's JSON in one column: the newest cut in half.

    In each database under ``folder`` named like ``pattern``, the first row of ``table`` ordered by
    ``newest`` (an ``ORDER BY`` clause, newest first) keeps only the first half of its ``column``:
    a JSON text caught half-written, which the converter must skip alone.
    """
    done = False
    for conn in sqlite_databases(folder, pattern):
        row = conn.execute(f"SELECT id FROM {table} ORDER BY {newest} LIMIT 1").fetchone()
        if row:
            half = f"substr({column}, 1, length({column}) / 2)"
            conn.execute(f"UPDATE {table} SET {column} = {half} WHERE id = ?", row)
            done = True
    return done


def corrupt_after_first(folder: Path, pattern: str, first: str, insert: str) -> bool:
    """``make_corrupt`` for a SQLite store: an unreadable row just after the first one.

    In each database under ``folder`` named like ``pattern``, ``first`` selects the first row's
    ``(id, session, time)`` and ``insert`` adds a row from ``(id + "0", session, time + 1, time +
    1)`` whose text is bytes that are not UTF-8 (``CAST(x'7bc328e2' AS TEXT)`` in ``insert``).
    """
    done = False
    for conn in sqlite_databases(folder, pattern):
        row = conn.execute(first).fetchone()
        if row:
            conn.execute(insert, (row[0] + "0", row[1], row[2] + 1, row[2] + 1))
            done = True
    return done


def golden_texts(expected: Path) -> list[str]:
    """The block texts of the golden ``expected`` (none when it is missing): what the converter keeps.

    A ``make_long`` lengthens only a string found inside one of them, so the filler is known to
    come through.
    """
    texts: list[str] = []
    try:
        lines = expected.read_text(encoding="utf-8").split("\n")
    except OSError:
        return texts
    for line in lines:
        if line.strip():
            texts.extend(b.get("text", "") for b in json.loads(line).get("blocks", []))
    return texts


def _longest_kept(value: Any, kept: list[str], best: str) -> str:
    if isinstance(value, str):
        if len(value) > len(best) and len(value) >= 8 and any(value in text for text in kept):
            return value
        return best
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    for item in items:
        best = _longest_kept(item, kept, best)
    return best


def _lengthened(value: Any, target: str, filler: str) -> tuple[Any, bool]:
    if isinstance(value, str):
        return (value + filler, True) if value == target else (value, False)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        done = False
        for key, item in value.items():
            new, hit = _lengthened(item, target, filler) if not done else (item, False)
            out[key] = new
            done = done or hit
        return out, done
    if isinstance(value, list):
        result: list[Any] = []
        done = False
        for item in value:
            new, hit = _lengthened(item, target, filler) if not done else (item, False)
            result.append(new)
            done = done or hit
        return result, done
    return value, False


def lengthen_value(value: Any, filler: str, kept: list[str]) -> Any | None:
    """``value`` (parsed JSON) with ``filler`` appended to its longest string found in ``kept``.

    ``kept`` is the golden's block texts: only a string the converter is known to keep is chosen.
    ``None`` when there is no such string. For ``make_long`` of formats that are one JSON document
    per session (the Continue CLI's).
    """
    best = _longest_kept(value, kept, "")
    if not best:
        return None
    lengthened, _ = _lengthened(value, best, filler)
    return lengthened


def json_documents(folder: Path, pattern: str) -> list[tuple[Path, Any]]:
    """Each file under ``folder`` named like ``pattern``, with its parsed JSON (one document a file)."""
    return [(path, json.loads(path.read_text(encoding="utf-8"))) for path in sorted(folder.rglob(pattern))]


def lengthen_documents(
    documents: Iterable[tuple[Path, Any]], filler: str, expected: Path, write: Callable[[Path, Any], None]
) -> bool:
    """``make_long`` for a format of one JSON document a file (an export, a session document).

    The first of ``documents`` (``(path, parsed JSON)``) holding a string the golden keeps gets
    ``filler`` appended to the longest such string (:func:`lengthen_value`) and is written back
    with ``write`` (the format's own layout). ``False`` when none holds one.
    """
    kept = golden_texts(expected)
    for path, data in documents:
        longer = lengthen_value(data, filler, kept)
        if longer is not None:
            write(path, longer)
            return True
    return False


def lengthen_lines(folder: Path, filler: str, expected: Path) -> bool:
    """Append ``filler`` to the longest string of a JSON-lines transcript that the golden keeps as text.

    Only a string that appears inside one of the golden's block texts is chosen, so the converter
    is known to keep it (a Codex developer message, which the converter skips on purpose, is never
    picked). Returns ``False`` when no such string exists.
    """
    kept = golden_texts(expected)
    for path in line_record_files(folder):
        lines = [line for line in _lines(path) if line.strip()]
        records = [json.loads(line) for line in lines]
        best = ""
        where = -1
        for number, record in enumerate(records):
            found = _longest_kept(record, kept, best)
            if found != best:
                best, where = found, number
        if where < 0:
            continue
        records[where], _ = _lengthened(records[where], best, filler)
        lines[where] = json.dumps(records[where], ensure_ascii=False) + "\n"
        path.write_text(
            "".join(line if line.endswith("\n") else line + "\n" for line in lines), encoding="utf-8"
        )
        return True
    return False

"""File helpers of the contract suite: snapshots of a HOME and mutated copies of line-based transcripts.

The mutators derive the awkward inputs the suite needs (an earlier state of a growing transcript,
a torn last record, a garbage record) from an author's sample sessions, so an author whose agent
writes JSON lines ships nothing extra. Authors of other formats override the matching method of
:class:`~funes_contracts.ConverterContract` instead.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

__all__ = [
    "GARBAGE_RECORD",
    "copy_case",
    "corrupt_lines",
    "earlier_lines",
    "line_record_files",
    "snapshot",
    "tear_lines",
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


def earlier_lines(folder: Path) -> bool:
    """Cut each line-record file in ``folder`` to its first half: the transcript as it was earlier."""
    files = line_record_files(folder)
    for path in files:
        lines = [line for line in _lines(path) if line.strip()]
        keep = max(1, len(lines) // 2)
        path.write_text("".join(lines[:keep]), encoding="utf-8")
    return bool(files)


def tear_lines(folder: Path) -> bool:
    """Cut the last record of each line-record file in half, with no newline (a writer mid-flush)."""
    files = line_record_files(folder)
    for path in files:
        lines = [line for line in _lines(path) if line.strip()]
        last = lines[-1].rstrip("\n")
        lines[-1] = last[: max(1, len(last) // 2)]
        path.write_text("".join(lines), encoding="utf-8")
    return bool(files)


def corrupt_lines(folder: Path) -> bool:
    """Insert :data:`GARBAGE_RECORD` after the first record of each line-record file."""
    files = line_record_files(folder)
    for path in files:
        lines = [line if line.endswith("\n") else line + "\n" for line in _lines(path) if line.strip()]
        lines.insert(1, GARBAGE_RECORD)
        path.write_text("".join(lines), encoding="utf-8")
    return bool(files)

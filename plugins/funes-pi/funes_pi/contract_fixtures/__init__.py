"""Sample pi sessions and a pi configuration: the fixtures of the funes contract suite."""

# pi writes its sessions with JSON.stringify, which leaves U+2028 and U+2029 raw inside strings.
# The kit's own line mutators would split such a line in two, so the variants the kit derives
# (earlier, torn, corrupt) are made here by splitting on "\n" bytes only, which is how pi and the
# converter read the file; the kit finds them here, in pytest and in `funes integrations check pi`.

from __future__ import annotations

from pathlib import Path

#: An unreadable record, like a half-flushed buffer (the kit's own GARBAGE_RECORD).
GARBAGE_RECORD = '{"funes-contract": "an unreadable record", \x7f\n'

__all__ = ["make_corrupt", "make_earlier", "make_torn"]


def _transcripts(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.jsonl") if p.is_file() and not p.name.endswith(".funes.jsonl"))


def _records(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n") if line.strip()]


def make_earlier(folder: Path) -> bool:
    """Keep the first half of each session's records (the session as it was earlier)."""
    paths = _transcripts(folder)
    for path in paths:
        records = _records(path)
        path.write_bytes(b"".join(r + b"\n" for r in records[: max(1, len(records) // 2)]))
    return bool(paths)


def make_torn(folder: Path) -> bool:
    """Cut the last record in half by bytes (possibly inside a multi-byte character)."""
    paths = _transcripts(folder)
    for path in paths:
        records = _records(path)
        records[-1] = records[-1][: max(1, len(records[-1]) // 2)]
        path.write_bytes(b"\n".join(records))
    return bool(paths)


def make_corrupt(folder: Path) -> bool:
    """Insert an unreadable record after the first one."""
    paths = _transcripts(folder)
    for path in paths:
        records = _records(path)
        records.insert(1, GARBAGE_RECORD.rstrip("\n").encode("utf-8"))
        path.write_bytes(b"".join(r + b"\n" for r in records))
    return bool(paths)

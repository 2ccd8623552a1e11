"""Which files a Lance version needs: a small reader of the manifest, for the remote mirror.

Why: a remote holds, besides its newest version, the versions a push made in the last few minutes
(:data:`~funes_core.store.lance.VERSION_GRACE`: a reader on another machine may still be on one)
and their files, superseded by compaction. Copying all of them made a mirror 3.9 KB a chunk
against 2.3 KB for a compacted memory. A reader only ever opens the newest version, so the mirror
needs the newest manifest and the files it names, nothing else.

lancedb does not say which files a version uses (pylance does; it is not a dependency), so this
reads the manifest itself: a protobuf message (``lance.table.Manifest``, lance's
``protos/table.proto``) at the position the file's last 16 bytes give (u64 position, u16 major,
u16 minor, ``LANC``), each message prefixed by its u32 length. Only four things are read: each
fragment's data file paths and deletion file, each index's UUID (its folder ``_indices/<uuid>/``
is kept whole) and the transaction file. Anything this reader does not understand (a reader
feature flag it does not know, data files under another base path, overlay files, a malformed
message) makes it answer ``None``, and the caller then copies everything, as before: the worst
case is the old cost, never a missing file. ``tests/test_mirror.py`` checks it against what
LanceDB itself reads.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Iterator

__all__ = ["KNOWN_READER_FLAGS", "manifest_version", "newest_manifest", "referenced_files"]

#: Reader feature flags this reader understands: deletion files (1), stable row ids (2), the
#: deprecated v2 flag (4), table config (8). Base paths (16), overlays (64) and newer ones are not.
KNOWN_READER_FLAGS = 1 | 2 | 4 | 8
_MAGIC = b"LANC"
_U64_MAX = 2**64 - 1

# Field numbers of lance.table messages (protos/table.proto).
_M_FRAGMENTS, _M_INDEX_SECTION, _M_READER_FLAGS, _M_TRANSACTION, _M_BASE_PATHS = 2, 6, 9, 12, 18
_F_ID, _F_FILES, _F_DELETION, _F_EXTERNAL_ROW_IDS, _F_OVERLAYS = 1, 2, 3, 6, 11
_F_EXTERNAL_SEQUENCES = (8, 10)
_D_PATH, _D_BASE_ID = 1, 7
_DEL_TYPE, _DEL_READ_VERSION, _DEL_ID, _DEL_BASE_ID = 1, 2, 3, 7
_I_UUID, _I_BASE_ID = 1, 9


class _Unknown(ValueError):
    """The manifest uses something this reader does not understand."""


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(data) or shift > 63:
            raise _Unknown("truncated varint")
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of a protobuf message: ints for varints, bytes for the rest."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            size, i = _varint(data, i)
            value, i = data[i : i + size], i + size
            if len(value) != size:
                raise _Unknown("truncated field")
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, i = data[i : i + width], i + width
        else:
            raise _Unknown(f"wire type {wire}")
        yield number, value


def _message(data: bytes, position: int) -> bytes:
    if position + 4 > len(data):
        raise _Unknown("position past the end")
    (size,) = struct.unpack_from("<I", data, position)
    body = data[position + 4 : position + 4 + size]
    if len(body) != size:
        raise _Unknown("message past the end")
    return body


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise _Unknown("expected a length-delimited field")
    return value


def _int(value: int | bytes) -> int:
    if isinstance(value, bytes):
        raise _Unknown("expected a varint")
    return value


def _fragment_files(fragment: bytes) -> Iterator[str]:
    fragment_id = 0
    deletion: bytes | None = None
    for number, value in _fields(fragment):
        if number == _F_ID:
            fragment_id = _int(value)
        elif number == _F_FILES:
            path = ""
            for n, v in _fields(_bytes(value)):
                if n == _D_PATH:
                    path = _bytes(v).decode()
                elif n == _D_BASE_ID:
                    raise _Unknown("a data file under another base path")
            if not path:
                raise _Unknown("a data file without a path")
            yield f"data/{path}"
        elif number == _F_DELETION:
            deletion = _bytes(value)
        elif number == _F_EXTERNAL_ROW_IDS or number in _F_EXTERNAL_SEQUENCES:
            for n, v in _fields(_bytes(value)):
                if n == 1:
                    yield _bytes(v).decode()
        elif number == _F_OVERLAYS:
            raise _Unknown("data overlay files")
    if deletion is not None:
        kind = read_version = file_id = 0
        for n, v in _fields(deletion):
            if n == _DEL_TYPE:
                kind = _int(v)
            elif n == _DEL_READ_VERSION:
                read_version = _int(v)
            elif n == _DEL_ID:
                file_id = _int(v)
            elif n == _DEL_BASE_ID:
                raise _Unknown("a deletion file under another base path")
        if kind not in (0, 1):
            raise _Unknown(f"deletion file type {kind}")
        if read_version or file_id:  # an empty DeletionFile message means none
            yield f"_deletions/{fragment_id}-{read_version}-{file_id}.{'arrow' if kind == 0 else 'bin'}"


def _index_dirs(section: bytes) -> Iterator[str]:
    for number, value in _fields(section):
        if number != 1:
            continue
        index_uuid = None
        for n, v in _fields(_bytes(value)):
            if n == _I_UUID:
                raw = dict(_fields(_bytes(v))).get(1)
                if not isinstance(raw, bytes) or len(raw) != 16:
                    raise _Unknown("an index without a UUID")
                index_uuid = uuid.UUID(bytes=raw)
            elif n == _I_BASE_ID:
                raise _Unknown("an index under another base path")
        if index_uuid is None:
            raise _Unknown("an index without a UUID")
        yield f"_indices/{index_uuid}/"


def referenced_files(manifest: bytes) -> set[str] | None:
    """Paths (relative to the table folder) the version this manifest describes reads.

    Index folders end with ``/`` (every file under them counts). ``None`` when the manifest uses
    something this reader does not understand: then every file must be kept.
    """
    try:
        if len(manifest) < 16 or manifest[-4:] != _MAGIC:
            raise _Unknown("not a Lance manifest")
        (position,) = struct.unpack_from("<Q", manifest, len(manifest) - 16)
        out: set[str] = set()
        index_section: int | None = None
        for number, value in _fields(_message(manifest, position)):
            if number == _M_FRAGMENTS:
                out.update(_fragment_files(_bytes(value)))
            elif number == _M_INDEX_SECTION:
                index_section = _int(value)
            elif number == _M_READER_FLAGS and _int(value) & ~KNOWN_READER_FLAGS:
                raise _Unknown("a reader feature flag this reader does not know")
            elif number == _M_TRANSACTION and value:
                out.add(f"_transactions/{_bytes(value).decode()}")
            elif number == _M_BASE_PATHS:
                raise _Unknown("base paths (a shallow clone)")
        if index_section is not None:
            out.update(_index_dirs(_message(manifest, index_section)))
        return out
    except (_Unknown, UnicodeDecodeError, struct.error):
        return None


def manifest_version(name: str) -> int | None:
    """The version a ``_versions/`` file name stands for (V2 names count down from u64::MAX)."""
    stem, dot, suffix = name.rpartition("/")[2].partition(".")
    if not dot or suffix != "manifest" or not stem.isdigit():
        return None
    number = int(stem)
    return _U64_MAX - number if len(stem) == 20 and number > 2**63 else number


def newest_manifest(paths: Iterable[str]) -> str | None:
    """The ``_versions/*.manifest`` path of the highest version among ``paths``."""
    versions = {p: manifest_version(p) for p in paths if p.startswith("_versions/")}
    known = {p: v for p, v in versions.items() if v is not None}
    return max(known, key=lambda p: known[p]) if known else None

"""What one index run reads: the turns files found, and what the state already says of each.

A run lists its sources (a named file, a folder walked recursively, or the spools), settles from
``state.json`` which of them need reading at all (unchanged, already refused, already stored), and
at its end forgets what vanished and removes the spool files it drained, only if they are still
the very files it read. Apart from the engine because it is the one part that touches the files
rather than the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from funes_core.home import Home, State
from funes_core.ingest.chunking import Tier
from funes_core.ingest.report import IndexOptions, IndexRunError, SourceKind
from funes_core.ingest.sources import iter_turns_files
from funes_core.version import __version__

__all__ = ["LAST_TIER", "Discovery", "SourceFile", "discover", "iter_spool_files"]

LAST_TIER = int(Tier.TOOL_RESULT)


def _sig(st: os.stat_result) -> str:
    return f"{st.st_size}:{st.st_mtime_ns}"


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(slots=True)
class SourceFile:
    """One turns file to read this run, with the stamp it had when it was found."""

    path: Path
    kind: SourceKind
    sig: str
    ino: int
    mtime_ns: int
    size: int
    #: highest tier already stored for this content (0 = nothing yet)
    done: int = 0
    refused: bool = False
    #: changed while it was being read: left for the next run, neither recorded nor refused
    skipped: bool = False

    @property
    def key(self) -> str:
        return str(self.path)

    @property
    def signed(self) -> bool:
        """Directory and spool files are remembered in state.json; a named file is re-read every run."""
        return self.kind != "file"


@dataclass(slots=True)
class Discovery:
    """The files a run will read, plus what discovery already settled."""

    files: list[SourceFile]
    #: spool files found fully stored by an earlier (interrupted) run: delete, don't re-read
    finished_spool: list[SourceFile] = field(default_factory=list)
    #: roots whose state entries for vanished files should be dropped
    roots: list[Path] = field(default_factory=list)


def _stat_source(path: Path, kind: SourceKind) -> SourceFile | None:
    try:
        st = path.stat()
    except OSError:
        return None  # vanished between listing and stat (a spool being drained by someone else)
    return SourceFile(
        path=path, kind=kind, sig=_sig(st), ino=st.st_ino, mtime_ns=st.st_mtime_ns, size=st.st_size
    )


def _settle_signed(src: SourceFile, state: State, include_thinking: bool) -> Literal["read", "skip", "done"]:
    """Decide from the state whether a signed file needs reading; updates ``src.done``."""
    refused = state.refused.get(src.key)
    if refused is not None:
        if refused.funes_version == __version__:
            if refused.sig == src.sig:
                return "skip"
            with contextlib.suppress(OSError):
                if _file_sha256(src.path) == refused.sha256:
                    refused.sig = src.sig  # touched, not changed: still the same bad content
                    return "skip"
        del state.refused[src.key]
    known = state.files.get(src.key)
    if known is not None and known.sig == src.sig and (known.thinking or not include_thinking):
        src.done = min(known.tier, LAST_TIER)
        if src.done >= LAST_TIER:
            return "done"
    return "read"


def discover(home: Home, options: IndexOptions, state: State) -> Discovery:
    """List what this run reads, newest mtime first, with ``--limit`` applied to files that need work."""
    found: list[SourceFile] = []
    finished: list[SourceFile] = []
    roots: list[Path] = []
    if options.path is not None:
        target = options.path.expanduser().absolute()
        if not target.exists():
            raise IndexRunError(f"no such file or folder: {options.path}")
        if target.is_file():
            src = _stat_source(target, "file")
            if src is not None:
                found.append(src)
        else:
            roots.append(target)
            for path in iter_turns_files(target):
                src = _stat_source(path, "dir")
                if src is not None and _settle_signed(src, state, options.include_thinking) == "read":
                    found.append(src)
    else:
        ids = home.spool_ids()
        if options.harness is not None:
            if options.harness not in ids:
                raise IndexRunError(f"no {options.harness} spool")
            ids = [options.harness]
        for spool_id in ids:
            root = home.spool_dir / spool_id
            roots.append(root)
            for path in iter_turns_files(root):
                src = _stat_source(path, "spool")
                if src is None:
                    continue
                verdict = _settle_signed(src, state, options.include_thinking)
                if verdict == "read":
                    found.append(src)
                elif verdict == "done":
                    finished.append(src)
    found.sort(key=lambda s: (-s.mtime_ns, s.key))
    if options.limit is not None:
        found = found[: max(0, options.limit)]
    return Discovery(files=found, finished_spool=finished, roots=roots)


def _prune_state(state: State, roots: Iterable[Path]) -> None:
    """Forget state entries for files under ``roots`` that no longer exist."""
    prefixes = [str(r).rstrip(os.sep) + os.sep for r in roots]
    if not prefixes:
        return
    for table in (state.files, state.refused):
        for key in [k for k in table if any(k.startswith(p) for p in prefixes)]:
            if not os.path.exists(key):
                del table[key]


def _remove_if_unchanged(src: SourceFile) -> bool:
    """Delete a drained spool file, but only if it is still the file that was read.

    The file is first renamed to a private name (never ``*.jsonl``), then checked: if a
    producer replaced it after it was read, the newer content is put back under its name
    (unless an even newer one already arrived there) so that nothing unstored is lost.
    """
    private = src.path.with_name(f".{src.path.name}.{os.getpid()}.drained")
    try:
        os.rename(src.path, private)
    except FileNotFoundError:
        return False
    try:
        st = private.stat()
        if st.st_ino == src.ino and _sig(st) == src.sig:
            private.unlink()
            return True
        with contextlib.suppress(FileExistsError):
            os.link(private, src.path)
        private.unlink()
    except OSError:
        with contextlib.suppress(OSError):
            if not src.path.exists():
                os.rename(private, src.path)
    return False


def iter_spool_files(home: Home, spool_id: str | None = None) -> Iterator[Path]:
    """The ``*.jsonl`` files waiting in one spool (or all), for ``funes status``."""
    ids = [spool_id] if spool_id else home.spool_ids()
    for sid in ids:
        root = home.spool_dir / sid
        if root.is_dir():
            yield from iter_turns_files(root)

"""``$FUNES_HOME``: where funes keeps its memory, its spools, its index state and its write lock.

Layout (default ``~/.funes``)::

    memory/chunks.lance/   the LanceDB table (the memory itself)
    spool/<id>/            turns files written by integrations, drained by ``funes index``
    state.json             what ``funes index`` has read: file stamps, refused files, last run
    store.lock             the one write lock (``portable.try_lock``); ``store.lock.pid`` names its holder
    cache/                 derived files that can always be rebuilt (model dir, sha verification)

Everything here is private to the user: directories are 0700 and files 0600, because the memory
holds verbatim transcripts (redacted, but still personal) and the state names every file indexed.
That holds whatever the user's umask, for LanceDB's own files too: a writer holds
:func:`private_umask` for as long as it holds the write lock (Lance's writer creates files with the
process umask), folders are created 0700 one by one, and :func:`secure_home` tightens whatever
another process (an older funes, a hook, a hand-made spool folder) left loose. ``$FUNES_HOME`` itself
must belong to the user: a folder someone else owns is refused, since its owner could read or
replace anything in it.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from funes_core import portable
from funes_core.files import atomic_write_text, missing_dirs
from funes_core.homepath import HomeError, resolve_funes_home, resolve_root

__all__ = [
    "DIRTY_NAME",
    "FILE_MODE",
    "PRIVATE_DIR_MODE",
    "STATE_VERSION",
    "FileState",
    "Home",
    "HomeError",
    "LockBusyError",
    "RefusedFile",
    "State",
    "atomic_write_text",
    "ensure_private_dir",
    "private_umask",
    "resolve_funes_home",
    "secure_home",
    "secure_tree",
    "write_lock",
]

PRIVATE_DIR_MODE = 0o700
#: The marker a producer leaves in ``spool/<id>/`` for the indexer (never read as turns).
DIRTY_NAME = ".dirty"
FILE_MODE = 0o600
STATE_VERSION = 1


@dataclass(frozen=True, slots=True)
class Home:
    """The paths of one ``$FUNES_HOME``. Building one touches nothing on disk."""

    root: Path

    @classmethod
    def resolve(cls, value: str | os.PathLike[str] | None = None) -> Home:
        """``value``, else ``$FUNES_HOME``, else ``~/.funes`` (:func:`funes_core.homepath.resolve_root`)."""
        return cls(resolve_root(value))

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    @property
    def spool_dir(self) -> Path:
        return self.root / "spool"

    @property
    def state_path(self) -> Path:
        return self.root / "state.json"

    @property
    def lock_path(self) -> Path:
        return self.root / "store.lock"

    @property
    def lock_pid_path(self) -> Path:
        return self.root / "store.lock.pid"

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    def ensure(self) -> Home:
        """Create the home (0700) if needed; writers call this, readers never do.

        Refuses (:class:`HomeError`) a home that exists but belongs to another user.
        """
        _check_owner(self.root)
        ensure_private_dir(self.root)
        return self

    def spool_ids(self) -> list[str]:
        """The ids that have a spool folder, sorted."""
        if not self.spool_dir.is_dir():
            return []
        return sorted(p.name for p in self.spool_dir.iterdir() if p.is_dir() and not p.name.startswith("."))

    # -- the dirty markers producers leave for the indexer (see funes_core.wiring.spooling) -----

    def mark_dirty(self, spool_id: str) -> None:
        """Say "spool ``spool_id`` has new files"; a producer calls this *after* they are in place."""
        folder = self.spool_dir / spool_id
        folder.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        os.close(os.open(folder / DIRTY_NAME, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE))

    def dirty_ids(self) -> list[str]:
        """The spools marked dirty and not yet looked at by an indexer, sorted."""
        try:
            return sorted(p.parent.name for p in self.spool_dir.glob(f"*/{DIRTY_NAME}"))
        except OSError:
            return []

    def clear_dirty(self, spool_ids: Iterable[str]) -> None:
        """Forget the markers of ``spool_ids``: an indexer does this just *before* it lists their files."""
        for spool_id in spool_ids:
            with contextlib.suppress(FileNotFoundError):
                (self.spool_dir / spool_id / DIRTY_NAME).unlink()


def _check_owner(root: Path) -> None:
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # pragma: no cover - Windows: ACLs, not owners and modes
        return
    try:
        owner = root.stat().st_uid
    except FileNotFoundError:
        return
    except OSError as exc:
        raise HomeError(f"cannot use {root} as FUNES_HOME: {exc.strerror or exc}") from None
    if owner != getuid():
        raise HomeError(
            f"{root} belongs to another user (uid {owner}): funes keeps your memory only in a folder "
            "you own; set FUNES_HOME to one"
        )


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` and any missing parents, each 0700, and make sure only the owner can enter it.

    ``mkdir(parents=True)`` would give the parents the umask's mode, so each level is made here.
    """
    missing = missing_dirs(path)
    for folder in reversed(missing):
        folder.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)
    with contextlib.suppress(OSError):  # a folder we do not own: leave its mode to its owner
        if path.stat().st_mode & 0o077:
            path.chmod(PRIVATE_DIR_MODE)
    for folder in missing:
        with contextlib.suppress(OSError):
            folder.chmod(PRIVATE_DIR_MODE)


@contextlib.contextmanager
def private_umask() -> Iterator[None]:
    """Create files 0600 and folders 0700 for the duration, whatever the umask (restored after).

    The umask is per process: funes' writers hold it while they write the memory (LanceDB's Rust
    writer, like every library, creates files with the process umask).
    """
    old = os.umask(0o077)
    os.umask(old | 0o077)
    try:
        yield
    finally:
        os.umask(old)


def secure_tree(root: Path) -> int:
    """Make every folder under ``root`` 0700 and every file 0600 (symlinks are left alone, not followed).

    Returns how many entries were changed. Entries another user owns are skipped.
    """
    changed = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [*dirnames, *filenames, ""]:
            path = os.path.join(dirpath, name) if name else dirpath
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o077:
                continue
            want = PRIVATE_DIR_MODE if stat.S_ISDIR(st.st_mode) else FILE_MODE
            with contextlib.suppress(OSError):
                os.chmod(path, stat.S_IMODE(st.st_mode) & want)
                changed += 1
    return changed


def _loose(path: Path) -> bool:
    try:
        return bool(path.lstat().st_mode & 0o077)
    except OSError:
        return False


def secure_home(home: Home) -> int:
    """Tighten what is loose under ``$FUNES_HOME``; cheap enough for every write.

    Everything but the memories is walked (spool, notes, cache, state: a few files). A memory is
    walked only when its table folder is loose, which is how a memory written before modes were
    enforced looks; one written since is private file by file and is not walked again.
    """
    if not home.root.is_dir():
        return 0
    changed = 0
    if _loose(home.root):
        home.root.chmod(PRIVATE_DIR_MODE)
        changed += 1
    for entry in home.root.iterdir():
        if entry.is_symlink():
            continue
        if entry.is_dir() and entry.name.startswith("memory"):
            tables = [entry, *(p for p in entry.iterdir() if p.is_dir() and not p.is_symlink())]
            if any(_loose(p) for p in tables):
                changed += secure_tree(entry)
            continue
        changed += secure_tree(entry) if entry.is_dir() else _secure_file(entry)
    return changed


def _secure_file(path: Path) -> int:
    if not _loose(path):
        return 0
    with contextlib.suppress(OSError):
        path.chmod(stat.S_IMODE(path.lstat().st_mode) & FILE_MODE)
        return 1
    return 0


# --------------------------------------------------------------------------- state.json


@dataclass(slots=True)
class FileState:
    """What was stored from one signed file (a directory member or a spool file).

    ``sig`` is ``size:mtime_ns``; ``tier`` is the highest tier fully stored for that content;
    ``thinking`` says whether thinking blocks were included, so a later run that wants them re-reads.
    """

    sig: str
    tier: int
    thinking: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"sig": self.sig, "tier": self.tier, "thinking": self.thinking}


@dataclass(slots=True)
class RefusedFile:
    """A file that failed validation, remembered so that it is reported once, not on every run.

    It is keyed by its content (sha256) and the funes version that refused it: a fixed file, or
    a funes that reads more, gets another chance.
    """

    sig: str
    sha256: str
    funes_version: str
    error: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # every field, in order: sig, sha256, funes_version, error


@dataclass(slots=True)
class State:
    """``state.json``: per-file stamps and refusals, keyed by absolute path, plus the last run's time.

    The state is an optimisation, never the truth: the store deduplicates by chunk id, so a lost
    or stale state only costs a re-read, never a duplicate or a missing row.
    """

    files: dict[str, FileState] = field(default_factory=dict)
    refused: dict[str, RefusedFile] = field(default_factory=dict)
    last_indexed: str | None = None

    @classmethod
    def load(cls, path: Path) -> State:
        """Read the state; a missing, unreadable or foreign file gives an empty state (and a re-read)."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(raw, dict) or raw.get("version") != STATE_VERSION:
            return cls()
        state = cls(
            last_indexed=raw.get("last_indexed") if isinstance(raw.get("last_indexed"), str) else None
        )
        for key, item in (raw.get("files") or {}).items():
            try:
                state.files[key] = FileState(
                    str(item["sig"]), int(item["tier"]), bool(item.get("thinking", True))
                )
            except (KeyError, TypeError, ValueError):
                continue
        for key, item in (raw.get("refused") or {}).items():
            try:
                state.refused[key] = RefusedFile(
                    str(item["sig"]),
                    str(item["sha256"]),
                    str(item["funes_version"]),
                    _safe_error(str(item.get("error", ""))),
                )
            except (KeyError, TypeError):
                continue
        return state

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "last_indexed": self.last_indexed,
            "files": {k: v.to_json() for k, v in sorted(self.files.items())},
            "refused": {k: v.to_json() for k, v in sorted(self.refused.items())},
        }

    def save(self, path: Path) -> None:
        atomic_write_text(path, json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n")


#: A refusal message is at most this long once loaded (it is shown by ``funes status``).
_MAX_ERROR_CHARS = 500


def _safe_error(message: str) -> str:
    """A refusal message from ``state.json`` made safe to show: redacted, one line, bounded.

    Messages are written safe (values quoted redacted and short), but a state file written by an
    older funes may hold a whole offending value, secrets included; ``funes status`` and the MCP
    ``status`` tool show these messages to agents, and the next save rewrites them cleaned.
    """
    if not message:
        return message
    from funes_core.redact import redact  # lazy: only a state with refusals pays for it
    from funes_core.safetext import one_line, shorten

    return shorten(one_line(redact(message)[0]), _MAX_ERROR_CHARS)


# --------------------------------------------------------------------------- the write lock


class LockBusyError(RuntimeError):
    """Another writer holds ``store.lock``."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        who = f" (pid {pid})" if pid else ""
        super().__init__(f"another funes index is running{who}; retry in a moment")


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _holder_pid(path: Path, *, patience: float = 1.0) -> int | None:
    """The pid of the lock's holder, from its sidecar.

    The holder writes the sidecar right *after* it gets the lock, so a contender that lost the
    race by microseconds may find no file yet, or the stale pid of a holder that was killed:
    give the new holder a moment to write it, and accept only a live process.
    """
    deadline = time.monotonic() + patience
    while True:
        pid = _read_pid(path)
        if pid is not None and portable.pid_alive(pid):
            return pid
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.02)


@contextlib.contextmanager
def write_lock(home: Home, *, wait: float = 0.0, notify: TextIO | None = None) -> Iterator[None]:
    """Hold ``store.lock`` (:func:`funes_core.portable.try_lock`) for the duration; readers never take it.

    While it is held the process creates files private (:func:`private_umask`), and anything loose
    under ``$FUNES_HOME`` is tightened first (:func:`secure_home`).

    ``wait`` is how long to keep trying (an interactive user can wait a few seconds; a hook must
    not), after which :class:`LockBusyError` names the holder's pid from ``store.lock.pid``. The
    system drops the lock when its holder dies, even by ``kill -9``, so a stale lock cannot exist;
    a stale pid file is harmless because it is only read while the lock is actually held.
    """
    home.ensure()
    fd = os.open(home.lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        deadline = time.monotonic() + wait
        told = False
        while not portable.try_lock(fd):
            if time.monotonic() >= deadline:
                raise LockBusyError(_holder_pid(home.lock_pid_path))
            if notify is not None and not told:
                pid = _holder_pid(home.lock_pid_path, patience=0.2)
                who = f" (pid {pid})" if pid else ""
                print(f"waiting for another funes index{who}…", file=notify)
                told = True
            time.sleep(0.2)
        atomic_write_text(home.lock_pid_path, f"{os.getpid()}\n")
        try:
            with private_umask():
                secure_home(home)
                yield
        finally:
            with contextlib.suppress(OSError):
                if _read_pid(home.lock_pid_path) == os.getpid():
                    home.lock_pid_path.unlink()
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def stderr_is_interactive() -> bool:
    """True when a person is watching: both stdin and stderr are terminals."""
    return sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty()

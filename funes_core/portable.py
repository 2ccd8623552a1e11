"""What differs between Linux, macOS and Windows, in one place: locks, detached processes, priority, memory.

Every other module asks here instead of calling a POSIX-only or Linux-only API itself (a test,
``tests/test_portable.py``, fails if any other module imports ``fcntl``, ``resource`` or ``msvcrt``,
or calls ``posix_spawn``, ``setpriority``, ``getsid`` or ``sched_getaffinity``), so a port to another
platform is a change to this file, and what each platform gets is written down beside the branch
that gives it (``docs/platforms.md`` says what has been run where).

- **Locks** go through ``filelock`` (``fcntl.flock`` on Linux and macOS, ``LockFileEx`` on one byte
  on Windows): :func:`file_lock` for a lock held around a block, :func:`try_lock` on a descriptor the
  caller owns (the embedding worker's lock is taken by the parent and its descriptor handed to the
  child, which a lock object cannot do), :func:`lock_held` to ask without taking it for long.
- **Detached processes** (:func:`spawn_detached`): in a session of their own on POSIX (``posix_spawn``,
  cheaper to import than ``subprocess``, which a per-turn hook cannot afford), a new process group
  outside the agent's console and job on Windows, so the agent never waits for them nor kills them.
- **Priority** (:func:`lower_priority`): nice 19 and the idle I/O class on Linux, nice 19 and disk
  I/O throttling on macOS, the idle priority class and very low I/O priority on Windows.
- **Local sockets** (:func:`unix_sockets`, :func:`current_uid`): whether this Python has Unix-domain
  sockets (Windows builds may not) and who owns a file, for the memory service's socket checks.
- **Native memory** (:func:`limit_malloc_arenas`, :func:`set_mmap_threshold`, :func:`trim_malloc`):
  glibc's knobs, a no-op (``False``) everywhere else.

The decisions read :data:`SYSTEM` when called, not when imported, so the tests run each platform's
branch on any machine by patching it. Importing this module costs only the standard library's
``os`` and ``sys``: the per-turn hooks import it; everything heavier is imported by the function
that needs it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "SYSTEM",
    "can_pass_fds",
    "child_exited",
    "current_uid",
    "file_lock",
    "flush_to_disk",
    "leads_a_session",
    "limit_malloc_arenas",
    "lock_held",
    "lower_priority",
    "peak_rss_bytes",
    "pid_alive",
    "rss_bytes",
    "set_mmap_threshold",
    "set_mode",
    "spawn_detached",
    "terminate",
    "trim_malloc",
    "try_lock",
    "unix_socket",
    "unix_sockets",
    "usable_cores",
    "user_home",
]

#: ``os`` for the names only some platforms have, typed loosely so that this module type-checks for
#: every platform (``mypy --platform win32``/``darwin``); which branch runs is decided by :data:`SYSTEM`.
_os: Any = os

#: ``sys.platform`` as this module sees it: ``"linux"``, ``"darwin"``, ``"win32"`` (tests patch it).
SYSTEM: str = sys.platform

#: Windows ``CreateProcess`` flags (``subprocess`` defines them only on Windows).
DETACHED_PROCESS = 0x00000008
CREATE_NEW_PROCESS_GROUP = 0x00000200
CREATE_BREAKAWAY_FROM_JOB = 0x01000000
#: Windows priority class and I/O priority (``psutil`` defines them only on Windows).
IDLE_PRIORITY_CLASS = 0x00000040
IOPRIO_VERYLOW = 0
#: macOS ``setiopolicy_np``: the disk I/O policy of the whole process, throttled.
IOPOL_TYPE_DISK, IOPOL_SCOPE_PROCESS, IOPOL_THROTTLE = 0, 0, 3
#: glibc ``mallopt`` parameters.
M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8


def _windows() -> bool:
    return SYSTEM == "win32"


def user_home(environ: Mapping[str, str]) -> str:
    """The user's home folder an environment names, or ``""``: ``HOME``, else ``USERPROFILE`` on Windows.

    Windows keeps the home in ``USERPROFILE`` and most shells there set no ``HOME``
    (``Path.home()`` reads ``USERPROFILE`` too); reading ``HOME`` alone would treat every Windows
    process as running in a throwaway home, and an agent's location variables (``CODEX_HOME``,
    ``CLAUDE_CONFIG_DIR``, ...) would never apply there.
    """
    home = environ.get("HOME", "").strip()
    if not home and _windows():
        home = environ.get("USERPROFILE", "").strip()
    return home


#: Files from which :func:`flush_to_disk` syncs the whole system instead of each file.
SYNC_ALL_FROM = 16


def flush_to_disk(paths: Sequence[Path]) -> None:
    """Make the files at ``paths``, written without an fsync each, durable now, all at once.

    POSIX: one ``sync()``, which writes every dirty page back in one pass (one journal commit)
    where an fsync per file cost a commit each (8 ms apiece on a loaded disk: 150 s for the
    19,000 sessions of a whole history). Windows has no ``sync()``: each file is flushed, which
    is what the writes would have cost one by one; so are a few files anywhere (``sync()`` also
    writes back every other program's dirty pages, a poor trade for one file). A file gone
    meanwhile is skipped.
    """
    if len(paths) > SYNC_ALL_FROM and not _windows() and hasattr(_os, "sync"):
        _os.sync()
        return
    for path in paths:
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# --------------------------------------------------------------------------- locks


def can_pass_fds() -> bool:
    """Whether a child can inherit a locked descriptor (POSIX); on Windows it takes the lock itself."""
    return not _windows()


def try_lock(fd: int) -> bool:
    """Take an exclusive lock on the open file ``fd`` without waiting; ``False`` if another holder has it.

    The lock belongs to the open file: closing every copy of ``fd`` (or dying) releases it, so a
    lock can never outlive its holder. It contends with :func:`file_lock` on the same file.
    """
    from filelock import lock_descriptor

    return lock_descriptor(fd, blocking=False)


def lock_held(path: Path) -> bool:
    """Whether someone holds the lock on ``path`` now; opens it read-only and writes nothing.

    Asking means taking the lock for an instant and letting go, so a contender's :func:`try_lock`
    in that instant fails; callers treat a busy lock as "someone is at it", which it then was.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return not try_lock(fd)
    finally:
        os.close(fd)  # releases the instant's lock


@contextlib.contextmanager
def file_lock(path: Path, *, timeout: float = -1, mode: int = 0o600) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` for the block, waiting up to ``timeout`` seconds (-1: forever).

    Raises ``filelock.Timeout`` when it cannot be had in time. The file is created ``mode`` and
    left in place (waiters must all lock the same file).
    """
    from filelock import FileLock

    with FileLock(str(path), timeout=timeout, mode=mode):
        yield


# --------------------------------------------------------------------------- files


def set_mode(fd: int, path: str | Path, mode: int) -> None:
    """Give the open file ``fd`` (at ``path``) the permission bits ``mode``.

    POSIX sets them on the descriptor (no window where the path could be swapped); Windows has no
    ``fchmod`` before Python 3.13 and keeps only the read-only bit, set through the path.
    """
    if _windows():
        os.chmod(path, mode)
    else:
        _os.fchmod(fd, mode)


# --------------------------------------------------------------------------- processes


def spawn_detached(
    argv: Sequence[str], *, env: Mapping[str, str], output: int, pass_fds: Sequence[int] = ()
) -> int:
    """Start ``argv`` detached from this process and its terminal; return its pid, never wait.

    stdin reads nothing, stdout and stderr go to the open descriptor ``output``. ``pass_fds`` are
    descriptors the child inherits (POSIX only: :func:`can_pass_fds`). On POSIX the child leads a
    session of its own, so the agent's terminal, process group and signals do not reach it; on
    Windows it gets a new process group, no console, and leaves the agent's job when the job
    allows it, so closing the agent does not kill it.
    """
    if _windows():
        if pass_fds:
            raise ValueError("descriptors cannot be handed to a child on Windows")
        return _spawn_windows(argv, env=env, output=output)
    if hasattr(os, "posix_spawnp") and hasattr(os, "POSIX_SPAWN_DUP2"):
        actions = [
            (_os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (_os.POSIX_SPAWN_DUP2, output, 1),
            (_os.POSIX_SPAWN_DUP2, output, 2),
        ]
        for passed in pass_fds:
            os.set_inheritable(passed, True)  # posix_spawn keeps what is inheritable, as it is
        try:
            return int(_os.posix_spawnp(argv[0], list(argv), dict(env), file_actions=actions, setsid=True))
        except NotImplementedError:  # no POSIX_SPAWN_SETSID (older macOS, old glibc)
            pass
        finally:
            for passed in pass_fds:
                os.set_inheritable(passed, False)
    import subprocess

    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
        close_fds=True,
        pass_fds=tuple(pass_fds),
        start_new_session=True,
        env=dict(env),
    )
    return _keep(proc)


def _spawn_windows(argv: Sequence[str], *, env: Mapping[str, str], output: int) -> int:
    import subprocess

    flags = DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP
    options: dict[str, Any] = {
        "stdin": subprocess.DEVNULL,
        "stdout": output,
        "stderr": subprocess.STDOUT,
        "close_fds": True,
        "env": dict(env),
    }
    try:
        proc = subprocess.Popen(list(argv), creationflags=flags | CREATE_BREAKAWAY_FROM_JOB, **options)
    except PermissionError:  # the agent's job forbids breaking away: stay in it, still detached
        proc = subprocess.Popen(list(argv), creationflags=flags, **options)
    return _keep(proc)


#: Children started through ``subprocess``, kept until they have exited: dropping a running one
#: warns, and polling reaps the finished (no zombies in a long-lived process).
_children: list[Any] = []


def _keep(proc: Any) -> int:
    _children[:] = [child for child in _children if child.poll() is None]
    _children.append(proc)
    return int(proc.pid)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (owned by anyone).

    On Windows ``os.kill(pid, 0)`` would *terminate* the process, so it asks ``psutil`` there.
    """
    if _windows():
        import psutil

        return bool(psutil.pid_exists(pid))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def child_exited(pid: int) -> bool:
    """Whether ``pid``, a child :func:`spawn_detached` started, has exited (reaping it if so).

    A child that exited stays a zombie until its parent reaps it, and :func:`pid_alive` calls a
    zombie alive; a client that waits for the service it started asks here instead.
    """
    for child in _children:
        if child.pid == pid:
            return bool(child.poll() is not None)
    if _windows():
        return not pid_alive(pid)
    try:
        done, _status = os.waitpid(pid, _os.WNOHANG)
    except ChildProcessError:  # not our child (or reaped already)
        return not pid_alive(pid)
    return done == pid


def leads_a_session(pid: int) -> bool:
    """Whether ``pid`` leads a session of its own, as :func:`spawn_detached` starts children on POSIX
    (``False`` when it is gone, and always on Windows, which has no sessions)."""
    if _windows():
        return False
    try:
        return bool(_os.getsid(pid) == pid)
    except OSError:
        return False


def terminate(pid: int) -> bool:
    """Ask process ``pid`` to stop (``SIGTERM``; on Windows it is ended at once); ``False`` if it was gone."""
    import signal

    try:
        os.kill(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return False
    return True


# --------------------------------------------------------------------------- local sockets


def unix_sockets() -> bool:
    """Whether this Python can listen on a Unix-domain socket (``AF_UNIX``; some Windows builds cannot)."""
    import socket

    return hasattr(socket, "AF_UNIX")


def unix_socket() -> Any:
    """A new Unix-domain stream socket (:func:`unix_sockets` says whether there can be one)."""
    import socket

    family: int = getattr(socket, "AF_UNIX")  # noqa: B009 - absent from Windows' stubs
    return socket.socket(family, socket.SOCK_STREAM)


def current_uid() -> int | None:
    """This process' user id, to compare with a file's owner (``None`` on Windows: no uids there)."""
    getuid = getattr(os, "getuid", None)
    return None if _windows() or getuid is None else int(getuid())


def rss_bytes(pid: int | None = None) -> int | None:
    """Resident memory of process ``pid`` (default: this one) in bytes, or ``None`` when unreadable."""
    import psutil

    try:
        return int(psutil.Process(pid).memory_info().rss)
    except (psutil.Error, OSError):
        return None


# --------------------------------------------------------------------------- priority


def lower_priority() -> list[str]:
    """Make this process yield CPU and disk to everything else; returns what could not be done."""
    if _windows():
        return _lower_priority_windows()
    missed: list[str] = []
    try:
        _os.setpriority(_os.PRIO_PROCESS, 0, 19)
    except (AttributeError, OSError):
        missed.append("nice")
    if SYSTEM == "darwin":
        if not _throttle_disk_darwin():
            missed.append("I/O priority")
        return missed
    # Linux: the scheduler weighs whole autogroups (one per session) before processes, so nice
    # alone would not reach a worker that leads its own session. Renice the autogroup only when
    # this process leads it (a detached worker does), never the terminal of someone running it.
    autogroup = Path("/proc/self/autogroup")
    if autogroup.exists() and _os.getsid(0) == os.getpid():
        try:
            autogroup.write_text("19")
        except OSError:
            missed.append("autogroup nice")
    try:
        import psutil

        proc: Any = psutil.Process()  # ionice exists on Linux and Windows only
        proc.ionice(psutil.IOPRIO_CLASS_IDLE)  # type: ignore[attr-defined,unused-ignore]
    except Exception:  # broad on purpose: psutil.Error, no ionice (not Linux); best effort
        missed.append("I/O priority")
    return missed


def _lower_priority_windows() -> list[str]:
    missed: list[str] = []
    try:
        import psutil

        proc: Any = psutil.Process()  # ionice exists on Linux and Windows only
    except Exception:  # broad on purpose: best effort
        return ["nice", "I/O priority"]
    try:
        proc.nice(IDLE_PRIORITY_CLASS)
    except Exception:  # broad on purpose: psutil.Error (access denied); best effort
        missed.append("nice")
    try:
        proc.ionice(IOPRIO_VERYLOW)
    except Exception:  # broad on purpose: psutil.Error (access denied); best effort
        missed.append("I/O priority")
    return missed


def _throttle_disk_darwin() -> bool:
    """``setiopolicy_np(IOPOL_TYPE_DISK, IOPOL_SCOPE_PROCESS, IOPOL_THROTTLE)``: macOS' idle disk class."""
    libc = _darwin_libc()
    if libc is None:
        return False
    try:
        return int(libc.setiopolicy_np(IOPOL_TYPE_DISK, IOPOL_SCOPE_PROCESS, IOPOL_THROTTLE)) == 0
    except (AttributeError, OSError):
        return False


def _darwin_libc() -> Any:
    import ctypes

    try:
        return ctypes.CDLL("/usr/lib/libSystem.B.dylib")
    except OSError:
        return None


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        with contextlib.suppress(OSError):
            return max(1, len(affinity(0)))
    return max(1, os.cpu_count() or 1)


# --------------------------------------------------------------------------- native memory


@functools.cache
def _glibc_cached(system: str) -> Any:
    if system != "linux":
        return None
    import platform

    if platform.libc_ver()[0] != "glibc":  # musl has neither knob
        return None
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt  # noqa: B018 - glibc only
        libc.malloc_trim  # noqa: B018
    except (OSError, AttributeError):  # pragma: no cover - a glibc without the usual soname
        return None
    return libc


def _glibc() -> Any:
    return _glibc_cached(SYSTEM)


def limit_malloc_arenas(count: int) -> bool:
    """Cap glibc's malloc arenas for this process (each thread's arena keeps what it freed)."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(M_ARENA_MAX, count))


def set_mmap_threshold(size: int) -> bool:
    """Fix glibc's mmap threshold: allocations from ``size`` bytes up go back to the system when freed."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(M_MMAP_THRESHOLD, size))


def trim_malloc() -> bool:
    """Give memory freed since the last trim back to the system (glibc's ``malloc_trim``)."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def peak_rss_bytes() -> int:
    """This process' peak resident memory, in bytes (for benchmarks)."""
    if _windows():
        import psutil

        return int(getattr(psutil.Process().memory_info(), "peak_wset", 0))
    import importlib

    resource: Any = importlib.import_module("resource")
    peak = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return peak if SYSTEM == "darwin" else peak * 1024  # macOS counts bytes, Linux KiB

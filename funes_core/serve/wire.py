"""Where the memory service's files live, how its messages are framed, and the limits on them.

Standard library only: the thin ``funes mcp`` front and every CLI read import this, and they must
stay free of lancedb, pyarrow, ONNX Runtime and numpy.

**Files** (all in ``$FUNES_HOME/run``, a 0700 folder): ``serve.lock`` (held by the one service for
its whole life: the lock, not the socket, says whether a service runs), ``serve.json`` (its pid,
version, socket and settings, written atomically once it listens), ``serve.sock`` (the socket,
0600), ``serve.log`` (its output) and ``spawn.lock`` (held by a client while it starts one, so that
two fronts that both find no service start exactly one). A home on a filesystem that cannot hold a
socket (some network and FUSE mounts) or whose path is too long for one (``sun_path`` is ~104-108
bytes) gets its socket in a private folder of the user's runtime directory instead
(:func:`fallback_socket`); ``serve.json`` names the socket in use, so clients never guess.

**Framing**: one JSON object per line (UTF-8, ``\\n``), at most :func:`max_line` bytes. A
connection opens with a *header* line (``{"op": ..., "version": ..., "fingerprint": ...}``) and
its answer; an ``mcp`` connection then carries MCP's own newline-delimited JSON-RPC frames both ways
(as on stdio), a ``call`` connection one request line and its reply at a time.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import IO, Any, NamedTuple

from funes_core import portable

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "IGNORED_ENV",
    "PROTOCOL",
    "OversizeError",
    "RunPaths",
    "ServiceRefusedError",
    "call_timeout",
    "check_socket",
    "dumps",
    "fallback_socket",
    "fingerprint",
    "idle_seconds",
    "max_line",
    "parse_duration",
    "read_line",
    "run_paths",
    "skip_rest_of_line",
]

#: Bumped when a header or reply changes shape (the funes version is checked as well).
PROTOCOL = 1
#: How long a service with no client waits before it exits (``FUNES_SERVE_IDLE``, ``--idle``).
DEFAULT_IDLE_SECONDS = 30 * 60.0
IDLE_ENV = "FUNES_SERVE_IDLE"
MAX_LINE_ENV = "FUNES_SERVE_MAX_REQUEST"
TIMEOUT_ENV = "FUNES_SERVE_TIMEOUT"
#: A request line larger than this is refused (8 MiB: a recall query is a few hundred bytes).
DEFAULT_MAX_LINE = 8 * 1024 * 1024
#: ``FUNES_*`` variables that do not change what a read answers, left out of :func:`fingerprint`.
IGNORED_ENV = frozenset(
    {
        "FUNES_HOME",
        "FUNES_LOG",
        "FUNES_SERVICE",
        IDLE_ENV,
        MAX_LINE_ENV,
        TIMEOUT_ENV,
        "FUNES_SERVE_START_TIMEOUT",
        "FUNES_MCP_FRONT",
        "FUNES_CLI_FAST",
        "FUNES_LEAN_MALLOC",
    }
)


class ServiceRefusedError(RuntimeError):
    """The service's socket (or its folder) cannot be trusted; the message is one line."""


class OversizeError(ValueError):
    """A line longer than the limit arrived."""


class RunPaths(NamedTuple):
    """The service's files for one ``$FUNES_HOME``.

    A named tuple, not a dataclass: every front and CLI read imports this module, and
    ``dataclasses`` (with ``inspect`` behind it) would cost them ~10 ms of CPU before they connect.
    """

    run: Path
    lock: Path
    info: Path
    socket: Path
    log: Path
    spawn_lock: Path


def run_paths(root: Path) -> RunPaths:
    run = root / "run"
    return RunPaths(
        run=run,
        lock=run / "serve.lock",
        info=run / "serve.json",
        socket=run / "serve.sock",
        log=run / "serve.log",
        spawn_lock=run / "spawn.lock",
    )


def fallback_socket(root: Path) -> Path:
    """A socket path for ``root`` outside it: ``$XDG_RUNTIME_DIR/funes`` or ``<tmp>/funes-<uid>``.

    The name is a hash of the home's resolved path, so two homes never share one.
    """
    digest = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:20]
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    uid = portable.current_uid()
    if runtime:
        base = Path(runtime) / "funes"
    else:
        import tempfile  # lazy: only the service needs this path (clients read it from serve.json)

        base = Path(tempfile.gettempdir()) / f"funes-{uid}"
    return base / f"{digest}.sock"


def _owner_line(path: Path, what: str, st: os.stat_result) -> str | None:
    uid = portable.current_uid()
    if uid is not None and st.st_uid != uid:
        return f"{what} {path} belongs to another user (uid {st.st_uid}): refusing to use it"
    return None


def _lstat(target: Path, socket_path: Path, must_exist: bool) -> os.stat_result | None:
    try:
        return target.lstat()
    except FileNotFoundError:
        if must_exist:
            raise ServiceRefusedError(f"no service socket at {socket_path}") from None
        return None
    except OSError as exc:
        raise ServiceRefusedError(f"cannot look at {target}: {exc.strerror or exc}") from None


def check_socket(path: Path, *, must_exist: bool = False) -> bool:
    """Check a socket path before it is used: ``True`` if a socket is there, ``False`` if nothing is.

    Raises :class:`ServiceRefusedError` (one line) when the path holds something else than a socket
    (a file, a folder, a link: never removed, it is not ours to judge), when it or its folder
    belongs to another user, or when its folder can be entered by others.
    """
    folder = _lstat(path.parent, path, must_exist)
    if folder is None:
        return False
    problem = _owner_line(path.parent, "the folder", folder)
    if problem is None and portable.current_uid() is not None and stat.S_IMODE(folder.st_mode) & 0o077:
        mode = stat.S_IMODE(folder.st_mode)
        problem = f"the folder {path.parent} can be entered by other users (mode {mode:o})"
    if problem is not None:
        raise ServiceRefusedError(problem)
    st = _lstat(path, path, must_exist)
    if st is None:
        return False
    if not stat.S_ISSOCK(st.st_mode):
        raise ServiceRefusedError(f"{path} is not a socket: move it away, funes will not touch it")
    problem = _owner_line(path, "the socket", st)
    if problem is not None:
        raise ServiceRefusedError(problem)
    return True


def fingerprint(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """What in the environment changes a read's answer (``FUNES_*`` but logging and service knobs).

    A client whose fingerprint differs from the service's (another ``FUNES_MODEL``, another
    embedder) does not use it: the answer would not be the one it would compute itself.
    """
    source = os.environ if env is None else env
    items = sorted((k, v) for k, v in source.items() if k.startswith("FUNES_") and k not in IGNORED_ENV)
    return hashlib.sha256(json.dumps(items).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``30m``, ``2h`` → seconds; ``0`` means never. Raises ``ValueError`` (one line)."""
    value = text.strip().lower()
    scale = {"s": 1.0, "m": 60.0, "h": 3600.0}.get(value[-1:])
    number = value[:-1] if scale is not None else value
    try:
        seconds = float(number) * (scale or 1.0)
    except ValueError:
        raise ValueError(f"{text!r} is not a duration (seconds, or 90s, 30m, 2h)") from None
    if seconds < 0 or seconds != seconds:
        raise ValueError(f"{text!r} is not a duration (seconds, or 90s, 30m, 2h)")
    return seconds


def idle_seconds() -> float:
    """The idle exit from ``FUNES_SERVE_IDLE`` (default 30 minutes); a bad value keeps the default."""
    raw = os.environ.get(IDLE_ENV, "").strip()
    if not raw:
        return DEFAULT_IDLE_SECONDS
    try:
        return parse_duration(raw)
    except ValueError:
        return DEFAULT_IDLE_SECONDS


def max_line() -> int:
    """The largest line accepted (``FUNES_SERVE_MAX_REQUEST`` bytes, default 8 MiB)."""
    try:
        return max(1024, int(os.environ.get(MAX_LINE_ENV, DEFAULT_MAX_LINE)))
    except ValueError:
        return DEFAULT_MAX_LINE


def call_timeout() -> float:
    """How long a client waits for one answer before giving up with an error (default 120 s)."""
    try:
        return max(1.0, float(os.environ.get(TIMEOUT_ENV, "120")))
    except ValueError:
        return 120.0


def read_line(stream: IO[bytes], limit: int) -> bytes:
    """One line (with its ``\\n``), ``b""`` at end of input; :class:`OversizeError` past ``limit``."""
    line = stream.readline(limit + 1)
    if len(line) > limit and not line.endswith(b"\n"):
        raise OversizeError(f"a line larger than {limit} bytes")
    return line


def skip_rest_of_line(stream: IO[bytes]) -> bool:
    """Read and drop up to the next ``\\n`` (after an oversize line); ``False`` at end of input."""
    while True:
        block = stream.readline(65536)
        if not block:
            return False
        if block.endswith(b"\n"):
            return True


def dumps(obj: Any) -> bytes:
    """One frame: compact JSON and ``\\n`` (lone surrogates escaped rather than refused)."""
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(obj, separators=(",", ":")).encode("ascii") + b"\n"

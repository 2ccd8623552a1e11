"""Reaching a remote: storage options, a short-timeout probe, error classes, and the local mirror.

Reads never go to the bucket object by object. LanceDB reading straight from S3 makes ranged GETs
on every query, even warm (4 per recall at 20k rows, measured), so a recall would pay a round trip
each time. Instead a remote is read through a **mirror**: ``$FUNES_HOME/cache/remotes/<name>/``
holds a byte copy of the remote dataset's objects that its newest version reads. Every object
Lance writes is immutable (data fragments, deletion files, index files, transactions, and
manifests committed by conditional PUT under a fresh name), so a copy never goes stale; only
*which* objects exist changes. A refresh is one listing: the newest manifest says which objects
the newest version reads (:mod:`funes_core.share.manifest`; the versions a push made minutes ago
and the fragments compaction superseded are not copied), missing ones are downloaded (manifests
last, so a reader never sees a version whose files are not there yet), and the rest is deleted:
names gone from the bucket (so a scrub or purge on the bucket also clears this cache) and names a
reader no longer needs, after one more refresh for the version the mirror showed until then.
Between refreshes, at most every :data:`REFRESH_SECONDS`, a recall is a local LanceDB read: no
network request at all.

The listing and downloads use pyarrow's filesystems (already a dependency; S3, GCS, Azure), which
take credentials from the same SDK chains LanceDB uses. Writes (push, remote rewrite) go through
LanceDB itself, which commits with conditional PUT (``If-None-Match``) so concurrent writers cannot
overwrite each other's versions.

Failures are sorted into the three cases a user acts on differently: the remote is offline
(refused, DNS, timeout, 5xx: try later; other memories still answer), unauthorized (401/403: fix
credentials), or there is no funes memory at that URI.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from funes_core.share.remotes import Remote
from funes_core.store import NoIndexError

if TYPE_CHECKING:
    import pyarrow.fs as pafs

    from funes_core.home import Home

__all__ = [
    "CONNECT_TIMEOUT_S",
    "REFRESH_SECONDS",
    "REQUEST_TIMEOUT_S",
    "Failure",
    "RemoteError",
    "SyncResult",
    "classify",
    "filesystem",
    "lance_options",
    "mirror_dir",
    "refresh_seconds",
    "sync_mirror",
]

TABLE_DIR = "chunks.lance"
#: A process re-lists a remote at most this often (``FUNES_REMOTE_REFRESH`` overrides, in seconds).
REFRESH_SECONDS = 60.0
#: Short: an offline remote must cost a recall seconds, not minutes.
CONNECT_TIMEOUT_S = 3.0
REQUEST_TIMEOUT_S = 20.0
_STAMP = ".synced"


class Failure(Enum):
    OFFLINE = "offline"
    UNAUTHORIZED = "unauthorized"
    MISSING = "missing"
    NOT_FUNES = "not_funes"


class RemoteError(NoIndexError):
    """A remote could not be used; ``str()`` is the one line to show, ``failure`` says why.

    It is a :class:`~funes_core.store.NoIndexError`, so every reader that copes with a missing
    memory copes with an unusable remote the same way.
    """

    def __init__(self, remote: str, failure: Failure, message: str) -> None:
        super().__init__(remote, message)
        self.remote = remote
        self.failure = failure


def refresh_seconds() -> float:
    raw = os.environ.get("FUNES_REMOTE_REFRESH", "")
    try:
        return max(float(raw), 0.0) if raw else REFRESH_SECONDS
    except ValueError:
        return REFRESH_SECONDS


def _seconds(value: str | None, default: float) -> float:
    if not value:
        return default
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*", value)
    if not m:
        return default
    n = float(m.group(1))
    return n / 1000 if m.group(2) == "ms" else n * 60 if m.group(2) == "m" else n


def lance_options(remote: Remote, *, write: bool = False) -> dict[str, str]:
    """The remote's options as LanceDB storage options, with timeouts suited to the operation.

    Writes upload whole fragments, so they get a longer request timeout than reads.
    """
    opts = dict(remote.options)
    if "region" in opts and remote.scheme in ("s3", "s3+ddb"):
        opts["aws_region"] = opts.pop("region")
    opts.setdefault("connect_timeout", f"{CONNECT_TIMEOUT_S:g}s")
    opts.setdefault("timeout", "300s" if write else f"{REQUEST_TIMEOUT_S:g}s")
    return opts


def filesystem(remote: Remote) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem for the remote and the dataset's path on it (``bucket/prefix/chunks.lance``)."""
    import pyarrow.fs as pafs

    opts = remote.options
    connect = _seconds(opts.get("connect_timeout"), CONNECT_TIMEOUT_S)
    request = _seconds(opts.get("timeout"), REQUEST_TIMEOUT_S)
    if remote.is_folder:
        return pafs.LocalFileSystem(), str(remote.folder / TABLE_DIR)
    parts = urlsplit(remote.uri)
    path = f"{parts.netloc}{parts.path}".rstrip("/") + "/" + TABLE_DIR
    if remote.scheme in ("s3", "s3+ddb"):
        kwargs: dict[str, Any] = {
            "connect_timeout": connect,
            "request_timeout": request,
            "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=2),
        }
        if "region" in opts:
            kwargs["region"] = opts["region"]
        endpoint = opts.get("endpoint")
        if endpoint:
            ep = urlsplit(endpoint)
            kwargs["endpoint_override"] = ep.netloc + ep.path.rstrip("/") if ep.netloc else endpoint
            kwargs["scheme"] = ep.scheme or "https"
            if ep.scheme == "http" and opts.get("allow_http", "").lower() != "true":
                raise RemoteError(
                    remote.name,
                    Failure.OFFLINE,
                    f"remote {remote.name}: http endpoint needs --option allow_http=true",
                )
        if opts.get("virtual_hosted_style_request", "").lower() == "true":
            kwargs["force_virtual_addressing"] = True
        return pafs.S3FileSystem(**kwargs), path
    if remote.scheme == "gs":
        gcs_kwargs: dict[str, Any] = {"retry_time_limit": _timedelta(request)}
        if opts.get("endpoint"):
            ep = urlsplit(opts["endpoint"])
            gcs_kwargs["endpoint_override"] = ep.netloc
            gcs_kwargs["scheme"] = ep.scheme or "https"
        return pafs.GcsFileSystem(**gcs_kwargs), path
    if remote.scheme == "az":
        account = opts.get("account_name") or os.environ.get("AZURE_STORAGE_ACCOUNT_NAME", "")
        if not account:
            raise RemoteError(
                remote.name, Failure.OFFLINE, f"remote {remote.name}: az:// needs --option account_name=NAME"
            )
        return pafs.AzureFileSystem(account_name=account), path
    raise RemoteError(
        remote.name, Failure.NOT_FUNES, f"remote {remote.name}: {remote.scheme}:// cannot be cached"
    )


def _timedelta(seconds: float) -> Any:
    from datetime import timedelta

    return timedelta(seconds=seconds)


_OFFLINE = re.compile(
    r"NETWORK_CONNECTION|curlCode|Could not (?:connect|resolve)|timed? ?out|Timeout|"
    r"HTTP status 5\d\d|Connection refused|connection reset|dns error|error sending request|"
    r"SERVICE_UNAVAILABLE|SLOW_DOWN|InternalError|RetryError|tcp connect|send http|"
    r"Failed to connect|Unexpected \(temporary\)",
    re.IGNORECASE,
)
_UNAUTHORIZED = re.compile(
    r"ACCESS_DENIED|AccessDenied|INVALID_ACCESS_KEY_ID|SIGNATURE_DOES_NOT_MATCH|HTTP status 40[13]|"
    r"InvalidAccessKeyId|SignatureDoesNotMatch|"
    r"Forbidden|Unauthorized|ExpiredToken|InvalidToken|credential|\b40[13]\b",
    re.IGNORECASE,
)
_MISSING = re.compile(r"NoSuchBucket|NO_SUCH_BUCKET|bucket does not exist|HTTP status 404", re.IGNORECASE)


def classify(remote: str, exc: BaseException, what: str = "read") -> RemoteError:
    """Turn a client error into a :class:`RemoteError` with one line for the user."""
    text = f"{type(exc).__name__}: {exc}"
    if _UNAUTHORIZED.search(text):
        return RemoteError(
            remote,
            Failure.UNAUTHORIZED,
            f"remote {remote}: access denied (check your cloud credentials and the bucket's "
            f"permissions to {what})",
        )
    if _MISSING.search(text):
        return RemoteError(remote, Failure.MISSING, f"remote {remote}: the bucket does not exist")
    if _OFFLINE.search(text) or isinstance(exc, (TimeoutError, ConnectionError)):
        return RemoteError(
            remote, Failure.OFFLINE, f"remote {remote} is unreachable (offline, DNS, timeout or server error)"
        )
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    first = lines[0][:200] if lines else type(exc).__name__
    return RemoteError(remote, Failure.OFFLINE, f"remote {remote}: {first}")


def mirror_dir(home: Home, name: str) -> Path:
    """Where a remote's mirror lives: a folder holding ``chunks.lance`` (a LanceDB database URI)."""
    return home.cache_dir / "remotes" / name


@dataclass(frozen=True, slots=True)
class SyncResult:
    path: Path
    downloaded: int
    removed: int
    bytes: int
    listed: bool


def _list(fs: pafs.FileSystem, base: str) -> dict[str, int]:
    import pyarrow.fs as pafs

    out: dict[str, int] = {}
    for info in fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True)):
        if info.type == pafs.FileType.File:
            out[info.path[len(base) + 1 :]] = int(info.size or 0)
    return out


def _safe(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and ".." not in parts and "" not in parts


def _local_files(root: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    if not root.is_dir():
        return out
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            if name.startswith(".") and name.endswith(".part"):
                continue
            with contextlib.suppress(OSError):
                out[p.relative_to(root).as_posix()] = p.stat().st_size
    return out


@contextlib.contextmanager
def _mirror_lock(root: Path) -> Iterator[None]:
    from filelock import FileLock

    from funes_core.home import FILE_MODE, ensure_private_dir

    ensure_private_dir(root.parent)
    with FileLock(str(root.parent / f".{root.name}.lock"), mode=FILE_MODE):
        yield


def sync_mirror(
    remote: Remote, home: Home, *, max_age: float | None = None, force: bool = False
) -> SyncResult:
    """Bring the remote's mirror up to date (at most every ``max_age`` seconds unless ``force``).

    Raises :class:`RemoteError` (offline, unauthorized, missing) without touching the mirror.
    """
    from funes_core.home import ensure_private_dir

    root = mirror_dir(home, remote.name)
    table = root / TABLE_DIR
    stamp = root / _STAMP
    age = refresh_seconds() if max_age is None else max_age
    if not force and table.is_dir():
        with contextlib.suppress(OSError):
            if time.time() - stamp.stat().st_mtime < age:
                return SyncResult(root, 0, 0, 0, listed=False)
    fs, base = filesystem(remote)
    try:
        # Manifests first: every file a listed manifest references was written before it, so the
        # full listing that follows includes it (a writer puts data and indexes, then the manifest).
        versions = _list(fs, base + "/_versions")
        remote_files = _list(fs, base)
    except OSError as exc:
        raise classify(remote.name, exc) from None
    remote_files.update({f"_versions/{k}": v for k, v in versions.items()})
    remote_files = {k: v for k, v in remote_files.items() if _safe(k)}
    if not any(k.startswith("_versions/") and k.endswith(".manifest") for k in remote_files):
        if remote_files:
            raise RemoteError(
                remote.name, Failure.NOT_FUNES, f"remote {remote.name}: {remote.uri} is not a funes memory"
            )
        raise RemoteError(
            remote.name,
            Failure.MISSING,
            f"remote {remote.name}: no memory at {remote.uri} yet (funes push {remote.name})",
        )
    downloaded = removed = nbytes = 0
    with _mirror_lock(root):
        ensure_private_dir(table)
        local = _local_files(table)
        fetched: dict[str, bytes] = {}
        try:
            keep = _needed(fs, base, remote_files, table, local, fetched)
        except OSError as exc:
            raise classify(remote.name, exc) from None
        wanted = remote_files if keep is None else {k: v for k, v in remote_files.items() if _kept(k, keep)}
        missing = [k for k, size in wanted.items() if local.get(k) != size]
        # Data and indexes before manifests: a reader never sees a version whose files are absent.
        missing.sort(key=lambda k: (k.startswith("_versions/"), k))
        try:
            for rel in missing:
                nbytes += _download(fs, f"{base}/{rel}", table / rel, fetched.get(rel))
                downloaded += 1
        except OSError as exc:
            raise classify(remote.name, exc) from None
        stale = [k for k in local if k not in wanted]
        stale.sort(key=lambda k: (not k.startswith("_versions/"), k))  # manifests first
        for rel in stale:
            with contextlib.suppress(FileNotFoundError):
                (table / rel).unlink()
            removed += 1
        _prune_empty_dirs(table)
        stamp.touch(mode=0o600)
        os.utime(stamp)
    return SyncResult(root, downloaded, removed, nbytes, listed=True)


def _needed(
    fs: pafs.FileSystem,
    base: str,
    remote_files: Mapping[str, int],
    table: Path,
    local: Mapping[str, int],
    fetched: dict[str, bytes],
) -> set[str] | None:
    """The files a reader of the mirror needs (index folders end with ``/``), or ``None`` for all.

    A reader opens the newest version only, so the mirror holds the newest manifest and the files
    it names (:mod:`funes_core.share.manifest`), not the versions a push made minutes ago and the
    fragments compaction superseded, which the remote keeps for a grace period. The version the
    mirror showed until now is kept for one more refresh, with its files, so a reader in the middle
    of a query on it does not lose them; a refresh later it goes. ``None`` (copy everything, as
    before) when a manifest cannot be read or names a file the listing lacks (a cleanup between the
    two listings). The newest manifest's bytes are left in ``fetched`` so they are read once.
    """
    from funes_core.share.manifest import newest_manifest, referenced_files

    newest = newest_manifest(remote_files)
    if newest is None:
        return None
    if local.get(newest) == remote_files[newest]:
        data = (table / newest).read_bytes()
    else:
        with fs.open_input_stream(f"{base}/{newest}") as stream:
            data = stream.read()
        fetched[newest] = data
    need = referenced_files(data)
    if need is None:
        return None
    need.add(newest)
    previous = newest_manifest(local)
    if previous is not None and previous != newest and previous in remote_files:
        shown = referenced_files((table / previous).read_bytes())
        if shown is None:
            return None
        need |= shown | {previous}
    folders = {_index_folder(k) for k in remote_files}
    listed = all(n in folders if n.endswith("/") else n in remote_files for n in need)
    return need if listed else None


def _index_folder(rel: str) -> str | None:
    """``_indices/<uuid>/`` for a file of an index, else ``None``."""
    cut = rel.find("/", len("_indices/")) if rel.startswith("_indices/") else -1
    return rel[: cut + 1] if cut > 0 else None


def _kept(rel: str, need: set[str]) -> bool:
    """Whether ``need`` names ``rel``: itself, or (an index file) its index folder."""
    if rel in need or _index_folder(rel) in need:
        return True
    # Anything but data, deletions, indexes, versions and transactions: kept, whatever it is.
    return not rel.startswith(("data/", "_deletions/", "_indices/", "_versions/", "_transactions/"))


def _download(fs: pafs.FileSystem, src: str, dest: Path, data: bytes | None = None) -> int:
    from funes_core.home import ensure_private_dir

    ensure_private_dir(dest.parent)
    tmp = dest.with_name(f".{dest.name}.part")
    size = 0
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            if data is not None:
                out.write(data)
                size = len(data)
            else:
                with fs.open_input_stream(src) as stream:
                    while chunk := stream.read(1 << 20):
                        out.write(chunk)
                        size += len(chunk)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return size


def _prune_empty_dirs(root: Path) -> None:
    for dirpath, dirs, files in sorted(os.walk(root, topdown=False), key=lambda t: -len(t[0])):
        if Path(dirpath) != root and not dirs and not files:
            with contextlib.suppress(OSError):
                Path(dirpath).rmdir()


def drop_mirror(home: Home, name: str) -> bool:
    """Delete a remote's mirror entirely (``remote remove``, scrub, purge)."""
    root = mirror_dir(home, name)
    if not root.exists():
        return False
    shutil.rmtree(root)
    return True


def mirrors(home: Home) -> Mapping[str, Path]:
    base = home.cache_dir / "remotes"
    if not base.is_dir():
        return {}
    return {p.name: p for p in base.iterdir() if p.is_dir()}

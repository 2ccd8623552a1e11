"""Convert a session into the spool under a lock, then make sure an indexer runs: the one way hooks do it.

Every per-turn hook (claude, codex, pi, hermes, and ``funes integrations convert --index``) ends up
in :func:`convert_into_spool`, so they all get the same two guarantees:

* **No older conversion wins.** Conversions of one integration are serialised by
  ``$FUNES_HOME/spool/<id>/.convert.lock``, and each reads the transcript only once it holds the
  lock: whichever run writes last has read last, so two Stop events close together never leave
  the spool with the shorter conversion.
* **Nothing is left waiting.** After writing, the spool is marked dirty
  (``$FUNES_HOME/spool/<id>/.dirty``, a name ``funes index`` never reads as turns), and then an
  indexer is started detached with :meth:`InstallContext.index_command` (so a ``FUNES_BIN`` pin
  holds). That indexer may exit 75 because another process holds the store lock: harmless,
  because every indexer clears the markers it serves before it looks for files and looks for new
  ones between embedding batches, and every holder of the store lock (index runs, the embedding
  worker, forget/purge/scrub) looks at the markers after releasing it
  (:mod:`funes_core.ingest.markers`). A marker set at any moment is consumed by a run that starts
  after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from funes_core.home import Home
from funes_core.host.api import Converter, InstallContext, SessionRef, SpoolWrite
from funes_core.wiring.hookrt import spawn_detached

__all__ = [
    "LOCK_NAME",
    "LOCK_TIMEOUT",
    "SpoolLockTimeout",
    "SpoolResult",
    "convert_into_spool",
    "start_indexer",
]

#: The lock that serialises conversions into ``spool/<id>/``.
LOCK_NAME = ".convert.lock"
#: How long a conversion waits for the one before it (a conversion takes well under a second).
LOCK_TIMEOUT = 120.0


class SpoolLockTimeout(RuntimeError):
    """Another conversion of the same integration held the lock for too long."""


@dataclass(slots=True)
class SpoolResult:
    """What :func:`convert_into_spool` did."""

    writes: list[SpoolWrite] = field(default_factory=list)
    #: Sessions that could not be converted, with why (one bad transcript never stops the rest).
    failed: list[tuple[Path, str]] = field(default_factory=list)
    #: Whether an indexer was started.
    indexing: bool = False

    @property
    def changed(self) -> bool:
        return any(w.changed for w in self.writes)


def start_indexer(ctx: InstallContext, ident: str) -> None:
    """``funes index --harness ID`` detached (the recorded funes command), output in ``logs/index-ID.log``."""
    logs = ctx.funes_home / "logs"
    logs.mkdir(mode=0o700, parents=True, exist_ok=True)
    spawn_detached(ctx.index_command(ident), env=ctx.env(), log=logs / f"index-{ident}.log")


def _refs(converter: Converter, sources: Sequence[Path], sessions: Sequence[str]) -> list[SessionRef]:
    refs: list[SessionRef] = []
    seen: set[tuple[Path, str]] = set()
    for source in sources:
        for ref in converter.sessions_in(source):
            if sessions and ref.session_id not in sessions:
                continue
            if (ref.path, ref.session_id) not in seen:
                seen.add((ref.path, ref.session_id))
                refs.append(ref)
    return refs


def convert_into_spool(
    converter: Converter,
    sources: Sequence[Path],
    ctx: InstallContext,
    *,
    sessions: Sequence[str] = (),
    index: bool = True,
) -> SpoolResult:
    """Convert the sessions in ``sources`` into ``$FUNES_HOME/spool/<id>/`` under the lock, then index.

    ``sessions`` keeps only those session ids (an agent with many sessions per file). Raises
    :class:`SpoolLockTimeout` when another conversion holds the lock past :data:`LOCK_TIMEOUT`.
    """
    from filelock import FileLock, Timeout

    ident = converter.id
    spool = converter.spool_dir(ctx.funes_home)
    for folder in (ctx.funes_home, ctx.funes_home / "spool", spool):
        if not folder.is_dir():
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    result = SpoolResult()
    try:
        with FileLock(spool / LOCK_NAME, timeout=LOCK_TIMEOUT, mode=0o600):
            for ref in _refs(converter, sources, sessions):
                try:
                    result.writes.extend(converter.write_spool(ref, ctx.funes_home))
                except Exception as exc:  # broad on purpose: one bad transcript must not stop the rest
                    result.failed.append((ref.path, f"{type(exc).__name__}: {exc}"))
    except Timeout:
        raise SpoolLockTimeout(
            f"another conversion held {spool / LOCK_NAME} for {LOCK_TIMEOUT:g} s; try again"
        ) from None
    if result.changed:
        Home(ctx.funes_home).mark_dirty(ident)
        if index:
            start_indexer(ctx, ident)
            result.indexing = True
    return result

"""What every holder of the store lock owes the producers it turned away: a look at their markers.

A hook writes its spool file, marks the spool dirty (:meth:`Home.mark_dirty`), then starts
``funes index``. When the store lock is taken, that indexer exits 75 and the turn waits for
whoever holds the lock. The promise that keeps no turn waiting for an unrelated next one is:
**whoever lets go of the store lock looks at the markers afterwards and, if one is set, makes an
index run start** (in-process, as :func:`funes_core.ingest.engine.run_index` does, or detached, as
:func:`serve_markers` does). A marker set at any moment is then consumed by a run that starts after
it: its own hook's indexer takes the lock and clears it, or finds a holder that will look after
its release. Every writer but ``run_index`` takes the lock through :func:`store_lock`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TextIO

from funes_core.home import Home, write_lock

__all__ = ["serve_markers", "store_lock"]


def serve_markers(home: Home, start: Callable[[Home], int] | None = None) -> int | None:
    """Start a detached ``funes index`` if a spool is marked dirty; its pid, or ``None`` if none is.

    Called *after* the store lock is released (before, the indexer would only find it taken).
    ``start`` replaces :func:`funes_core.ingest.worker.start_indexer` (the worker passes its own,
    which tests watch).
    """
    if not home.dirty_ids():
        return None
    if start is None:
        from funes_core.ingest.worker import start_indexer

        start = start_indexer
    return start(home)


@contextlib.contextmanager
def store_lock(
    home: Home,
    *,
    wait: float = 0.0,
    notify: TextIO | None = None,
    serve: Callable[[], object] | None = None,
) -> Iterator[None]:
    """:func:`~funes_core.home.write_lock`, then :func:`serve_markers` once it is let go.

    For writers that are not index runs (the worker's commits, forget, purge, scrub): a hook that
    marked its spool while they held the lock had its indexer refused. The markers are served even
    when the body raised; never when the lock was not taken (``LockBusyError``: the holder serves).
    ``serve`` replaces the look (the worker spaces the indexers it starts).
    """
    held = False
    try:
        with write_lock(home, wait=wait, notify=notify):
            held = True
            yield
    finally:
        if held:
            if serve is None:
                serve_markers(home)
            else:
                serve()

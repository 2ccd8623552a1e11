"""``funes push``: publish the local chunks a remote lacks, after the secret gate.

The delta is a difference of chunk ids (``local - remote``): ids are content-free hashes of where a
chunk sits (session, turn, block, split), so they say what the remote has without reading its
text. Only rows whose embedding exists are published; a row still owed its vector goes out in a
later push (a remote is append-only and never gains a vector afterwards).

- **Batches, one commit each** (``merge_insert`` on ``id``, inserting unmatched ids only): a crash or
  ``kill -9`` loses at most the batch in flight, and a rerun recomputes the delta, so it converges
  to the same rows as a clean push, with no duplicates. The rerun is the resume.
- **Concurrent pushers** lose nothing: LanceDB commits each version with a conditional PUT and
  rebases on conflict. Remote tables declare ``id`` an (unenforced) primary key, which makes Lance
  detect two writers inserting the *same* new id at once and retry the loser; without it, such a
  race duplicated 100-450 of 4000 rows in tests (lance-format/lance#4585). Their index upkeep
  keeps an index the other made first and does a step whose commit lost a race (a compaction, a
  fold) again on the latest version (:func:`_retry`); a push is never re-run whole for it.
- **Wrong-memory guard**: a non-empty remote that shares no chunk id with the local memory is
  probably not the one meant; a terminal is asked, anything else needs ``--yes``.
- **Removals first**: when scrub or purge removed or changed rows locally since this remote last
  saw them (the purge log), the remote is rewritten the same way before anything new is pushed
  (:mod:`funes_core.store.rewrite`), so no object in the bucket still holds the removed text. A
  push killed during that rewrite is finished by the next one: the rows are gone from the newest
  version, but its older versions are deleted then (and lost indexes built again), and the receipt
  that says the remote absorbed the log is written only after. Rows of a local purge that was
  itself interrupted are never published.
- **Index upkeep is a separate step with a threshold** (:func:`upkeep`), as in the original tool,
  run by every push, also one with nothing to upload: a push killed during it is finished by the rerun.
  Rows outside the indexes are still found (LanceDB scans them flat beside the index search), so
  a push that leaves fewer than :data:`REINDEX_MIN_ROWS` of them does no index work at all: before,
  every push ran a full ``optimize`` on the bucket (compaction, every index, over the network).
  Past the threshold one ``optimize`` folds them in (the ANN index gains a segment, or is built
  the first time enough vectors exist); after :data:`FOLD_AFTER` segments it is rebuilt as one.
  ``--reindex`` forces that now, ``--no-reindex`` skips it. Building the ANN index is CPU work
  (measured with the earlier IVF_HNSW_SQ index as slow on a local folder as on the bucket: 128 s
  vs 127 s at 30k rows under load 18-20; the IVF_PQ index that replaced it trains on the vectors
  it reads, likewise CPU), so building it on a local copy would not have made it cheaper; keeping
  it out of the pushes that do not need it does. The store's own rule (rebuild with more
  partitions once the rows grew 4-fold) applies within each ``optimize``.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from funes_core.share.gate import GateReport, Verdict, scan_block
from funes_core.share.mirror import Failure, RemoteError, classify, filesystem, lance_options
from funes_core.share.remotes import Remote
from funes_core.store.lance import ANN_FOLD_AFTER

if TYPE_CHECKING:
    import pyarrow as pa

    from funes_core.home import Home
    from funes_core.store.lance import LanceStore

__all__ = [
    "DEFAULT_BATCH",
    "FOLD_AFTER",
    "REINDEX_MIN_ROWS",
    "Progress",
    "PushReport",
    "Upkeep",
    "open_remote_store",
    "push",
    "upkeep",
]

DEFAULT_BATCH = 2000
#: Rows outside a remote's indexes before a push folds them in: a flat scan of fewer is cheap
#: (the original tool's threshold, too).
REINDEX_MIN_ROWS = 500
#: Segments of the ANN index before a push rebuilds it as one: the local memory's rule
#: (:data:`~funes_core.store.lance.ANN_FOLD_AFTER`), applied here inside the lost-race retry.
FOLD_AFTER = ANN_FOLD_AFTER
_KEY = ("session_id", "turn_uuid", "block_idx")
T = TypeVar("T")


class Progress(Protocol):
    def start(self, total: int) -> None: ...
    def advance(self, n: int) -> None: ...
    def stop(self) -> None: ...


class _NoProgress:
    def start(self, total: int) -> None:
        pass

    def advance(self, n: int) -> None:
        pass

    def stop(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class Upkeep:
    """What :func:`upkeep` did to a remote's indexes."""

    #: ``none`` (under the threshold), ``skipped`` (``--no-reindex``), ``folded`` (new rows folded
    #: in, or the ANN index built the first time), ``rebuilt`` (the ANN index rebuilt as one segment)
    action: str
    #: rows outside the indexes before, and after
    before: int
    after: int
    seconds: float = 0.0


@dataclass(slots=True)
class PushReport:
    remote: str
    published: int = 0
    already: int = 0
    owed: int = 0
    held_rows: int = 0
    gate: GateReport = field(default_factory=GateReport)
    removed: int = 0
    created: bool = False
    upkeep: Upkeep | None = None
    #: turns whose chunks this push sent (a turn held back by the gate is not counted)
    turns: int = 0
    #: the remote's table version once the push (and its index upkeep) committed
    table_version: int | None = None

    @property
    def refused_by_gate(self) -> bool:
        """Nothing went out because the secret gate held back every block there was to send."""
        return self.nothing_published and self.gate.held_blocks > 0

    @property
    def nothing_published(self) -> bool:
        return self.published == 0


def open_remote_store(remote: Remote, *, write: bool) -> LanceStore:
    """The remote's dataset through LanceDB (writes and rewrites; reads use the mirror)."""
    from funes_core.store.lance import LanceStore

    try:
        return LanceStore(
            remote.uri,
            label=remote.name,
            storage_options=lance_options(remote, write=write),
            primary_key=True,
            read_consistency_interval=None,
        )
    except Exception as exc:
        raise classify(remote.name, exc, "write" if write else "read") from None


#: What Lance writes under a table's folder before (and beside) its first ``_versions/*.manifest``.
_LANCE_WORK = ("data/", "_transactions/", "_indices/", "_deletions/")


def probe(remote: Remote) -> bool:
    """Reach the remote with short timeouts; True when a memory exists there. Raises :class:`RemoteError`."""
    import pyarrow.fs as pafs

    fs, base = filesystem(remote)
    try:
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
    except OSError as exc:
        raise classify(remote.name, exc) from None
    names = [i.path[len(base) + 1 :] for i in infos if i.type == pafs.FileType.File]
    has_manifest = any(n.startswith("_versions/") and n.endswith(".manifest") for n in names)
    if names and not has_manifest and not all(n.startswith(_LANCE_WORK) for n in names):
        raise RemoteError(
            remote.name, Failure.NOT_FUNES, f"remote {remote.name}: {remote.uri} is not a funes memory"
        )
    # Lance's own files and no version yet: another pusher is creating the table at this moment
    # (it writes data before it commits the first version). It is not there yet; this push
    # creates it too, and the creation race is settled by the store (``LanceStore._create_shared``).
    return has_manifest


#: The free-text fields published beside a passage: the gate scans them too (a ``session_id`` or a
#: tool name can hold a token, and ids are never redacted at index time, since they make chunk ids).
_FIELDS = ("session_id", "turn_uuid", "parent_uuid", "tool_name", "workdir", "repo", "role", "harness")


def _blocks(
    delta: pa.Table,
) -> tuple[dict[tuple[str, str, int], list[tuple[int, str, str]]], dict[tuple[str, str, int], set[str]]]:
    """The delta's rows by block: their ``(split, id, text)`` parts, and the field values published."""
    out: dict[tuple[str, str, int], list[tuple[int, str, str]]] = defaultdict(list)
    fields: dict[tuple[str, str, int], set[str]] = defaultdict(set)
    names = [n for n in _FIELDS if n in delta.column_names]
    cols = delta.select(["id", "block_idx", "split_idx", "text", *names]).to_pydict()
    for i, rid in enumerate(cols["id"]):
        key = (cols["session_id"][i], cols["turn_uuid"][i], int(cols["block_idx"][i]))
        out[key].append((int(cols["split_idx"][i]), rid, cols["text"][i]))
        fields[key].update(v for n in names if (v := cols[n][i]))
    return out, fields


def _block_text(parts: list[tuple[int, str, str]]) -> str:
    from funes_core.ingest.chunking import stitch

    text = ""
    for _split, _rid, piece in sorted(parts):
        text = stitch(text, piece) if text else piece
    return text


def push(
    remote: Remote,
    home: Home,
    *,
    yes: bool = False,
    confirm: Callable[[str], bool] | None = None,
    progress: Progress | None = None,
    batch: int = DEFAULT_BATCH,
    reindex: bool | None = None,
    say: Callable[[str], None] = lambda _m: None,
) -> PushReport:
    """Publish the local delta to ``remote``, then keep its indexes up (``reindex``: see :func:`upkeep`).

    The outcome is recorded in ``$FUNES_HOME`` (:mod:`funes_core.share.lastpush`): a push that
    finished replaces the last one; a failed or refused one (the secret gate holding back all
    there was to send) is recorded beside it and leaves it as it was.

    Raises :class:`RemoteError`, ``ModelMismatchError``, ``NoIndexError`` or :class:`PushRefused`;
    never changes the local memory."""
    from funes_core.share import lastpush

    try:
        report = _push(
            remote, home, yes=yes, confirm=confirm, progress=progress, batch=batch, reindex=reindex, say=say
        )
    except Exception as exc:
        lastpush.record_failure(home, remote.name, str(exc) or type(exc).__name__, say=say)
        raise
    if report.refused_by_gate:
        lastpush.record_failure(
            home,
            remote.name,
            f"the secret gate held back all {report.gate.held_blocks} block(s) to publish",
            say=say,
        )
    else:
        lastpush.record_success(
            home,
            remote.name,
            chunks=report.published,
            turns=report.turns,
            table_version=report.table_version,
            say=say,
        )
    return report


def _push(
    remote: Remote,
    home: Home,
    *,
    yes: bool,
    confirm: Callable[[str], bool] | None,
    progress: Progress | None,
    batch: int,
    reindex: bool | None,
    say: Callable[[str], None],
) -> PushReport:
    """:func:`push` without the record of its outcome."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from funes_core.models.vectors import ModelMismatchError
    from funes_core.store import open_store
    from funes_core.store.lance import NotFunesMemoryError
    from funes_core.store.purgelog import mark_applied, pending_for, unfinished

    if remote.scheme == "hf":
        raise PushRefused(
            f"{remote.name}: hf:// remotes are read-only in funes (publish with the Hub's own tools)"
        )
    progress = progress or _NoProgress()
    report = PushReport(remote.name)
    local = open_store(None, home=home)
    stamp = local.model_stamp()
    if stamp is None:
        raise PushRefused("the local memory has no embedding model stamp yet: run funes index first")
    exists = probe(remote)
    target = open_remote_store(remote, write=True)
    try:
        if exists:
            if not target.exists():
                raise RemoteError(
                    remote.name,
                    Failure.NOT_FUNES,
                    f"remote {remote.name}: {remote.uri} is not a funes memory",
                )
            try:
                target.check_funes_schema()
            except NotFunesMemoryError:
                raise RemoteError(
                    remote.name,
                    Failure.NOT_FUNES,
                    f"remote {remote.name}: {remote.uri} is not a funes memory",
                ) from None
            stored = target.model_stamp()
            if stored is not None and stored != stamp:
                raise ModelMismatchError(remote.name, stored, stamp)
        # Removals recorded by scrub/purge since this remote last saw them: rewrite it first.
        pending = pending_for(home, remote.name)
        # Only when the remote holds one of them: a rewrite costs a full copy of the remote.
        if pending.ids and target.exists():
            if target.existing_ids(pending.ids):
                result = target.rewrite(drop_ids=pending.ids, spool_dir=home.cache_dir)
                report.removed = result.removed
                say(f"{remote.name}: rewrote the remote without {result.removed} removed row(s)")
            else:
                # Absent already, perhaps because a push rewriting it was killed after the
                # overwrite: its older versions may still hold the rows. Finish that rewrite.
                target.finish_rewrite()
        remote_ids = target.all_ids() if target.exists() else set()
        local_rows = local.arrow_rows(with_vector=False, where="vector IS NOT NULL")
        report.owed = local.count_where("vector IS NULL")
        local_ids = local_rows.column("id")
        if remote_ids and local_rows.num_rows and not (set(local_ids.to_pylist()) & remote_ids):
            question = (
                f"{remote.name} holds {len(remote_ids)} chunk(s) and shares none with this memory; "
                f"publish {local_rows.num_rows} chunk(s) anyway?"
            )
            if not yes and not (confirm is not None and confirm(question)):
                raise PushRefused(
                    f"{remote.name} shares no chunk with this memory (wrong remote?); "
                    "rerun with --yes to publish anyway"
                )
        remote_array = pa.array(sorted(remote_ids), pa.utf8())
        delta = local_rows.filter(pc.invert(pc.is_in(local_ids, value_set=remote_array)))
        # A local purge that was interrupted: its rows may still be stored here; never publish them.
        purging = pa.array(sorted({str(i) for e in unfinished(home) for i in e.get("ids") or ()}), pa.utf8())
        if len(purging):
            delta = delta.filter(pc.invert(pc.is_in(delta.column("id"), value_set=purging)))
        report.already = local_rows.num_rows - delta.num_rows
        held: set[str] = set()
        blocks, fields = _blocks(delta)
        field_verdicts: dict[str, Verdict] = {}  # a session's id is scanned once, not per block
        for key, parts in blocks.items():
            verdict = scan_block(_block_text(parts))
            for value in sorted(fields[key]):
                if value not in field_verdicts:
                    field_verdicts[value] = scan_block(value)
                verdict.findings.update(field_verdicts[value].findings)
            report.gate.add(verdict)
            if not verdict.clean:
                held.update(rid for _s, rid, _t in parts)
        report.held_rows = len(held)
        report.turns = len({key[:2] for key, parts in blocks.items() if parts[0][1] not in held})
        publish = [rid for rid in delta.column("id").to_pylist() if rid not in held]
        if not target.exists():
            target.stamp_model(stamp)
            report.created = True
        progress.start(len(publish))
        try:
            for rows in local.arrow_rows_by_id(publish, batch=batch):
                report.published += target.add_arrow(rows)
                progress.advance(rows.num_rows)
        finally:
            progress.stop()
        # Every push looks at the indexes, not only one that uploaded rows: a push killed in its
        # index step left rows outside them, and its rerun has nothing to upload.
        if target.exists():
            report.upkeep = upkeep(target, reindex)
            report.table_version = target.data_version()
        if pending.ids or pending.events:
            mark_applied(home, remote.name, pending)
    except (RemoteError, ModelMismatchError, PushRefused):
        raise
    except OSError as exc:
        raise classify(remote.name, exc, "write") from None
    except Exception as exc:
        if type(exc).__name__ in ("ValueError", "RuntimeError", "OSError", "IOError"):
            raise classify(remote.name, exc, "write") from None
        raise
    return report


def upkeep(target: LanceStore, reindex: bool | None = None) -> Upkeep:
    """Keep a remote's indexes up after a push: by threshold (``None``), now (``True``) or not (``False``).

    Under :data:`REINDEX_MIN_ROWS` rows outside the indexes nothing is done (they are searched
    flat); past it, or with ``reindex``, one ``optimize`` compacts small fragments, folds the rows
    into the full-text and ``session_id`` indexes, adds them to the ANN index as a segment (or
    builds the ANN index once enough vectors exist) and drops versions past the grace period.
    The ANN index is rebuilt as one segment when it has more than :data:`FOLD_AFTER`, or when
    ``reindex`` asks and it has more than one. A concurrent pusher doing the same is fine (Lance
    rebases; an index the other made first is kept; any other lost race is done again, on the
    latest version).
    """
    if reindex is False:
        backlog = target.index_backlog().rows
        return Upkeep("skipped", backlog, backlog)
    start = time.monotonic()
    before = target.index_backlog()
    if reindex is None and before.rows < REINDEX_MIN_ROWS:
        return Upkeep("none", before.rows, before.rows)
    _retry(lambda: target.optimize(fold=False), target)
    action = "folded"
    segments = target.index_backlog().segments
    if before.segments and (segments > FOLD_AFTER or (reindex and segments > 1)):
        _retry(target.rebuild_vector_index, target)
        action = "rebuilt"
    return Upkeep(action, before.rows, target.index_backlog().rows, time.monotonic() - start)


def _retry(step: Callable[[], T], target: LanceStore) -> T:
    """Run ``step``, an idempotent commit to ``target``; after a lost commit race, again on the
    latest version (another pusher's upkeep compacted the same fragments or folded rows into the
    same index first)."""
    from funes_core.store.lance import retry_lost_races

    return retry_lost_races(step, target.refresh, attempts=6)


class PushRefused(RuntimeError):
    """Push declined to run (wrong-memory guard, nothing to push from); ``str()`` is the one line."""


@contextlib.contextmanager
def _noop() -> Iterator[None]:
    yield


def _unused(_x: Any) -> None:  # pragma: no cover
    return None

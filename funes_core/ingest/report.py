"""What ``funes index`` is asked and what it answers: its options, its report, its progress hooks.

Apart from the engine so that the faces (``funes index``'s flags and summary line), the discovery of
sources and the background worker's note can speak of a run without loading the run's machinery.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from funes_core.ingest.sources import format_counts

if TYPE_CHECKING:
    from funes_core.ingest.worker import WorkerStart

__all__ = [
    "EmbedMode",
    "IndexOptions",
    "IndexProgress",
    "IndexReport",
    "IndexRunError",
    "SourceKind",
    "background_note",
]

SourceKind = Literal["file", "dir", "spool"]
EmbedMode = Literal["here", "background", "none"]


class IndexRunError(RuntimeError):
    """A run that cannot start (bad arguments, unknown spool); ``str()`` is the one line to show."""


@dataclass(slots=True)
class IndexOptions:
    """What ``funes index`` was asked to do.

    ``embed`` says who computes owed embeddings: ``here`` (this run, under the lock, within the
    budget), ``background`` (the background worker, started if none runs; this run returns once
    the text is stored, and leaves compaction and index upkeep to the worker's commits) or
    ``none`` (nobody, yet: ``funes index --wait`` embeds after the run).
    """

    path: Path | None = None
    harness: str | None = None
    limit: int | None = None
    budget: float | None = None
    include_thinking: bool = True
    rebuild: bool = False
    #: ``--model NAME``: the embedding model (with ``rebuild``, the memory is re-embedded with it).
    model: str | None = None
    embed: EmbedMode = "here"


@dataclass(slots=True)
class IndexReport:
    """What a run did; :meth:`summary` is the one line printed on stdout."""

    files: int = 0
    turns: int = 0
    chunks: int = 0
    redactions: Counter[str] = field(default_factory=Counter)
    rejected: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    embedded: int = 0
    #: embeddings owed after the run: the memory's count, or (``owed_counted`` false) the rows this
    #: run stored, every one of them owed, when the run left counting to whoever embeds them
    owed: int = 0
    owed_counted: bool = True
    files_left: int = 0
    budget: float | None = None
    budget_hit: bool = False
    spool_deleted: int = 0
    #: where a rebuild kept the old memory (``None``: no rebuild, or the old memory was deleted)
    rebuilt_from: Path | None = None
    #: the background worker embedding what is owed (``embed="background"`` only)
    worker: WorkerStart | None = None
    #: its rate so far (``None``: not measured on this machine yet)
    worker_rate: float | None = None

    def merge(self, later: IndexReport) -> None:
        """Add a later pass of the same run (the pass a dirty spool asked for) to this report."""
        self.files += later.files
        self.turns += later.turns
        self.chunks += later.chunks
        self.redactions.update(later.redactions)
        self.rejected.extend(later.rejected)
        self.warnings.extend(later.warnings)
        self.embedded += later.embedded
        self.spool_deleted += later.spool_deleted
        if later.owed_counted:
            self.owed, self.owed_counted = later.owed, True  # a count after everything stored
        else:
            # Rows stored by the later pass, plus those of earlier passes that did not count; an
            # earlier count is dropped rather than added to: "new" is all this report then claims.
            self.owed = later.owed + (0 if self.owed_counted else self.owed)
            self.owed_counted = False
        self.files_left = later.files_left
        self.budget_hit = self.budget_hit or later.budget_hit

    def summary(self) -> str:
        files = f"{self.files} file" + ("" if self.files == 1 else "s")
        line = f"indexed {files}: {self.turns} turns, {self.chunks} chunks"
        total = sum(self.redactions.values())
        if total:
            noun = "redaction" if total == 1 else "redactions"
            line += f" ({total} {noun}: {format_counts(self.redactions)})"
        line += f"; {len(self.rejected)} rejected; embeddings owed: {self.owed}"
        if not self.owed_counted:
            line += " new"
        if self.owed and self.worker is not None:
            line += f" ({background_note(self.owed, self.worker, self.worker_rate)})"
        if self.budget_hit and (self.files_left or self.owed):
            left = []
            if self.files_left:
                left.append(
                    f"{self.files_left} file" + ("" if self.files_left == 1 else "s") + " not fully stored"
                )
            if self.owed and self.worker is None:
                left.append(f"{self.owed} embeddings")
            if left:
                what = " and ".join(left)
                line += f" — stopped at the {self.budget:g} s budget with {what} left"
                line += "; run `funes index` again to continue"
        return line


def background_note(owed: int, worker: WorkerStart, rate: float | None) -> str:
    """What a run that handed ``owed`` embeddings to the background worker says about them."""
    from funes_core.ingest.worker import estimate_seconds

    who = "a background worker" if worker.started else "the running background worker"
    pid = f", pid {worker.pid}," if worker.pid else ""
    minutes = max(1, round(estimate_seconds(owed, rate) / 60))
    return (
        f"{who}{pid} is embedding them: about {minutes} min; `funes status` shows progress, "
        "`funes index --wait` waits for it"
    )


class IndexProgress(Protocol):
    """Where the engine reports progress (a rich bar at a terminal, nothing otherwise)."""

    def writing(self, total_steps: int) -> None: ...

    def wrote(self, *, steps: int, turns: int, chunks: int) -> None: ...

    def embedding(self, total: int) -> None: ...

    def embedded(self, n: int) -> None: ...

    def close(self) -> None: ...


class _NoProgress:
    def writing(self, total_steps: int) -> None:
        pass

    def wrote(self, *, steps: int, turns: int, chunks: int) -> None:
        pass

    def embedding(self, total: int) -> None:
        pass

    def embedded(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass

"""A memory as the read verbs see it: resolved from a ``--memory`` spec, opened lazily, once.

The CLI opens one per command; the MCP server keeps one per spec for its whole life, so the
LanceDB table, the embedding model and the tokenizer each load once, on the first call that
needs them, never during the handshake.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from functools import cache
from typing import TYPE_CHECKING

from funes_core.home import Home, HomeError
from funes_core.share.memory import MemoryLocation, open_memory, resolve_memory
from funes_core.store import NoIndexError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from funes_core.models.base import Reranker
    from funes_core.models.embed import Embedder
    from funes_core.models.vectors import Vector
    from funes_core.share.remotes import Remote
    from funes_core.store.base import Store

__all__ = ["Memory", "MemorySet", "MemoryUnavailableError", "Readable", "count_tokens", "resolve_memories"]


class MemoryUnavailableError(RuntimeError):
    """The memory cannot be read (none built yet, wrong path, unusable home); one line for the user.

    ``failure`` is set for a remote (``offline``, ``unauthorized``, ``missing``, ``not_funes``), so
    a multi-memory read can go on without an offline remote and say so.
    """

    def __init__(self, message: str, *, label: str | None = None, failure: str | None = None) -> None:
        super().__init__(message)
        self.label = label
        self.failure = failure


@cache
def _tokenizer() -> Tokenizer:
    from tokenizers import Tokenizer

    from funes_core.models.embed import _tokenizer_path

    tok = Tokenizer.from_file(str(_tokenizer_path()))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(text: str) -> int:
    """Tokens in ``text`` by the embedding model's own tokenizer (no truncation, no special tokens)."""
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


class Readable(ABC):
    """What a read verb reads: one :class:`Memory`, or a :class:`MemorySet` read as one.

    Both answer every question a verb asks (the store, the embedder, the reranker, the readable
    members), so no verb or face tells them apart: a verb that reads one memory asks for it with
    :meth:`one`, which refuses a set with one line; ``recall`` reads them all with :meth:`open`.
    """

    spec: str | None
    label: str
    home: Home
    remote: Remote | None
    #: Whether the hits name the memory each came from (several are read as one list).
    pooled: bool

    @abstractmethod
    def store(self) -> Store:
        """The store to read (of a set: its first readable member)."""

    @abstractmethod
    def embedder(self) -> Embedder:
        """The embedder of the query (of a set: the lead's, whose model every member read shares)."""

    @abstractmethod
    def reranker(self) -> tuple[Reranker | None, str | None]:
        """The configured reranker, or ``(None, note)`` when it cannot run (see :meth:`Memory.reranker`)."""

    @abstractmethod
    def open(self, notes: list[str]) -> list[tuple[str, Store]]:
        """``(label, store)`` of every member that can be read; a note in ``notes`` for each left out."""

    @abstractmethod
    def one(self, verb: str) -> Memory:
        """The one memory ``verb`` reads; a set is refused with one line naming the way out."""

    def embed_query(self, text: str) -> Vector:
        return self.embedder().embed_query(text)

    def count_tokens(self, text: str) -> int:
        return count_tokens(text)


class Memory(Readable):
    """One memory to read: its label for hints, and its store and embedder, opened on first use."""

    pooled = False

    def __init__(self, spec: str | None, home: Home) -> None:
        self.spec = spec
        self.home = home
        location = resolve_memory(spec, home=home)
        self.location: MemoryLocation | None = location
        self.label = location.label
        self.is_default = location.is_default
        self.remote = location.remote
        self._store: Store | None = None
        self._embedder: Embedder | None = None
        self._synced = 0.0
        self._rerankers: dict[str, tuple[Reranker | None, str | None]] = {}

    @classmethod
    def resolve(cls, spec: str | None = None, *, home: Home | None = None) -> Memory:
        try:
            return cls(spec, home or Home.resolve())
        except (HomeError, NoIndexError) as exc:
            raise MemoryUnavailableError(str(exc)) from None
        except ValueError as exc:  # a broken remotes file
            raise MemoryUnavailableError(str(exc)) from None

    @classmethod
    def of(
        cls, store: Store, embedder: Embedder, *, label: str | None = None, home: Home | None = None
    ) -> Memory:
        """A memory over a store that is already open (tests, the MCP factory, other backends)."""
        memory = cls.__new__(cls)
        memory.spec = None
        memory.home = home or Home.resolve()
        memory.label = label or store.label
        memory.is_default = False
        memory.remote = None
        memory.location = None
        memory._store = store
        memory._embedder = embedder
        memory._synced = 0.0
        memory._rerankers = {}
        return memory

    def embedder(self) -> Embedder:
        """The embedder of the model this memory is stamped with (or the one asked for with FUNES_MODEL)."""
        if self._embedder is None:
            self.store()
        assert self._embedder is not None
        return self._embedder

    def store(self) -> Store:
        """The store, opened read-only on first use, with the embedder of its model.

        A memory is read with the model it was built with (its stamp names it); one that
        disagrees with ``FUNES_MODEL``, or whose model no installed embedder provides, is refused
        with one line.
        """
        if self._store is not None and self.remote is not None and not self.remote.is_folder:
            self._refresh()
        if self._store is None:
            from funes_core.models.base import ModelError
            from funes_core.models.registry import choose_embedder
            from funes_core.store import check_model

            try:
                store = open_memory(self.location or self.spec, home=self.home)
            except NoIndexError as exc:
                raise MemoryUnavailableError(str(exc), label=self.label, failure=_failure(exc)) from None
            if self._embedder is None:
                try:
                    self._embedder = choose_embedder(self.home, store.model_stamp(), label=self.label)
                except ModelError as exc:
                    raise MemoryUnavailableError(str(exc), label=self.label) from None
            else:
                check_model(store, self._embedder.stamp)
            self._store = store
            self._synced = time.monotonic()
        return self._store

    def reranker(self) -> tuple[Reranker | None, str | None]:
        """The configured reranker (``FUNES_RERANKER``; none by default), or why it cannot run.

        A reranker that is unknown or whose weights are missing does not stop a recall: it comes
        back as ``(None, note)`` and the recall shows the fused order with that note.
        """
        from funes_core.models.registry import configured_reranker

        name = configured_reranker()
        if name is None:
            return None, None
        if name not in self._rerankers:
            from funes_core.models.base import ModelError
            from funes_core.models.registry import resolve_reranker

            try:
                reranker = resolve_reranker(name, home=self.home)
                reranker.check()
                self._rerankers[name] = (reranker, None)
            except ModelError as exc:
                self._rerankers[name] = (None, f"note: reranker off: {exc}")
        return self._rerankers[name]

    def _refresh(self) -> None:
        """A long-lived reader (the MCP server) re-lists its remote at most every refresh period."""
        from funes_core.share.mirror import RemoteError, refresh_seconds, sync_mirror

        if self.remote is None or time.monotonic() - self._synced < refresh_seconds():
            return
        try:
            sync_mirror(self.remote, self.home)
        except RemoteError as exc:
            raise MemoryUnavailableError(str(exc), label=self.label, failure=exc.failure.value) from None
        self._synced = time.monotonic()

    def open(self, notes: list[str]) -> list[tuple[str, Store]]:
        return [(self.label, self.store())]

    def one(self, verb: str) -> Memory:
        return self


def _failure(exc: Exception) -> str | None:
    failure = getattr(exc, "failure", None)
    return str(failure.value) if failure is not None else None


class MemorySet(Readable):
    """Several memories read as one (``--memory local,team``): ``recall`` ranks them as one list.

    A member that cannot be read (an offline remote, a missing one, wrong credentials) is left
    out with a one-line note, as long as another member answers; when none does, the read fails
    with every member's reason. The query is embedded once, with the model of the first member
    that answers (the *lead*); a member stamped with another model (each memory is read with its
    own, and plugins make several installable) is left out with a note too, since its vectors
    cannot be compared with the lead's. The reranker is the lead's (the setting is the home's).
    """

    pooled = True

    def __init__(self, members: list[Memory]) -> None:
        self.members = members
        self.spec = ",".join(m.spec or "local" for m in members)
        self.label = ",".join(m.label for m in members)
        self.home = members[0].home
        self.remote = None
        self._lead: Memory | None = None

    def lead(self) -> Memory:
        """The member whose model embeds the query: the first one that can be read."""
        if self._lead is None:
            self.open([])
        assert self._lead is not None
        return self._lead

    def embedder(self) -> Embedder:
        return self.lead().embedder()

    def reranker(self) -> tuple[Reranker | None, str | None]:
        return self.lead().reranker()

    def one(self, verb: str) -> Memory:
        raise MemoryUnavailableError(
            f"{verb} reads one memory; name one (the → get line of a recall hit names it)"
        )

    def store(self) -> Store:
        """The first member that can be read (verbs that read one memory)."""
        return self.open([])[0][1]

    def open(self, notes: list[str]) -> list[tuple[str, Store]]:
        """``(label, store)`` of every readable member of the lead's model; a note for each one left out."""
        opened: list[tuple[str, Store]] = []
        failures: list[str] = []
        lead: Memory | None = None
        for member in self.members:
            try:
                store = member.store()
            except MemoryUnavailableError as exc:
                failures.append(str(exc))
                continue
            if lead is None:
                lead = member
            elif member.embedder().stamp != lead.embedder().stamp:
                theirs, ours = member.embedder().stamp, lead.embedder().stamp
                failures.append(
                    f"{member.label} holds vectors of {theirs.model} ({theirs.dim}-d), not of "
                    f"{ours.model} ({ours.dim}-d) like {lead.label}: left out"
                )
                continue
            opened.append((member.label, store))
        if lead is None:
            raise MemoryUnavailableError("; ".join(failures))
        self._lead = lead
        notes.extend(f"{reason}; showing the other memories" for reason in failures)
        return opened


def resolve_memories(spec: str | None, *, home: Home | None = None) -> Memory | MemorySet:
    """``--memory`` as the read verbs take it: one memory, or several joined by commas."""
    if spec is None or "," not in spec:
        return Memory.resolve(spec, home=home)
    names = [part.strip() for part in spec.split(",")]
    if any(not n for n in names):
        raise MemoryUnavailableError(f"bad --memory {spec!r}: an empty name between commas")
    unique = list(dict.fromkeys(names))
    members = [Memory.resolve(n, home=home) for n in unique]
    if len(members) == 1:
        return members[0]
    for member in members:
        if member.is_default:
            member.label = "local"  # in a list, hits name the local memory the way it was asked for
    return MemorySet(members)

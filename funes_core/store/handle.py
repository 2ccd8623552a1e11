"""A memory as the read verbs see it: resolved from a ``--memory`` spec, opened lazily, once.

The CLI opens one per command; the MCP server keeps one per spec for its whole life, so the
LanceDB table, the embedding model and the tokenizer each load once, on the first call that
needs them, never during the handshake.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from funes_core.home import Home, HomeError
from funes_core.store import NoIndexError, open_store, resolve_memory

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from funes_core.models.embed import Embedder
    from funes_core.store.base import Store, Vector

__all__ = ["Memory", "MemoryUnavailableError", "count_tokens"]


class MemoryUnavailableError(RuntimeError):
    """The memory cannot be read (none built yet, wrong path, unusable home); one line for the user."""


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


class Memory:
    """One memory to read: its label for hints, and its store and embedder, opened on first use."""

    def __init__(self, spec: str | None, home: Home) -> None:
        self.spec = spec
        self.home = home
        self.label = resolve_memory(spec, home=home).label
        self._store: Store | None = None
        self._embedder: Embedder | None = None

    @classmethod
    def resolve(cls, spec: str | None = None, *, home: Home | None = None) -> Memory:
        try:
            return cls(spec, home or Home.resolve())
        except HomeError as exc:
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
        memory._store = store
        memory._embedder = embedder
        return memory

    def embedder(self) -> Embedder:
        if self._embedder is None:
            from funes_core.models.embed import embedder_from_env

            self._embedder = embedder_from_env(self.home)
        return self._embedder

    def store(self) -> Store:
        """The store, opened read-only on first use; refuses a memory built with another model."""
        if self._store is None:
            try:
                self._store = open_store(self.spec, home=self.home, expect=self.embedder().stamp)
            except NoIndexError as exc:
                raise MemoryUnavailableError(str(exc)) from None
        return self._store

    def embed_query(self, text: str) -> Vector:
        return self.embedder().embed_query(text)

    def count_tokens(self, text: str) -> int:
        return count_tokens(text)

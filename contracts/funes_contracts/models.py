"""``EmbedderContract`` and ``RerankerContract``: what every embedder and reranker plugin must do.

Subclass them in a plugin's tests and name the class and one of its models::

    class TestMyEmbedder(EmbedderContract):
        embedder_cls = MyEmbedder
        model = "my-org/my-model"

funes stamps a memory with the model's name and dimension and never mixes vectors of two models,
so an embedder must be deterministic, keep its dimension, give the same vector for a text whether
it is embedded alone or in a batch, and say who it is without loading weights. Each test names
its requirement (``funes_contracts.requirements``).

Also here: small, deterministic test doubles (:class:`TinyEmbedder`, :class:`OverlapReranker`,
:class:`SlowReranker`) for tests that need an embedder or reranker plugin without any weights.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pytest

from funes_core import Embedder, ModelInfo, Reranker
from funes_core.models.base import MODEL_CONTRACT_VERSION
from funes_core.models.embed import HashEmbedder

if TYPE_CHECKING:
    from typing import Self


__all__ = ["EmbedderContract", "OverlapReranker", "RerankerContract", "SlowReranker", "TinyEmbedder"]

requirement = pytest.mark.requirement

TEXTS = [
    "We decided to keep Postgres and drop the SQLite cache.",
    "the flaky flush test failed again on the ARM runner",
    "Café, naïve, 東京, emoji 🚀 and a tab\tinside",
    "x",
    "a much longer passage " * 40,
]


class EmbedderContract:
    """Base class: set ``embedder_cls`` and ``model`` (a name from its ``models()``)."""

    embedder_cls: ClassVar[type[Embedder]]
    model: ClassVar[str]
    #: Largest difference allowed between a text embedded alone and in a batch (float noise).
    tolerance: ClassVar[float] = 1e-5

    @pytest.fixture
    def embedder(self, tmp_path: Path) -> Embedder:
        return self.embedder_cls.open(self.model, cache_dir=tmp_path / "cache")

    @requirement("embedder:identity")
    def test_identity(self) -> None:
        cls = self.embedder_cls
        assert re.fullmatch(r"[a-z0-9_-]+", cls.id), cls.id
        assert cls.label.strip()
        assert cls.contract_version == MODEL_CONTRACT_VERSION
        names = [m.name for m in cls.models()]
        assert self.model in names
        assert len(names) == len(set(names)), "models() lists a name twice"
        assert all(isinstance(m, ModelInfo) and m.dim > 0 for m in cls.models())

    @requirement("embedder:stamp")
    def test_stamp_names_the_model_and_dimension(self, embedder: Embedder) -> None:
        info = next(m for m in self.embedder_cls.models() if m.name == self.model)
        assert embedder.model == self.model
        assert embedder.dim == info.dim
        assert (embedder.stamp.model, embedder.stamp.dim) == (self.model, info.dim)

    @requirement("embedder:dimension")
    def test_vectors_have_the_dimension_and_unit_length(self, embedder: Embedder) -> None:
        vectors = embedder.embed_documents(TEXTS)
        assert len(vectors) == len(TEXTS)
        for vec in [*vectors, embedder.embed_query("what did we decide about storage?")]:
            arr = np.asarray(vec)
            assert arr.dtype == np.float32 and arr.shape == (embedder.dim,)
            assert abs(float(np.linalg.norm(arr)) - 1.0) < 1e-3
        assert embedder.embed_documents([]) == []

    @requirement("embedder:determinism")
    def test_the_same_text_gives_the_same_vector(self, embedder: Embedder, tmp_path: Path) -> None:
        again = self.embedder_cls.open(self.model, cache_dir=tmp_path / "other-cache")
        first = embedder.embed_documents(TEXTS)
        second = again.embed_documents(TEXTS)
        for a, b in zip(first, second, strict=True):
            assert float(np.abs(np.asarray(a) - np.asarray(b)).max()) <= self.tolerance
        q = embedder.embed_query("storage decision")
        assert (
            float(np.abs(np.asarray(q) - np.asarray(embedder.embed_query("storage decision"))).max()) == 0.0
        )

    @requirement("embedder:batch-equals-single")
    def test_a_batch_equals_each_text_alone(self, embedder: Embedder) -> None:
        batch = embedder.embed_documents(TEXTS)
        for text, vec in zip(TEXTS, batch, strict=True):
            alone = embedder.embed_documents([text])[0]
            assert float(np.abs(np.asarray(vec) - np.asarray(alone)).max()) <= self.tolerance, text[:30]


class RerankerContract:
    """Base class: set ``reranker_cls`` and ``model``."""

    reranker_cls: ClassVar[type[Reranker]]
    model: ClassVar[str]
    tolerance: ClassVar[float] = 1e-4

    @pytest.fixture
    def reranker(self, tmp_path: Path) -> Reranker:
        return self.reranker_cls.open(self.model, cache_dir=tmp_path / "cache")

    @requirement("reranker:identity")
    def test_identity(self) -> None:
        cls = self.reranker_cls
        assert re.fullmatch(r"[a-z0-9_-]+", cls.id), cls.id
        assert cls.label.strip()
        assert cls.contract_version == MODEL_CONTRACT_VERSION
        assert self.model in [m.name for m in cls.models()]

    @requirement("reranker:scores")
    def test_one_score_per_passage_in_order(self, reranker: Reranker) -> None:
        query = "what did we decide about the storage engine?"
        scores = reranker.score(query, TEXTS)
        assert len(scores) == len(TEXTS) and all(isinstance(s, float) for s in scores)
        flipped = reranker.score(query, list(reversed(TEXTS)))
        for a, b in zip(scores, reversed(flipped), strict=True):
            assert abs(a - b) <= self.tolerance
        assert reranker.score(query, []) == []

    @requirement("reranker:determinism")
    def test_the_same_pair_gets_the_same_score(self, reranker: Reranker) -> None:
        query = "flaky flush test"
        alone = [reranker.score(query, [t])[0] for t in TEXTS]
        together = reranker.score(query, TEXTS)
        for a, b in zip(alone, together, strict=True):
            assert abs(a - b) <= self.tolerance


# ----------------------------------------------------------------------------- test doubles

_WORDS = re.compile(r"\w+")


class TinyEmbedder(HashEmbedder):
    """funes' hashed-words test double in 16 or 32 dimensions, as a weightless embedder *plugin*."""

    id: ClassVar[str] = "tiny"
    label: ClassVar[str] = "hashed words, 16 or 32 dimensions (test double)"
    contract_version: ClassVar[int] = MODEL_CONTRACT_VERSION
    MODELS: ClassVar[dict[str, int]] = {"funes-test/tiny-16": 16, "funes-test/tiny-32": 32}

    def __init__(self, model: str, *, cache_dir: Path) -> None:
        super().__init__(self.MODELS[model], model=model)

    @classmethod
    def models(cls) -> Sequence[ModelInfo]:
        return [ModelInfo(name, dim, "hashed words (tests)") for name, dim in cls.MODELS.items()]

    @classmethod
    def open(cls, model: str, *, cache_dir: Path) -> Self:
        return cls(model, cache_dir=cache_dir)


class OverlapReranker(Reranker):
    """Scores a passage by the query words it contains: a weightless, deterministic reranker plugin."""

    id: ClassVar[str] = "overlap"
    label: ClassVar[str] = "shared words (test double)"
    contract_version: ClassVar[int] = MODEL_CONTRACT_VERSION

    def __init__(self, model: str, *, cache_dir: Path) -> None:
        self.model = model

    @classmethod
    def models(cls) -> Sequence[ModelInfo]:
        return [ModelInfo("funes-test/overlap", 0, "counts shared words (tests)")]

    @classmethod
    def open(cls, model: str, *, cache_dir: Path) -> Self:
        return cls(model, cache_dir=cache_dir)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        words = set(_WORDS.findall(query.lower()))
        return [float(len(words & set(_WORDS.findall(p.lower())))) - 2.0 for p in passages]


class SlowReranker(OverlapReranker):
    """An :class:`OverlapReranker` that takes ``delay`` seconds per call (timeout tests)."""

    id: ClassVar[str] = "slow"
    label: ClassVar[str] = "a reranker that sleeps (test double)"
    delay: ClassVar[float] = 30.0

    @classmethod
    def models(cls) -> Sequence[ModelInfo]:
        return [ModelInfo("funes-test/slow", 0, "sleeps, then counts shared words (tests)")]

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        time.sleep(self.delay)
        return super().score(query, passages)


def plugin(*classes: type[Any]) -> object:
    """A plugin object registering ``classes`` (embedders and rerankers) through the two hooks."""
    from funes_core import hookimpl

    embedders = [c for c in classes if issubclass(c, Embedder)]
    rerankers = [c for c in classes if issubclass(c, Reranker)]

    class _Plugin:
        @hookimpl
        def funes_register_embedders(self) -> list[type[Embedder]]:
            return embedders

        @hookimpl
        def funes_register_rerankers(self) -> list[type[Reranker]]:
            return rerankers

    return _Plugin()

"""The two model plugin types, :class:`Embedder` and :class:`Reranker`, and the values they exchange.

A memory is only as good as its embedding model, and the right model depends on the user: the
packaged all-MiniLM-L6-v2 is English, small and offline; someone who writes to their agents in
another language wants a multilingual one. So models are plugins, registered through the same
manager as integrations (``funes_register_embedders`` / ``funes_register_rerankers``). The
packaged MiniLM and fastembed's catalogue are registered the same way, by funes itself.

An embedder *class* can load one or more models (``models()``), each named by the string users pass
to ``--model`` and stamped into the memory. The name and the dimension are the model's identity:
vectors of two models are never mixed, so a memory built with one is refused by another.

This module is imported on every ``funes`` start (the plugin manager validates against these
bases), so it imports nothing heavy: numpy appears in annotations only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from typing import Self

    from funes_core.models.vectors import ModelStamp, Vector

__all__ = [
    "MODEL_CONTRACT_VERSION",
    "Embedder",
    "ModelError",
    "ModelInfo",
    "ModelPlugin",
    "ModelUnavailableError",
    "Reranker",
    "UnknownModelError",
]

#: The contract version of the model plugin types (checked like the integrations' one).
MODEL_CONTRACT_VERSION = 1


class ModelError(RuntimeError):
    """A model that cannot be used; ``str()`` is the one line funes prints."""


class UnknownModelError(ModelError):
    """No installed embedder or reranker provides a model of this name."""


class ModelUnavailableError(ModelError):
    """The model is known but its weights are not on this machine (and funes never downloads at run time).

    The message names the missing files and how to get them (a folder to put them in, an
    environment variable, a command), in one line.
    """


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One model an embedder or reranker class can load."""

    #: What users pass to ``--model`` (or ``FUNES_RERANKER``) and what is stamped into a memory.
    name: str
    #: Vector dimension (embedders); 0 for rerankers.
    dim: int = 0
    #: One line for ``funes models``: what it is good at.
    description: str = ""
    #: Languages it was trained for, as its authors say (``en``, ``multilingual``, ...).
    languages: str = "en"
    #: Size of the weights, for the user deciding whether to fetch them.
    size_mb: float | None = None


class ModelPlugin(ABC):
    """What an embedder and a reranker class share: the identity, the models, opening and checking.

    Either is registered by a plugin, listed by ``funes models`` and ``funes plugins``, built with
    :meth:`open` for one of its :meth:`models` without loading weights, and asked to :meth:`check`
    that the weights are there before funes writes or reads anything with it.
    """

    #: The class's id, ``[a-z0-9_-]+`` (``funes plugins`` lists it; two plugins may not share one).
    id: ClassVar[str] = ""
    #: A human name, e.g. "fastembed catalogue".
    label: ClassVar[str] = ""
    #: The model contract this class was written for: :data:`MODEL_CONTRACT_VERSION`.
    contract_version: ClassVar[int] = 0

    #: The model this instance works with (a name from :meth:`models`).
    model: str

    @classmethod
    @abstractmethod
    def models(cls) -> Sequence[ModelInfo]:
        """The models this class can load (a reranker's ``dim`` is 0). Called by ``funes models``
        and when a name is resolved."""

    @classmethod
    def open(cls, model: str, *, cache_dir: Path) -> Self:
        """An instance for ``model`` (one of :meth:`models`), without loading it yet.

        ``cache_dir`` is funes' cache folder (``$FUNES_HOME/cache``): keep anything you derive
        there. The default calls ``cls(model, cache_dir=cache_dir)``.
        """
        return cls(model, cache_dir=cache_dir)  # type: ignore[call-arg]

    def check(self) -> None:
        """Raise :class:`ModelUnavailableError` if the weights are missing (cheap: no model load).

        funes calls it before writing anything, so a missing model is one line and an untouched
        memory. The default does nothing (a model that ships with its package is always there).
        """
        return


class Embedder(ModelPlugin):
    """Turns text into L2-normalised float32 vectors of one model's dimension.

    Subclass it, list your models in :meth:`models`, and register the class with
    ``funes_register_embedders``. funes builds an instance with :meth:`open` for the model the
    memory uses; the instance must not load weights before the first embed call (the stamp is
    checked first, so a mismatch is refused before paying for a model load).

    Rules (checked by ``funes_contracts.EmbedderContract``): the same text always gives the same
    vector; ``embed_documents`` of a batch equals embedding each text alone; every vector has
    :attr:`dim` float32 components and unit length; ``stamp`` is ``(model, dim)``.
    """

    #: Its vector dimension.
    dim: int

    @property
    def stamp(self) -> ModelStamp:
        """What is recorded in (and checked against) a memory; available without loading the model."""
        from funes_core.models.vectors import ModelStamp

        return ModelStamp(self.model, self.dim)

    @abstractmethod
    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order."""

    @abstractmethod
    def embed_query(self, text: str) -> Vector:
        """The vector of a search query (models that use a query prefix add it here)."""


class Reranker(ModelPlugin):
    """Scores (query, passage) pairs with a cross-encoder, to reorder recall's best candidates.

    Off by default: a reranker runs only when the user names one (``FUNES_RERANKER``), and only
    on a deep pool of fused candidates. Register the class with ``funes_register_rerankers``.
    Rules (``funes_contracts.RerankerContract``): one score per passage, higher is more relevant,
    the same pair always gets the same score, whatever else is in the batch.
    """

    @abstractmethod
    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage, in order."""

"""fastembed's catalogue as funes models: embedders (a multilingual MiniLM, bge-small, e5, ...) and rerankers.

funes never downloads at run time (local-first, and an agent's hook must not wait on a hub), so a
catalogue model is used only when its weights are already on this machine, in one of two places:

1. ``$FUNES_HOME/models/<name with "/" as "--">/``: a folder holding the model's files (the ONNX
   file fastembed names for it, ``tokenizer.json`` and friends), e.g. copied from another machine;
2. fastembed's own cache under ``$FUNES_HOME/cache/fastembed``, which ``funes models pull NAME``
   fills where the network allows.

Otherwise :meth:`check` raises one line naming the missing files and both ways to get them.
fastembed is imported only here, and only when a catalogue model is listed or used.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from funes_core import portable
from funes_core.models.base import (
    MODEL_CONTRACT_VERSION,
    Embedder,
    ModelInfo,
    ModelPlugin,
    ModelUnavailableError,
    Reranker,
    UnknownModelError,
)

if TYPE_CHECKING:
    from typing import Self

    from funes_core.models.vectors import Vector

__all__ = ["FastembedEmbedder", "FastembedReranker", "model_folder", "pull"]

#: Files fastembed reads beside the ONNX file (the tokenizer and its settings).
_SIDE_FILES = ("tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json")


def model_folder(cache_dir: Path, name: str) -> Path:
    """``$FUNES_HOME/models/<org>--<name>``: where a user may put a catalogue model's files by hand."""
    return cache_dir.parent / "models" / name.replace("/", "--")


def _describe(raw: dict[str, Any], dim: int) -> ModelInfo:
    description = str(raw.get("description") or "")
    languages = "multilingual" if "multilingual" in description.lower() else "en"
    size = raw.get("size_in_GB")
    return ModelInfo(
        str(raw["model"]),
        dim,
        " ".join(description.split())[:120],
        languages,
        round(float(size) * 1024, 1) if size else None,
    )


def _catalogue(kind: str) -> dict[str, dict[str, Any]]:
    if kind == "embedder":
        from fastembed import TextEmbedding

        raw = TextEmbedding.list_supported_models()
    else:
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        raw = TextCrossEncoder.list_supported_models()
    # funes registers its packaged model with fastembed under "funes/…" (a test reference): not a choice.
    return {str(m["model"]): dict(m) for m in raw if not str(m["model"]).startswith("funes/")}


class _Weights:
    """Where a catalogue model's files are, or the one line saying they are not here."""

    def __init__(self, kind: str, name: str, cache_dir: Path) -> None:
        catalogue = _catalogue(kind)
        if name not in catalogue:
            raise UnknownModelError(f"fastembed has no {kind} model {name!r}")
        self.name = name
        self.raw = catalogue[name]
        self.cache_dir = cache_dir
        self.model_file = str(self.raw.get("model_file") or "model.onnx")
        self.repo = str((self.raw.get("sources") or {}).get("hf") or name)

    @property
    def folder(self) -> Path:
        return model_folder(self.cache_dir, self.name)

    @property
    def fastembed_cache(self) -> Path:
        return self.cache_dir / "fastembed"

    def in_folder(self) -> bool:
        return (self.folder / self.model_file).is_file()

    def in_cache(self) -> bool:
        snapshots = self.fastembed_cache / f"models--{self.repo.replace('/', '--')}" / "snapshots"
        return (
            any((snap / self.model_file).is_file() for snap in snapshots.glob("*"))
            if snapshots.is_dir()
            else False
        )

    def check(self) -> None:
        if self.in_folder() or self.in_cache():
            return
        files = ", ".join((self.model_file, *_SIDE_FILES))
        raise ModelUnavailableError(
            f"the weights of {self.name} are not on this machine (funes never downloads at run time): "
            f"run `funes models pull {self.name}` where the network allows, or put the files of the "
            f"Hugging Face repo {self.repo} ({files}) in {self.folder}"
        )

    def options(self) -> dict[str, Any]:
        """Keyword arguments that make fastembed load these files, offline."""
        options: dict[str, Any] = {"cache_dir": str(self.fastembed_cache), "local_files_only": True}
        if self.in_folder():
            options["specific_model_path"] = str(self.folder)
        return options


class _Catalogued(ModelPlugin):
    """What both catalogue classes share: one model's weights, checked, loaded once under a lock."""

    #: ``embedder`` or ``reranker``: which half of fastembed's catalogue the class reads.
    kind: ClassVar[str]
    id: ClassVar[str] = "fastembed"
    contract_version: ClassVar[int] = MODEL_CONTRACT_VERSION

    def __init__(self, model: str, *, cache_dir: Path) -> None:
        self._weights = _Weights(self.kind, model, cache_dir)
        self.model = model
        self._model: Any = None
        self._lock = threading.Lock()

    @classmethod
    def open(cls, model: str, *, cache_dir: Path) -> Self:
        return cls(model, cache_dir=cache_dir)

    def check(self) -> None:
        self._weights.check()

    def _fastembed_class(self) -> Any:
        """fastembed's class for the model (imported only now: fastembed is heavy)."""
        raise NotImplementedError

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                self.check()
                made = self._fastembed_class()
                self._model = made(self.model, threads=portable.usable_cores(), **self._weights.options())
            return self._model


class FastembedEmbedder(_Catalogued, Embedder):
    """Any text-embedding model of fastembed's catalogue whose weights are on this machine."""

    kind: ClassVar[str] = "embedder"
    label: ClassVar[str] = "fastembed catalogue (weights fetched once with `funes models pull`)"

    def __init__(self, model: str, *, cache_dir: Path) -> None:
        super().__init__(model, cache_dir=cache_dir)
        self.dim = int(self._weights.raw["dim"])

    @classmethod
    def models(cls) -> Sequence[ModelInfo]:
        return [_describe(raw, int(raw["dim"])) for raw in _catalogue("embedder").values()]

    def _fastembed_class(self) -> Any:
        from fastembed import TextEmbedding

        return TextEmbedding

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        # passage_embed adds the document prefix of models that use one (e5: "passage: ").
        return [
            np.asarray(v, dtype=np.float32) for v in self._load().passage_embed(list(texts), batch_size=8)
        ]

    def embed_query(self, text: str) -> Vector:
        vector: Vector = np.asarray(next(iter(self._load().query_embed(text))), dtype=np.float32)
        return vector


class FastembedReranker(_Catalogued, Reranker):
    """Any cross-encoder of fastembed's catalogue whose weights are on this machine."""

    kind: ClassVar[str] = "reranker"
    label: ClassVar[str] = "fastembed cross-encoders (weights fetched once with `funes models pull`)"

    @classmethod
    def models(cls) -> Sequence[ModelInfo]:
        return [_describe(raw, 0) for raw in _catalogue("reranker").values()]

    def _fastembed_class(self) -> Any:
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        return TextCrossEncoder

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        return [float(s) for s in self._load().rerank(query, list(passages), batch_size=8)]


def pull(kind: str, name: str, cache_dir: Path) -> Path:
    """Download a catalogue model's weights into fastembed's cache (needs the network); returns it."""
    weights = _Weights(kind, name, cache_dir)
    if kind == "embedder":
        from fastembed import TextEmbedding

        TextEmbedding(name, cache_dir=str(weights.fastembed_cache))
    else:
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        TextCrossEncoder(name, cache_dir=str(weights.fastembed_cache))
    return weights.fastembed_cache

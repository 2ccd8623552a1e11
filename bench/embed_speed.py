"""Embedding throughput of the pinned model on this CPU: the product path against the alternatives.

Variants, interleaved and repeated in one run (passages per second of wall time, and per CPU-second,
which a shared machine's load disturbs much less):

- ``product``: ``FastEmbedder.embed_documents``: length-sorted batches of 8 over one single-threaded
  onnxruntime session per core, intra-op spinning off;
- ``fastembed``: the same model file through fastembed, batch 8, all cores (the path before issue 16);
- ``one session, all cores, arrival order``: onnxruntime direct, batch 8, unsorted, spinning on;
- ``one session, all cores, sorted``: the same, length-sorted.

Texts: ``--kind long`` takes passages of at least 256 tokens (1,200-character windows of the real
Claude Code transcripts in ``shared/corpus/claude``); ``--kind mixed`` takes every chunk of them as
funes cuts them (median 256 tokens, mean ~207). The padding each batching order costs is counted
exactly (tokens padded / real tokens). Vectors of every variant are checked equal (1e-5).

Usage::

    uv run python bench/embed_speed.py --kind long --n 96 --reps 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, ROOT

from funes_core.models.embed import MAX_TOKENS, FastEmbedder, _OnnxModel, _session
from funes_core.portable import peak_rss_bytes, usable_cores


def corpus_texts() -> list[str]:
    """Every text of the real Claude transcripts beside the checkout, cut in 1,200-character windows."""
    found: list[str] = []
    for parent in ROOT.parents:
        folder = parent / "shared" / "corpus" / "claude"
        if folder.is_dir():
            break
    else:
        raise SystemExit("shared/corpus/claude not found beside the checkout")

    def walk(value: Any) -> None:
        if isinstance(value, str) and len(value) > 20:
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted(folder.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                walk(json.loads(line).get("message", {}))
            except (ValueError, AttributeError):
                continue
    out = []
    for text in dict.fromkeys(found):
        out.extend(text[i : i + 1200] for i in range(0, len(text), 1050))
    return out


def padding(lengths: Sequence[int], batch: int, ordered: bool) -> float:
    seq = sorted(lengths) if ordered else list(lengths)
    padded = sum(max(seq[i : i + batch]) * len(seq[i : i + batch]) for i in range(0, len(seq), batch))
    return padded / sum(seq)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("long", "mixed"), default="long")
    parser.add_argument("--n", type=int, default=96)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    texts = corpus_texts()
    if args.kind == "long":
        texts = [t for t in texts if len(t) >= 1150]
    texts = texts[: args.n]
    embedder = FastEmbedder(CACHE / "model")
    embedder.load()
    model = _OnnxModel(CACHE / "model")
    lengths = [len(e.ids) for e in model.tokenizer.encode_batch(texts)]
    cores = usable_cores()
    wide = _session(model.model_file, threads=cores, arena=True, spinning=True)

    def one_session(ordered: bool) -> list[Any]:
        encodings = model.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: lengths[i]) if ordered else list(range(len(texts)))
        out: list[Any] = [None] * len(texts)
        for start in range(0, len(order), 8):
            batch = order[start : start + 8]
            for j, vec in zip(batch, model.forward(wide, [encodings[i] for i in batch]), strict=True):
                out[j] = vec
        return out

    variants: dict[str, Callable[[], list[Any]]] = {
        "product (sorted, 1 session x 1 thread per core, no spin)": lambda: embedder.embed_documents(texts),
        "fastembed, batch 8, all cores (before)": lambda: embedder.fastembed_documents(texts),
        "one session, all cores, arrival order": lambda: one_session(False),
        "one session, all cores, sorted": lambda: one_session(True),
    }
    reference = embedder.fastembed_documents(texts)
    wall: dict[str, list[float]] = {k: [] for k in variants}
    cpu: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(args.reps):
        for name, run in variants.items():
            c0, t0 = time.process_time(), time.perf_counter()
            vectors = run()
            dt, dc = time.perf_counter() - t0, time.process_time() - c0
            wall[name].append(len(texts) / dt)
            cpu[name].append(len(texts) / dc)
            worst = max(
                float(np.abs(np.asarray(a) - np.asarray(b)).max())
                for a, b in zip(vectors, reference, strict=True)
            )
            assert worst < 1e-5, (name, worst)
    results: dict[str, Any] = {
        "texts": len(texts),
        "tokens_median": statistics.median(lengths),
        "tokens_mean": round(statistics.mean(lengths)),
        "max_tokens": MAX_TOKENS,
        "cores": cores,
        "padding_b8_arrival": round(padding(lengths, 8, False), 3),
        "padding_b8_sorted": round(padding(lengths, 8, True), 3),
        "load_after": os.getloadavg()[0],
        "peak_rss_mb": peak_rss_bytes() // (1024 * 1024),
        "variants": {},
    }
    print(
        f"{len(texts)} texts, tokens median {results['tokens_median']} mean {results['tokens_mean']}; "
        f"padded/real tokens at batch 8: arrival order {results['padding_b8_arrival']}, "
        f"sorted {results['padding_b8_sorted']}"
    )
    base = statistics.median(cpu["fastembed, batch 8, all cores (before)"])
    for name in variants:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        results["variants"][name] = {
            "per_s": round(w, 1),
            "per_cpu_s": round(c, 1),
            "vs_before": round(c / base, 2),
        }
        print(f"{name:58} {w:6.1f}/s wall  {c:6.1f}/CPU-s  ({c / base:.2f}x before, per CPU-second)")
    print(f"load {results['load_after']:.2f}, peak RSS {results['peak_rss_mb']} MB")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""ANN index variants side by side on one table: build time, index size, recall@10 against exact, latency.

Why this exists: the index type and its parameters decide whether a million chunks can be searched
in a few milliseconds on a laptop-class CPU, how long the first build takes, how much disk and RAM
the index costs, and how close its top 10 stays to exact search. The candidates are what lancedb 0.40
offers for a 384-d cosine column (IVF_PQ, IVF_SQ, IVF_RQ, IVF_FLAT, IVF_HNSW_SQ, IVF_HNSW_PQ);
each is built on the *same* table, one after the other (``replace=True``), and measured with the
product's own query (cosine, the row columns and ``_distance``, ``limit`` = recall's 30 candidates)
over a grid of query-time parameters (``nprobes``, ``refine_factor``, ``ef``).

- Corpus: ``bench/scale.py``'s synthetic memory of ``--rows`` rows, built once without an ANN
  index (``bench/.cache/scale/corpus-N-noann``); the same LoCoMo questions embedded by the real model.
- recall@10: the share of exact search's top 10 (numpy over the stored vectors) in the index's top 10.
- Build figures: wall seconds and CPU seconds of this process (lance builds on its own threads, which
  count), so a figure taken under load can still be compared; the 1-minute load average beside each.
- Index bytes: the files the build added under ``_indices/``.

Usage::

    uv run python bench/ann.py --rows 200000 --variants pq:p=448,sub=48 sq:p=448 hnswsq:p=1
    uv run python bench/ann.py --rows 1000000 --variants pq:p=1000,sub=48 --json out.json

A variant is ``KIND:key=value,...`` with KIND one of ``pq``, ``sq``, ``rq``, ``flat``, ``hnswsq``,
``hnswpq`` and keys ``p`` (partitions), ``sub`` (PQ sub-vectors), ``bits`` (RQ bits), ``m``,
``efc`` (HNSW ``ef_construction``), ``sample`` (kmeans sample rate).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale
from _common import machine_info

from funes_core.read.recall import DEFAULT_CANDIDATES
from funes_core.store.lance import LanceStore

#: Rows a query asks for (recall's candidates); lance refuses an HNSW ``ef`` below k x refine.
K = DEFAULT_CANDIDATES
#: The query grid per index family: (nprobes, refine_factor, ef); None leaves lance's default.
GRIDS: dict[str, list[tuple[int | None, int | None, int | None]]] = {
    "pq": [(n, r, None) for n in (10, 20, 40, 80) for r in (None, 5, 10, 20)],
    "rq": [(n, r, None) for n in (10, 20, 40, 80) for r in (None, 5, 10, 20)],
    "sq": [(n, r, None) for n in (10, 20, 40, 80) for r in (None, 2)],
    "flat": [(n, None, None) for n in (10, 20, 40, 80)],
    "hnswsq": [(None, r, e) for e in (30, 60, 120, 240) for r in (None, 2) if e >= K * (r or 1)],
    "hnswpq": [(None, r, e) for e in (60, 120, 240) for r in (None, 5, 10) if e >= K * (r or 1)],
}


def index_config(spec: str) -> tuple[str, Any]:
    from lancedb import index

    kind, _, rest = spec.partition(":")
    opts = {k: int(v) for k, v in (item.split("=") for item in rest.split(",") if item)}
    common: dict[str, Any] = {"distance_type": "cosine", "num_partitions": opts.get("p")}
    if "sample" in opts:
        common["sample_rate"] = opts["sample"]
    if kind == "pq":
        return kind, index.IvfPq(num_sub_vectors=opts.get("sub"), **common)
    if kind == "sq":
        return kind, index.IvfSq(**common)
    if kind == "rq":
        return kind, index.IvfRq(num_bits=opts.get("bits", 1), **common)
    if kind == "flat":
        return kind, index.IvfFlat(**common)
    hnsw = {"m": opts.get("m", 20), "ef_construction": opts.get("efc", 300)}
    if kind == "hnswsq":
        return kind, index.HnswSq(**common, **hnsw)
    if kind == "hnswpq":
        return kind, index.HnswPq(num_sub_vectors=opts.get("sub"), **common, **hnsw)
    raise SystemExit(f"unknown variant kind {kind!r} in {spec!r}")


def index_dirs(table_path: Path) -> dict[str, int]:
    """Each folder under ``_indices/`` and its size in bytes."""
    out = {}
    root = table_path / "_indices"
    for sub in root.iterdir() if root.exists() else ():
        out[sub.name] = sum(f.stat().st_size for f in sub.rglob("*") if f.is_file())
    return out


def search(table: Any, q: np.ndarray, grid: tuple[int | None, int | None, int | None], flat: bool) -> Any:
    from funes_core.store.lance import _ROW_COLUMNS

    nprobes, refine, ef = grid
    query = table.search(q, vector_column_name="vector").distance_type("cosine")
    if flat:
        query = query.bypass_vector_index()
    if nprobes is not None:
        query = query.nprobes(nprobes)
    if refine is not None:
        query = query.refine_factor(refine)
    if ef is not None:
        query = query.ef(ef)
    return query.select([*_ROW_COLUMNS, "_distance"]).limit(K).to_arrow()


def measure(
    table: Any, qv: np.ndarray, exact_ids: list[set[str]], grid: Any, flat: bool = False
) -> dict[str, Any]:
    search(table, qv[0], grid, flat)  # warm the index cache for this setting
    walls, cpus, rec = [], [], []
    for q, truth in zip(qv, exact_ids, strict=True):
        w0, c0 = time.perf_counter(), time.process_time()
        result = search(table, q, grid, flat)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
        rec.append(len(set(result.column("id").to_pylist()[:10]) & truth) / 10)
    return {
        "nprobes": grid[0],
        "refine": grid[1],
        "ef": grid[2],
        "recall10": round(statistics.mean(rec), 4),
        "recall10_min": round(min(rec), 2),
        "ms": round(1000 * statistics.median(walls), 2),
        "p95_ms": round(1000 * sorted(walls)[int(0.95 * (len(walls) - 1))], 2),
        "cpu_ms": round(1000 * statistics.median(cpus), 2),
        "load": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--variants", nargs="+", required=True)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--flat", action="store_true", help="also time exact search without any index")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    embedder, bases, base_vecs, _qs, qv = scale.inputs(args.queries)
    t0 = time.perf_counter()
    home = scale.build(args.rows, embedder, bases, base_vecs, ann=False)
    print(f"# corpus of {args.rows:,} rows ready in {time.perf_counter() - t0:.0f} s", flush=True)
    vectors = np.load(home.root / "vectors.npy", mmap_mode="r")
    exact = scale.exact_top(vectors, qv, 10)
    exact_ids = [{scale.row_id(i) for i in row} for row in exact]
    store = LanceStore(home.memory_dir, read_consistency_interval=None)
    table = store._tbl()
    results: dict[str, Any] = {"machine": machine_info(), "rows": args.rows, "variants": []}
    if args.flat:
        entry = {
            "variant": "exact (no index)",
            **measure(table, qv[:20], exact_ids[:20], (None, None, None), True),
        }
        print(json.dumps(entry), flush=True)
        results["variants"].append(entry)
    for spec in args.variants:
        kind, config = index_config(spec)
        before = index_dirs(store.table_path)
        load0 = os.getloadavg()[0]
        w0, c0 = time.perf_counter(), time.process_time()
        table.create_index("vector", config=config, replace=True)
        build = {
            "variant": spec,
            "build_s": round(time.perf_counter() - w0, 1),
            "build_cpu_s": round(time.process_time() - c0, 1),
            "index_bytes_per_row": round(
                sum(v for k, v in index_dirs(store.table_path).items() if k not in before) / args.rows, 1
            ),
            "load": [round(load0, 1), round(os.getloadavg()[0], 1)],
        }
        print(json.dumps(build), flush=True)
        grid_out = []
        for grid in GRIDS[kind]:
            entry = measure(table, qv, exact_ids, grid)
            print(json.dumps({"variant": spec, **entry}), flush=True)
            grid_out.append(entry)
        results["variants"].append({**build, "grid": grid_out})
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n")
    embedder.close()


if __name__ == "__main__":
    main()

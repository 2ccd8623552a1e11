"""Growth to a million chunks: build, index, ANN recall against exact search, warm recall, disk, appends.

For each size (default 10k, 100k, 1M) one synthetic memory under ``bench/.cache/scale/``:

- rows like ``bench/speed.py``'s corpus (varied LoCoMo and example texts, sessions of 40, rotating
  harness/repo/role, two years of timestamps); vectors ``normalize(base_i + a·base_j + noise)``,
  ``a`` uniform in [0, 0.7], from the real model's embeddings of the ~5.9k base texts, so they spread
  continuously (copies of one point would make every ANN look perfect or hopeless); bulk-written with
  ``table.add`` in 50k-row batches, then the product's ``LanceStore.optimize()`` (compaction, FTS,
  the ``session_id`` BTREE and, past 20k vectors, the ANN index with the product's parameters);
- queries: LoCoMo questions embedded with the real model (cached);
- figures: write, optimize and ANN build seconds; bytes per chunk on disk; the vector leg's
  recall@10 against exact search (numpy over the stored vectors) and its latency; warm ``recall``
  median (the CLI's and MCP's code, neighbours included) with cached query vectors, and again with
  the query embedded by the real model (``recall_warm_real_embedding_ms``: what a user sees); a
  Stop-hook-sized append (a fresh ``funes index FILE`` process: one new session of 3 turns) start
  to exit; and what 200 small appends do to warm recall before and after ``optimize()``, and with
  the product's bound (optimize once ``LanceStore.needs_upkeep()``, as hooks and the embedding
  worker do).

Usage::

    uv run python bench/scale.py                         # 10k, 100k, 1M (the 1M build takes a while)
    uv run python bench/scale.py --sizes 10000 --queries 50
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import speed
from _common import CACHE, CachedEmbedder, machine_info

from funes_core.home import Home
from funes_core.ingest.chunking import chunk_id
from funes_core.models.embed import DIM
from funes_core.read.handle import Memory
from funes_core.store.lance import ANN_MIN_ROWS, COLUMNS, LanceStore

FUNES = str(Path(sys.executable).parent / "funes")
BATCH = 50_000


def build(
    n: int,
    embedder: CachedEmbedder,
    bases: list[tuple[str, str, str]],
    base_vecs: np.ndarray,
    *,
    ann: bool = True,
) -> Home:
    """The ``n``-row corpus, built once and cached; ``ann=False`` leaves the vector column unindexed."""
    import pyarrow as pa

    root = CACHE / "scale" / (f"corpus-{n}" if ann else f"corpus-{n}-noann")
    home = Home(root)
    if (root / "built.json").exists():
        return home
    shutil.rmtree(root, ignore_errors=True)
    home.ensure()
    store = LanceStore(
        home.memory_dir, read_consistency_interval=None, ann_min_rows=ANN_MIN_ROWS if ann else n + 1
    )
    store.stamp_model(embedder.stamp)
    table = store._tbl()
    schema = table.schema
    rng, nrng = random.Random(11), np.random.default_rng(11)
    vocab = sorted({w.lower() for t, _, _ in bases for w in speed._WORD.findall(t)})
    start, span, sessions = datetime(2024, 1, 1, tzinfo=UTC), timedelta(days=730), -(-n // 40)
    vectors = np.lib.format.open_memmap(root / "vectors.npy", mode="w+", dtype=np.float32, shape=(n, DIM))
    t0 = time.perf_counter()
    for s0 in range(0, n, BATCH):
        idx = np.arange(s0, min(n, s0 + BATCH))
        bi = idx % len(bases)
        mix = nrng.uniform(0.0, 0.7, len(idx)).astype(np.float32)[:, None]
        v = base_vecs[bi] + mix * base_vecs[nrng.integers(0, len(bases), len(idx))]
        v += nrng.normal(0, 0.03, v.shape).astype(np.float32)
        v[idx < len(bases)] = base_vecs[bi[idx < len(bases)]]
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        vectors[idx] = v
        cols: dict[str, list[Any]] = {c: [] for c in COLUMNS if c != "vector"}
        for i in idx.tolist():
            s, seq = divmod(i, 40)
            text, block_type, tool = bases[i % len(bases)]
            if i >= len(bases):
                text = speed._vary(text, rng, vocab)
            sid, repo = f"bench-{s:07d}", speed.REPOS[s % 4]
            row = {
                "id": chunk_id(sid, f"t{seq}", 0, 0),
                "text": text,
                "session_id": sid,
                "workdir": f"-home-dev-src-{repo.split('/')[-1] or 'scratch'}",
                "turn_uuid": f"t{seq}",
                "parent_uuid": None,
                "seq": seq,
                "ts": (start + span * (s / sessions) + timedelta(seconds=20 * seq)).strftime(
                    "%Y-%m-%dT%H:%M:%SZ"
                ),
                "role": "user" if seq % 2 == 0 else "assistant",
                "block_type": block_type,
                "tool_name": tool or None,
                "source_path": f"bench/{sid}.funes.jsonl",
                "block_idx": 0,
                "split_idx": 0,
                "harness": speed.HARNESSES[s % 4],
                "repo": repo,
                "taint": "internal",
            }
            for c in cols:
                cols[c].append(row[c])
        arrays = {c: pa.array(cols[c], type=schema.field(c).type) for c in cols}
        arrays["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), DIM)
        table.add(pa.table({c: arrays[c] for c in schema.names}, schema=schema))
    vectors.flush()
    write_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    store.optimize()
    optimize_s = time.perf_counter() - t0
    info = {
        "rows": n,
        "write_s": round(write_s, 1),
        "optimize_s": round(optimize_s, 1),
        "ann": store.has_ann_index(),
    }
    (root / "built.json").write_text(json.dumps(info) + "\n")
    return home


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    best_s = np.full((len(queries), k), -9.0, np.float32)
    best_i = np.zeros((len(queries), k), np.int64)
    for s in range(0, vectors.shape[0], 100_000):
        sims = queries @ np.asarray(vectors[s : s + 100_000]).T
        top = np.argpartition(-sims, min(k, sims.shape[1] - 1), axis=1)[:, :k]
        cand_s = np.concatenate([best_s, np.take_along_axis(sims, top, 1)], 1)
        cand_i = np.concatenate([best_i, top + s], 1)
        order = np.argsort(-cand_s, 1)[:, :k]
        best_s, best_i = np.take_along_axis(cand_s, order, 1), np.take_along_axis(cand_i, order, 1)
    return best_i


def row_id(i: int) -> str:
    s, seq = divmod(int(i), 40)
    return chunk_id(f"bench-{s:07d}", f"t{seq}", 0, 0)


def median_ms(samples: list[float]) -> float:
    return round(1000 * statistics.median(samples), 1)


def measure(home: Home, embedder: CachedEmbedder, qs: list[str], qv: np.ndarray) -> dict[str, Any]:
    from funes_core.read.recall import RecallArgs, run

    out: dict[str, Any] = json.loads((home.root / "built.json").read_text())
    store = LanceStore(home.memory_dir)
    out["bytes_per_chunk"] = round(store.disk_bytes() / out["rows"])
    vectors = np.load(home.root / "vectors.npy", mmap_mode="r")
    exact = exact_top(vectors, qv, 10)
    recall10, latency = [], []
    for qi, q in enumerate(qv):
        t0 = time.perf_counter()
        hits = store.vector_search(q, 30)
        latency.append(time.perf_counter() - t0)
        got = {h.row.id for h in hits[:10]}
        recall10.append(len(got & {row_id(i) for i in exact[qi]}) / 10)
    out["vector_leg_recall10_vs_exact"] = round(statistics.mean(recall10), 4)
    out["vector_leg_ms"] = median_ms(latency)
    memory = Memory.of(store, embedder, home=home)
    run(memory, RecallArgs(query="warm up"))
    warm = []
    for q in qs:
        t0 = time.perf_counter()
        run(memory, RecallArgs(query=q))
        warm.append(time.perf_counter() - t0)
    out["recall_warm_ms"] = median_ms(warm)
    # As a user measures it: the query embedded by the real model (ONNX, warm session), on as many
    # other questions (the ones above are in LanceDB's caches now).
    real = Memory.of(store, embedder.model_itself(), home=home)
    run(real, RecallArgs(query="warm up"))
    warm, embed = [], []
    asked = set(qs)
    for q in [q for q in speed.queries(3 * len(qs)) if q not in asked][: len(qs)]:
        t0 = time.perf_counter()
        real.embed_query(q)
        embed.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        run(real, RecallArgs(query=q))
        warm.append(time.perf_counter() - t0)
    out["recall_warm_real_embedding_ms"] = median_ms(warm)
    out["query_embedding_ms"] = median_ms(embed)
    out["load"] = round(os.getloadavg()[0], 2)
    return out


def append_turns(folder: Path, session: str, turns: int = 3) -> Path:
    path = folder / f"{session}.funes.jsonl"
    lines = [
        json.dumps(
            {
                "session_id": session,
                "turn_uuid": f"u{i}",
                "seq": i,
                "ts": f"2026-12-01T10:00:{i:02d}Z",
                "role": "user" if i % 2 == 0 else "assistant",
                "harness": "claude",
                "blocks": [
                    {"block_type": "text", "text": f"hook append {session} turn {i}: flushed the cache"}
                ],
            }
        )
        for i in range(turns)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def appends(home: Home, embedder: CachedEmbedder, qs: list[str], count: int) -> dict[str, Any]:
    """A Stop-hook-sized ``funes index FILE`` at this size, then ``count`` small commits and optimize,
    then ``count`` more under the product's rule (optimize once ``needs_upkeep()``)."""
    from funes_core.ingest.worker import lock_path
    from funes_core.portable import try_lock
    from funes_core.read.recall import RecallArgs, run
    from funes_core.store.base import Row

    env = {**os.environ, "FUNES_HOME": str(home.root)}
    env.pop("FUNES_EMBEDDER", None)
    folder = home.root / "appends"
    folder.mkdir(exist_ok=True)
    hook = []
    # The embedding worker's lock is held meanwhile: each run finds "a worker running" and starts
    # none, so no worker embeds or optimizes during the measurements below (the hook's own time
    # does not include the worker, which runs detached).
    held = os.open(lock_path(home), os.O_RDWR | os.O_CREAT, 0o600)
    while not try_lock(held):  # a worker still embedding: wait for it
        time.sleep(0.1)
    for i in range(3):
        path = append_turns(folder, f"hook-{time.time_ns()}-{i}")
        t0 = time.perf_counter()
        subprocess.run([FUNES, "index", str(path)], env=env, check=True, capture_output=True)
        hook.append(time.perf_counter() - t0)
    store = LanceStore(home.memory_dir)
    memory = Memory.of(store, embedder, home=home)

    def warm() -> float:
        samples = []
        for q in qs[:20]:
            t0 = time.perf_counter()
            run(memory, RecallArgs(query=q))
            samples.append(time.perf_counter() - t0)
        return median_ms(samples)

    before = warm()
    writer = LanceStore(home.memory_dir, read_consistency_interval=None)

    def append(i: int) -> None:
        writer.add(
            [
                Row(
                    id=f"append-{time.time_ns()}-{i}",
                    text=f"small append {i}",
                    session_id=f"appends-{i}",
                    turn_uuid="u0",
                    seq=0,
                    ts="2026-12-01T11:00:00Z",
                    role="user",
                    harness="claude",
                    block_type="text",
                    block_idx=0,
                    split_idx=0,
                    vector=embedder.embed_query(f"small append {i}"),
                )
            ]
        )

    for i in range(count):
        append(i)
    after_appends = warm()
    t0 = time.perf_counter()
    writer.optimize()
    optimize_s = time.perf_counter() - t0
    after_optimize = warm()
    # The product's rule (hooks and the worker): optimize once the backlog reaches the bound.
    upkeep = 0
    for i in range(count, 2 * count):
        append(i)
        if writer.needs_upkeep():
            writer.optimize()
            upkeep += 1
    bounded = warm()
    os.close(held)
    return {
        "hook_index_s": round(statistics.median(hook), 2),
        "recall_warm_ms_before": before,
        f"recall_warm_ms_after_{count}_appends": after_appends,
        "optimize_s": round(optimize_s, 1),
        "recall_warm_ms_after_optimize": after_optimize,
        f"recall_warm_ms_after_{count}_appends_with_upkeep": bounded,
        "upkeep_optimizes": upkeep,
        "load": round(os.getloadavg()[0], 2),
    }


def inputs(
    queries: int,
) -> tuple[CachedEmbedder, list[tuple[str, str, str]], np.ndarray, list[str], np.ndarray]:
    """The embedder, the base texts and their vectors, ``queries`` questions and their vectors."""
    embedder = CachedEmbedder()
    bases = speed.base_texts()
    base_vecs = np.stack(embedder.embed_documents([t for t, _, _ in bases]))
    qs = speed.queries(queries)
    return embedder, bases, base_vecs, qs, np.stack([embedder.embed_query(q) for q in qs])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    embedder, bases, base_vecs, qs, qv = inputs(args.queries)
    results: dict[str, Any] = {"machine": machine_info(), "sizes": {}}
    for n in args.sizes:
        home = build(n, embedder, bases, base_vecs)
        entry = measure(home, embedder, qs, qv)
        if args.appends:
            entry["appends"] = appends(home, embedder, qs, args.appends)
        results["sizes"][str(n)] = entry
        print(json.dumps({"size": n, **entry}), flush=True)
    embedder.close()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""Bytes per chunk on disk, on real agent transcripts: where they go, before and after issue 18.

The real Claude Code sessions of ``shared/corpus/claude`` (13 transcripts, 1,769 turns, 3,261
chunks) are converted with the project's own converter and indexed twice, each into a fresh
memory, the way each version of funes did it:

- **before**: a float32 ``vector`` column, embeddings computed in the foreground run and committed
  every few seconds (``IndexOptions(embed="here")``, the old ``funes index``);
- **after**: a float16 column, text stored first, embeddings by the worker in committed, re-indexed
  batches (``funes index`` + the worker, here run in-process so the measure is deterministic).

Each memory is measured right after the run (old versions still inside the store's grace period)
and in its steady state (compacted, every old version removed: what the next index run leaves
once the grace period has passed). The vectors come from the hash test double: a vector is 384
numbers whatever model made it, so the sizes are the real model's (``--real`` uses the real model,
~3 min here). The live data is then split by column by writing each column alone.

    uv run python bench/disk.py [--real] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _agent import find_corpus
from _common import machine_info

from funes_core.home import Home
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.ingest.worker import WorkerOptions, run_worker
from funes_core.models.embed import Embedder, HashEmbedder, embedder_from_env
from funes_core.store import open_store
from funes_core.store.lance import LanceStore


def convert(corpus: Path, out: Path) -> None:
    """The corpus as turns files, through `funes integrations convert claude` (the real converter)."""
    argv = [sys.executable, "-m", "funes_core", "integrations", "convert", "claude", str(corpus), str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"conversion failed: {done.stderr.strip()}")


def breakdown(table: Path) -> dict[str, int]:
    """Bytes per kind of file in a Lance table folder; indexes split by kind via their uuid folder."""
    kinds: dict[str, int] = {}
    for dirpath, _dirs, files in os.walk(table):
        rel = Path(dirpath).relative_to(table)
        top = rel.parts[0] if rel.parts else ""
        for name in files:
            size = (Path(dirpath) / name).stat().st_size
            kinds[top or name] = kinds.get(top or name, 0) + size
    return kinds


def index_bytes(store: LanceStore) -> dict[str, int]:
    """Bytes of each live index (FTS on text, BTREE on session_id, ANN on vector)."""
    out: dict[str, int] = {}
    for ix in store._tbl().list_indices():
        label = {"text": "FTS (text)", "session_id": "BTREE (session_id)", "vector": "ANN (vector)"}.get(
            ix.columns[0], ix.columns[0]
        )
        out[label] = int(getattr(ix, "size_bytes", 0) or 0)
    return out


def steady(home: Home) -> None:
    """Compact and drop every old version (only safe because nothing else reads this memory)."""
    import warnings

    table = open_store(home=home)._tbl()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lancedb warns that cleanup_older_than=0 is unsafe with readers
        table.optimize(cleanup_older_than=timedelta(0))


def measure(home: Home, chunks: int) -> dict[str, Any]:
    store = open_store(home=home)
    files = breakdown(store.table_path)
    total = sum(files.values())
    live = int(store._tbl().stats()["total_bytes"])
    return {
        "total_bytes": total,
        "per_chunk": round(total / chunks),
        "files": {k: round(v / chunks, 1) for k, v in sorted(files.items(), key=lambda kv: -kv[1])},
        "live_data_per_chunk": round(live / chunks),
        "indexes_per_chunk": {k: round(v / chunks, 1) for k, v in index_bytes(store).items()},
        "versions": len(store._tbl().list_versions()),
    }


def build(turns: Path, root: Path, *, after: bool, embedder: Embedder) -> tuple[Home, int]:
    home = Home(root).ensure()
    if after:
        report = run_index(
            IndexOptions(path=turns, embed="none"), home=home, embedder=embedder, warn=lambda _: None
        )
        run_worker(
            home, embedder=embedder, options=WorkerOptions(background=False, linger=0), log=lambda _: None
        )
    else:
        LanceStore(home.memory_dir, vector_type="float32").stamp_model(embedder.stamp)
        report = run_index(
            IndexOptions(path=turns, embed="here"), home=home, embedder=embedder, warn=lambda _: None
        )
    assert open_store(home=home).stats().owed == 0
    return home, report.chunks


def columns(home: Home, scratch: Path) -> dict[str, float]:
    """Bytes per row of each column of the live table, each written alone in one fragment."""
    import lancedb

    table = open_store(home=home)._tbl().to_arrow()
    db = lancedb.connect(scratch)
    out: dict[str, float] = {}
    for name in table.column_names:
        db.create_table(name, table.select([name]))
        size = sum(f.stat().st_size for f in (scratch / f"{name}.lance" / "data").iterdir())
        out[name] = round(size / table.num_rows, 1)
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--real", action="store_true", help="embed with the real model (same sizes, slower)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    embedder: Embedder = embedder_from_env() if args.real else HashEmbedder()
    results: dict[str, Any] = {"machine": machine_info(), "embedder": embedder.stamp.model}
    with tempfile.TemporaryDirectory(prefix="funes-disk-") as tmp:
        work = Path(tmp)
        convert(find_corpus() / "claude", work / "turns")
        for label, after in (("before", False), ("after", True)):
            home, chunks = build(work / "turns", work / label, after=after, embedder=embedder)
            right_after = measure(home, chunks)
            steady(home)
            results[label] = {"chunks": chunks, "right_after": right_after, "steady": measure(home, chunks)}
            results[label]["columns_per_row"] = columns(home, work / f"{label}-columns")
            shutil.rmtree(work / f"{label}-columns", ignore_errors=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    render(results)
    return results


def render(results: dict[str, Any]) -> None:
    """The results as the Markdown tables of docs/benchmarks.md."""
    before, after = results["before"], results["after"]
    rows = [
        ("chunks", before["chunks"], after["chunks"]),
        (
            "total, right after the run (B/chunk)",
            before["right_after"]["per_chunk"],
            after["right_after"]["per_chunk"],
        ),
        (
            "versions kept right after the run",
            before["right_after"]["versions"],
            after["right_after"]["versions"],
        ),
        ("total, steady state (B/chunk)", before["steady"]["per_chunk"], after["steady"]["per_chunk"]),
    ]
    for kind, label in (
        ("data", "data files (the columns)"),
        ("_indices", "index files"),
        ("_versions", "version manifests"),
        ("_transactions", "transaction files"),
        ("_deletions", "deletion files"),
    ):
        b = before["steady"]["files"].get(kind, 0)
        a = after["steady"]["files"].get(kind, 0)
        if b or a:
            rows.append((f"  {label}", round(b), round(a)))
        if kind == "_indices":  # each index, as LanceDB sizes it
            bi, ai = before["steady"]["indexes_per_chunk"], after["steady"]["indexes_per_chunk"]
            rows.extend(
                (f"    {name}", bi.get(name, 0), ai.get(name, 0)) for name in sorted(set(bi) | set(ai))
            )
    print("| bytes per chunk | before (float32, foreground) | after (float16, worker) |")
    print("| --- | --- | --- |")
    for name, b, a in rows:
        print(f"| {name} | {b:,} | {a:,} |")
    print()
    print("| column (alone, one fragment) | before B/row | after B/row |")
    print("| --- | --- | --- |")
    for col, b in before["columns_per_row"].items():
        print(f"| {col} | {b:,} | {after['columns_per_row'].get(col, 0):,} |")
    m = results["machine"]
    print(
        f"\n{m['cpu']}, {m['cores']} cores, {m['date']}, load {m['load_avg']}; vectors: {results['embedder']}"
    )


if __name__ == "__main__":
    main()

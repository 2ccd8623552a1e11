"""Remote memories: push throughput, cold and warm recall against S3 over ~50 ms of round trip.

The store is moto's S3 server on 127.0.0.1 (as in the tests), behind a small asyncio TCP proxy
that delays every byte by ``--delay-ms`` each way (default 25 ms, so ~50 ms per round trip),
without throttling throughput: a stand-in for a bucket in a nearby region.

The corpus: ``--chunks`` rows (default 100k) made by ``bench/speed.py``'s generator from real
text (LoCoMo turns and the example sessions, varied), with **synthetic vectors** (random unit
vectors per base text plus noise): what is timed (upload, listing, downloads, search) does not
depend on what the vectors mean. It is stamped with the real model, so ``funes recall`` embeds
the query with the real model, as a user's would.

Figures (each beside the 1-minute load average):

- push: ``funes push`` of the whole memory into an empty remote (secret gate included), chunks/s;
- first read: a fresh ``funes recall --memory bench`` with an empty cache (the mirror is filled);
- cold: a fresh ``funes recall --memory bench`` process with the cache filled; it re-lists the
  remote once (``FUNES_REMOTE_REFRESH=0``), so the round trips are paid;
- warm: ``recall`` in one process (``funes_core.read.recall.run``), refresh period not elapsed,
  with the number of requests the proxy saw (the claim: zero), alternating query by query with a
  local warm recall of the same corpus (``warm_ratio_to_local``);
- local cold and warm on the same corpus, for the ratio.

- ``--policies``: push index upkeep side by side, on two buckets behind the same proxy, at the same
  load: *before* (what ``funes push`` did until the upkeep policy: every push ended with one full
  ``optimize`` of the remote, emulated as ``push(reindex=False)`` followed by that ``optimize``)
  and *after* (the threshold policy of ``share.push.upkeep``), for a first push of the corpus and
  a follow-up push of 300 new rows; requests and bytes each way as the proxy saw them.

Usage::

    uv run python bench/remote.py                  # 100k chunks
    uv run python bench/remote.py --chunks 1000000 --runs 3
    uv run python bench/remote.py --chunks 30000 --policies
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import CACHE, machine_info, report, start_moto, stop_moto

from funes_core.home import Home

FUNES = str(Path(sys.executable).parent / "funes")
#: Warm recalls, measured alternately: the remote (through its mirror) and the local memory.
WARM = (("warm", "bench"), ("local_warm", None))
QUERIES = [
    "what did we decide about the storage engine",
    "the flaky test in the parser",
    "when is the next trip planned",
    "sqlite wal checkpoint starvation",
    "how do I rotate the api key",
]


class DelayProxy:
    """TCP proxy on 127.0.0.1: each chunk is forwarded ``delay`` seconds after it arrived, in order.

    Latency without a bandwidth cap: a burst is delayed, not spread out. Counts HTTP request lines
    seen from the client side (a request's first line starts with the method).
    """

    def __init__(self, target_port: int, delay_s: float) -> None:
        self.target = target_port
        self.delay = delay_s
        self.requests = 0
        self.bytes_up = 0
        self.bytes_down = 0
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.server = self.loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()
            self.loop.run_forever()

        threading.Thread(target=run, daemon=True).start()
        ready.wait()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, count: bool) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def send() -> None:
            while True:
                arrived, data = await queue.get()
                wait = arrived + self.delay - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    writer.close()
                    return
                writer.write(data)
                try:
                    await writer.drain()
                except OSError:
                    return

        sender = asyncio.ensure_future(send())
        while True:
            try:
                data = await reader.read(1 << 16)
            except OSError:
                data = b""
            if count:
                self.bytes_up += len(data)
            else:
                self.bytes_down += len(data)
            if count and data:
                self.requests += sum(
                    1
                    for line in data.split(b"\r\n")
                    if line.split(b" ", 1)[0] in (b"GET", b"PUT", b"HEAD", b"POST", b"DELETE")
                )
            queue.put_nowait((time.monotonic(), data))
            if not data:
                break
        await sender

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(self._pump(client_r, server_w, True), self._pump(server_r, client_w, False))


def build_corpus(n: int) -> Home:
    """``n`` rows (speed.py's generator, synthetic vectors), under bench/.cache/remote/."""
    from funes_core.models.embed import DIM, MODEL_NAME
    from funes_core.models.vectors import ModelStamp
    from funes_core.store import open_store

    root = CACHE / "remote" / f"corpus-{n}"
    home = Home(root)
    if (root / "done.json").exists():
        # A corpus cached before the store's vector index changed gets the current one (optimize
        # rebuilds an index of an older scheme; on an up-to-date corpus it does next to nothing),
        # so the local figures compare with a remote that push indexes the current way.
        open_store(home=home, read_consistency_interval=None).optimize()
        return home
    shutil.rmtree(root, ignore_errors=True)
    bases, vectors = base_vectors()
    home.ensure()
    store = open_store(home=home, create=True, read_consistency_interval=None)
    store.stamp_model(ModelStamp(MODEL_NAME, DIM))
    t = time.perf_counter()
    step = 50_000
    for start in range(0, n, step):
        store.add(corpus_rows(min(step, n - start), start, bases, vectors))
        print(f"  corpus {n}: {min(start + step, n)} rows written", file=sys.stderr)
    store.optimize()
    (root / "done.json").write_text(json.dumps({"chunks": store.count(), "build_s": time.perf_counter() - t}))
    return home


def base_vectors() -> tuple[list[tuple[str, str, str]], np.ndarray]:
    """speed.py's base texts and one random unit vector for each (the synthetic vectors)."""
    from speed import base_texts

    from funes_core.models.embed import DIM

    bases = base_texts()
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(len(bases), DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return bases, vectors


def corpus_rows(n: int, start: int, bases: list[tuple[str, str, str]], vectors: np.ndarray) -> list[Any]:
    """``n`` rows of speed.py's generator whose ids and sessions are unique to ``start``."""
    from dataclasses import replace

    from speed import generate_rows

    from funes_core.ingest.chunking import chunk_id

    return [
        replace(
            r,
            id=chunk_id(f"{r.session_id}-{start}", r.turn_uuid, 0, 0),
            session_id=f"{r.session_id}-{start}",
        )
        for r in generate_rows(n, bases, vectors, seed=11 + start)
    ]


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def timed_cli(args: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    out = subprocess.run([FUNES, *args], env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(f"funes {' '.join(args)} failed: {out.stderr.strip()}")
    return dt


def push_policies(run_home: Path, proxy: DelayProxy, s3_port: int, chunks: int) -> dict[str, Any]:
    """Push index upkeep, before and after the threshold policy, side by side (see the docstring)."""
    import boto3

    from funes_core.share.push import _retry, open_remote_store, push
    from funes_core.share.remotes import load_remotes
    from funes_core.store import open_store

    home = Home(run_home)
    s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{s3_port}", region_name="us-east-1")
    for variant in ("before", "after"):
        s3.create_bucket(Bucket=f"bench-{variant}")
        add_remote(variant, f"s3://bench-{variant}/team", proxy.port, run_home)
    remotes = load_remotes(home)

    def one(variant: str) -> dict[str, Any]:
        remote = remotes[variant]
        load, r0, up0, down0 = loadavg(), proxy.requests, proxy.bytes_up, proxy.bytes_down
        t = time.perf_counter()
        if variant == "before":
            report = push(remote, home, batch=5000, reindex=False)
            upload = time.perf_counter() - t
            store = open_remote_store(remote, write=True)
            _retry(store.optimize, store)  # what every push ran before
        else:
            report = push(remote, home, batch=5000)
            upload = time.perf_counter() - t - (report.upkeep.seconds if report.upkeep else 0.0)
        total = time.perf_counter() - t
        out = {
            "published": report.published,
            "seconds": round(total, 1),
            "upload_s": round(upload, 1),
            "index_s": round(total - upload, 1),
            "chunks_per_s": round(report.published / total, 1) if report.published else None,
            "requests": proxy.requests - r0,
            "mb_up": round((proxy.bytes_up - up0) / 1e6, 1),
            "mb_down": round((proxy.bytes_down - down0) / 1e6, 1),
            "upkeep": "optimize" if variant == "before" else report.upkeep.action if report.upkeep else None,
            "load": load,
        }
        print(f"{variant}: {out}", file=sys.stderr)
        return out

    results: dict[str, Any] = {"first": {}, "follow_up": {}}
    for variant in ("before", "after"):
        results["first"][variant] = one(variant)
    bases, vectors = base_vectors()
    local = open_store(home=home, read_consistency_interval=None)
    local.add(corpus_rows(300, chunks, bases, vectors))
    for variant in ("before", "after"):
        results["follow_up"][variant] = one(variant)
    return results


def add_remote(name: str, uri: str, port: int, run_home: Path) -> None:
    env = {**os.environ, "FUNES_HOME": str(run_home)}
    options = [f"endpoint=http://127.0.0.1:{port}", "allow_http=true", "region=us-east-1"]
    args = [FUNES, "remote", "add", name, uri]
    for option in options:
        args += ["--option", option]
    subprocess.run(args, env=env, check=True, capture_output=True)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--delay-ms", type=float, default=25.0, help="one-way delay (round trip is twice)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    parser.add_argument("--policies", action="store_true", help="push index upkeep, before and after")
    args = parser.parse_args(argv)

    home = build_corpus(args.chunks)
    work = Path(tempfile.mkdtemp(prefix="funes-bench-remote-"))
    proc, port = start_moto(work / "moto.log")
    proxy = DelayProxy(port, args.delay_ms / 1000)
    creds = {
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    os.environ.update(creds)
    results: dict[str, Any] = {
        "machine": machine_info(),
        "chunks": args.chunks,
        "delay_ms_each_way": args.delay_ms,
    }
    try:
        import boto3

        boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1").create_bucket(
            Bucket="bench-memory"
        )
        # Work on a copy of the corpus' home so the cache and remotes file start empty every run.
        run_home = work / "home"
        shutil.copytree(home.root, run_home)
        for leftover in ("cache/remotes", "remotes.toml", "purge.log", "pushed"):
            p = run_home / leftover
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        env = {**os.environ, **creds, "FUNES_HOME": str(run_home)}
        if args.policies:
            results["policies"] = push_policies(run_home, proxy, port, args.chunks)
            return report(results, args.out)
        add_remote("bench", "s3://bench-memory/team", proxy.port, run_home)
        load = loadavg()
        push_s = timed_cli(["push", "bench", "--batch", "5000"], env)
        results["push"] = {
            "seconds": round(push_s, 1),
            "chunks_per_s": round(args.chunks / push_s),
            "requests": proxy.requests,
            "load": load,
        }
        print(f"push: {results['push']}", file=sys.stderr)
        env_cold = {**env, "FUNES_REMOTE_REFRESH": "0"}
        load = loadavg()
        proxy.requests = 0
        first = timed_cli(["recall", QUERIES[0], "--memory", "bench"], env_cold)
        results["first_read"] = {"seconds": round(first, 2), "requests": proxy.requests, "load": load}
        colds = []
        reqs = []
        local_colds = []
        load = loadavg()
        for i in range(args.runs):  # remote and local alternate, so load drift hits both alike
            proxy.requests = 0
            colds.append(timed_cli(["recall", QUERIES[i % len(QUERIES)], "--memory", "bench"], env_cold))
            reqs.append(proxy.requests)
            local_colds.append(timed_cli(["recall", QUERIES[i % len(QUERIES)]], env))
        results["cold"] = {
            "median_s": round(statistics.median(colds), 2),
            "max_s": round(max(colds), 2),
            "requests_each": reqs,
            "load": load,
        }
        results["local_cold"] = {"median_s": round(statistics.median(local_colds), 2)}
        results["cold_ratio_to_local"] = round(statistics.median(colds) / statistics.median(local_colds), 2)
        # Warm: in this process, refresh period not elapsed.
        os.environ.update({"FUNES_HOME": str(run_home), "FUNES_REMOTE_REFRESH": "3600"})
        from funes_core.read.handle import Memory
        from funes_core.read.recall import RecallArgs
        from funes_core.read.recall import run as recall_run

        # The remote and the local memory alternate query by query, so load drift hits both alike;
        # the proxy's count covers the remote's recalls only (a local one never reaches it).
        memories = {label: Memory.resolve(spec, home=Home(run_home)) for label, spec in WARM}
        for memory in memories.values():
            recall_run(memory, RecallArgs(query="warm up", k=8))
        proxy.requests = 0
        load = loadavg()
        samples: dict[str, list[float]] = {label: [] for label in memories}
        for i in range(args.runs * 4):
            for label, memory in memories.items():
                t = time.perf_counter()
                recall_run(memory, RecallArgs(query=QUERIES[i % len(QUERIES)], k=8))
                samples[label].append(time.perf_counter() - t)
        for label, times in samples.items():
            results[label] = {
                "median_ms": round(1000 * statistics.median(times), 1),
                "p95_ms": round(1000 * sorted(times)[int(0.95 * (len(times) - 1))], 1),
                "requests": proxy.requests if label == "warm" else 0,
                "load": load,
            }
        results["warm_ratio_to_local"] = round(
            statistics.median(samples["warm"]) / statistics.median(samples["local_warm"]), 2
        )
        mirror = run_home / "cache" / "remotes" / "bench"
        results["mirror_bytes"] = sum(p.stat().st_size for p in mirror.rglob("*") if p.is_file())
        # What a plain copy of the bucket (the mirror before it read the manifest) would hold.
        s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1")
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket="bench-memory")
        results["bucket_bytes"] = sum(o["Size"] for page in pages for o in page.get("Contents", []))
    finally:
        stop_moto(proc, work)
    return report(results, args.out)


if __name__ == "__main__":
    main()

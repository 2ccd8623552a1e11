"""Team mode under load: ``funes serve --http`` replicas over one bucket memory, 20 clients for 60 s.

The bucket is moto's S3 server on 127.0.0.1 (as in the tests), holding ``--chunks`` rows (default
100k) of ``bench/remote.py``'s corpus (speed.py's generator from real text, synthetic vectors,
stamped with the real model: each recall embeds its query with the real model), pushed with
``funes push`` (secret gate, upload, the vector index built on the bucket). Each replica has its
own ``$FUNES_HOME`` and mirror (no shared state but the bucket), a bearer token, ``--rate 0``.

The load: ``--clients`` threads (default 20), each with its own keep-alive HTTP connection, send
``POST /v1/recall`` (``k`` 5, the five queries of bench/remote.py in turn) back to back for
``--seconds`` (default 60), first all to one replica, then split evenly over two (what a
round-robin load balancer does). Reported per phase: requests, errors (any status but 200, or a
transport error), throughput, p50 and p95 latency as the clients saw it, each replica's RSS after,
and the 1-minute load average before and after. The clients run on the same machine and share its
cores with the replicas: on a 2-core machine they cost the servers CPU, which the figures include.

Usage::

    uv run python bench/serve_http.py                    # 100k chunks, 20 clients, 60 s
    uv run python bench/serve_http.py --chunks 20000 --seconds 20
"""

from __future__ import annotations

import argparse
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import free_port, machine_info, report, start_moto, stop_moto
from remote import QUERIES, add_remote, build_corpus, loadavg

FUNES = [sys.executable, "-m", "funes_core"]
CREDS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def start_replica(home: Path, token_file: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """One ``funes serve --http`` on a free loopback port, answering; (process, base URL)."""
    import httpx

    port = free_port()
    env = {**os.environ, **CREDS, "FUNES_HOME": str(home), "FUNES_STATS": "off"}
    serve = ["serve", "--http", f"127.0.0.1:{port}", "--memory", "bench", "--tokens", str(token_file)]
    proc = subprocess.Popen(
        [*FUNES, *serve, "--rate", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"replica exited: {log.read_text(errors='replace')}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError("replica never answered")


def rss_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def load_phase(urls: list[str], token: str, clients: int, seconds: float) -> dict[str, Any]:
    """``clients`` threads against ``urls`` (client i on urls[i % len]) for ``seconds``."""
    import httpx

    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    start = threading.Event()
    stop_at = [0.0]

    def client(i: int) -> None:
        url = urls[i % len(urls)]
        with httpx.Client(headers={"authorization": f"Bearer {token}"}, timeout=60) as http:
            start.wait()
            n = i
            while time.monotonic() < stop_at[0]:
                body = {"query": QUERIES[n % len(QUERIES)], "k": 5}
                t = time.perf_counter()
                try:
                    reply = http.post(f"{url}/v1/recall", json=body)
                    ok = reply.status_code == 200
                    why = f"HTTP {reply.status_code}"
                except httpx.HTTPError as exc:
                    ok, why = False, type(exc).__name__
                dt = time.perf_counter() - t
                with lock:
                    (latencies if ok else errors).append(dt if ok else why)  # type: ignore[arg-type]
                n += 1

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    load_before = loadavg()
    began = time.monotonic()
    stop_at[0] = began + seconds
    start.set()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began
    ordered = sorted(latencies)
    return {
        "replicas": len(urls),
        "clients": clients,
        "seconds": round(elapsed, 1),
        "requests": len(latencies) + len(errors),
        "errors": len(errors),
        "error_kinds": sorted(set(errors)),
        "throughput_rps": round(len(latencies) / elapsed, 1),
        "p50_ms": round(1000 * statistics.median(ordered), 1) if ordered else None,
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 1) if ordered else None,
        "load_before": load_before,
        "load_after": loadavg(),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)

    home = build_corpus(args.chunks)
    work = Path(tempfile.mkdtemp(prefix="funes-bench-serve-http-"))
    proc, port = start_moto(work / "moto.log")
    os.environ.update(CREDS)
    results: dict[str, Any] = {"machine": machine_info(), "chunks": args.chunks}
    replicas: list[subprocess.Popen[bytes]] = []
    try:
        import boto3

        s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1")
        s3.create_bucket(Bucket="bench-memory")
        publisher = work / "publisher"
        shutil.copytree(home.root, publisher)
        for leftover in ("cache/remotes", "remotes.toml", "pushed"):
            p = publisher / leftover
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        add_remote("bench", "s3://bench-memory/team", port, publisher)
        env = {**os.environ, "FUNES_HOME": str(publisher)}
        t = time.perf_counter()
        load = loadavg()
        subprocess.run([*FUNES, "push", "bench", "--batch", "5000"], env=env, check=True, capture_output=True)
        results["push"] = {"seconds": round(time.perf_counter() - t, 1), "load": load}
        print(f"push: {results['push']}", file=sys.stderr)
        token_file = work / "tokens.json"
        from funes_core.serve.tokens import add_token

        token = add_token(token_file, "bench")
        urls = []
        t = time.perf_counter()
        for i in range(2):
            rhome = work / f"replica-{i}"
            add_remote("bench", "s3://bench-memory/team", port, rhome)
            rproc, url = start_replica(rhome, token_file, work / f"replica-{i}.log")
            replicas.append(rproc)
            urls.append(url)
        results["replica_start_s"] = round((time.perf_counter() - t) / 2, 1)
        mirror = work / "replica-0" / "cache" / "remotes" / "bench"
        results["mirror_bytes"] = sum(p.stat().st_size for p in mirror.rglob("*") if p.is_file())
        results["rss_idle_mb"] = [round(rss_of(r.pid) / 2**20) for r in replicas]
        for phase, targets in (("one_replica", urls[:1]), ("two_replicas", urls)):
            results[phase] = load_phase(targets, token, args.clients, args.seconds)
            results[phase]["rss_after_mb"] = [round(rss_of(r.pid) / 2**20) for r in replicas[: len(targets)]]
            print(f"{phase}: {results[phase]}", file=sys.stderr)
        one, two = results["one_replica"]["throughput_rps"], results["two_replicas"]["throughput_rps"]
        results["scaling"] = round(two / one, 2) if one else None
    finally:
        for r in replicas:
            r.terminate()
        for r in replicas:
            try:
                r.wait(timeout=30)
            except subprocess.TimeoutExpired:
                r.kill()
        stop_moto(proc, work)
    return report(results, args.out)


if __name__ == "__main__":
    main()

"""Five agent sessions on one memory: five in-process ``funes mcp`` servers, or five fronts + one service.

The same run measures both process models side by side, on one synthetic memory built (and cached)
by ``bench/scale.py``'s builder with the real model's vectors:

- **in-process** (``FUNES_SERVICE=off``, what every session did before the memory service): five
  ``funes mcp`` processes, each answering ``--recalls`` recall tool calls; their RSS summed, and
  each session's first recall (cold: imports and index loads);
- **service**: ``funes serve --start``, one warm-up recall, then five ``funes mcp`` fronts doing the
  same; the fronts' RSS and the service's, and each new session's first recall with the service warm;
- **fresh CLI**: ``funes recall QUERY`` as a new process, start to exit, with the service warm and
  with ``--no-service``.

Sessions run one after another (the machine has two cores; concurrent sessions would measure the
scheduler), each process is kept alive until all five have answered, so the RSS figures are the five
held at once. Queries are LoCoMo questions and the example sessions' topics (``mcp_startup.QUERIES``),
each session's rotated so no two sessions ask in the same order. Usage::

    uv run python bench/serve.py                       # 100k chunks, 100 recalls per session
    uv run python bench/serve.py --size 10000 --recalls 20 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_info
from mcp_startup import QUERIES

FUNES = str(Path(sys.executable).parent / "funes")
MB = 1024 * 1024


class Session:
    """One ``funes mcp`` process spoken to over stdio, request by request."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [FUNES, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self._id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        self.notify("notifications/initialized")

    def notify(self, method: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._id += 1
        frame = {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("funes mcp exited")
            message = json.loads(line)
            if message.get("id") == self._id:
                if "error" in message or message.get("result", {}).get("isError"):
                    raise RuntimeError(f"{method} failed: {str(message)[:300]}")
                return dict(message["result"])

    def recall(self, query: str) -> float:
        t0 = time.perf_counter()
        self.request("tools/call", {"name": "recall", "arguments": {"query": query}})
        return (time.perf_counter() - t0) * 1000

    def rss(self) -> int:
        return int(psutil.Process(self.proc.pid).memory_info().rss)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(120)


def run_sessions(env: dict[str, str], count: int, recalls: int) -> dict[str, Any]:
    sessions: list[Session] = []
    first: list[float] = []
    warm: list[float] = []
    for s in range(count):
        session = Session(env)
        sessions.append(session)
        queries = QUERIES[s % len(QUERIES) :] + QUERIES[: s % len(QUERIES)]
        first.append(session.recall(queries[0]))
        for i in range(1, recalls):
            warm.append(session.recall(f"{queries[i % len(queries)]} {i}"))
    rss = [s.rss() for s in sessions]
    for session in sessions:
        session.close()
    return {
        "first_recall_ms": [round(x, 1) for x in first],
        "first_recall_ms_median": round(statistics.median(first), 1),
        "warm_recall_ms_median": round(statistics.median(warm), 1) if warm else None,
        "rss_mb_each": [round(r / MB, 1) for r in rss],
        "rss_mb_sum": round(sum(rss) / MB, 1),
    }


def fresh_cli(env: dict[str, str], runs: int, *extra: str, start: int = 0) -> float:
    times = []
    for i in range(start, start + runs):
        t0 = time.perf_counter()
        subprocess.run(
            [FUNES, "recall", QUERIES[i % len(QUERIES)], *extra], env=env, capture_output=True, check=True
        )
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 1)


def service_rss(root: Path) -> int:
    info = json.loads((root / "run" / "serve.json").read_text())
    return int(psutil.Process(info["pid"]).memory_info().rss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--recalls", type=int, default=100)
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--cli-runs", type=int, default=10)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--only-cli",
        action="store_true",
        help="measure only the fresh CLI process (service warm, then --no-service), skipping the sessions",
    )
    args = parser.parse_args()

    import scale

    embedder, bases, base_vecs, _qs, _qv = scale.inputs(1)
    home = scale.build(args.size, embedder, bases, base_vecs)
    embedder.close()
    base = {k: v for k, v in os.environ.items() if not k.startswith("FUNES_")}
    env = {**base, "FUNES_HOME": str(home.root)}
    subprocess.run([FUNES, "serve", "--stop"], env=env, capture_output=True, check=False)

    results: dict[str, Any] = {"machine": machine_info(), "size": args.size, "recalls": args.recalls}
    if args.only_cli:
        subprocess.run([FUNES, "serve", "--start", "--idle", "0"], env=env, capture_output=True, check=True)
        subprocess.run([FUNES, "recall", "warm up the service"], env=env, capture_output=True, check=True)
        # Side by side in one run, alternating, so the machine's load weighs on both alike.
        served, alone = [], []
        for i in range(args.cli_runs):
            served.append(fresh_cli(env, 1, start=i))
            alone.append(fresh_cli(env, 1, "--no-service", start=i))
        subprocess.run([FUNES, "serve", "--stop"], env=env, capture_output=True, check=False)
        results["cli_with_service_ms_median"] = round(statistics.median(served), 1)
        results["cli_no_service_ms_median"] = round(statistics.median(alone), 1)
        results["load_after"] = round(os.getloadavg()[0], 2)
        print(json.dumps(results), flush=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n")
        return
    results["in_process"] = run_sessions({**env, "FUNES_SERVICE": "off"}, args.sessions, args.recalls)
    results["cli_no_service_ms_median"] = fresh_cli(env, max(3, args.cli_runs // 3), "--no-service")
    print(json.dumps({"in_process": results["in_process"]}), flush=True)

    subprocess.run([FUNES, "serve", "--start", "--idle", "0"], env=env, capture_output=True, check=True)
    subprocess.run([FUNES, "recall", "warm up the service"], env=env, capture_output=True, check=True)
    served = run_sessions(env, args.sessions, args.recalls)
    served["service_rss_mb"] = round(service_rss(home.root) / MB, 1)
    served["total_rss_mb"] = round(served["rss_mb_sum"] + served["service_rss_mb"], 1)
    results["service"] = served
    results["cli_with_service_ms_median"] = fresh_cli(env, args.cli_runs)
    subprocess.run([FUNES, "serve", "--stop"], env=env, capture_output=True, check=False)
    results["load_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps({k: v for k, v in results.items() if k != "in_process"}), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

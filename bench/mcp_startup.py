"""MCP start-up and memory: spawn → initialize + tools/list answered, and RSS after 100 recalls.

Side by side in one run (ratios are what to compare on a shared machine; the 1-minute load average
is printed with every figure):

- handshake: ``funes mcp`` (the stdlib front) and ``FUNES_MCP_FRONT=0 funes mcp`` (the SDK server
  alone), each spawned ``--runs`` times; the time from spawn until the reply to ``initialize`` and to
  ``tools/list`` (sent right after ``notifications/initialized``) is read off the pipe;
- memory: for each memory given with ``--memory`` (e.g. the 10k and 100k corpora ``bench/scale.py``
  builds under ``bench/.cache/scale/``), the server's VmRSS / RssAnon / RssFile / threads after the
  handshake, after the first recall and after 101 recalls over raw JSON-RPC, and the median warm
  recall as the client sees it, for the shipped server and for each memory lever turned off or on
  (:data:`LEVERS`): one server process per lever, the same memory, the same queries.

Usage::

    uv run python bench/mcp_startup.py --runs 15
    uv run python bench/mcp_startup.py --runs 0 --memory bench/.cache/scale/corpus-10000 \\
        bench/.cache/scale/corpus-100000
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

FUNES = str(Path(sys.executable).parent / "funes")
NO_SDK = str(Path(__file__).with_name("_mcp_nosdk.py"))

#: A prelude that replaces the server's glibc settings (the malloc arenas and the mmap threshold).
_MALLOPT = (
    "import funes_core.faces.mcp as m\n"
    "from funes_core import portable\n"
    "def lean():\n"
    "    portable.limit_malloc_arenas({arena})\n"
    "    portable.set_mmap_threshold({mmap})\n"
    "m.lean_malloc = lean"
)

#: A prelude that trims once the server has been idle for half a second instead of after each call.
_IDLE_TRIM = """
import threading, time
import funes_core.faces.mcp as m
from funes_core import portable
state = {"due": None}
cond = threading.Condition()
def release():
    with cond:
        state["due"] = time.monotonic() + 0.5
        cond.notify()
def run():
    while True:
        with cond:
            while state["due"] is None or state["due"] > time.monotonic():
                cond.wait(None if state["due"] is None else state["due"] - time.monotonic())
            state["due"] = None
        portable.trim_malloc()
threading.Thread(target=run, daemon=True).start()
m.release_memory = release
"""

#: Memory levers, each measured in its own server process: key -> (what it is, extra environment,
#: Python run before the server starts, or "nosdk" for the no-SDK floor). Each switches one lever
#: of the shipped server off (or one candidate on); everything else is as shipped.
LEVERS: dict[str, tuple[str, dict[str, str], str | None]] = {
    "shipped": ("shipped", {}, None),
    "namespace": ("namespace models imported (FUNES_LAZY_NAMESPACE=0)", {"FUNES_LAZY_NAMESPACE": "0"}, None),
    "graph": (
        "embedding table widened at load (no graph edit)",
        {},
        "import funes_core.models.embed as e; e._OnnxModel.graph = lambda self: self.model_file",
    ),
    "malloc": ("glibc malloc defaults (FUNES_LEAN_MALLOC=0)", {"FUNES_LEAN_MALLOC": "0"}, None),
    "mimalloc": (
        "pyarrow allocates from its wheel's default pool, mimalloc (ARROW_DEFAULT_MEMORY_POOL=mimalloc)",
        {"ARROW_DEFAULT_MEMORY_POOL": "mimalloc"},
        None,
    ),
    "nosdk": ("no MCP SDK (a stdlib tools/call loop: the floor, not a product)", {}, "nosdk"),
    "arena1": ("one malloc arena instead of two", {}, _MALLOPT.format(arena=1, mmap=256 * 1024)),
    "mmap4m": ("fixed mmap threshold 4 MiB instead of 256 KiB", {}, _MALLOPT.format(arena=2, mmap=4 << 20)),
    "mmap16m": (
        "fixed mmap threshold 16 MiB instead of 256 KiB",
        {},
        _MALLOPT.format(arena=2, mmap=16 << 20),
    ),
    "idle16m": (
        "fixed mmap threshold 16 MiB, trim after 0.5 s idle instead of after each call",
        {},
        _MALLOPT.format(arena=2, mmap=16 << 20) + "\n" + _IDLE_TRIM,
    ),
    "idledyn": (
        "glibc's dynamic mmap threshold, trim after 0.5 s idle",
        {},
        _MALLOPT.format(arena=2, mmap=0).replace("        libc.mallopt(-3, 0)\n", "") + "\n" + _IDLE_TRIM,
    ),
    "lancethreads": (
        "lance pools: 4 I/O threads, 2 CPU threads (LANCE_IO_THREADS, LANCE_CPU_THREADS)",
        {"LANCE_IO_THREADS": "4", "LANCE_CPU_THREADS": "2"},
        None,
    ),
}
#: How long the server is left idle after the recalls before the "idle" figures are read.
IDLE_S = 2.0
#: What runs unless ``--levers`` says otherwise: the shipped server, each shipped lever off, the
#: no-SDK floor. The others are candidates measured once and not shipped (docs/benchmarks.md).
DEFAULT_LEVERS = ["shipped", "namespace", "graph", "malloc", "mimalloc", "nosdk"]
QUERIES = [
    "What did Caroline research for her painting?",
    "When did Melanie go camping with her kids?",
    "why did we choose Postgres over SQLite",
    "the flaky flush test on the ARM runner",
    "sensor readings for tidepool",
]


def handshake(env: dict[str, str]) -> tuple[float, float]:
    """Seconds from spawn to the initialize reply and to the tools/list reply."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [FUNES, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    }
    for frame in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ):
        proc.stdin.write(json.dumps(frame).encode() + b"\n")
    proc.stdin.flush()
    seen: dict[int, float] = {}
    while len(seen) < 2:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        message = json.loads(line)
        if message.get("id") in (1, 2):
            seen[message["id"]] = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(60)
    proc.stdout.close()
    return seen[1], seen[2]


def _status(pid: int) -> dict[str, Any]:
    """RSS (and its anonymous / file-backed parts), PSS and threads of ``pid``, in MB.

    PSS (``smaps_rollup``) charges each shared page to the processes mapping it in equal parts:
    the library pages a funes server shares with other Python processes count once overall,
    which is closer to what the server costs a user's machine than RSS.
    """
    out: dict[str, Any] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0]) // 1024
        elif key == "Threads":
            out[key] = int(value)
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Pss", "Pss_Anon", "Pss_File"):
            out[key] = int(value.split()[0]) // 1024
    names: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
        except OSError:
            continue
        names[name] = names.get(name, 0) + 1
    out["thread_names"] = dict(sorted(names.items()))
    return out


def _cpu_and_faults(pid: int) -> tuple[float, int]:
    """CPU seconds (user + system, all threads) and minor page faults of ``pid`` so far.

    Per recall, these two say what a lever costs the server itself, whatever else the machine
    runs: a busy shared machine stretches the wall-clock latency, not the work done.
    """
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks, int(fields[7])


def _mappings(pid: int, top: int = 25) -> list[tuple[str, int, int]]:
    """The ``top`` mappings of ``pid`` by resident size: (path or kind, RSS MB, anonymous MB)."""
    sizes: dict[str, list[int]] = {}
    name = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        first = line.split(maxsplit=5)
        if first and "-" in first[0] and len(first) >= 5 and ":" not in first[0]:
            name = first[5].strip() if len(first) > 5 else "[anon]"
            name = Path(name).name if name.startswith("/") else name
        elif line.startswith(("Rss:", "Anonymous:")):
            kb = int(line.split()[1])
            entry = sizes.setdefault(name, [0, 0])
            entry[0 if line.startswith("Rss:") else 1] += kb
    rows = sorted(sizes.items(), key=lambda item: -item[1][0])[:top]
    return [(n, v[0] // 1024, v[1] // 1024) for n, v in rows]


def server_command(prelude: str | None) -> list[str]:
    """How to start the server for a lever: ``funes mcp``, with a patch run first, or the no-SDK loop."""
    if prelude is None:
        return [FUNES, "mcp"]
    if prelude == "nosdk":
        return [sys.executable, NO_SDK]
    start = "import sys\nsys.argv = ['funes', 'mcp']\nfrom funes_core.faces.cli.main import main\nmain()\n"
    return [sys.executable, "-c", prelude + "\n" + start]


def memory_run(
    env: dict[str, str], recalls: int, prelude: str | None = None, *, smaps: bool = False
) -> dict[str, Any]:
    proc = subprocess.Popen(
        server_command(prelude),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    ident = 0

    def call(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        nonlocal ident
        ident += 1
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            frame["params"] = params
        proc.stdin.write(json.dumps(frame).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        while True:
            message: dict[str, Any] = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
            if message.get("id") == ident:
                return message

    call(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}},
    )
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    call("tools/list")
    out: dict[str, Any] = {"after_handshake": _status(proc.pid)}
    start = time.perf_counter()
    first = call("tools/call", {"name": "recall", "arguments": {"query": QUERIES[0]}})
    assert not first["result"].get("isError"), first
    out["first_recall_s"] = round(time.perf_counter() - start, 2)
    out["after_first_recall"] = _status(proc.pid)
    warm = []
    cpu_before, faults_before = _cpu_and_faults(proc.pid)
    for i in range(recalls):
        start = time.perf_counter()
        call("tools/call", {"name": "recall", "arguments": {"query": QUERIES[i % len(QUERIES)]}})
        warm.append(time.perf_counter() - start)
    cpu_after, faults_after = _cpu_and_faults(proc.pid)
    out[f"after_{recalls + 1}_recalls"] = _status(proc.pid)
    out["server_cpu_ms_per_recall"] = round(1000 * (cpu_after - cpu_before) / max(recalls, 1), 1)
    out["page_faults_per_recall"] = round((faults_after - faults_before) / max(recalls, 1))
    time.sleep(IDLE_S)  # and once the server has been idle a moment
    out["idle"] = _status(proc.pid)
    out["warm_recall_ms"] = round(1000 * statistics.median(warm), 1)
    if smaps:
        out["mappings"] = _mappings(proc.pid)
    proc.stdin.close()
    proc.wait(60)
    proc.stdout.close()
    return out


def handshakes(base: dict[str, str], runs: int, results: dict[str, Any]) -> None:
    """The front and the SDK server alone, spawned alternately ``runs`` times each."""
    variants = {"front": {}, "sdk only (FUNES_MCP_FRONT=0)": {"FUNES_MCP_FRONT": "0"}}
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    handshake(base)  # warm the page cache
    for _ in range(runs):
        for name, extra in variants.items():  # interleaved: load drift hits both alike
            samples[name].append(handshake({**base, **extra}))
    for name, pairs in samples.items():
        init = statistics.median(p[0] for p in pairs)
        listed = statistics.median(p[1] for p in pairs)
        results[name] = {
            "initialize_ms": round(1000 * init),
            "tools_list_ms": round(1000 * listed),
            "runs": len(pairs),
        }
        print(
            f"{name:32} initialize {1000 * init:6.0f} ms  tools/list {1000 * listed:6.0f} ms "
            f"(median of {len(pairs)})"
        )
    ratio = results["sdk only (FUNES_MCP_FRONT=0)"]["tools_list_ms"] / max(
        results["front"]["tools_list_ms"], 1
    )
    print(f"sdk only / front: {ratio:.1f}x   load {results['load_before']:.2f} -> {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=11, help="spawns per handshake variant")
    parser.add_argument("--memory", nargs="*", default=[], help="FUNES_HOME folders to measure RSS on")
    parser.add_argument("--recalls", type=int, default=100)
    parser.add_argument(
        "--levers", nargs="*", default=DEFAULT_LEVERS, choices=list(LEVERS), help="which levers (see LEVERS)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="servers per lever, alternating")
    parser.add_argument("--smaps", action="store_true", help="print the largest mappings after the recalls")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("FUNES_")}
    results: dict[str, Any] = {"load_before": os.getloadavg()[0]}
    if args.runs:
        handshakes(base, args.runs, results)
    for home in args.memory:
        for turn in range(args.repeat):  # alternating rounds: load drift hits every lever alike
            for key in args.levers:
                name, extra, prelude = LEVERS[key]
                run = memory_run(
                    {**base, "FUNES_HOME": home, **extra}, args.recalls, prelude, smaps=args.smaps
                )
                results[f"rss {home} {key} {turn}"] = {"lever": name, **run}
                last = run[f"after_{args.recalls + 1}_recalls"]
                print(
                    f"{Path(home).name} {key:10} after handshake {run['after_handshake']['VmRSS']:4d} MB, "
                    f"1st recall {run['after_first_recall']['VmRSS']:4d}, after {args.recalls + 1}: "
                    f"RSS {last['VmRSS']:4d} MB (anon {last['RssAnon']}, file {last['RssFile']}), "
                    f"PSS {last['Pss']} (anon {last['Pss_Anon']}, file {last['Pss_File']}), "
                    f"threads {last['Threads']}; warm recall {run['warm_recall_ms']} ms, server CPU "
                    f"{run['server_cpu_ms_per_recall']} ms, {run['page_faults_per_recall']} faults a recall; "
                    f"first {run['first_recall_s']} s; load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
                idle = run["idle"]
                print(
                    f"{'':{len(Path(home).name) + 12}}idle {IDLE_S:.0f} s later: RSS {idle['VmRSS']:4d} MB "
                    f"(anon {idle['RssAnon']}, file {idle['RssFile']}), PSS {idle['Pss']}, "
                    f"threads {idle['Threads']}",
                    flush=True,
                )
                if args.smaps:
                    print(f"    threads: {last['thread_names']}")
                    for path, rss, anon in run["mappings"]:
                        print(f"    {rss:5d} MB (anon {anon:4d})  {path}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""What the parts ``funes mcp`` cannot do without hold in memory, added one at a time in one process.

Issue 16 asks for RSS < 300 MB after 100 recalls. This script shows, for a given memory, what the
required parts alone already hold: CPython and funes' read code, numpy, pyarrow (with the
``dataset`` and ``fs`` modules lancedb imports at load), lancedb, onnxruntime, the tokenizer, the
pinned model's query session, the MCP SDK with funes' tools registered, then the memory opened and
100 recalls. There is no server: no stdio front, no SDK event loop, no JSON-RPC. The glibc
settings are the server's (:func:`funes_core.faces.mcp.lean_malloc`) and memory is trimmed after
each stage and each recall, as the server trims after each call. The last line is therefore a
floor for the shipped server, and the per-stage lines say what each required part costs.

Each stage prints VmRSS, RssAnon, RssFile and PSS (``smaps_rollup``: shared library pages divided
among the processes mapping them) with the difference to the stage before, in MB. The order
matters for the differences (a module imported by an earlier stage is free later), not for the
total. Usage::

    uv run python bench/mcp_floor.py --memory bench/.cache/scale/corpus-10000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_startup import QUERIES  # the same queries as the server runs there


def measure() -> dict[str, int]:
    """This process's VmRSS, RssAnon, RssFile, PSS (MB) and thread count."""
    out: dict[str, int] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0]) // 1024
        elif key == "Threads":
            out[key] = int(value)
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        key, _, value = line.partition(":")
        if key == "Pss":
            out[key] = int(value.split()[0]) // 1024
    return out


def stages(recalls: int, state: dict[str, Any]) -> list[tuple[str, Callable[[], Any]]]:
    """The required parts in the order the server loads them, each as (label, what loads it).

    The steps keep what they load in ``state`` (the memory, the server), so nothing is freed.
    """

    def funes_read() -> None:
        import funes_core.read.recall  # noqa: F401 - the verbs the tools run

    def numpy() -> None:
        import numpy  # noqa: F401

    def pyarrow() -> None:
        import pyarrow
        import pyarrow.compute
        import pyarrow.ipc  # noqa: F401

    def pyarrow_dataset() -> None:
        import pyarrow.dataset
        import pyarrow.fs  # noqa: F401 - lancedb imports both when it loads

    def lancedb() -> None:
        from funes_core.store import lance

        lance._lancedb()  # with the lazy namespace models, as the server imports it

    def onnxruntime() -> None:
        import onnxruntime  # noqa: F401

    def memory() -> None:
        from funes_core.read.handle import resolve_memories

        opened = resolve_memories(None)
        opened.store()  # the table, and the embedder the memory is stamped with (not loaded yet)
        state["memory"] = opened

    def tokenizer() -> None:
        state["memory"].embedder().load()

    def session() -> None:
        state["memory"].embed_query("a first query builds the query session")

    def sdk() -> None:
        from funes_core.faces.mcp import make_server

        state["server"] = make_server()

    def recall_many() -> None:
        from funes_core.faces.mcp import release_memory
        from funes_core.read import recall

        times = []
        for i in range(recalls + 1):
            start = time.perf_counter()
            recall.VERB.run(state["memory"], recall.VERB.args(query=QUERIES[i % len(QUERIES)]))
            release_memory()
            times.append(time.perf_counter() - start)
        state["warm_ms"] = round(1000 * statistics.median(times[1:]), 1)

    return [
        ("CPython, funes' read verbs, faces.mcp (pydantic)", funes_read),
        ("+ numpy", numpy),
        ("+ pyarrow (compute, ipc)", pyarrow),
        ("+ pyarrow.dataset, pyarrow.fs (lancedb imports them)", pyarrow_dataset),
        ("+ lancedb (namespace models lazy)", lancedb),
        ("+ onnxruntime", onnxruntime),
        ("+ the memory's table opened", memory),
        ("+ tokenizer", tokenizer),
        ("+ ORT query session, 1 query embedded", session),
        ("+ MCP SDK, funes' tools registered", sdk),
        (f"+ {recalls + 1} recalls (trim after each)", recall_many),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--memory", required=True, type=Path, help="a FUNES_HOME folder (e.g. a scale.py corpus)"
    )
    parser.add_argument("--recalls", type=int, default=100)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.environ["FUNES_HOME"] = str(args.memory.resolve())
    before = measure()  # CPython alone: the first stage's difference includes the server module
    from funes_core.faces.mcp import lean_malloc, release_memory

    lean_malloc()
    rows: list[dict[str, Any]] = []
    state: dict[str, Any] = {}
    print(f"load {os.getloadavg()[0]:.2f}   (MB; differences to the stage before in brackets)")
    for label, step in stages(args.recalls, state):
        step()
        release_memory()
        now = measure()
        rows.append({"stage": label, **now})
        diff = {key: now[key] - before.get(key, 0) for key in ("VmRSS", "RssAnon", "RssFile", "Pss")}
        print(
            f"{label:55} RSS {now['VmRSS']:4d} ({diff['VmRSS']:+4d})  anon {now['RssAnon']:4d} "
            f"({diff['RssAnon']:+4d})  file {now['RssFile']:4d} ({diff['RssFile']:+4d})  "
            f"PSS {now['Pss']:4d} ({diff['Pss']:+4d})  threads {now['Threads']}",
            flush=True,
        )
        before = now
    print(f"warm recall, in-process median: {state['warm_ms']} ms; load {os.getloadavg()[0]:.2f}")
    if args.json:
        result = {"load": os.getloadavg()[0], "warm_recall_ms": state["warm_ms"], "stages": rows}
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""Bad queries: does ``funes recall`` answer every odd input with results or a message, and how fast?

Empty, all stop words, 10,000 characters, only punctuation, only emoji, code: each goes through
``recall.run`` (what ``funes recall`` and the MCP ``recall`` tool call) on the agent-session memory
of ``quality.py`` with the real model (query vectors are computed, never taken from the cache),
warm, interleaved with normal developer questions. For each: what came back (hits, or the
message), and the median time against the median of the normal questions. The goal (issue 15):
never a traceback, never slower than 3× a normal query.

Usage::

    uv run python bench/bad_queries.py            # after quality.py has built the agent memory
    uv run python bench/bad_queries.py --rounds 30
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import quality
from _agent import convert_all, find_corpus, load_manifest
from _common import CACHE, CachedEmbedder, machine_info
from rich.console import Console
from rich.progress import Progress

from funes_core.models.embed import FastEmbedder
from funes_core.read.common import VerbError
from funes_core.read.handle import Memory
from funes_core.read.recall import RecallArgs, run
from funes_core.store import open_store
from funes_core.store.base import Store

NORMAL = (
    "why was the pipeline red while everything passed on my machine?",
    "which bead depends on spotter-0p7.1?",
    "how do we avoid leaking listeners when the browser disconnects mid-stream?",
    "what did we decide about the agent framework for the scenario tester?",
)
BAD = {
    "empty": "",
    "whitespace": " \n\t ",
    "stop words": "the and of to a in is it that was for on with as",
    "10k characters": ("why did the migration fail on sqlite when we added the state column " * 150)[:10_000],
    "punctuation": "?!.,;:()[]{}<>\"'`~-_=+*&^%$#@|\\/",
    "emoji": "🎉🔥💯🤔",
    "code": 'def f(x): return x["a"] + 1  # AND OR NOT "unbalanced',
    "FTS syntax": 'title:foo AND (bar OR "baz',
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed runs of each query (after one warm-up)")
    args = parser.parse_args()
    cached = CachedEmbedder()
    with Progress(console=Console(file=io.StringIO())) as progress:
        sessions = convert_all(find_corpus(), load_manifest())
        home = quality.build_cached(sessions, cached, progress, CACHE / "agent", "", "agent-sessions")
    store = cast(Store, open_store(home=home, expect=cached.stamp))
    memory = Memory.of(store, FastEmbedder(CACHE / "model"), label="bench")
    queries = {f"normal {i + 1}": q for i, q in enumerate(NORMAL)} | BAD
    answers: dict[str, str] = {}
    times: dict[str, list[float]] = {name: [] for name in queries}
    for round_ in range(args.rounds + 1):
        for name, query in queries.items():
            t = time.perf_counter()
            try:
                text = run(memory, RecallArgs(query=query))
                answer = f"{text.count(chr(10) + '---')} hits" if "---" in text else text.strip()[:60]
                if text.startswith("query cut"):
                    answer = text.splitlines()[0] + f"; {answer}"
            except VerbError as exc:
                answer = f"message: {exc}"
            elapsed = (time.perf_counter() - t) * 1000
            if round_:  # the first round warms the model, the table and the caches
                times[name].append(elapsed)
            answers[name] = answer
    normal = statistics.median(t for name, ts in times.items() if name.startswith("normal") for t in ts)
    print(f"load average {machine_info()['load_avg']}; {args.rounds} rounds; normal median {normal:.1f} ms")
    print("| query | answer | median ms | × normal |")
    print("|---|---|---|---|")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"| {name} | {answers[name]} | {med:.1f} | {med / normal:.2f} |")
    cached.close()


if __name__ == "__main__":
    main()

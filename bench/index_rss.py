"""Peak memory of ``funes index`` on large and hostile transcripts (issue 13: RSS < 500 MB on 100 MB).

Each case writes a deterministic turns file into a throwaway folder and runs the real ``funes index
<folder>`` in a child process with a fresh ``$FUNES_HOME``; the child's peak resident set size comes
from ``wait4`` (``ru_maxrss``), so nothing of this script's own memory is counted. Where ``funes
index`` hands embeddings to a background worker, the cases run ``funes index --wait``, which embeds
in its own process when no worker runs (so the figure includes it and no worker outlives the case).

Cases:

- ``long``: one session of about 100 MB (default), the shape of a long coding session: user asks,
  assistant thinking + text + tool calls, tool results of 5 to 2,000 lines and, 2 % of the time,
  20,000 lines. The embedder is the hash test double (``FUNES_EMBEDDER=hash``) so the figure is
  the pipeline's (parse, validate, redact, chunk, store, index); the real model's share is a
  separate case because embedding 100 k chunks on two cores takes hours;
- ``line``: one 27 MB line holding one tool result (the issue's reproduction: it became 25,714
  chunks and took 965 MB before the block cap);
- ``blocks``: one 12 MB line holding 300,000 tiny blocks (a turn keeps 1,000);
- ``model``: the ``long`` file's first 10 MB with the real embedding model and ``--budget 60``: the
  model's resident share while it embeds;
- ``wait``: a 1 MB slice of the ``long`` shape (728 chunks) with the real model and ``--wait``,
  nothing else: the issue 29 measurement (``funes index --wait`` held 1.2 GB on 750 chunks), the
  whole embedding run in one process;
- ``long-store``: the ``long`` file through the engine without the embedding phase (validate,
  redact, chunk, store, optimize), in a child process: what ``funes index`` itself costs once
  embeddings are computed by a background worker, and the part this issue bounds.

Usage::

    uv run python bench/index_rss.py                   # long (100 MB), line, blocks, model
    uv run python bench/index_rss.py --cases long --size-mb 20
    uv run python bench/index_rss.py --cases wait           # the real model, 728 chunks, --wait
    uv run python bench/index_rss.py --json bench/.cache/results/index_rss.json

Prints a markdown table with the 1-minute load average at the start and the end of each case.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FUNES = str(Path(sys.executable).parent / "funes")
_PROSE = (
    "the parser build fails on arm because the lexer reads a token past the end of the buffer we decided "
    "to keep sqlite for storage and flush the write ahead log on commit error warning def class return "
    "import from self value config test assert pytest cargo npm run make"
)
WORDS = tuple(_PROSE.split())


def write_long(path: Path, megabytes: float, seed: int = 13) -> int:
    """One long session of about ``megabytes`` MB; returns its turn count."""
    rng = random.Random(seed)

    def prose(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    def code(lines: int) -> str:
        return "\n".join(
            f"    {rng.choice(WORDS)}_{i} = {rng.choice(WORDS)}({rng.randrange(100)})" for i in range(lines)
        )

    target = int(megabytes * 1024 * 1024)
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    written = seq = 0
    with path.open("w", encoding="utf-8") as fh:
        while written < target:
            kind = rng.random()
            if kind < 0.25:
                role, blocks = "user", [{"block_type": "text", "text": prose(rng.randint(5, 120))}]
            elif kind < 0.55:
                role = "assistant"
                blocks = [
                    {"block_type": "thinking", "text": prose(rng.randint(20, 300))},
                    {"block_type": "text", "text": prose(rng.randint(10, 400))},
                    {
                        "block_type": "tool_use",
                        "tool_name": "Bash",
                        "text": json.dumps({"command": f"pytest -k {rng.choice(WORDS)}"}),
                    },
                ]
            else:
                size = rng.choice([5, 20, 80, 300, 2000]) if rng.random() < 0.98 else 20000
                role = "tool"
                blocks = [{"block_type": "tool_result", "tool_name": "Read", "text": code(size)}]
            moment += timedelta(seconds=rng.randint(1, 90))
            line = json.dumps(
                {
                    "session_id": "bench-long",
                    "turn_uuid": f"t{seq}",
                    "seq": seq,
                    "ts": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "role": role,
                    "harness": "claude",
                    "cwd": "/home/dev/parser",
                    "blocks": blocks,
                }
            )
            fh.write(line + "\n")
            written += len(line) + 1
            seq += 1
    return seq


def write_line(path: Path, megabytes: float = 27) -> int:
    rng = random.Random(1)
    words = ("alpha", "beta", "gamma", "delta", "parser", "lexer", "token", "build", "error", "fix", "merge")
    parts: list[str] = []
    size = 0
    while size < megabytes * 1_000_000:
        word = rng.choice(words) + str(rng.randrange(1000))
        parts.append(word)
        size += len(word) + 1
    turn = {
        "session_id": "huge",
        "turn_uuid": "h0",
        "seq": 0,
        "ts": "2026-01-01T00:00:00Z",
        "role": "tool",
        "harness": "claude",
        "blocks": [{"block_type": "tool_result", "tool_name": "Bash", "text": " ".join(parts)}],
    }
    path.write_text(json.dumps(turn) + "\n")
    return 1


def write_blocks(path: Path, count: int = 300_000) -> int:
    turn = {
        "session_id": "many",
        "turn_uuid": "m0",
        "seq": 0,
        "ts": "2026-01-01T00:00:00Z",
        "role": "assistant",
        "harness": "claude",
        "blocks": [{"block_type": "text", "text": f"b{i}"} for i in range(count)],
    }
    path.write_text(json.dumps(turn) + "\n")
    return 1


@dataclass
class Result:
    case: str
    file_mb: float
    turns: int
    embedder: str
    peak_rss_mb: float
    wall_s: float
    exit: int
    summary: str
    load_start: float
    load_end: float


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0]) if Path("/proc/loadavg").exists() else -1.0


_STORE_ONLY = """
import sys
from pathlib import Path
from funes_core.home import Home, State, write_lock
from funes_core.ingest.engine import Indexer, IndexOptions, bound_native_memory, discover, load_redactor
from funes_core.models.embed import HashEmbedder
from funes_core.store import open_store
bound_native_memory()
home = Home(Path(sys.argv[2])).ensure()
with write_lock(home):
    store = open_store(home=home, create=True, read_consistency_interval=None)
    store.stamp_model(HashEmbedder().stamp)
    state = State()
    indexer = Indexer(home, store, HashEmbedder(), state=state, redactor=load_redactor())
    indexer.write(discover(home, IndexOptions(path=Path(sys.argv[1])), state).files)
    indexer.release_parsed()
    store.optimize()
    r = indexer.report
    print(f"stored {r.files} file: {r.turns} turns, {r.chunks} chunks; {len(r.rejected)} rejected")
"""


def _wait_flag() -> list[str]:
    """``--wait`` where ``funes index`` hands embeddings to a background worker (issue 18): the run
    then embeds in its own process, where ``wait4`` sees it, and leaves no worker behind."""
    help_text = subprocess.run([FUNES, "index", "--help"], capture_output=True, text=True, check=False).stdout
    return ["--wait"] if "--wait" in help_text else []


def run_case(case: str, folder: Path, turns: int, *, embedder: str, extra: list[str]) -> Result:
    home = folder.parent / f"home-{case}"
    env = {**os.environ, "FUNES_HOME": str(home)}
    if embedder == "hash":
        env["FUNES_EMBEDDER"] = "hash"
    else:
        env.pop("FUNES_EMBEDDER", None)
    size = sum(p.stat().st_size for p in folder.iterdir()) / 1024 / 1024
    load_start = _load()
    start = time.monotonic()
    argv = [FUNES, "index", str(folder), *_wait_flag(), *extra]
    if extra == ["--store-only"]:
        argv = [sys.executable, "-c", _STORE_ONLY, str(folder), str(home)]
    proc = subprocess.Popen(
        argv,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    summary = (out.strip().splitlines() or err.strip().splitlines() or [""])[-1]
    return Result(
        case,
        round(size, 1),
        turns,
        embedder,
        round(usage.ru_maxrss / 1024, 1),
        round(wall, 1),
        code,
        summary,
        load_start,
        _load(),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", default="long-store,long,line,blocks,model")
    parser.add_argument("--size-mb", type=float, default=100.0, help="size of the long transcript")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    results: list[Result] = []
    scratch = Path(tempfile.mkdtemp(prefix="funes-rss-"))
    try:
        for case in cases:
            folder = scratch / case
            folder.mkdir()
            target = folder / f"{case}.funes.jsonl"
            extra: list[str] = []
            embedder = "hash"
            if case == "long":
                turns = write_long(target, args.size_mb)
            elif case == "long-store":
                turns = write_long(target, args.size_mb)
                extra = ["--store-only"]
            elif case == "line":
                turns = write_line(target)
            elif case == "blocks":
                turns = write_blocks(target)
            elif case == "wait":
                turns = write_long(target, 1.0)
                embedder = "minilm"
            elif case == "model":
                turns = write_long(target, min(args.size_mb, 10))
                embedder, extra = "minilm", ["--budget", "60"]
            else:
                parser.error(f"unknown case {case!r}")
            result = run_case(case, folder, turns, embedder=embedder, extra=extra)
            results.append(result)
            print(
                f"{case}: {result.peak_rss_mb} MB peak, {result.wall_s} s — {result.summary}", file=sys.stderr
            )
    finally:
        if not args.keep:
            subprocess.run(["rm", "-rf", str(scratch)], check=False)
    cpu = platform.processor() or platform.machine()
    print(
        f"\nmachine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"
    )
    print("\n| case | file | turns | embedder | peak RSS | wall | load (start → end) | summary |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        print(
            f"| {r.case} | {r.file_mb} MB | {r.turns:,} | {r.embedder} | **{r.peak_rss_mb} MB** "
            f"| {r.wall_s} s | {r.load_start} → {r.load_end} | {r.summary} |"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n")
    return 0 if all(r.exit in (0, 1) for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())

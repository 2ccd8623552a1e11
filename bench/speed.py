"""Speed and footprint: recall latency (warm, cold, over MCP), handshake, RSS, disk, index throughput.

Corpora of 10k and 100k chunks are generated from real text: every LoCoMo turn (as
``bench/quality.py`` converts it) and every chunk of ``examples/sessions/``, then copies of them
with about one word in eight swapped for another word of the corpus (the variation of
``bench/index_speed.py``). **Embeddings:** each unique base text is embedded with the real model
(cached in ``~/.cache/funes-bench/embeddings.sqlite``); a variation's vector is its base vector plus
Gaussian noise, renormalised (cosine ≈ 0.9 to its base), not the model's embedding of the varied
text. Embedding 100k texts for real would take ~45 minutes on 2 cores and would not change what is
timed here (the searches cost the same for any vectors of this size). Rows are written straight
through the Store API (``LanceStore.add``, then ``optimize``, which builds the ANN index past
20k vectors), into ``bench/.cache/speed/`` so a corpus is built once.

Sessions hold 40 chunks; harness, repo and role rotate, timestamps spread over 2025–2026, so the
filtered recall (``--harness claude --since 2026-01-01``) keeps about an eighth of the rows.

Figures, each a median (and p95) of several runs after a warm-up, comparisons side by side in one
run and also given as ratios:

- recall warm: ``funes_core.read.recall.run`` in-process (embed the query, both legs, fuse, neighbours,
  triggers, render), with and without filters, at 10k and 100k;
- recall cold: a fresh ``funes recall`` process (start, imports, model load, open, search, print);
- MCP: process start to ``tools/list`` answered (official ``mcp`` client, ``StdioServerParameters``),
  warm recall over MCP, and the server's RSS after 100 recalls;
- bytes per chunk on disk (after old versions are cleaned up) and whether the ANN index exists;
- index throughput and peak RSS: ``bench/index_speed.py`` with the real model (``--index-chunks``);
- the Claude Code hook (process start to exit), when funes-claude is installed.

Usage::

    uv run python bench/speed.py                 # everything (~10 minutes the first time, corpora cached)
    uv run python bench/speed.py --quick         # 10k only, fewer repetitions
    uv run python bench/speed.py --profile       # also a py-spy profile of warm recalls at 100k
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import (
    CACHE,
    EXAMPLES,
    ROOT,
    CachedEmbedder,
    TextOptions,
    convert_conversation,
    load_locomo,
    machine_info,
    median_p95,
    questions_of,
)

from funes_core.home import Home
from funes_core.ingest.chunking import chunk_id, chunk_turn
from funes_core.store.base import Row
from funes_core.turns.format import read_turns_file

FUNES = str(Path(sys.executable).parent / "funes")
SESSION_CHUNKS = 40
HARNESSES = ("claude", "codex", "pi", "hermes")
REPOS = ("acme/tidepool", "acme/harbour", "acme/buoy-fw", "")
FILTER_ARGS = {"harness": "claude", "since": "2026-01-01"}
FILTER_CLI = ["--harness", "claude", "--since", "2026-01-01"]
#: Noise per dimension for a variation's vector: cosine to the base ≈ 1/sqrt(1 + 384 σ²) ≈ 0.9.
NOISE_SIGMA = 0.0247
_WORD = re.compile(r"[A-Za-z]{4,}")
CORPUS_VERSION = "2"  # 2: stores carry the session_id BTREE index


# ----------------------------------------------------------------------------- corpus


def base_texts() -> list[tuple[str, str, str]]:
    """(text, block_type, tool_name) of every LoCoMo turn and every example-session chunk."""
    out: list[tuple[str, str, str]] = []
    for sample in load_locomo():
        for session in convert_conversation(sample, TextOptions()):
            out.extend((t.blocks[0].text, "text", "") for t in session)
    for path in sorted(EXAMPLES.glob("*.funes.jsonl")):
        for turn in read_turns_file(path).turns:
            for chunk in chunk_turn(turn)[0]:
                out.append((chunk.text, chunk.block_type, chunk.tool_name or ""))
    return list(dict.fromkeys(out))


def _vary(text: str, rng: random.Random, vocab: list[str]) -> str:
    return _WORD.sub(lambda m: rng.choice(vocab) if rng.random() < 0.125 else m.group(0), text)


def generate_rows(
    n: int, bases: list[tuple[str, str, str]], vectors: np.ndarray, seed: int = 11
) -> list[Row]:
    """``n`` rows: the bases first, then varied copies, in sessions of :data:`SESSION_CHUNKS`."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    vocab = sorted({w.lower() for t, _, _ in bases for w in _WORD.findall(t)})
    start = datetime(2025, 1, 1, tzinfo=UTC)
    span = timedelta(days=730)
    rows: list[Row] = []
    sessions = -(-n // SESSION_CHUNKS)
    for i in range(n):
        s, seq = divmod(i, SESSION_CHUNKS)
        b = i % len(bases)
        text, block_type, tool = bases[b]
        vec = vectors[b]
        if i >= len(bases):
            text = _vary(text, rng, vocab)
            noisy = vec + nrng.normal(0.0, NOISE_SIGMA, size=vec.shape).astype(np.float32)
            vec = (noisy / np.linalg.norm(noisy)).astype(np.float32)
        sid = f"bench-{s:06d}"
        ts = start + span * (s / max(sessions, 1)) + timedelta(seconds=20 * seq)
        rows.append(
            Row(
                id=chunk_id(sid, f"t{seq}", 0, 0),
                text=text,
                session_id=sid,
                turn_uuid=f"t{seq}",
                seq=seq,
                ts=ts.strftime("%Y-%m-%dT%H:%M:%SZ"),
                role="user" if seq % 2 == 0 else "assistant",
                harness=HARNESSES[s % len(HARNESSES)],
                block_type=block_type,
                block_idx=0,
                split_idx=0,
                workdir=f"-home-dev-src-{REPOS[s % len(REPOS)].split('/')[-1] or 'scratch'}",
                repo=REPOS[s % len(REPOS)],
                tool_name=tool or None,
                source_path=f"bench/{sid}.funes.jsonl",
                vector=vec,
            )
        )
    return rows


def build_corpus(n: int, embedder: CachedEmbedder, progress: Progress, console: Console) -> Home:
    """A memory of ``n`` chunks under ``bench/.cache/speed/`` (built once, then reused)."""
    from funes_core.store import open_store

    root = CACHE / "speed" / f"corpus-{n}-v{CORPUS_VERSION}"
    home = Home(root)
    done = root / "done.json"
    if done.exists():
        return home
    shutil.rmtree(root, ignore_errors=True)
    bases = base_texts()
    texts = [t for t, _, _ in bases]
    missing = len(texts) - embedder.cached_count(texts)
    task = progress.add_task(f"corpus {n}: embed {missing} base texts", total=len(texts))
    vectors: list[np.ndarray] = []
    for startb in range(0, len(texts), 256):
        vectors.extend(embedder.embed_documents(texts[startb : startb + 256]))
        progress.advance(task, min(256, len(texts) - startb))
    progress.remove_task(task)
    rows = generate_rows(n, bases, np.stack(vectors))
    home.ensure()
    store = open_store(home=home, create=True, read_consistency_interval=None)
    store.stamp_model(embedder.stamp)
    task = progress.add_task(f"corpus {n}: write rows", total=len(rows))
    t = time.perf_counter()
    for startr in range(0, len(rows), 10_000):
        store.add(rows[startr : startr + 10_000])
        progress.advance(task, min(10_000, len(rows) - startr))
    write_s = time.perf_counter() - t
    progress.update(task, description=f"corpus {n}: optimize (FTS, ANN)")
    t = time.perf_counter()
    store.optimize()
    optimize_s = time.perf_counter() - t
    progress.remove_task(task)
    with warnings.catch_warnings():  # nothing else reads this memory: dropping old versions is safe
        warnings.simplefilter("ignore")
        store._tbl().optimize(cleanup_older_than=timedelta(0))
    info = {
        "chunks": store.count(),
        "ann_index": store.has_ann_index(),
        "write_s": round(write_s, 1),
        "optimize_s": round(optimize_s, 1),
        "disk_bytes": store.disk_bytes(),
    }
    done.write_text(json.dumps(info) + "\n")
    console.print(f"built corpus {n}: {info}")
    return home


def corpus_info(home: Home) -> dict[str, Any]:
    from funes_core.store import open_store

    store = open_store(home=home)
    info = json.loads((home.root / "done.json").read_text())
    info["ann_index_now"] = store.has_ann_index()
    info["bytes_per_chunk"] = round(store.disk_bytes() / max(store.count(), 1))
    return info


# ----------------------------------------------------------------------------- timing helpers


def timed(fn: Callable[[], Any], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def ms(samples: Sequence[float]) -> dict[str, float]:
    med, p95 = median_p95(samples)
    return {"median_ms": round(1000 * med, 1), "p95_ms": round(1000 * p95, 1), "n": len(samples)}


def queries(n: int) -> list[str]:
    """``n`` LoCoMo questions, spread over the conversations (a fixed, varied set)."""
    pool = [q.text for s in load_locomo() for q in questions_of(s) if q.category != 5]
    step = max(1, len(pool) // n)
    return pool[::step][:n]


def warm_recall(home: Home, qs: Sequence[str], reps: int) -> dict[str, Any]:
    """In-process ``recall_text`` (the CLI's and MCP's code) after one warm-up, with and without filters."""
    from funes_core.read.handle import Memory
    from funes_core.read.recall import RecallArgs
    from funes_core.read.recall import run as recall_run

    def recall_text(memory: Memory, query: str, **kw: Any) -> str:
        return recall_run(memory, RecallArgs(query=query, **kw))

    memory = Memory.resolve(None, home=home)
    recall_text(memory, "warm up the model and the table")  # model load, table open, caches
    plain: list[float] = []
    filtered: list[float] = []
    for _ in range(reps):
        for q in qs:  # interleaved, so drift in machine load hits both alike
            plain.extend(timed(lambda q=q: recall_text(memory, q), 1))
            filtered.extend(timed(lambda q=q: recall_text(memory, q, **FILTER_ARGS), 1))
    # The parts: what one query spends where (median over the same queries).
    store = memory.store()
    from funes_core.ingest.notes import NOTES_SESSION
    from funes_core.store.base import Filters

    vecs = [memory.embed_query(q) for q in qs]
    parts = {
        "embed_query": [timed(lambda q=q: memory.embed_query(q), 1)[0] for q in qs],
        "vector_leg": [timed(lambda v=v: store.vector_search(v, 30), 1)[0] for v in vecs],
        "text_leg": [timed(lambda q=q: store.text_search(q, 30), 1)[0] for q in qs],
        "triggers_scan": [timed(lambda: store.scan(Filters(session_id=NOTES_SESSION)), 1)[0] for _ in qs],
        "recall_no_neighbours": [timed(lambda q=q: recall_text(memory, q, neighbors=0), 1)[0] for q in qs],
    }
    return {
        "plain": ms(plain),
        "filtered": ms(filtered),
        "parts_ms": {
            "embed_query": ms(parts["embed_query"])["median_ms"],
            "vector_leg": ms(parts["vector_leg"])["median_ms"],
            "text_leg": ms(parts["text_leg"])["median_ms"],
            "triggers_scan": ms(parts["triggers_scan"])["median_ms"],
            "whole_recall_with_neighbors_0": ms(parts["recall_no_neighbours"])["median_ms"],
        },
    }


def cold_recall(home: Home, qs: Sequence[str], runs: int) -> dict[str, Any]:
    """A fresh ``funes recall`` process per query: start to exit, with and without filters."""
    env = {**os.environ, "FUNES_HOME": str(home.root)}
    env.pop("FUNES_EMBEDDER", None)

    def run(args: list[str]) -> None:
        proc = subprocess.run([FUNES, "recall", *args], env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"funes recall failed: {proc.stderr.strip()}")

    run([qs[0]])  # warm the page cache
    plain: list[float] = []
    filtered: list[float] = []
    for i in range(runs):
        q = qs[i % len(qs)]
        plain.extend(timed(lambda q=q: run([q]), 1))
        filtered.extend(timed(lambda q=q: run([q, *FILTER_CLI]), 1))
    return {"plain": ms(plain), "filtered": ms(filtered)}


def _children_rss_kb(name: str) -> tuple[int, int] | None:
    """(VmRSS, VmHWM) in kB of our child process whose command line contains ``name``."""
    me = os.getpid()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
            fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
            if int(fields.get("PPid", "0").strip()) != me:
                continue
            cmd = (status.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if name in cmd:
                return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])
        except (OSError, ValueError, KeyError):
            continue
    return None


def mcp_figures(home: Home, qs: Sequence[str], handshakes: int, recalls: int) -> dict[str, Any]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {**os.environ, "FUNES_HOME": str(home.root)}
    env.pop("FUNES_EMBEDDER", None)
    params = StdioServerParameters(command=FUNES, args=["mcp"], env=env)

    async def handshake() -> float:
        t = time.perf_counter()
        async with Client(params) as client:
            await client.list_tools()
            return time.perf_counter() - t

    async def session() -> dict[str, Any]:
        async with Client(params) as client:
            await client.list_tools()
            t = time.perf_counter()
            res = await client.call_tool("recall", {"query": qs[0]})
            first = time.perf_counter() - t
            assert not res.is_error
            times = []
            for i in range(recalls):
                t = time.perf_counter()
                await client.call_tool("recall", {"query": qs[i % len(qs)]})
                times.append(time.perf_counter() - t)
            rss = _children_rss_kb("mcp")
            return {"first_recall_ms": round(1000 * first, 1), "warm": times, "rss": rss}

    anyio.run(handshake)  # warm-up (page cache)
    hs = [anyio.run(handshake) for _ in range(handshakes)]
    out = anyio.run(session)
    rss = out.pop("rss")
    return {
        "handshake": ms(hs),
        "first_recall_ms": out["first_recall_ms"],
        "warm_recall": ms(out["warm"]),
        "rss_after_recalls_mb": round(rss[0] / 1024, 1) if rss else None,
        "peak_rss_mb": round(rss[1] / 1024, 1) if rss else None,
        "recalls": recalls + 1,
    }


def hook_figure(runs: int) -> dict[str, Any] | None:
    """The Claude Code hook: process start to exit (it spawns its worker and returns)."""
    try:
        import funes_claude.hook  # noqa: F401
    except ImportError:
        return None
    with tempfile.TemporaryDirectory(prefix="funes-hook-") as tmp:
        transcript = Path(tmp) / "t.jsonl"
        transcript.write_text("")
        event = json.dumps(
            {"session_id": "bench", "transcript_path": str(transcript), "hook_event_name": "Stop"}
        )
        cmd = [
            sys.executable,
            "-m",
            "funes_claude.hook",
            "--funes-home",
            str(Path(tmp) / "home"),
            "--",
            "true",
        ]

        def run() -> None:
            subprocess.run(cmd, input=event, capture_output=True, text=True, check=False, timeout=30)

        run()
        samples = timed(run, runs)
        time.sleep(0.5)  # let the detached workers finish before the folder goes
    return ms(samples)


def index_figure(chunks: int, console: Console) -> dict[str, Any] | None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "index_speed.py"), "--chunks", str(chunks), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        console.print(f"[red]index_speed.py failed:[/] {proc.stderr.strip()[-1500:]}")
        return None
    return json.loads(proc.stdout)


def profile(home: Home, qs: Sequence[str], out: Path, console: Console) -> Path | None:
    """py-spy (via uvx) over a process that runs warm recalls at this corpus; returns the raw profile."""
    uvx = shutil.which("uvx")
    if uvx is None:
        console.print("[yellow]uvx not found: no profile[/]")
        return None
    script = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from pathlib import Path\nfrom funes_core.home import Home\n"
        "from funes_core.read.handle import Memory\n"
        "from funes_core.read.recall import RecallArgs, run\n"
        "def recall_text(m, q): return run(m, RecallArgs(query=q))\n"
        f"m = Memory.resolve(None, home=Home(Path({str(home.root)!r}))); recall_text(m, 'warm up')\n"
        f"qs = {list(qs)!r}\n"
        "for _ in range(10):\n    for q in qs: recall_text(m, q)\n"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(script)
    cmd = [uvx, "py-spy", "record", "-r", "250", "-f", "raw", "-o", str(out), "--", sys.executable, fh.name]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    Path(fh.name).unlink(missing_ok=True)
    if proc.returncode != 0:
        console.print(f"[yellow]py-spy failed:[/] {proc.stderr.strip()[-800:]}")
        return None
    return out


def summarize_profile(raw: Path, top: int = 12) -> list[tuple[str, float]]:
    """Share of samples whose stack passes through each frame of interest (inclusive time)."""
    total = 0
    counts: dict[str, int] = {}
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        if "recall_text" not in stack or "_find_and_load" in stack or "FastEmbedder.load" in stack:
            continue  # only warm recalls: not the imports and model load of the warm-up call
        total += int(n)
        seen = set()
        for frame in stack.split(";"):
            name = frame.split(" (")[0]
            where = frame.split(" (")[1].rstrip(")") if " (" in frame else ""
            key = f"{name} ({Path(where.split(':')[0]).name})"
            if any(x in key for x in ("threading.py", "_base.py", "background_loop.py", "<module>", "prof")):
                continue
            if key not in seen:
                seen.add(key)
                counts[key] = counts.get(key, 0) + int(n)
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    return [(k, v / total) for k, v in ranked[:top]] if total else []


# ----------------------------------------------------------------------------- main


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}×" if a and b else "—"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k corpus only, fewer repetitions")
    parser.add_argument(
        "--sizes", type=int, nargs="*", default=None, help="corpus sizes (default 10000 100000)"
    )
    parser.add_argument("--queries", type=int, default=20, help="distinct queries (default 20)")
    parser.add_argument("--reps", type=int, default=3, help="passes over the queries for warm recall")
    parser.add_argument("--cold-runs", type=int, default=7, help="fresh processes per cold figure")
    parser.add_argument("--index-chunks", type=int, default=2000, help="chunks for index_speed.py (0: skip)")
    parser.add_argument(
        "--profile", action="store_true", help="py-spy profile of warm recalls (largest corpus)"
    )
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([10_000] if args.quick else [10_000, 100_000])
    reps = 1 if args.quick else args.reps
    cold_runs = 3 if args.quick else args.cold_runs
    console = Console(stderr=True)
    embedder = CachedEmbedder()
    qs = queries(args.queries)
    results: dict[str, Any] = {"machine": machine_info(), "sizes": sizes, "queries": len(qs)}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        homes = {n: build_corpus(n, embedder, progress, console) for n in sizes}
        steps = progress.add_task("measure", total=3 * len(sizes) + 2)
        for n, home in homes.items():
            entry: dict[str, Any] = {"corpus": corpus_info(home)}
            progress.update(steps, description=f"{n}: warm recall")
            entry["warm"] = warm_recall(home, qs, reps)
            progress.advance(steps)
            progress.update(steps, description=f"{n}: cold recall")
            entry["cold"] = cold_recall(home, qs, cold_runs)
            progress.advance(steps)
            progress.update(steps, description=f"{n}: MCP")
            entry["mcp"] = mcp_figures(home, qs, handshakes=cold_runs, recalls=100)
            progress.advance(steps)
            results[str(n)] = entry
        progress.update(steps, description="hook")
        results["hook"] = hook_figure(cold_runs * 2)
        progress.advance(steps)
        if args.index_chunks:
            progress.update(steps, description=f"index_speed.py --chunks {args.index_chunks}")
            results["index"] = index_figure(args.index_chunks, console)
        progress.advance(steps)
        if args.profile:
            progress.update(steps, description="py-spy profile")
            raw = profile(homes[max(sizes)], qs, CACHE / "results" / "recall-profile.txt", console)
            if raw is not None:
                results["profile"] = [(k, round(v, 3)) for k, v in summarize_profile(raw, 25)]
    embedder.close()
    results["machine"]["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    render(results, sizes)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return results


def render(results: dict[str, Any], sizes: Sequence[int]) -> None:
    out = Console(width=max(Console().width, 150))
    table = Table(title="Speed and footprint (medians; p95 in brackets)")
    table.add_column("figure")
    for n in sizes:
        table.add_column(f"{n:,} chunks", justify="right")
    if len(sizes) > 1:
        table.add_column(f"{sizes[-1] // sizes[0]}× corpus: ratio", justify="right")

    def cell(d: dict[str, Any] | None) -> str:
        return f"{d['median_ms']:.1f} ms [{d['p95_ms']:.1f}]" if d else "—"

    def row(label: str, get: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        vals = [get(results[str(n)]) for n in sizes]
        extra = [ratio(vals[-1]["median_ms"], vals[0]["median_ms"])] if len(sizes) > 1 and all(vals) else []
        table.add_row(label, *(cell(v) for v in vals), *extra)

    row("recall warm, in-process", lambda e: e["warm"]["plain"])
    row("recall warm, filtered", lambda e: e["warm"]["filtered"])
    row("recall cold, fresh `funes recall`", lambda e: e["cold"]["plain"])
    row("recall cold, filtered", lambda e: e["cold"]["filtered"])
    row("MCP handshake (start → tools/list)", lambda e: e["mcp"]["handshake"])
    row("MCP recall, warm", lambda e: e["mcp"]["warm_recall"])
    plain = [
        (f"{k} (ms)", [str(results[str(n)]["warm"]["parts_ms"][k]) for n in sizes])
        for k in results[str(sizes[0])]["warm"]["parts_ms"]
    ]
    for label, vals in plain:
        table.add_row(f"  part: {label}", *vals, *([""] if len(sizes) > 1 else []))
    for label, key in (
        ("MCP first recall (loads model, table) ms", "first_recall_ms"),
        ("MCP server RSS after 101 recalls (MB)", "rss_after_recalls_mb"),
        ("MCP server peak RSS (MB)", "peak_rss_mb"),
    ):
        table.add_row(
            label, *(str(results[str(n)]["mcp"][key]) for n in sizes), *([""] if len(sizes) > 1 else [])
        )
    for label, key in (("bytes per chunk on disk", "bytes_per_chunk"), ("ANN index", "ann_index_now")):
        table.add_row(
            label, *(str(results[str(n)]["corpus"][key]) for n in sizes), *([""] if len(sizes) > 1 else [])
        )
    out.print(table)
    ratios = Table(title="Side-by-side ratios (same run)")
    ratios.add_column("comparison")
    for n in sizes:
        ratios.add_column(f"{n:,}", justify="right")
    for label, num, den in (
        ("filtered / unfiltered (warm)", ("warm", "filtered"), ("warm", "plain")),
        ("cold / warm", ("cold", "plain"), ("warm", "plain")),
        ("MCP warm / in-process warm", ("mcp", "warm_recall"), ("warm", "plain")),
    ):
        ratios.add_row(
            label,
            *(
                ratio(
                    results[str(n)][num[0]][num[1]]["median_ms"],
                    results[str(n)][den[0]][den[1]]["median_ms"],
                )
                for n in sizes
            ),
        )
    out.print(ratios)
    if results.get("hook"):
        out.print(f"Claude Code hook, start → exit: {cell(results['hook'])}")
    if results.get("index"):
        ix = results["index"]
        out.print(
            f"index_speed.py ({ix['corpus']['chunks']} chunks, real model): "
            f"{ix['rows_per_s_written']} rows/s written, "
            f"BM25-searchable after {ix['bm25_searchable_after_s']} s, "
            f"{ix['embeddings_per_s']} embeddings/s, "
            f"peak RSS {ix['peak_rss_mb']} MB, {ix['bytes_per_chunk_live']} bytes/chunk"
        )
    for k, v in results.get("profile", []):
        out.print(f"  {100 * v:5.1f}%  {k}")
    m = results["machine"]
    out.print(
        f"{m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB; load {m['load_avg']} → {m['load_avg_after']}"
    )


if __name__ == "__main__":
    main()

"""Memory of ``funes index --wait`` over many commits (issue 29: < 500 MB at 100k chunks).

``bench/index_rss.py`` reads one process's peak from ``wait4``; here the embedding may run in a
worker process of its own (``index --wait`` hands a large backlog to one, which replaces itself
every ``RECYCLE_ROWS``), which ``wait4`` does not see. So this script samples ``/proc`` every
half second for **every process of the run** (found by its ``FUNES_HOME``): the sum of their
resident sets (``VmRSS``, which counts the libraries both map twice), the sum of their
proportional sets (``Pss``: each shared page counted once, what the machine pays), and the
largest ``VmHWM`` of any of them; it notes the sums at each commit (from ``embedding.json``), and
the slope (MB a commit, least squares over the ``Pss`` sums) is read off them.

A memory of ``--chunks`` owed chunks is built once (a few thousand words of vocabulary, ~90 words
a chunk, stamped with the embedder used) and copied for each run, so every run starts alike.
``--src DIR`` (repeatable) runs the same command with another tree of the code first on
``PYTHONPATH`` (e.g. ``git archive main | tar -x -C /tmp/main``): the side-by-side comparison,
in one run, alternating with ``--rounds``.

    uv run python bench/wait_rss.py --chunks 30000                       # hash embedder
    uv run python bench/wait_rss.py --chunks 30000 --src main=/tmp/main  # against main's code
    uv run python bench/wait_rss.py --chunks 10000 --embedder minilm      # the real model

Prints a markdown table with the 1-minute load average at the start and end of each run.
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import CACHE
from first_run import vm

HERE = CACHE / "wait_rss"
TURNS_PER_SESSION = 200


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def build(chunks: int, embedder: str) -> Path:
    """A home whose memory stores ``chunks`` chunks, every one still owed its embedding."""
    base = HERE / f"base-{embedder}-{chunks}"
    if (base / "memory").exists():
        return base
    from funes_core.home import Home
    from funes_core.ingest.engine import IndexOptions, run_index
    from funes_core.models.embed import HashEmbedder, embedder_from_env
    from funes_core.turns.format import Block, Turn, write_turns_file

    rng = random.Random(29)
    words = [f"{rng.choice('bcdfgklmnprst')}{rng.choice('aeiou')}{i}" for i in range(4000)]
    source = HERE / f"turns-{chunks}"
    shutil.rmtree(source, ignore_errors=True)
    for s in range(-(-chunks // TURNS_PER_SESSION)):
        turns = [
            Turn(
                f"s{s}",
                f"s{s}-{i}",
                i,
                f"2026-03-{1 + s % 28:02d}T{s % 24:02d}:{i // 60:02d}:{i % 60:02d}Z",
                "user" if i % 2 else "assistant",
                "claude",
                (Block("text", " ".join(rng.choice(words) for _ in range(90))),),
            )
            for i in range(min(TURNS_PER_SESSION, chunks - s * TURNS_PER_SESSION))
        ]
        write_turns_file(source / f"s{s}.funes.jsonl", turns)
    shutil.rmtree(base, ignore_errors=True)
    home = Home(base).ensure()
    model = HashEmbedder() if embedder == "hash" else embedder_from_env(home)
    report = run_index(
        IndexOptions(path=source, embed="none"), home=home, embedder=model, warn=lambda _: None
    )
    print(f"built {report.chunks:,} chunks, {report.owed:,} owed", file=sys.stderr)
    shutil.rmtree(source, ignore_errors=True)
    return base


def pss_kb(pid: int) -> int:
    """``pid``'s proportional set size in KB: its private pages plus its share of pages it shares
    (the libraries every funes process maps), so a sum over processes counts each page once."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def processes_of(home: Path) -> list[int]:
    """Pids whose environment names ``home`` as ``FUNES_HOME``."""
    marker = f"FUNES_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def run(label: str, base: Path, src: Path | None, embedder: str) -> dict[str, Any]:
    home = HERE / f"run-{label}"
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(base, home)
    env = {**os.environ, "FUNES_HOME": str(home)}
    env.pop("FUNES_BIN", None)
    if embedder == "hash":
        env["FUNES_EMBEDDER"] = "hash"
    else:
        env.pop("FUNES_EMBEDDER", None)
    if src is not None:
        env["PYTHONPATH"] = f"{src}{os.pathsep}{env.get('PYTHONPATH', '')}".rstrip(os.pathsep)
    load_start, started = _load(), time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "funes_core", "index", "--wait"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak_sum = peak_pss = peak_hwm = 0
    pids: set[int] = set()
    commits: list[dict[str, Any]] = []
    last_done = -1
    progress = home / "embedding.json"
    while proc.poll() is None:
        tree = [p for p in processes_of(home) if p != os.getpid()]
        pids.update(tree)
        stats = [vm(p) for p in tree]
        total = sum(s.get("VmRSS", 0) for s in stats)
        hwm = max((s.get("VmHWM", 0) for s in stats), default=0)
        pss = sum(pss_kb(p) for p in tree)
        peak_sum, peak_pss, peak_hwm = max(peak_sum, total), max(peak_pss, pss), max(peak_hwm, hwm)
        try:
            done = int(json.loads(progress.read_text()).get("done", 0))
        except (OSError, ValueError):
            done = last_done
        if done != last_done and done > 0:
            at = round(time.monotonic() - started, 1)
            commits.append({"t": at, "done": done, "rss_mb": total // 1024, "pss_mb": pss // 1024})
            last_done = done
        time.sleep(0.5)
    wall = time.monotonic() - started
    out = (proc.stdout.read() if proc.stdout else "").strip().splitlines()
    shutil.rmtree(home, ignore_errors=True)
    chunks = max((c["done"] for c in commits), default=0)
    return {
        "label": label,
        "exit": proc.returncode,
        "summary": out[-1] if out else "",
        "peak_sum_mb": peak_sum // 1024,
        "peak_pss_mb": peak_pss // 1024,
        "peak_hwm_mb": peak_hwm // 1024,
        "processes": len(pids),
        "wall_s": round(wall, 1),
        "chunks_per_s": round(chunks / wall, 1) if wall else 0.0,
        "slope_mb_per_commit": _slope(commits),
        "commits": commits,
        "load": (load_start, _load()),
    }


def _slope(commits: list[dict[str, Any]]) -> float:
    """Least-squares growth of the sampled RSS per commit (MB), over every commit noted."""
    if len(commits) < 3:
        return 0.0
    xs = list(range(len(commits)))
    ys = [c["pss_mb"] for c in commits]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return round(
        sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs), 2
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=30_000)
    parser.add_argument("--embedder", choices=("hash", "minilm"), default="hash")
    parser.add_argument("--src", action="append", default=[], help="LABEL=DIR: another tree of the code")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    HERE.mkdir(parents=True, exist_ok=True)
    base = build(args.chunks, args.embedder)
    variants: list[tuple[str, Path | None]] = [("this tree", None)]
    for item in args.src:
        label, _, folder = item.partition("=")
        variants.append((label, Path(folder).resolve()))
    results = []
    for round_ in range(args.rounds):
        order = variants if round_ % 2 == 0 else variants[::-1]
        for label, src in order:
            result = run(label.replace(" ", "-"), base, src, args.embedder)
            result["label"] = label
            results.append(result)
            print(json.dumps({k: v for k, v in result.items() if k != "commits"}), file=sys.stderr)
    print(f"\n{args.chunks:,} chunks, embedder {args.embedder}\n")
    print(
        "| code | peak PSS, all processes | peak RSS, summed | largest VmHWM | MB a commit | processes "
        "| chunks/s | load |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        print(
            f"| {r['label']} | **{r['peak_pss_mb']} MB** | {r['peak_sum_mb']} MB | {r['peak_hwm_mb']} MB "
            f"| {r['slope_mb_per_commit']} "
            f"| {r['processes']} | {r['chunks_per_s']} | {r['load'][0]} → {r['load'][1]} |"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if all(r["exit"] == 0 for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())

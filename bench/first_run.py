"""A first install on a long history: how soon funes answers, and what the agent pays meanwhile.

A synthetic but realistic history: the real Claude Code sessions of ``shared/corpus/claude`` (13
transcripts with their subagents, 3,261 chunks) are copied again and again under new session ids
into a fake HOME, where Claude Code keeps them (``~/.claude/projects/<project>/<session>.jsonl``),
until the history holds ``--chunks`` chunks (default 100,000: 31 copies). Then the real install
path runs, as a new user would: ``funes integrations install claude`` with that HOME and an empty
``FUNES_HOME``, with the real model. Measured:

- the time until install returns, and its parts (converting the sessions, storing the text);
- the time until the first keyword recall answers (a fresh ``funes recall`` right after);
- the agent-visible recall latency while the background worker embeds, cold (a fresh ``funes
  recall`` process) and warm (this process, the code behind the CLI and the MCP server), each
  measured **side by side** with the worker paused (``SIGSTOP``) in the same round: same memory,
  same moment, the only difference is the worker running; rounds alternate which comes first;
- the worker's rate (chunks/s), its peak RSS (``VmHWM``), and the time until every embedding is
  done: measured when the run finishes within ``--max-minutes``, else extrapolated from the rate
  (and said so);
- bytes per chunk on disk at the end.

    uv run python bench/first_run.py                       # 100k chunks, up to 3 h of embedding
    uv run python bench/first_run.py --chunks 10000 --max-minutes 20
    uv run python bench/first_run.py --json bench/.cache/results/first_run.json

The 1-minute load average is recorded with every round: on a shared machine, compare the
side-by-side ratios, not the absolute figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _agent import find_corpus
from _common import CACHE, machine_info

FUNES = str(Path(sys.executable).parent / "funes")
HERE = CACHE / "first_run"
#: What an agent asks its memory about these sessions (their words, and paraphrases of them).
QUERIES = (
    "search the skills for research and analysis",
    "what is in the research and resources directories",
    "why did the test fail",
    "episodic memory conversation search",
    "summary of the compacted conversation",
    "subagent task result",
    "sqlite database schema migration",
    "how are transcripts parsed into sessions",
    "git commit message for the change",
    "error when running the command",
    "install the dependencies",
    "which files were edited",
)
CORPUS_CHUNKS = 3261


# ----------------------------------------------------------------------------- the history


def build_home(chunks: int) -> Path:
    """A HOME whose ~/.claude holds the corpus ``ceil(chunks / 3261)`` times over (cached)."""
    copies = max(1, -(-chunks // CORPUS_CHUNKS))
    home = HERE / f"home-{copies}"
    done = home / ".built"
    if done.exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    corpus = find_corpus() / "claude"
    sessions = [p for p in sorted(corpus.rglob("*.jsonl")) if "subagents" not in p.parts]
    for copy in range(copies):
        project = home / ".claude" / "projects" / f"-home-dev-src-project{copy % 7}"
        project.mkdir(parents=True, exist_ok=True)
        for session in sessions:
            new_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"funes-first-run/{copy}/{session.stem}"))
            shutil.copyfile(session, project / f"{new_id}.jsonl")
            subagents = session.parent / session.stem / "subagents"
            if subagents.is_dir():
                target = project / new_id / "subagents"
                target.mkdir(parents=True, exist_ok=True)
                for agent in subagents.glob("*.jsonl"):
                    shutil.copyfile(agent, target / agent.name)
    done.write_text(f"{copies} copies\n", encoding="utf-8")
    return home


# ----------------------------------------------------------------------------- measuring


def env_for(home: Path, funes_home: Path, *, embedder: str) -> dict[str, str]:
    """The new user's environment: their HOME, an empty FUNES_HOME, no other FUNES_ setting."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FUNES_")}
    env.update(HOME=str(home), FUNES_HOME=str(funes_home))
    if embedder == "hash":
        env["FUNES_EMBEDDER"] = "hash"
    return env


def install(env: dict[str, str]) -> dict[str, Any]:
    """Run the real install, timestamping each line it prints."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [FUNES, "integrations", "install", "claude"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[tuple[float, str]] = []
    for line in proc.stdout:
        lines.append((round(time.monotonic() - started, 2), line.rstrip()))
    proc.wait()
    took = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit("install failed:\n" + "\n".join(text for _, text in lines))
    return {"seconds": round(took, 2), "lines": lines}


def cold_recall(env: dict[str, str], query: str) -> float:
    started = time.monotonic()
    done = subprocess.run([FUNES, "recall", query, "-k", "5"], env=env, capture_output=True, text=True)
    took = time.monotonic() - started
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"funes recall {query!r} failed: {done.stderr.strip() or 'no output'}")
    return took


class Warm:
    """Recall in this process, the code behind ``funes recall`` and the MCP ``recall`` tool."""

    def __init__(self, funes_home: Path) -> None:
        from funes_core.home import Home
        from funes_core.read.handle import Memory

        self.memory = Memory.resolve(None, home=Home(funes_home))
        self.once(QUERIES[0])  # model load, table open

    def once(self, query: str) -> float:
        from funes_core.read.recall import RecallArgs
        from funes_core.read.recall import run as recall_run

        started = time.monotonic()
        recall_run(self.memory, RecallArgs(query=query))
        return time.monotonic() - started


def progress(funes_home: Path) -> dict[str, Any]:
    try:
        data = json.loads((funes_home / "embedding.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def vm(pid: int) -> dict[str, int]:
    """Current and peak resident memory of ``pid`` in KB (``VmRSS``, ``VmHWM``)."""
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()


def measure_round(
    env: dict[str, str], warm: Warm, pid: int, *, worker_first: bool, warm_n: int, cold_n: int, index: int
) -> dict[str, Any]:
    """Warm and cold recall with the worker running and paused, back to back."""
    queries = [QUERIES[(index * 3 + i) % len(QUERIES)] for i in range(max(warm_n, cold_n))]
    result: dict[str, Any] = {"load": round(os.getloadavg()[0], 2)}
    for phase in ("running", "paused") if worker_first else ("paused", "running"):
        if phase == "paused":
            stopped = time.monotonic()
            os.kill(pid, signal.SIGSTOP)
            time.sleep(1.0)  # let the cores settle
        try:
            result[f"warm_{phase}"] = [warm.once(q) for q in queries[:warm_n]]
            result[f"cold_{phase}"] = [cold_recall(env, q) for q in queries[:cold_n]]
        finally:
            if phase == "paused":
                os.kill(pid, signal.SIGCONT)
                result["paused_s"] = time.monotonic() - stopped
    return result


def med(values: Sequence[float]) -> float:
    return round(1000 * statistics.median(values), 1) if values else float("nan")


def disk(funes_home: Path, chunks: int) -> dict[str, Any]:
    table = funes_home / "memory" / "chunks.lance"
    total = sum(p.stat().st_size for p in table.rglob("*") if p.is_file())
    return {"bytes": total, "per_chunk": round(total / max(chunks, 1))}


# ----------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000, help="history size (default 100,000)")
    parser.add_argument("--max-minutes", type=float, default=180, help="stop measuring after this long")
    parser.add_argument("--every", type=float, default=300, help="seconds between measurement rounds")
    parser.add_argument("--warm", type=int, default=12, help="warm recalls per phase of a round")
    parser.add_argument("--cold", type=int, default=3, help="cold recalls per phase of a round")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--keep", action="store_true", help="leave the worker running at the end")
    parser.add_argument(
        "--settle",
        action="store_true",
        help="after the embeddings, wait for the worker's clean-up (the 5-minute version grace) and "
        "measure the disk again",
    )
    parser.add_argument(
        "--embedder",
        choices=("real", "hash"),
        default="real",
        help="hash: the test double, to check this script in a minute (its rates mean nothing)",
    )
    args = parser.parse_args(argv)

    home = build_home(args.chunks)
    funes_home = HERE / "run" / "funes-home"
    shutil.rmtree(funes_home.parent, ignore_errors=True)
    env = env_for(home, funes_home, embedder=args.embedder)
    if args.embedder == "hash":
        os.environ["FUNES_EMBEDDER"] = "hash"  # the warm reader in this process
    results: dict[str, Any] = {"machine": machine_info(), "history_copies": home.name}

    print(f"installing over {home} …", flush=True)
    origin = time.monotonic()  # every "… after" figure counts from the moment install is run
    inst = install(env)
    installed = origin + inst["seconds"]
    results["install"] = inst
    first = cold_recall(env, QUERIES[0])
    results["first_keyword_recall_s"] = round(first, 2)
    results["searchable_after_s"] = round(time.monotonic() - origin, 2)
    known = progress(funes_home)
    pid = int(known.get("pid") or 0)
    status = subprocess.run([FUNES, "status", "--json"], env=env, capture_output=True, text=True, check=True)
    report = json.loads(status.stdout)
    chunks = int(report["chunks"])
    results["chunks"] = chunks
    results["owed_at_install"] = int(report["embeddings_owed"]) + int(progress(funes_home).get("done") or 0)
    results["status_after_install"] = report.get("embedding")
    print(
        f"install returned in {inst['seconds']} s; first keyword recall {first:.2f} s; {chunks} chunks, "
        f"{results['owed_at_install']} owed; worker pid {pid}",
        flush=True,
    )
    for at, line in inst["lines"]:
        print(f"  [{at:7.2f} s] {line}")

    warm = Warm(funes_home)
    rounds: list[dict[str, Any]] = []
    peak_kb = 0
    finished_at: float | None = None
    done = 0
    while pid and alive(pid):
        elapsed = time.monotonic() - installed  # the worker starts as install returns
        now = progress(funes_home)
        done = int(now.get("done") or 0)
        peak_kb = max(peak_kb, vm(pid).get("VmHWM", 0))
        if now.get("state") == "done":
            finished_at = elapsed
            break
        if now.get("state") == "stopped":
            raise SystemExit(f"the worker stopped: {now.get('error')}")
        if elapsed > args.max_minutes * 60:
            break
        if not rounds or elapsed - rounds[-1]["at_s"] >= args.every:
            one = measure_round(
                env,
                warm,
                pid,
                worker_first=len(rounds) % 2 == 0,
                warm_n=args.warm,
                cold_n=args.cold,
                index=len(rounds),
            )
            one.update(at_s=round(elapsed), done=done, owed=int(now.get("owed") or 0))
            rounds.append(one)
            print(
                f"[{elapsed / 60:6.1f} min] done {one['done']}, owed {one['owed']}, load {one['load']}: warm "
                f"{med(one['warm_running'])} ms running / {med(one['warm_paused'])} ms paused; cold "
                f"{med(one['cold_running'])} / {med(one['cold_paused'])} ms",
                flush=True,
            )
        time.sleep(2)
    elapsed = time.monotonic() - installed
    results["rounds"] = rounds
    results["worker_peak_rss_mb"] = round(peak_kb / 1024)
    done = int(progress(funes_home).get("done") or done)
    working = elapsed - sum(r.get("paused_s", 0.0) for r in rounds)  # the pauses were ours
    rate = done / working if working > 0 and done else None
    results["embedded"] = done
    results["embedding_rate_per_s"] = round(rate, 2) if rate else None
    results["worker_rate_per_s"] = progress(funes_home).get("rate")  # its own, over its last commits
    if finished_at is not None:
        results["embeddings_complete_after_s"] = round(inst["seconds"] + finished_at)
        results["complete_is"] = "measured (includes the measurement pauses)"
    elif rate:
        left = results["owed_at_install"] - done
        results["embeddings_complete_after_s"] = round(inst["seconds"] + working + left / rate)
        results["complete_is"] = f"extrapolated from {done} embedded in {working / 60:.0f} min"
    results["disk"] = disk(funes_home, chunks)
    if args.settle and finished_at is not None:
        print("waiting for the worker's clean-up (the store's version grace period) …", flush=True)
        deadline = time.monotonic() + 10 * 60
        while pid and alive(pid) and time.monotonic() < deadline:
            time.sleep(5)
        results["disk_settled"] = disk(funes_home, chunks)
    if rounds:
        results["summary_ms"] = {
            key: med([v for r in rounds for v in r[key]])
            for key in ("warm_running", "warm_paused", "cold_running", "cold_paused")
        }
        s = results["summary_ms"]
        results["ratios"] = {
            "warm_running_over_paused": round(s["warm_running"] / s["warm_paused"], 2),
            "cold_running_over_paused": round(s["cold_running"] / s["cold_paused"], 2),
        }
    if pid and alive(pid) and not args.keep:
        os.kill(pid, signal.SIGTERM)  # the worker this benchmark started; `funes index` resumes it
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in results.items() if k not in ("install", "rounds")}, indent=2))
    return results


if __name__ == "__main__":
    main()

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
    uv run python bench/first_run.py --turns 200000 --max-minutes 0   # a generated whole history

``--turns N`` lays down a **generated** history instead: about N turns in N / 10.4 sessions of
10–11 turns each (the shape of the held-out history of issue 26: 19,133 sessions, 198,956
turns), written as Claude Code transcripts by :func:`build_generated_home` from a seeded random
generator over the words of the real corpus (same seed, same bytes: every run installs the same
history). ``--max-minutes 0`` stops after the first keyword recall (the install figures only).

The 1-minute load average is recorded with every round: on a shared machine, compare the
side-by-side ratios, not the absolute figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
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


#: Turns per generated session on average (198,956 turns in 19,133 sessions).
TURNS_PER_SESSION = 10.4
#: The generated history's seed: change it and every figure measured on it changes too.
SEED = 26
TOOLS = ("Bash", "Read", "Edit", "Grep", "Write", "Glob")


def _vocabulary() -> tuple[list[str], list[int]]:
    """The words of the real sessions seen at least 3 times, with their cumulative counts, so draws
    follow the corpus's own frequencies (sorted first: the draws never depend on hashing)."""
    counts: Counter[str] = Counter()
    for path in sorted((find_corpus() / "claude").rglob("*.jsonl")):
        counts.update(re.findall(r"[A-Za-z][a-z_]{1,15}", path.read_text(encoding="utf-8")))
    words = sorted(w for w, n in counts.items() if n >= 3)
    total, cum = 0, []
    for word in words:
        total += counts[word]
        cum.append(total)
    return words, cum


class _Words:
    def __init__(self) -> None:
        self.words, self.cum = _vocabulary()

    def draw(self, rng: random.Random, n: int = 1) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=n)

    def sentence(self, rng: random.Random, n: int) -> str:
        return " ".join(self.draw(rng, n)) + "."


def _record(
    session: str, uuid_: str, parent: str | None, ts: float, role: str, content: object, cwd: str
) -> str:
    message: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant":
        message.update(type="message", model="claude-opus-4-1-20250805", id=f"msg_{uuid_[:24]}")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts * 1000) % 1000:03d}Z"
    return json.dumps(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session,
            "version": "1.0.119",
            "type": role,
            "message": message,
            "uuid": uuid_,
            "timestamp": stamp,
        }
    )


def _session_lines(rng: random.Random, words: _Words, index: int, turns: int) -> list[str]:
    """One generated session: a user question, then assistant text with a tool call, its result,
    ... alternating, over ``turns`` records; a file path and an error string now and then."""
    session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    cwd = f"/home/dev/src/project{index % 37}"
    ts = 1_700_000_000 + index * 5_400 + rng.randrange(3_600)
    lines: list[str] = []
    parent: str | None = None
    tool_id = ""
    for turn in range(turns):
        uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        ts += rng.uniform(2, 90)
        if turn == 0:
            content: object = words.sentence(rng, rng.randint(8, 40))
            role = "user"
        elif turn % 2 == 1:
            role = "assistant"
            text = words.sentence(rng, rng.randint(10, 80))
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
            if turn < turns - 1:
                tool_id = f"toolu_{rng.getrandbits(64):016x}"
                name = rng.choice(TOOLS)
                target = f"{cwd}/src/{words.draw(rng)[0]}/{words.draw(rng)[0]}.py"
                arg = {"command": f"pytest -q {target}"} if name == "Bash" else {"file_path": target}
                blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": arg})
            content = blocks
        else:
            role = "user"
            result = "\n".join(words.sentence(rng, rng.randint(5, 25)) for _ in range(rng.randint(1, 6)))
            if rng.random() < 0.1:
                result += f"\nError: {words.draw(rng)[0]}Error: {words.sentence(rng, 6)}"
            content = [{"type": "tool_result", "tool_use_id": tool_id, "content": result}]
        lines.append(_record(session, uid, parent, ts, role, content, cwd))
        parent = uid
    return lines


def build_generated_home(turns: int, root: Path = HERE) -> Path:
    """A HOME whose ~/.claude holds a generated history of about ``turns`` turns (cached).

    Deterministic: one seeded generator draws every session (10 or 11 turns, so 10.4 on average),
    its ids, times and words (from the real corpus's vocabulary), in order.
    """
    home = root / f"generated-{turns}"
    done = home / ".built"
    if done.exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    rng = random.Random(SEED)
    words = _Words()
    written = index = 0
    while written < turns:
        n = min(turns - written, 11 if rng.random() < 0.4 else 10)
        lines = _session_lines(rng, words, index, n)
        project = home / ".claude" / "projects" / f"-home-dev-src-project{index % 37}"
        project.mkdir(parents=True, exist_ok=True)
        session = json.loads(lines[0])["sessionId"]
        (project / f"{session}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        written += n
        index += 1
    done.write_text(f"{index} sessions, {written} turns\n", encoding="utf-8")
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
    parser.add_argument(
        "--turns",
        type=int,
        help="a generated history of about this many turns instead of copies of the real sessions "
        "(issue 26's case: 200000)",
    )
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

    home = build_generated_home(args.turns) if args.turns else build_home(args.chunks)
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

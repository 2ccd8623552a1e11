"""Claude Code hook benchmark: how long the hook holds Claude Code, and how soon a turn is recallable.

Runs funes-claude's hook exactly as Claude Code does (the command ``install`` records, with the
event's JSON on stdin) against a throwaway HOME and ``$FUNES_HOME``, and reports:

- **hook latency**: from starting the hook process until it exits, i.e. how long Claude Code
  waits after a turn; median (and p90, max) of ``--runs`` runs, for a ``Stop`` with a transcript
  (the hook starts its worker) and for a ``SessionEnd`` whose transcript does not exist (what
  ``claude mcp list`` sends). Between runs the previous worker is let finish, so runs measure
  the hook, not a machine busy indexing;
- **end of turn to recallable**: from the moment the hook starts (the turn has just been written)
  until a word that only the new turn contains is found by BM25 in the memory, polled in-process
  every 20 ms with a read-only store. Each run appends a new turn to the same session, as a
  growing conversation does.

Usage::

    uv run python bench/hook_latency.py                 # the real embedding model
    uv run python bench/hook_latency.py --embedder hash # everything but the model (test double)
    uv run python bench/hook_latency.py --runs 5 --recall-runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

from funes_claude.wiring import hook_argv
from funes_core import InstallContext
from funes_core.home import Home
from funes_core.store import NoIndexError, open_store

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = (
    ROOT
    / "plugins"
    / "funes-claude"
    / "funes_claude"
    / "contract_fixtures"
    / "cases"
    / "basic"
    / "5d1c7a3e-2b4f-4c8e-9a61-0f3b8d2e7c45.jsonl"
)
FUNES = Path(sys.executable).parent / "funes"


def _ms(values: list[float]) -> tuple[str, str, str]:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return (
        f"{statistics.median(ordered) * 1000:.0f} ms",
        f"{p90 * 1000:.0f} ms",
        f"{ordered[-1] * 1000:.0f} ms",
    )


def _run_hook(argv: list[str], event: Mapping[str, object], env: dict[str, str]) -> float:
    payload = json.dumps(event).encode()
    started = time.perf_counter()
    done = subprocess.run(argv, input=payload, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or done.stdout:
        raise SystemExit(f"the hook misbehaved: exit {done.returncode}, stdout {done.stdout!r}")
    return elapsed


def _workers_done(log: Path) -> bool:
    """Whether every worker the hooks started (``worker <pid> started`` in the log) has exited."""
    if not log.exists():
        return True
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        match = re.search(r"worker (\d+) started", line)
        if match:
            try:
                os.kill(int(match.group(1)), 0)
            except ProcessLookupError:
                continue
            return False
    return True


def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.02)


def _turn(session: str, parent: str | None, word: str) -> tuple[str, str]:
    turn_id = str(uuid.uuid4())
    record = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/src/tidepool",
        "sessionId": session,
        "version": "2.1.197",
        "type": "user",
        "message": {"role": "user", "content": f"Remember the codeword {word} for the next release."},
        "uuid": turn_id,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
    }
    return turn_id, json.dumps(record) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20, help="hook runs per latency row (median reported)")
    parser.add_argument("--recall-runs", type=int, default=5, help="turns timed until recallable")
    parser.add_argument("--embedder", choices=["model", "hash"], default="model")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="funes-hook-bench-"))
    try:
        home, funes_home = root / "home", root / "funes-home"
        project = home / ".claude" / "projects" / "-home-dev-src-tidepool"
        project.mkdir(parents=True)
        session = FIXTURE.stem
        transcript = project / FIXTURE.name
        shutil.copy(FIXTURE, transcript)
        env = {k: v for k, v in os.environ.items() if not k.startswith("FUNES_")}
        env.update(HOME=str(home), FUNES_HOME=str(funes_home))
        if args.embedder == "hash":
            env["FUNES_EMBEDDER"] = "hash"
        seeded = subprocess.run(
            [str(FUNES), "index", str(ROOT / "examples" / "sessions"), "--wait"],
            env=env,
            capture_output=True,
            check=False,
        )
        if seeded.returncode != 0:
            raise SystemExit(seeded.stderr.decode(errors="replace"))
        ctx = InstallContext(home=home, funes_home=funes_home, funes_command=(str(FUNES),))
        argv = hook_argv(ctx)
        log = funes_home / "logs" / "claude-hook.log"

        stop = {"session_id": session, "transcript_path": str(transcript), "hook_event_name": "Stop"}
        missing = {
            "session_id": "0698810f",
            "transcript_path": str(project / "0698810f.jsonl"),
            "hook_event_name": "SessionEnd",
            "reason": "other",
        }
        stop_times: list[float] = []
        parent: str | None = None
        for run in range(args.runs):
            parent, line = _turn(session, parent, f"warmup{run}")
            with transcript.open("a", encoding="utf-8") as fh:
                fh.write(line)
            stop_times.append(_run_hook(argv, stop, env))
            _wait(lambda: _workers_done(log), 120, "the hook's worker")
        missing_times = [_run_hook(argv, missing, env) for _ in range(args.runs)]

        recall_times: list[float] = []
        store_home = Home(funes_home)
        store = None
        for run in range(args.recall_runs):
            word = f"zq{uuid.uuid4().hex[:10]}"
            parent, line = _turn(session, parent, word)
            with transcript.open("a", encoding="utf-8") as fh:
                fh.write(line)
            started = time.perf_counter()
            _run_hook(argv, stop, env)
            deadline = time.monotonic() + 120
            while True:
                try:
                    store = store or open_store(home=store_home)
                    if store.text_search(word, 1):
                        break
                except NoIndexError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit(f"turn {run} was not recallable after 120 s; see {log}")
                time.sleep(0.02)
            recall_times.append(time.perf_counter() - started)
            _wait(lambda: _workers_done(log), 120, "the hook's worker")

        rows = [
            ("hook latency, `Stop` with a transcript (starts the worker)", args.runs, *_ms(stop_times)),
            ("hook latency, `SessionEnd` without a transcript", args.runs, *_ms(missing_times)),
            ("end of turn → recallable by BM25", args.recall_runs, *_ms(recall_times)),
        ]
        cpus = os.cpu_count()
        print(
            f"funes-claude hook benchmark — {platform.python_implementation()} {platform.python_version()}, "
            f"{platform.system()} {platform.machine()}, {cpus} CPUs, embedder: {args.embedder}, "
            f"load average {os.getloadavg()[0]:.1f}\n"
        )
        print("| measurement | runs | median | p90 | max |")
        print("|---|---:|---:|---:|---:|")
        for name, runs, median, p90, worst in rows:
            print(f"| {name} | {runs} | {median} | {p90} | {worst} |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

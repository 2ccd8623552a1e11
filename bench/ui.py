"""The web viewer's speed in a real browser: first page, search after typing stops, a 2,000-turn session.

The memory is ``bench/speed.py``'s corpus (``--chunks`` rows of real text with the real model's
vectors, sessions of 40 chunks; built once and cached), copied under ``bench/.cache/ui/`` with one
more session of 2,000 turns (user text, assistant text and a tool call, tool results of ~1 KB, in
turn), whose vectors are base vectors of the corpus (the viewer's reader does not read vectors).
``funes ui --no-open`` serves it as a person starts it (real model for the query), three ways in
one run, one after the other (``--rounds`` repeats the three; every other round runs in_process
last, so that a drifting load does not always favour the same one):

- **in_process**: ``funes ui --no-service``, the viewer in its own process (its own store and model);
- **service_started**: no memory service runs; ``funes ui`` starts one (detached) and it hosts the
  viewer over the memory it opens;
- **service**: the service the previous run started, warm (as agents' sessions keep it), hosts it.

For each, the time until the address is printed, the resident memory of the ``funes ui`` process
and of the service (before and with the viewer), and what Debian's headless Chromium, driven by
Selenium, measures:

- **first page**: the sessions timeline, the first visit after start (the viewer summarises the
  memory once: one scan) and then warm (a later visit, a slice of that summary), and an older page;
- **search**: from the moment the last key of a query is typed to the moment its results are in
  the page (the debounce included, as a person waits), and the ``/search/hits`` request alone;
- **a 2,000-turn session**: navigation to its loaded page, and a scroll from top to bottom to the
  next painted frame.

Each figure is a median (and p95) over ``--runs`` runs. Usage::

    uv run python bench/ui.py                       # 100k chunks
    uv run python bench/ui.py --chunks 10000 --runs 3
    uv run python bench/ui.py --modes in_process,service_started --runs 3
    uv run python bench/ui.py --long-only --rounds 2   # only the 2,000-turn session
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import CACHE, CachedEmbedder, machine_info, median_p95
from speed import base_texts, build_corpus, queries

from funes_core.home import Home
from funes_core.ingest.chunking import chunk_turn
from funes_core.turns.format import Block, Turn

LONG_SESSION = "bench-long-2000"
LONG_TURNS = 2000
CORPUS_VERSION = "1"


def long_session() -> list[Turn]:
    turns = []
    for seq in range(LONG_TURNS):
        ts = f"2026-11-{1 + seq // 1440:02d}T{seq // 60 % 24:02d}:{seq % 60:02d}:00Z"
        kind = seq % 3
        if kind == 0:
            role, blocks = "user", (Block("text", f"step {seq}: why does the flush of batch {seq} stall?"),)
        elif kind == 1:
            role = "assistant"
            blocks = (
                Block("text", f"Looking at batch {seq}: the writer holds the lock while it fsyncs."),
                Block("tool_use", json.dumps({"command": f"pytest -k batch{seq} -x"}), tool_name="Bash"),
            )
        else:
            role, blocks = "tool", (Block("tool_result", f"batch {seq}: 12 passed\n" * 50, tool_name="Bash"),)
        turns.append(Turn(LONG_SESSION, f"long-{seq}", seq, ts, role, "claude", blocks, cwd="/src/tidepool"))
    return turns


def build(chunks: int, embedder: CachedEmbedder, progress: Progress, console: Console) -> Home:
    """speed.py's corpus of ``chunks`` rows, copied, plus the 2,000-turn session (built once)."""
    from funes_core.store import open_store

    root = CACHE / "ui" / f"corpus-{chunks}-v{CORPUS_VERSION}"
    if (root / "done.json").exists():
        return Home(root)
    source = build_corpus(chunks, embedder, progress, console)
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(source.root, root)
    texts = [t for t, _, _ in base_texts()][:64]
    vectors = np.stack(embedder.embed_documents(texts))
    rows = []
    for turn in long_session():
        for i, chunk in enumerate(chunk_turn(turn)[0]):
            rows.append(
                chunk.to_row(
                    workdir="-src-tidepool", repo="acme/tidepool", vector=vectors[(turn.seq + i) % 64]
                )
            )
    store = open_store(home=Home(root), read_consistency_interval=None)
    store.add(rows)
    store.optimize()
    (root / "done.json").write_text(json.dumps({"chunks": store.count(), "long_rows": len(rows)}) + "\n")
    return Home(root)


def chrome(profile: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    d = webdriver.Chrome(
        options=options, service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    )
    d.set_page_load_timeout(600)
    d.set_script_timeout(600)
    d.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False},
    )
    return d


def wait_for(condition: Callable[[], Any], timeout: float = 600.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError("the page did not answer")
        time.sleep(0.005)
    return value


def navigation_ms(d: Any) -> float:
    """Start of the navigation to the loaded page (``loadEventEnd``), redirects included."""
    return float(
        d.execute_script(
            "const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime;"
        )
    )


def figures(samples: Sequence[float]) -> dict[str, float]:
    med, p95 = median_p95(samples)
    return {"median_ms": round(med, 1), "p95_ms": round(p95, 1), "runs": len(samples)}


MODES = ("in_process", "service_started", "service")


def bench_env(home: Home) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FUNES_EMBEDDER", "FUNES_SERVICE")}
    env.update(FUNES_HOME=str(home.root), FUNES_STATS="off", FUNES_SERVE_IDLE="1h")
    return env


def rss_mb(pid: int | None) -> float | None:
    """A process's resident set now (``VmRSS``), in MB; ``None`` when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def service_pid(home: Home) -> int | None:
    from funes_core.serve.client import read_info

    pid = (read_info(home.root) or {}).get("pid")
    return pid if isinstance(pid, int) else None


def stop_service(home: Home) -> None:
    subprocess.run(
        [sys.executable, "-m", "funes_core", "serve", "--stop"], env=bench_env(home), capture_output=True
    )


def timeline_and_search(d: Any, base: str, runs: int, console: Console, out: dict[str, Any]) -> None:
    """The timeline (warm, and an older page) and search figures, into ``out``."""
    warm, older, listed = [], [], 0
    for _ in range(runs):
        d.get(base + "/")
        warm.append(navigation_ms(d))
        listed = int(d.execute_script("return document.querySelectorAll('li.session').length"))
        d.get(base + "/?offset=1000")
        older.append(navigation_ms(d))
    out["first_page_warm"] = figures(warm)
    out["older_page_warm"] = figures(older)
    out["sessions_listed"] = listed
    console.print(f"timeline {out['first_page_warm']}")
    d.get(base + "/search")
    # The whole query arrives as one input event (the moment typing stops): on a loaded
    # machine send_keys can pause longer than the debounce between two keys.
    typed, request = [], []
    for i, query in enumerate(queries(runs + 1)):
        before = d.execute_script("return Number(document.body.dataset.searched || 0)")
        d.execute_script(
            "const q = document.getElementById('q'); q.value = arguments[0];"
            " q.dispatchEvent(new Event('input', {bubbles: true}));",
            query,
        )
        t0 = time.perf_counter()
        wait_for(lambda b=before: d.execute_script("return Number(document.body.dataset.searched || 0)") > b)
        elapsed = (time.perf_counter() - t0) * 1000
        hits = d.execute_script(
            "const e = performance.getEntriesByType('resource')"
            ".filter(r => r.name.includes('/search/hits')); return e[e.length - 1].duration;"
        )
        if i == 0:
            out["search_first_after_typing_ms"] = round(elapsed, 1)
            out["search_first_request_ms"] = round(float(hits), 1)
            continue
        typed.append(elapsed)
        request.append(float(hits))
    out["search_after_typing"] = figures(typed)
    out["search_request"] = figures(request)
    console.print(f"search {out['search_after_typing']} (request {out['search_request']})")


def measure(home: Home, runs: int, console: Console, mode: str, *, long_only: bool = False) -> dict[str, Any]:
    env = bench_env(home)
    if mode != "service":
        stop_service(home)  # in_process holds no service beside it; service_started starts its own
    elif service_pid(home) is None:
        raise SystemExit("the `service` mode needs the service `service_started` left running: run both")
    served_by = service_pid(home)
    out: dict[str, Any] = {"service_rss_before_mb": rss_mb(served_by)}
    flags = ["--no-service"] if mode == "in_process" else []
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "funes_core", "ui", "--no-open", *flags],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().removeprefix("funes ui: ").strip()
    address_s = time.perf_counter() - started
    served = proc.stdout.readline()
    if (mode != "in_process") != ("served by the memory service" in served):
        raise SystemExit(f"{mode}: funes ui said {served.strip()!r}")
    base = url.split("/?", 1)[0]
    out["address_printed_s"] = round(address_s, 2)
    console.print(f"[bold]{mode}[/]: address after {address_s:.2f} s")
    with tempfile.TemporaryDirectory() as profile:
        d = chrome(Path(profile))
        try:
            d.get(url)
            out["first_page_first_visit_ms"] = round(navigation_ms(d), 1)
            console.print(f"first visit {out['first_page_first_visit_ms']} ms")
            if not long_only:
                timeline_and_search(d, base, runs, console, out)
            loads, scrolls = [], []
            for _ in range(runs):
                d.get(base + f"/session?id={LONG_SESSION}")
                loads.append(navigation_ms(d))
                scrolls.append(
                    float(
                        d.execute_async_script(
                            "const done = arguments[0]; const t = performance.now();"
                            " window.scrollTo(0, document.body.scrollHeight);"
                            " requestAnimationFrame(() =>"
                            " requestAnimationFrame(() => done(performance.now() - t)));"
                        )
                    )
                )
            out["long_session_turns"] = int(
                d.execute_script("return document.querySelectorAll('article.turn').length")
            )
            out["long_session_html_bytes"] = len(d.page_source.encode())
            out["long_session_load"] = figures(loads)
            out["long_session_scroll"] = figures(scrolls)
            console.print(f"2,000 turns {out['long_session_load']} scroll {out['long_session_scroll']}")
            out["funes_ui_rss_mb"] = rss_mb(proc.pid)
            out["service_rss_with_viewer_mb"] = rss_mb(service_pid(home))
        finally:
            d.quit()
            proc.send_signal(signal.SIGINT)  # Ctrl-C: the service closes the viewer it hosts
            proc.wait(timeout=60)
    return out


def _order(modes: list[str], turn: int) -> list[str]:
    """Every other round runs in_process last instead of first (the machine's load drifts during a
    run; service_started always comes right before service, whose service it leaves running)."""
    if turn % 2 and modes and modes[0] == "in_process":
        return [*modes[1:], modes[0]]
    return modes


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000, help="corpus size (default 100000)")
    parser.add_argument("--runs", type=int, default=7, help="runs per figure (default 7)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument(
        "--long-only", action="store_true", help="measure only the 2,000-turn session (and the first visit)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="times the modes are run in turn (default 1)")
    parser.add_argument(
        "--modes", default=",".join(MODES), help=f"comma-separated, in this order (default {','.join(MODES)})"
    )
    args = parser.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or set(modes) - set(MODES):
        parser.error(f"--modes: choose among {', '.join(MODES)}")
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        home = build(args.chunks, CachedEmbedder(), progress, console)
    info = json.loads((home.root / "done.json").read_text())
    results: dict[str, Any] = {"machine": machine_info(), "corpus": info, "rounds": []}
    try:
        for turn in range(args.rounds):
            rounds: dict[str, Any] = {}
            for mode in _order(modes, turn):
                rounds[mode] = {"load_before": os.getloadavg()[0]}
                rounds[mode].update(measure(home, args.runs, console, mode, long_only=args.long_only))
                rounds[mode]["load_after"] = os.getloadavg()[0]
            results["rounds"].append(rounds)
    finally:
        stop_service(home)
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return results


if __name__ == "__main__":
    main()

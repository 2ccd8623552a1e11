"""Retrieval quality on LoCoMo-10: does ``funes recall`` find the turns that answer each question?

LoCoMo (Maharana et al., 2024) holds 10 long two-person conversations (5,882 turns in 272
sessions) and 1,986 questions, each naming its evidence turns (``D<session>:<turn>``). This
benchmark

1. converts every conversation into turns files: one funes session per LoCoMo session, one turn
   per utterance, ``turn_uuid`` = the dia_id with ``:`` → ``-`` (so every hit maps back to its
   dia_id); see ``TextOptions`` in ``bench/_common.py`` for what goes into each turn's text;
2. indexes each conversation into its own throwaway memory with the real pipeline
   (``run_index``, the real model), cached under ``bench/.cache/locomo/`` (resumable: an
   interrupted build continues, a finished one is reused; embeddings are cached by text);
3. asks every question through funes' own ``recall()`` (the same code ``funes recall`` and the
   MCP ``recall`` tool run) with each leg alone, the default hybrid and every profile, and, on the
   very same stored turns, a plain BM25 (``bm25s``) and agent-memfas's FTS5 search;
4. maps each hit (a chunk) back to its turn, dedupes turns keeping rank order, and reports
   turn-level recall@5/10/25 (proportional: the share of a question's evidence turns found in the
   first k, averaged over questions) and NDCG@10, overall and by question category, with and
   without category 5 (adversarial: questions about things that were never said by that person).

One memory per conversation, as in the LoCoMo paper's retrieval evaluation: a question about
Caroline and Melanie is searched among their turns only.

Usage::

    uv run python bench/quality.py            # all 10 conversations (~1.5 min; ~3 min the first time)
    uv run python bench/quality.py --quick    # 2 conversations, for development
    uv run python bench/quality.py --markdown # also print the tables as Markdown
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import (
    CACHE,
    CATEGORIES,
    ROOT,
    CachedEmbedder,
    Question,
    TextOptions,
    convert_conversation,
    dedupe,
    dia_id_of,
    file_sha,
    find_locomo,
    load_locomo,
    machine_info,
    ndcg_at,
    questions_of,
    recall_at,
)

from funes_core.home import Home
from funes_core.ingest.engine import IndexOptions, run_index
from funes_core.models.embed import Embedder
from funes_core.read.recall import DEFAULT_CANDIDATES, Leg, RecallParams, recall
from funes_core.store import open_store
from funes_core.store.base import Filters, Hit, Store, Vector
from funes_core.turns.format import turns_to_jsonl, write_turns_file

KS = (5, 10, 25)
MAX_K = max(KS)
QUICK = ("conv-26", "conv-30")
MEMFAS_VENV = CACHE / "memfas-venv"
#: Files whose code decides what is stored: a change to any of them rebuilds the cached memories.
_PIPELINE = (
    "ingest/chunking.py",
    "ingest/engine.py",
    "ingest/redact.py",
    "turns/format.py",
    "store/lance.py",
)
#: "Now" for the recent profile (after every LoCoMo session; only age differences matter).
NOW = datetime(2025, 1, 1, tzinfo=UTC)


# ----------------------------------------------------------------------------- indexing


class _IndexBar:
    """``IndexProgress`` → one rich task."""

    def __init__(self, progress: Progress, label: str) -> None:
        self.progress = progress
        self.task = progress.add_task(label, total=None)
        self.label = label

    def writing(self, total_steps: int) -> None:
        self.progress.update(self.task, description=f"{self.label}: write", total=total_steps, completed=0)

    def wrote(self, *, steps: int, turns: int, chunks: int) -> None:
        self.progress.advance(self.task, steps)

    def embedding(self, total: int) -> None:
        self.progress.update(self.task, description=f"{self.label}: embed", total=total, completed=0)

    def embedded(self, n: int) -> None:
        self.progress.advance(self.task, n)

    def close(self) -> None:
        self.progress.remove_task(self.task)


def build_memory(
    sample: dict[str, Any],
    opts: TextOptions,
    embedder: Embedder,
    progress: Progress,
    cache: Path = CACHE,
) -> Home:
    """The conversation's memory, built with the real pipeline or reused from the cache."""
    sessions = convert_conversation(sample, opts)
    body = "".join(turns_to_jsonl(s) for s in sessions)
    code = file_sha(ROOT / "funes_core" / name for name in _PIPELINE)
    key = hashlib.sha1((body + code).encode(), usedforsecurity=False).hexdigest()[:12]
    root = cache / "locomo" / f"{opts.tag}-{key}" / str(sample["sample_id"])
    home = Home(root / "home")
    done = root / "done.json"
    if done.exists():
        return home
    turns_dir = root / "turns"
    for turns in sessions:
        target = turns_dir / f"{turns[0].session_id}.funes.jsonl"
        if not target.exists():
            # A fixed mtime keeps the file's stamp stable, so a resumed run skips what it stored.
            write_turns_file(target, turns, mtime=1_700_000_000)
    bar = _IndexBar(progress, f"index {sample['sample_id']}")
    report = run_index(
        IndexOptions(path=turns_dir), home=home, embedder=embedder, progress=bar, warn=lambda m: None
    )
    if report.rejected or report.owed:
        raise SystemExit(
            f"{sample['sample_id']}: indexing left {report.owed} owed, rejected {report.rejected}"
        )
    done.write_text(json.dumps({"chunks": report.chunks, "turns": report.turns}) + "\n")
    return home


class MemoStore:
    """A store whose two search legs remember their answers: the legs do not depend on the profile,
    so each question costs one BM25 and one vector search however many profiles are fused."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self._memo: dict[tuple[Any, ...], list[Hit]] = {}
        self.label = inner.label

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def vector_search(self, vector: Vector, k: int, filters: Filters | None = None) -> list[Hit]:
        key = ("v", np.asarray(vector, dtype=np.float32).tobytes(), k, filters)
        if key not in self._memo:
            self._memo[key] = self._inner.vector_search(vector, k, filters)
        return self._memo[key]

    def text_search(self, query: str, k: int, filters: Filters | None = None) -> list[Hit]:
        key = ("t", query, k, filters)
        if key not in self._memo:
            self._memo[key] = self._inner.text_search(query, k, filters)
        return self._memo[key]


# ----------------------------------------------------------------------------- methods


@dataclass(frozen=True, slots=True)
class FunesRow:
    name: str
    legs: tuple[Leg, ...]
    profile: str
    fusion: str = "relative"


BOTH = (Leg.VECTOR, Leg.TEXT)
FUNES_ROWS: tuple[FunesRow, ...] = (
    FunesRow("funes BM25 leg only", (Leg.TEXT,), "balanced"),
    FunesRow("funes vector leg only", (Leg.VECTOR,), "balanced"),
    FunesRow("funes hybrid, balanced (default)", BOTH, "balanced"),
    FunesRow("funes hybrid, semantic", BOTH, "semantic"),
    FunesRow("funes hybrid, lexical", BOTH, "lexical"),
    FunesRow("funes hybrid, recent", BOTH, "recent"),
    FunesRow("funes hybrid, balanced, RRF fusion (before)", BOTH, "balanced", "rrf"),
)
DEFAULT_ROW = FUNES_ROWS[2].name


def turn_texts(store: Store) -> dict[str, str]:
    """dia_id → the stored text of that turn (its chunks joined), exactly what funes indexed."""
    rows = sorted(store.scan(), key=lambda r: (r.seq, r.block_idx, r.split_idx))
    out: dict[str, list[str]] = {}
    for row in rows:
        out.setdefault(dia_id_of(row.turn_uuid), []).append(row.text)
    return {k: "\n".join(v) for k, v in out.items()}


def run_bm25s(docs: dict[str, str], questions: Sequence[Question]) -> dict[str, list[str]] | None:
    try:
        import bm25s
    except ImportError:
        return None
    ids = list(docs)
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize([docs[i] for i in ids], stopwords="en", show_progress=False), show_progress=False
    )
    k = min(MAX_K, len(ids))
    tokens = bm25s.tokenize([q.text for q in questions], stopwords="en", show_progress=False)
    found, scores = retriever.retrieve(tokens, k=k, show_progress=False)
    out: dict[str, list[str]] = {}
    for q, row, score in zip(questions, found, scores, strict=True):
        out[qid(q)] = [ids[int(i)] for i, s in zip(row, score, strict=True) if s > 0]
    return out


def run_memfas(
    payload: dict[str, dict[str, Any]], console: Console
) -> tuple[str, dict[str, dict[str, list[str]]]] | None:
    """agent-memfas in its own venv (``bench/.cache/memfas-venv``); ``None`` if it is not installed."""
    python = MEMFAS_VENV / "bin" / "python"
    if not python.exists():
        console.print(
            "[yellow]agent-memfas not installed: uv venv bench/.cache/memfas-venv && "
            "uv pip install --python bench/.cache/memfas-venv/bin/python agent-memfas[/]"
        )
        return None
    job = {
        "db_dir": str(CACHE / "memfas-db"),
        "limit": MAX_K,
        "modes": ["as-is", "or"],
        "conversations": payload,
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
        json.dump(job, fh)
    try:
        proc = subprocess.run(
            [str(python), str(Path(__file__).parent / "_memfas_runner.py"), fh.name],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        Path(fh.name).unlink(missing_ok=True)
    if proc.returncode != 0:
        console.print(f"[red]agent-memfas run failed:[/] {proc.stderr.strip()[-2000:]}")
        return None
    out = json.loads(proc.stdout)
    return str(out["version"]), out["ranked"]


def qid(q: Question) -> str:
    return f"{q.conv}#{q.index}"


# ----------------------------------------------------------------------------- scoring


@dataclass(slots=True)
class Scores:
    per_question: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, q: Question, ranked: Sequence[str]) -> None:
        ranked = dedupe(ranked)
        m = {f"r@{k}": recall_at(ranked, q.evidence, k) for k in KS}
        m["ndcg@10"] = ndcg_at(ranked, q.evidence, 10)
        self.per_question[qid(q)] = m

    def mean(self, questions: Sequence[Question], metric: str) -> float:
        vals = [self.per_question[qid(q)][metric] for q in questions if qid(q) in self.per_question]
        return float(np.mean(vals)) if vals else float("nan")


@dataclass(slots=True)
class ShownScores:
    """Share of evidence turns among all the turns the default output shows (hits and neighbours)."""

    found: dict[str, float] = field(default_factory=dict)
    turns: dict[str, int] = field(default_factory=dict)

    def add(self, q: Question, shown: Sequence[str]) -> None:
        self.found[qid(q)] = recall_at(shown, q.evidence, max(len(shown), 1))
        self.turns[qid(q)] = len(shown)

    def mean(self, questions: Sequence[Question]) -> tuple[float, float]:
        keys = [qid(q) for q in questions if qid(q) in self.found]
        if not keys:
            return float("nan"), float("nan")
        return float(np.mean([self.found[k] for k in keys])), float(np.mean([self.turns[k] for k in keys]))


def summarize(results: dict[str, Scores], questions: Sequence[Question]) -> dict[str, dict[str, Any]]:
    core = [q for q in questions if q.category != 5]
    out: dict[str, dict[str, Any]] = {}
    for name, scores in results.items():
        row: dict[str, Any] = {f"{m}": scores.mean(core, m) for m in ("r@5", "r@10", "r@25", "ndcg@10")}
        row["r@10 all"] = scores.mean(questions, "r@10")
        row["ndcg@10 all"] = scores.mean(questions, "ndcg@10")
        for cat in CATEGORIES:
            sub = [q for q in questions if q.category == cat]
            row[f"cat{cat} r@10"] = scores.mean(sub, "r@10")
            row[f"cat{cat} r@25"] = scores.mean(sub, "r@25")
        out[name] = row
    return out


def _fmt(x: float) -> str:
    return "—" if x != x else f"{x:.3f}"


def tables(
    summary: dict[str, dict[str, Any]], counts: dict[int, int]
) -> list[tuple[str, list[str], list[list[str]]]]:
    main_cols = ["method", "R@5", "R@10", "R@25", "NDCG@10", "R@10 (1–5)", "NDCG@10 (1–5)"]
    main = [
        [name, *(_fmt(r[m]) for m in ("r@5", "r@10", "r@25", "ndcg@10", "r@10 all", "ndcg@10 all"))]
        for name, r in summary.items()
    ]
    cat_cols = ["method", *(f"{c} {CATEGORIES[c]} (n={counts.get(c, 0)})" for c in CATEGORIES)]
    by_cat = [[name, *(_fmt(r[f"cat{c} r@10"]) for c in CATEGORIES)] for name, r in summary.items()]
    by_cat25 = [[name, *(_fmt(r[f"cat{c} r@25"]) for c in CATEGORIES)] for name, r in summary.items()]
    return [
        ("Turn-level retrieval, categories 1–4 (and 1–5)", main_cols, main),
        ("Recall@10 by category", cat_cols, by_cat),
        ("Recall@25 by category", cat_cols, by_cat25),
    ]


def markdown(title: str, cols: list[str], rows: list[list[str]]) -> str:
    lines = [f"**{title}**", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument("--conversations", nargs="*", help="sample ids to run (default: all)")
    parser.add_argument("--no-speaker", action="store_true", help="do not prefix each turn with its speaker")
    parser.add_argument("--no-caption", action="store_true", help="leave out the shared photos' captions")
    parser.add_argument(
        "--date", action="store_true", help="prefix each turn with its session date (ablation)"
    )
    parser.add_argument("--candidates", type=int, default=DEFAULT_CANDIDATES, help="candidates per leg")
    parser.add_argument("--no-baselines", action="store_true", help="skip bm25s and agent-memfas")
    parser.add_argument("--markdown", action="store_true", help="also print the tables as Markdown")
    parser.add_argument("--json", type=Path, help="write the summary and per-question scores here")
    args = parser.parse_args(argv)

    console = Console(stderr=True)
    opts = TextOptions(speaker=not args.no_speaker, caption=not args.no_caption, date=args.date)
    data = load_locomo()
    wanted = set(QUICK) if args.quick else set(args.conversations or [])
    samples = [s for s in data if not wanted or s["sample_id"] in wanted]
    if not samples:
        raise SystemExit(f"no conversation matches {sorted(wanted)}")
    questions = [q for s in samples for q in questions_of(s)]
    embedder = CachedEmbedder()
    results: dict[str, Scores] = {r.name: Scores() for r in FUNES_ROWS}
    default_view = ShownScores()
    baseline_docs: dict[str, dict[str, Any]] = {}
    bm25s_ranked: dict[str, list[str]] = {}
    bm25s_missing = False
    started = time.perf_counter()
    query_s: dict[str, float] = {}
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        overall = progress.add_task("conversations", total=len(samples))
        for sample in samples:
            sid = str(sample["sample_id"])
            home = build_memory(sample, opts, embedder, progress)
            store = MemoStore(open_store(home=home, expect=embedder.stamp))
            typed = cast(Store, store)
            conv_qs = [q for q in questions if q.conv == sid]
            task = progress.add_task(f"ask {sid}", total=len(conv_qs))
            for q in conv_qs:
                for row in FUNES_ROWS:
                    t = time.perf_counter()
                    params = RecallParams(
                        k=MAX_K,
                        candidates=max(args.candidates, MAX_K),
                        neighbors=0,
                        legs=row.legs,
                        profile=row.profile,
                        fusion=row.fusion,
                    )
                    embed: Callable[[str], Vector] | None = (
                        embedder.embed_query if Leg.VECTOR in row.legs else None
                    )
                    result = recall(typed, q.text, params, embed_query=embed, now=NOW)
                    query_s[row.name] = query_s.get(row.name, 0.0) + time.perf_counter() - t
                    results[row.name].add(q, [dia_id_of(h.row.turn_uuid) for h in result.hits])
                # What an agent sees by default: 8 hits, each with its ±1 neighbours previewed.
                shown = recall(typed, q.text, RecallParams(), embed_query=embedder.embed_query, now=NOW)
                turns = [dia_id_of(h.row.turn_uuid) for h in shown.hits]
                turns += [dia_id_of(n.turn_uuid) for h in shown.hits for n in h.neighbors]
                default_view.add(q, dedupe(turns))
                progress.advance(task)
            progress.remove_task(task)
            if not args.no_baselines:
                docs = turn_texts(typed)
                ranked = run_bm25s(docs, conv_qs)
                if ranked is None:
                    bm25s_missing = True
                else:
                    bm25s_ranked.update(ranked)
                baseline_docs[sid] = {
                    "docs": [[k, v] for k, v in docs.items()],
                    "questions": [[qid(q), q.text] for q in conv_qs],
                }
            progress.advance(overall)
    memfas_version = None
    if not args.no_baselines:
        by_id = {qid(q): q for q in questions}
        if bm25s_missing:
            console.print("[yellow]bm25s is not installed (uv add --dev bm25s): plain BM25 row skipped[/]")
        else:
            import bm25s

            name = f"bm25s {bm25s.__version__} (plain BM25, English stop words)"
            results[name] = Scores()
            for key, ranked in bm25s_ranked.items():
                results[name].add(by_id[key], ranked)
        with console.status("agent-memfas: indexing and searching in its own venv"):
            memfas = run_memfas(baseline_docs, console)
        if memfas is not None:
            memfas_version, ranked_by_mode = memfas
            labels = {"as-is": "question as-is (implicit AND)", "or": "question words OR'd"}
            for mode, ranked_map in ranked_by_mode.items():
                name = f"agent-memfas {memfas_version} FTS5, {labels[mode]}"
                results[name] = Scores()
                for key, ranked in ranked_map.items():
                    results[name].add(by_id[key], ranked)
    elapsed = time.perf_counter() - started

    summary = summarize(results, questions)
    counts = {c: sum(1 for q in questions if q.category == c) for c in CATEGORIES}
    out = Console(width=max(Console().width, 150))
    for title, cols, rows in tables(summary, counts):
        table = Table(title=title)
        for i, c in enumerate(cols):
            table.add_column(c, justify="left" if i == 0 else "right")
        for r in rows:
            table.add_row(*r, style="bold" if r[0] == DEFAULT_ROW else None)
        out.print(table)
    n_q = len(questions)
    seen, n_turns = default_view.mean([q for q in questions if q.category != 5])
    out.print(
        f"Default output (k=8 hits, ±1 neighbour previewed under each): {seen:.3f} of the evidence turns "
        f"(categories 1–4) are among the {n_turns:.1f} distinct turns shown on average "
        "(neighbour previews are cut at 160 characters)."
    )
    out.print(
        f"{len(samples)} conversation(s), {n_q} questions ({n_q - counts[5]} in categories 1–4); text: "
        f"{opts.tag} (s=speaker, c=caption, d=date); candidates/leg {max(args.candidates, MAX_K)}; "
        f"{elapsed:.0f} s; embeddings computed {embedder.computed}, cached {embedder.hits}; "
        f"data {find_locomo()}"
    )
    for row in FUNES_ROWS:
        out.print(f"  {row.name}: {1000 * query_s[row.name] / max(n_q, 1):.1f} ms/question (legs memoised)")
    if args.markdown:
        for title, cols, rows in tables(summary, counts):
            print(markdown(title, cols, rows))
    report = {
        "machine": machine_info(),
        "conversations": [s["sample_id"] for s in samples],
        "questions": n_q,
        "text_options": opts.tag,
        "candidates": max(args.candidates, MAX_K),
        "memfas_version": memfas_version,
        "elapsed_s": round(elapsed, 1),
        "summary": summary,
        "default_output": {"evidence_shown": seen, "turns_shown": n_turns},
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        full = {**report, "per_question": {k: v.per_question for k, v in results.items()}}
        args.json.write_text(json.dumps(full, indent=2) + "\n")
    embedder.close()
    return report


def _clear_cache() -> None:  # pragma: no cover - manual helper
    shutil.rmtree(CACHE / "locomo", ignore_errors=True)


if __name__ == "__main__":
    main()

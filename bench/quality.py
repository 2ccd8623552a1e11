"""Retrieval quality: does ``funes recall`` find the turns that answer each question?

Two benchmarks, one command, offline:

- **LoCoMo-10** (Maharana et al., 2024): 10 long two-person conversations (5,882 turns in 272
  sessions) and 1,986 questions, each naming its evidence turns (``D<session>:<turn>``). Each
  conversation is converted into turns files (one funes session per LoCoMo session, one turn per
  utterance, ``turn_uuid`` = the dia_id with ``:`` → ``-``; see ``TextOptions`` in
  ``bench/_common.py``) and indexed into its own memory, as in the LoCoMo paper's retrieval
  evaluation. Scores are over categories 1–4 (category 5 asks about things never said).
- **Agent sessions** (``bench/agent_sessions/``, see its README): real Claude Code sessions of
  other people's projects, converted by funes' own converters into one memory, and questions
  written by reading them, in five kinds (exact identifier, paraphrase, temporal, multi-session,
  superseded decision), asked "now" as the manifest states.

For both, every question goes through funes' own ``recall()`` (the code behind ``funes recall`` and
the MCP ``recall`` tool) with each leg alone, the default hybrid and every profile, and, on the very
same stored turns, a plain BM25 (``bm25s``) and agent-memfas's FTS5 search. Each hit (a chunk) is
mapped back to its turn, turns are deduplicated in rank order, and the tables give turn-level
recall@5/10/25 (proportional: the share of a question's evidence turns in the first k, averaged
over questions) and NDCG@10, per LoCoMo category and per agent question kind, with the dev and test
halves of each benchmark (a hash of the question id) side by side: parameters are chosen on dev,
figures are quoted on test. Memories are built with the real pipeline (``run_index``, the real
model) and cached under ``bench/.cache/`` (resumable; embeddings are cached by text).

Usage::

    uv run python bench/quality.py                  # both benchmarks (~3 min warm)
    uv run python bench/quality.py --bench agent    # only the agent sessions
    uv run python bench/quality.py --bench locomo --quick   # 2 LoCoMo conversations
    uv run python bench/quality.py --markdown --json bench/.cache/results/quality.json
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

from _agent import (
    KINDS,
    AgentQuestion,
    convert_all,
    evidence_problems,
    find_corpus,
    load_manifest,
    load_questions,
    split_of,
    turn_key,
)
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
from funes_core.models.vectors import Vector
from funes_core.read.handle import count_tokens
from funes_core.read.recall import (
    DEFAULT_CANDIDATES,
    Leg,
    RecallParams,
    pack_to_budget,
    recall,
    render_recall,
)
from funes_core.store import open_store
from funes_core.store.base import Filters, Hit, Row, Store
from funes_core.turns.format import Turn, turns_to_jsonl, write_turns_file

KS = (5, 10, 25)
MAX_K = max(KS)
QUICK = ("conv-26", "conv-30")
MEMFAS_VENV = CACHE / "memfas-venv"
#: Files whose code decides what is stored: a change to any of them rebuilds the cached memories.
_PIPELINE = (
    "ingest/chunking.py",
    "ingest/engine.py",
    "ingest/discovery.py",
    "redact/__init__.py",
    "redact/rules.py",
    "redact/names.py",
    "redact/judge.py",
    "secret_formats.toml",
    "turns/format.py",
    "store/lance.py",
    "store/lance_table.py",
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
    return build_cached(
        sessions, embedder, progress, cache / "locomo", f"{opts.tag}-", str(sample["sample_id"])
    )


def build_cached(
    sessions: Sequence[Sequence[Turn]],
    embedder: Embedder,
    progress: Progress,
    parent: Path,
    prefix: str,
    name: str,
    *,
    embed: bool = True,
) -> Home:
    """A memory of ``sessions`` built with the real pipeline (``run_index``), or reused from the cache.

    The cache key hashes the turns and the code that decides what is stored, so changing either
    builds a new memory; an interrupted build resumes (the turns files keep a fixed mtime). With
    ``embed`` false the memory is left as ``funes index`` leaves it before the background worker
    has run: text only, every embedding owed.
    """
    body = "".join(turns_to_jsonl(s) for s in sessions)
    code = file_sha(ROOT / "funes_core" / part for part in _PIPELINE)
    key = hashlib.sha1((body + code).encode(), usedforsecurity=False).hexdigest()[:12]
    root = parent / f"{prefix}{key}" / name
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
    bar = _IndexBar(progress, f"index {name}")
    options = IndexOptions(path=turns_dir, embed="here" if embed else "none")
    report = run_index(options, home=home, embedder=embedder, progress=bar, warn=lambda m: None)
    if report.rejected or (embed and report.owed):
        raise SystemExit(f"{name}: indexing left {report.owed} owed, rejected {report.rejected}")
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
    #: ``RecallParams`` fields set away from their defaults (ablations).
    overrides: tuple[tuple[str, Any], ...] = ()


BOTH = (Leg.VECTOR, Leg.TEXT)
#: No time windows, no turn context: the ranking as it was before they were added.
PLAIN: tuple[tuple[str, Any], ...] = (("dates", False), ("successor", 0.0), ("predecessor", 0.0))
#: Issue 26's ranking signals, each alone on top of the default (``RecallParams``' fields).
ABLATIONS: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("default + identifier weight 2", (("exact_weight", 2.0),)),
    ("default + session evidence 0.3", (("session_weight", 0.3),)),
    ("default + depth growth 1", (("depth_growth", 1.0),)),
    ("default + identifier weight 2 + session 0.3", (("exact_weight", 2.0), ("session_weight", 0.3))),
)
FUNES_ROWS: tuple[FunesRow, ...] = (
    FunesRow("funes BM25 leg alone", (Leg.TEXT,), "balanced", overrides=PLAIN),
    FunesRow("funes vector leg alone", (Leg.VECTOR,), "balanced", overrides=PLAIN),
    FunesRow("funes hybrid, balanced (default)", BOTH, "balanced"),
    FunesRow("funes hybrid, semantic", BOTH, "semantic"),
    FunesRow("funes hybrid, lexical", BOTH, "lexical"),
    FunesRow("funes hybrid, recent", BOTH, "recent"),
    FunesRow("default without time windows", BOTH, "balanced", overrides=(("dates", False),)),
    FunesRow(
        "default without turn context", BOTH, "balanced", overrides=(("successor", 0.0), ("predecessor", 0.0))
    ),
    FunesRow("default before windows and context (0.628 / 0.548)", BOTH, "balanced", overrides=PLAIN),
    FunesRow("funes hybrid, balanced, RRF fusion, plain (before 0.628)", BOTH, "balanced", "rrf", PLAIN),
    *(FunesRow(name, BOTH, "balanced", overrides=o) for name, o in ABLATIONS),
)
DEFAULT_ROW = FUNES_ROWS[2].name


def turn_texts(store: Store, key_of: Callable[[Row], str]) -> dict[str, str]:
    """Turn key → the stored text of that turn (its chunks joined): exactly what funes indexed."""
    rows = sorted(store.scan(), key=lambda r: (r.session_id, r.seq, r.block_idx, r.split_idx))
    out: dict[str, list[str]] = {}
    for row in rows:
        out.setdefault(key_of(row), []).append(row.text)
    return {k: "\n".join(v) for k, v in out.items()}


def locomo_key(row: Row) -> str:
    return dia_id_of(row.turn_uuid)


def agent_key(row: Row) -> str:
    return turn_key(row.session_id, row.turn_uuid)


def run_bm25s(docs: dict[str, str], queries: Sequence[tuple[str, str]]) -> dict[str, list[str]] | None:
    """Plain BM25 (``bm25s``, English stop words, no stemmer) over ``docs``: query id → ranked doc ids."""
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
    tokens = bm25s.tokenize([text for _, text in queries], stopwords="en", show_progress=False)
    found, scores = retriever.retrieve(tokens, k=k, show_progress=False)
    out: dict[str, list[str]] = {}
    for (key, _), row, score in zip(queries, found, scores, strict=True):
        out[key] = [ids[int(i)] for i, s in zip(row, score, strict=True) if s > 0]
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
    """Per-question recall@k and NDCG@10 of one method, keyed by question id."""

    per_question: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, key: str, evidence: Sequence[str], ranked: Sequence[str], *, ordered: bool = False) -> None:
        ranked = dedupe(ranked)
        m = {f"r@{k}": recall_at(ranked, evidence, k) for k in KS}
        m["ndcg@10"] = ndcg_at(ranked, evidence, 10)
        if ordered:
            # Superseded questions: is the current answer (listed first) ranked above every
            # passage it replaced? (An old passage not found at all counts as ranked below.)
            pos = {turn: i for i, turn in enumerate(ranked[:MAX_K])}
            first = pos.get(evidence[0])
            m["current first"] = float(
                first is not None and all(pos.get(e, MAX_K) > first for e in evidence[1:])
            )
        self.per_question[key] = m

    def mean(self, keys: Sequence[str], metric: str) -> float:
        vals = [
            self.per_question[k][metric]
            for k in keys
            if k in self.per_question and metric in self.per_question[k]
        ]
        return float(np.mean(vals)) if vals else float("nan")


@dataclass(slots=True)
class ShownScores:
    """Share of evidence turns among all the turns the default output shows (hits and neighbours)."""

    found: dict[str, float] = field(default_factory=dict)
    turns: dict[str, int] = field(default_factory=dict)

    def add(self, key: str, evidence: Sequence[str], shown: Sequence[str]) -> None:
        self.found[key] = recall_at(shown, evidence, max(len(shown), 1))
        self.turns[key] = len(shown)

    def mean(self, keys: Sequence[str]) -> tuple[float, float]:
        keys = [k for k in keys if k in self.found]
        if not keys:
            return float("nan"), float("nan")
        return float(np.mean([self.found[k] for k in keys])), float(np.mean([self.turns[k] for k in keys]))


def summarize(results: dict[str, Scores], questions: Sequence[Question]) -> dict[str, dict[str, Any]]:
    core = [qid(q) for q in questions if q.category != 5]
    every = [qid(q) for q in questions]
    out: dict[str, dict[str, Any]] = {}
    for name, scores in results.items():
        row: dict[str, Any] = {f"{m}": scores.mean(core, m) for m in ("r@5", "r@10", "r@25", "ndcg@10")}
        row["r@10 all"] = scores.mean(every, "r@10")
        row["ndcg@10 all"] = scores.mean(every, "ndcg@10")
        for split in ("dev", "test"):
            keys = [qid(q) for q in questions if q.category != 5 and split_of(qid(q)) == split]
            row[f"r@5 {split}"] = scores.mean(keys, "r@5")
            row[f"r@10 {split}"] = scores.mean(keys, "r@10")
        for cat in CATEGORIES:
            sub = [qid(q) for q in questions if q.category == cat]
            row[f"cat{cat} r@10"] = scores.mean(sub, "r@10")
            row[f"cat{cat} r@25"] = scores.mean(sub, "r@25")
        out[name] = row
    return out


def summarize_agent(
    results: dict[str, Scores], questions: Sequence[AgentQuestion]
) -> dict[str, dict[str, Any]]:
    every = [q.id for q in questions]
    out: dict[str, dict[str, Any]] = {}
    for name, scores in results.items():
        row: dict[str, Any] = {m: scores.mean(every, m) for m in ("r@5", "r@10", "r@25", "ndcg@10")}
        for split in ("dev", "test"):
            keys = [q.id for q in questions if q.split == split]
            row[f"r@5 {split}"] = scores.mean(keys, "r@5")
            row[f"r@10 {split}"] = scores.mean(keys, "r@10")
        for kind in KINDS:
            sub = [q.id for q in questions if q.kind == kind]
            for m in ("r@5", "r@10", "ndcg@10"):
                row[f"{kind} {m}"] = scores.mean(sub, m)
        row["current first"] = scores.mean(
            [q.id for q in questions if q.kind == "superseded"], "current first"
        )
        out[name] = row
    return out


def _fmt(x: float) -> str:
    return "—" if x != x else f"{x:.3f}"


Tables = list[tuple[str, list[str], list[list[str]]]]


def tables(summary: dict[str, dict[str, Any]], counts: dict[int, int]) -> Tables:
    main_cols = [
        "method",
        "R@5",
        "R@10",
        "R@25",
        "NDCG@10",
        "R@10 (1–5)",
        "NDCG@10 (1–5)",
        "R@10 dev",
        "R@10 test",
    ]
    metrics = ("r@5", "r@10", "r@25", "ndcg@10", "r@10 all", "ndcg@10 all", "r@10 dev", "r@10 test")
    main = [[name, *(_fmt(r[m]) for m in metrics)] for name, r in summary.items()]
    cat_cols = ["method", *(f"{c} {CATEGORIES[c]} (n={counts.get(c, 0)})" for c in CATEGORIES)]
    by_cat = [[name, *(_fmt(r[f"cat{c} r@10"]) for c in CATEGORIES)] for name, r in summary.items()]
    by_cat25 = [[name, *(_fmt(r[f"cat{c} r@25"]) for c in CATEGORIES)] for name, r in summary.items()]
    return [
        ("LoCoMo: turn-level retrieval, categories 1–4 (and 1–5)", main_cols, main),
        ("LoCoMo: recall@10 by category", cat_cols, by_cat),
        ("LoCoMo: recall@25 by category", cat_cols, by_cat25),
    ]


def agent_tables(summary: dict[str, dict[str, Any]], counts: dict[str, int]) -> Tables:
    n = sum(counts.values())
    main_cols = ["method", "R@5", "R@10", "R@25", "NDCG@10", "R@10 dev", "R@10 test", "current first"]
    metrics = ("r@5", "r@10", "r@25", "ndcg@10", "r@10 dev", "r@10 test", "current first")
    main = [[name, *(_fmt(r[m]) for m in metrics)] for name, r in summary.items()]
    kind_cols = ["method", *(f"{k} (n={counts.get(k, 0)})" for k in KINDS)]
    out: Tables = [(f"Agent sessions: turn-level retrieval, all {n} questions", main_cols, main)]
    for metric, label in (("r@10", "recall@10"), ("r@5", "recall@5"), ("ndcg@10", "NDCG@10")):
        rows = [[name, *(_fmt(r[f"{k} {metric}"]) for k in KINDS)] for name, r in summary.items()]
        out.append((f"Agent sessions: {label} by kind", kind_cols, rows))
    return out


def markdown(title: str, cols: list[str], rows: list[list[str]]) -> str:
    lines = [f"**{title}**", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def print_tables(out: Console, parts: Tables) -> None:
    for title, cols, rows in parts:
        table = Table(title=title)
        for i, c in enumerate(cols):
            table.add_column(c, justify="left" if i == 0 else "right")
        for r in rows:
            table.add_row(*r, style="bold" if r[0] == DEFAULT_ROW else None)
        out.print(table)


# ----------------------------------------------------------------------------- runs


@dataclass(slots=True)
class Run:
    """What one benchmark produced: the report (for ``--json``), its tables and its closing lines."""

    report: dict[str, Any]
    tables: Tables
    lines: list[str]
    per_question: dict[str, dict[str, dict[str, float]]]


def ask(
    store: Store,
    text: str,
    embedder: CachedEmbedder,
    candidates: int,
    now: datetime,
    timings: dict[str, float],
) -> dict[str, list[Row]]:
    """One question through ``recall()`` with every method row: method name → hit rows in rank order.

    ``k`` is 25 (to read recall@5, @10 and @25 off one ranking); the ranking of the first hits does
    not depend on ``k`` (the turn context reads a fixed head), so @5 and @10 are what ``k=5`` or
    ``k=10`` would return.
    """
    out: dict[str, list[Row]] = {}
    for row in FUNES_ROWS:
        t = time.perf_counter()
        params = RecallParams(
            k=MAX_K,
            candidates=max(candidates, MAX_K),
            neighbors=0,
            legs=row.legs,
            profile=row.profile,
            fusion=row.fusion,
            **dict(row.overrides),
        )
        embed: Callable[[str], Vector] | None = embedder.embed_query if Leg.VECTOR in row.legs else None
        result = recall(store, text, params, embed_query=embed, now=now)
        timings[row.name] = timings.get(row.name, 0.0) + time.perf_counter() - t
        out[row.name] = [h.row for h in result.hits]
    return out


@dataclass(frozen=True, slots=True)
class View:
    """One way of spending the agent's reading: ``k`` hits with ±``neighbors`` turns previewed,
    optionally packed into the token count of the default output for the same question."""

    name: str
    k: int
    neighbors: int
    packed: bool = False


#: The default output first; the others are measured against it (item 3 of issue 15).
VIEWS: tuple[View, ...] = (
    View("default: k=8, ±1 neighbours previewed", 8, 1),
    View("k=12, no neighbours", 12, 0),
    View("k=5, ±2 neighbours", 5, 2),
    View("k=30, no neighbours, packed into the default's tokens", 30, 0, packed=True),
    View("k=30, ±1 neighbours, packed into the default's tokens", 30, 1, packed=True),
    View("k=10, ±1 neighbours previewed", 10, 1),
)


def views(
    store: Store, text: str, embedder: CachedEmbedder, now: datetime, key_of: Callable[[Row], str]
) -> list[tuple[list[str], int]]:
    """For each of :data:`VIEWS`: the distinct turns the agent text shows (hits and neighbour
    previews, in order) and its length in tokens (the embedding model's tokenizer, as ``--budget``
    counts). A packed view keeps its best hits whose whole text fits the default's length."""
    out: list[tuple[list[str], int]] = []
    budget = 0
    for view in VIEWS:
        params = RecallParams(k=view.k, neighbors=view.neighbors)
        result = recall(store, text, params, embed_query=embedder.embed_query, now=now)
        if view.packed:
            packed = pack_to_budget(result, "bench", budget, count_tokens)
            hits, tokens = packed.shown, packed.tokens
        else:
            hits = result.hits
            tokens = count_tokens(render_recall(result, "bench"))
        budget = budget or tokens
        ids = {h.row.id for h in hits}  # as the text: no preview of a chunk shown as a hit
        turns = [key_of(h.row) for h in hits]
        turns += [key_of(n) for h in hits for n in h.neighbors if n.id not in ids]
        out.append((dedupe(turns), tokens))
    return out


@dataclass(slots=True)
class ViewScores:
    """Evidence shown and tokens spent, per view."""

    shown: list[ShownScores] = field(default_factory=lambda: [ShownScores() for _ in VIEWS])
    tokens: list[dict[str, int]] = field(default_factory=lambda: [{} for _ in VIEWS])

    def add(self, key: str, evidence: Sequence[str], measured: list[tuple[list[str], int]]) -> None:
        for i, (turns, tokens) in enumerate(measured):
            self.shown[i].add(key, evidence, turns)
            self.tokens[i][key] = tokens

    def rows(self, keys: Sequence[str]) -> list[list[str]]:
        out = []
        for i, view in enumerate(VIEWS):
            seen, n_turns = self.shown[i].mean(keys)
            tokens = float(np.mean([self.tokens[i][k] for k in keys if k in self.tokens[i]]))
            out.append([view.name, _fmt(seen), f"{n_turns:.1f}", f"{tokens:.0f}"])
        return out


VIEW_COLS = ["agent text", "evidence shown", "turns shown", "tokens"]


def add_baselines(
    results: dict[str, Scores],
    evidence: dict[str, Sequence[str]],
    bm25s_ranked: dict[str, list[str]] | None,
    payload: dict[str, dict[str, Any]],
    console: Console,
    ordered: frozenset[str] = frozenset(),
) -> str | None:
    """``bm25s`` and agent-memfas rows on the very same stored turn texts; the memfas version or None."""
    if bm25s_ranked is None:
        console.print("[yellow]bm25s is not installed (uv add --dev bm25s): plain BM25 row skipped[/]")
    else:
        import bm25s

        name = f"bm25s {bm25s.__version__} (plain BM25, English stop words)"
        results[name] = Scores()
        for key, ranked in bm25s_ranked.items():
            results[name].add(key, evidence[key], ranked, ordered=key in ordered)
    with console.status("agent-memfas: indexing and searching in its own venv"):
        memfas = run_memfas(payload, console)
    if memfas is None:
        return None
    version, ranked_by_mode = memfas
    labels = {"as-is": "question as-is (implicit AND)", "or": "question words OR'd"}
    for mode, ranked_map in ranked_by_mode.items():
        name = f"agent-memfas {version} FTS5, {labels[mode]}"
        results[name] = Scores()
        for key, ranked in ranked_map.items():
            results[name].add(key, evidence[key], ranked, ordered=key in ordered)
    return version


def run_locomo(
    args: argparse.Namespace, embedder: CachedEmbedder, progress: Progress, console: Console
) -> Run:
    opts = TextOptions(speaker=not args.no_speaker, caption=not args.no_caption, date=args.date)
    data = load_locomo()
    wanted = set(QUICK) if args.quick else set(args.conversations or [])
    samples = [s for s in data if not wanted or s["sample_id"] in wanted]
    if not samples:
        raise SystemExit(f"no conversation matches {sorted(wanted)}")
    questions = [q for s in samples for q in questions_of(s)]
    results: dict[str, Scores] = {r.name: Scores() for r in FUNES_ROWS}
    seen_by_view = ViewScores()
    payload: dict[str, dict[str, Any]] = {}
    bm25s_ranked: dict[str, list[str]] | None = {}
    timings: dict[str, float] = {}
    started = time.perf_counter()
    overall = progress.add_task("LoCoMo conversations", total=len(samples))
    for sample in samples:
        sid = str(sample["sample_id"])
        home = build_memory(sample, opts, embedder, progress)
        store = cast(Store, MemoStore(open_store(home=home, expect=embedder.stamp)))
        conv_qs = [q for q in questions if q.conv == sid]
        task = progress.add_task(f"ask {sid}", total=len(conv_qs))
        for q in conv_qs:
            for name, rows in ask(store, q.text, embedder, args.candidates, NOW, timings).items():
                results[name].add(qid(q), q.evidence, [locomo_key(r) for r in rows])
            seen_by_view.add(qid(q), q.evidence, views(store, q.text, embedder, NOW, locomo_key))
            progress.advance(task)
        progress.remove_task(task)
        if not args.no_baselines:
            docs = turn_texts(store, locomo_key)
            queries = [(qid(q), q.text) for q in conv_qs]
            ranked = run_bm25s(docs, queries)
            if ranked is None or bm25s_ranked is None:
                bm25s_ranked = None
            else:
                bm25s_ranked.update(ranked)
            payload[sid] = {
                "docs": [[k, v] for k, v in docs.items()],
                "questions": [list(x) for x in queries],
            }
        progress.advance(overall)
    progress.remove_task(overall)
    memfas_version = None
    if not args.no_baselines:
        evidence = {qid(q): q.evidence for q in questions}
        memfas_version = add_baselines(results, evidence, bm25s_ranked, payload, console)
    elapsed = time.perf_counter() - started
    summary = summarize(results, questions)
    counts = {c: sum(1 for q in questions if q.category == c) for c in CATEGORIES}
    n_q = len(questions)
    core_keys = [qid(q) for q in questions if q.category != 5]
    seen, n_turns = seen_by_view.shown[0].mean(core_keys)
    lines = [
        f"LoCoMo, default output (k=8 hits, ±1 neighbour previewed under each): {seen:.3f} of the evidence "
        f"turns (categories 1–4) are among the {n_turns:.1f} distinct turns shown on average "
        "(neighbour previews are cut at 160 characters).",
        f"LoCoMo: {len(samples)} conversation(s), {n_q} questions ({n_q - counts[5]} in categories 1–4); "
        f"text: {opts.tag} (s=speaker, c=caption, d=date); candidates/leg {max(args.candidates, MAX_K)}; "
        f"{elapsed:.0f} s; data {find_locomo()}",
    ]
    lines += [
        f"  {row.name}: {1000 * timings[row.name] / max(n_q, 1):.1f} ms/question (legs memoised)"
        for row in FUNES_ROWS
    ]
    report = {
        "conversations": [s["sample_id"] for s in samples],
        "questions": n_q,
        "text_options": opts.tag,
        "candidates": max(args.candidates, MAX_K),
        "memfas_version": memfas_version,
        "elapsed_s": round(elapsed, 1),
        "summary": summary,
        "default_output": {"evidence_shown": seen, "turns_shown": n_turns},
    }
    per_question = {k: v.per_question for k, v in results.items()}
    view_table = ("LoCoMo: what an agent sees (categories 1–4)", VIEW_COLS, seen_by_view.rows(core_keys))
    return Run(report, [*tables(summary, counts), view_table], lines, per_question)


def run_agent(
    args: argparse.Namespace, embedder: CachedEmbedder, progress: Progress, console: Console
) -> Run:
    manifest = load_manifest()
    questions = load_questions()
    corpus = find_corpus()
    sessions = convert_all(corpus, manifest)
    problems = evidence_problems(questions, sessions)
    if problems:
        raise SystemExit(
            "evidence turns that the converted sessions do not hold:\n  " + "\n  ".join(problems)
        )
    started = time.perf_counter()
    home = build_cached(sessions, embedder, progress, CACHE / "agent", "", "agent-sessions")
    store = cast(Store, MemoStore(open_store(home=home, expect=embedder.stamp)))
    results: dict[str, Scores] = {r.name: Scores() for r in FUNES_ROWS}
    seen_by_view = ViewScores()
    timings: dict[str, float] = {}
    task = progress.add_task("ask agent sessions", total=len(questions))
    for q in questions:
        for name, rows in ask(store, q.text, embedder, args.candidates, manifest.now, timings).items():
            results[name].add(q.id, q.evidence, [agent_key(r) for r in rows], ordered=q.kind == "superseded")
        seen_by_view.add(q.id, q.evidence, views(store, q.text, embedder, manifest.now, agent_key))
        progress.advance(task)
    progress.remove_task(task)
    memfas_version = None
    if not args.no_baselines:
        docs = turn_texts(store, agent_key)
        queries = [(q.id, q.text) for q in questions]
        payload = {
            "agent-sessions": {
                "docs": [[k, v] for k, v in docs.items()],
                "questions": [list(x) for x in queries],
            }
        }
        evidence = {q.id: q.evidence for q in questions}
        superseded = frozenset(q.id for q in questions if q.kind == "superseded")
        memfas_version = add_baselines(
            results, evidence, run_bm25s(docs, queries), payload, console, superseded
        )
    elapsed = time.perf_counter() - started
    summary = summarize_agent(results, questions)
    counts = {k: sum(1 for q in questions if q.kind == k) for k in KINDS}
    seen, n_turns = seen_by_view.shown[0].mean([q.id for q in questions])
    n_turns_stored = sum(len(s) for s in sessions)
    lines = [
        f"Agent sessions, default output (k=8 hits, ±1 neighbour previewed under each): {seen:.3f} of the "
        f"evidence turns are among the {n_turns:.1f} distinct turns shown on average.",
        f"Agent sessions: {len(sessions)} sessions, {n_turns_stored} turns, {len(questions)} questions "
        f"({', '.join(f'{k} {counts[k]}' for k in KINDS)}); now = {manifest.now.isoformat()}; "
        f"{elapsed:.0f} s; transcripts {corpus}",
    ]
    report = {
        "sessions": len(sessions),
        "turns": n_turns_stored,
        "questions": len(questions),
        "counts": counts,
        "memfas_version": memfas_version,
        "elapsed_s": round(elapsed, 1),
        "summary": summary,
        "default_output": {"evidence_shown": seen, "turns_shown": n_turns},
    }
    per_question = {k: v.per_question for k, v in results.items()}
    all_keys = [q.id for q in questions]
    view_table = ("Agent sessions: what an agent sees", VIEW_COLS, seen_by_view.rows(all_keys))
    return Run(report, [*agent_tables(summary, counts), view_table], lines, per_question)


# ----------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--bench",
        choices=("all", "both", "locomo", "agent", "whole"),
        default="all",
        help="which benchmark(s): all (default), both per-haystack ones, one of them, or the whole histories",
    )
    parser.add_argument(
        "--whole",
        choices=("both", "locomo", "agent"),
        default="both",
        help="whole history: which benchmark(s)",
    )
    parser.add_argument("--crowd", type=int, default=2000, help="whole history: distractor sessions (agent)")
    parser.add_argument(
        "--growth",
        type=int,
        nargs="*",
        default=[1, 10, 100],
        help="whole history: agent history sizes (× 13)",
    )
    parser.add_argument("--no-mcp", action="store_true", help="whole history: in process only")
    parser.add_argument("--no-owed", action="store_true", help="whole history: skip the text-only memories")
    parser.add_argument("--quick", action="store_true", help=f"LoCoMo: only {', '.join(QUICK)}")
    parser.add_argument("--conversations", nargs="*", help="LoCoMo: sample ids to run (default: all)")
    parser.add_argument("--no-speaker", action="store_true", help="LoCoMo: no speaker prefix in the turns")
    parser.add_argument("--no-caption", action="store_true", help="LoCoMo: leave out the photos' captions")
    parser.add_argument("--date", action="store_true", help="LoCoMo: session date in each turn (ablation)")
    parser.add_argument("--candidates", type=int, default=DEFAULT_CANDIDATES, help="candidates per leg")
    parser.add_argument("--no-baselines", action="store_true", help="skip bm25s and agent-memfas")
    parser.add_argument("--markdown", action="store_true", help="also print the tables as Markdown")
    parser.add_argument("--json", type=Path, help="write the summaries and per-question scores here")
    args = parser.parse_args(argv)

    console = Console(stderr=True)
    embedder = CachedEmbedder()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    runs: dict[str, Run] = {}
    with Progress(*columns, console=console, transient=False) as progress:
        if args.bench in ("all", "both", "locomo"):
            runs["locomo"] = run_locomo(args, embedder, progress, console)
        if args.bench in ("all", "both", "agent"):
            runs["agent"] = run_agent(args, embedder, progress, console)
        if args.bench in ("all", "whole"):
            from _history import run_whole

            runs["whole"] = run_whole(args, embedder, progress)
    out = Console(width=max(Console().width, 150))
    for run in runs.values():
        print_tables(out, run.tables)
        for line in run.lines:
            out.print(line)
    out.print(f"embeddings computed {embedder.computed}, cached {embedder.hits}")
    if args.markdown:
        for run in runs.values():
            for title, cols, rows in run.tables:
                print(markdown(title, cols, rows))
    report: dict[str, Any] = {"machine": machine_info(), **{k: r.report for k, r in runs.items()}}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        full = {**report, "per_question": {k: r.per_question for k, r in runs.items()}}
        args.json.write_text(json.dumps(full, indent=2) + "\n")
    embedder.close()
    return report


def _clear_cache() -> None:  # pragma: no cover - manual helper
    shutil.rmtree(CACHE / "locomo", ignore_errors=True)
    shutil.rmtree(CACHE / "agent", ignore_errors=True)


if __name__ == "__main__":
    main()

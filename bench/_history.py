"""Whole-history benchmarks (``bench/quality.py --bench whole``): every question against one big memory,
in process and through the MCP ``recall`` tool as an agent calls it, fully embedded and while embeddings
are still owed.

What is measured, beside the per-haystack figures of ``quality.py``:

- **LoCoMo, per conversation** (10 memories, as the per-haystack benchmark) and **as one history**
  (all 10 conversations, 272 sessions and 5,882 turns, in ONE memory), categories 1–4;
- **the agent benchmark in a crowd**: its 13 sessions among ``--crowd`` distractor sessions
  (default 2,000; how they are made: ``_crowd.py``), and the **growth curve** 1× / 10× / 100× (13,
  130 and 1,300 sessions: the first distractors of the same crowd) up to the whole crowd.

For each: turn-level R@5, R@10, NDCG@10 (as in ``quality.py``), and of the **evidence session** (a
session holding an evidence turn): hit@1 and hit@5 (among the sessions in the order of their first
hit) and found@25 / found@50 (among the sessions of the first 25 / 50 hits).

Paths: **in process** is ``recall()`` with ``k=50``, 30 candidates per leg, no neighbours (the first 25
hits are those of ``k=25``: the ranking of the head does not depend on ``k``); **MCP** is ``funes mcp``
started over stdio by the official SDK client on the same memory, each question a ``recall`` tool call
with ``k=25, neighbors=0`` and ``as_of`` = the benchmark's clock, its hits read off the ``→ get`` lines
of the text the agent gets (session and ``--to`` − 3 = the hit's turn). **Owed** is the same memory
stored as ``funes index`` leaves it right after an install, text only (every embedding owed: the
minutes before the background worker has caught up), asked the same two ways.
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from _agent import KINDS, convert_all, find_corpus, load_manifest, load_questions
from _common import (
    CACHE,
    CachedEmbedder,
    TextOptions,
    convert_conversation,
    dedupe,
    load_locomo,
    questions_of,
)
from _crowd import crowd
from quality import ABLATIONS
from rich.progress import Progress

from funes_core.home import Home
from funes_core.read.recall import Leg, RecallParams, recall
from funes_core.store import open_store
from funes_core.store.base import Row, Store
from funes_core.turns.format import Turn

FUNES = str(Path(sys.executable).parent / "funes")
WHOLE = CACHE / "whole"
#: What an agent asks for through MCP in these figures.
MCP_K = 25
#: In process: deep enough for found@50.
DEEP_K = 50
_GET = re.compile(r"^\s*→ get (\S+) --from (\d+) --to (\d+) ")

Position = tuple[str, int]  # (session_id, seq): one turn


@dataclass(frozen=True, slots=True)
class Q:
    """One question of a whole-history case: evidence as turn keys and as sessions."""

    id: str
    text: str
    evidence: tuple[str, ...]
    sessions: frozenset[str]
    group: str  # LoCoMo category or agent kind
    ordered: bool = False  # superseded: the current answer first


@dataclass(slots=True)
class Part:
    """One memory of a case and the questions asked of it (per-conversation LoCoMo has ten)."""

    home: Home
    owed: Home | None
    questions: list[Q]


@dataclass(slots=True)
class Case:
    name: str
    parts: list[Part]
    as_of: datetime
    key_of: Callable[[Row], str]
    sessions: int
    turns: int
    groups: tuple[str, ...] = ()


def figures(q: Q, keys: Sequence[str], sessions: Sequence[str], *, deep: bool) -> dict[str, float]:
    """Turn-level recall and NDCG of one ranking, and where its evidence session is."""
    from _common import ndcg_at, recall_at

    ranked = dedupe(keys)
    out = {f"r@{k}": recall_at(ranked, q.evidence, k) for k in (5, 10, 25)}
    out["ndcg@10"] = ndcg_at(ranked, q.evidence, 10)
    order = dedupe(sessions)
    out["hit@1"] = float(bool(q.sessions & set(order[:1])))
    out["hit@5"] = float(bool(q.sessions & set(order[:5])))
    out["found@25"] = float(bool(q.sessions & set(sessions[:25])))
    if deep:
        out["found@50"] = float(bool(q.sessions & set(sessions[:50])))
    if q.ordered:
        pos = {t: i for i, t in enumerate(ranked[:25])}
        first = pos.get(q.evidence[0])
        out["current first"] = float(
            first is not None and all(pos.get(e, 25) > first for e in q.evidence[1:])
        )
    return out


@dataclass(slots=True)
class PathScores:
    """One (case, method, path) row: per-question figures, timings and the load while it ran."""

    per_question: dict[str, dict[str, float]] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    ms: list[float] = field(default_factory=list)
    load: list[float] = field(default_factory=list)

    def mean(self, metric: str, group: str | None = None) -> float:
        vals = [
            m[metric]
            for k, m in self.per_question.items()
            if metric in m and (group is None or self.groups.get(k) == group)
        ]
        return float(np.mean(vals)) if vals else float("nan")

    def summary(self, groups: Sequence[str]) -> dict[str, Any]:
        metrics = (
            "r@5",
            "r@10",
            "r@25",
            "ndcg@10",
            "hit@1",
            "hit@5",
            "found@25",
            "found@50",
            "current first",
        )
        out: dict[str, Any] = {m: self.mean(m) for m in metrics}
        out["questions"] = len(self.per_question)
        out["ms_median"] = statistics.median(self.ms) if self.ms else None
        out["load"] = [min(self.load), max(self.load)] if self.load else None
        for g in groups:
            for m in ("r@5", "r@10", "ndcg@10", "hit@5"):
                out[f"{g} {m}"] = self.mean(m, g)
        return out


# ----------------------------------------------------------------------------- building the cases


def _build(
    sessions: Sequence[Sequence[Turn]], embedder: CachedEmbedder, progress: Progress, prefix: str, name: str
) -> tuple[Home, Home]:
    """The memory embedded and the same memory text-only (every embedding owed)."""
    from quality import build_cached

    home = build_cached(sessions, embedder, progress, WHOLE, prefix, name)
    owed = build_cached(sessions, embedder, progress, WHOLE, "owed-" + prefix, name, embed=False)
    return home, owed


def _locomo_key(row: Row) -> str:
    from _common import dia_id_of

    return f"{row.session_id.rsplit('-s', 1)[0]}#{dia_id_of(row.turn_uuid)}"


def _locomo_questions(samples: Sequence[dict[str, Any]]) -> list[Q]:
    out = []
    for sample in samples:
        for q in questions_of(sample):
            if q.category == 5:
                continue
            sessions = frozenset(f"{q.conv}-s{e[1:].split(':')[0]}" for e in q.evidence)
            evidence = tuple(f"{q.conv}#{e}" for e in q.evidence)
            out.append(Q(f"{q.conv}#{q.index}", q.text, evidence, sessions, str(q.category)))
    return out


def locomo_cases(embedder: CachedEmbedder, progress: Progress, owed: bool) -> list[Case]:
    from quality import NOW, build_memory

    data = load_locomo()
    opts = TextOptions()
    per: list[Part] = []
    all_sessions: list[list[Turn]] = []
    for sample in data:
        sessions = convert_conversation(sample, opts)
        all_sessions += sessions
        home = build_memory(sample, opts, embedder, progress)
        owed_home = (
            _build(sessions, embedder, progress, f"locomo-{opts.tag}-", str(sample["sample_id"]))[1]
            if owed
            else None
        )
        per.append(Part(home, owed_home, _locomo_questions([sample])))
    home, owed_home = _build(all_sessions, embedder, progress, f"locomo-all-{opts.tag}-", "locomo-all")
    turns = sum(len(s) for s in all_sessions)
    groups = ("1", "2", "3", "4")
    return [
        Case(
            "LoCoMo, per conversation (10 memories)", per, NOW, _locomo_key, len(all_sessions), turns, groups
        ),
        Case(
            "LoCoMo, all 10 in one memory",
            [Part(home, owed_home if owed else None, _locomo_questions(data))],
            NOW,
            _locomo_key,
            len(all_sessions),
            turns,
            groups,
        ),
    ]


def _agent_key(row: Row) -> str:
    return f"{row.session_id}/{row.turn_uuid}"


def agent_cases(
    embedder: CachedEmbedder, progress: Progress, sizes: Sequence[int], owed_sizes: Sequence[int]
) -> list[Case]:
    """The agent benchmark with ``n`` sessions in all for each of ``sizes`` (13 = alone)."""
    manifest = load_manifest()
    sessions = convert_all(find_corpus(), manifest)
    questions = [
        Q(
            q.id,
            q.text,
            q.evidence,
            frozenset(e.split("/", 1)[0] for e in q.evidence),
            q.kind,
            ordered=q.kind == "superseded",
        )
        for q in load_questions()
    ]
    others = (
        crowd(max(sizes) - len(sessions), manifest.now, load_locomo()) if max(sizes) > len(sessions) else []
    )
    out = []
    base = len(sessions)
    for n in sizes:
        history = [*sessions, *others[: n - base]]
        label = f"agent-x{n}-"
        if n in owed_sizes:
            home, owed_home = _build(history, embedder, progress, label, "agent")
        else:
            from quality import build_cached

            home, owed_home = build_cached(history, embedder, progress, WHOLE, label, "agent"), None
        times = n / base
        name = (
            f"agent sessions, {base} alone"
            if n == base
            else f"agent sessions + {n - base:,} others ({times:.0f}×)"
        )
        turns = sum(len(s) for s in history)
        out.append(Case(name, [Part(home, owed_home, questions)], manifest.now, _agent_key, n, turns, KINDS))
    return out


# ----------------------------------------------------------------------------- asking


#: In-process methods: (name, legs, RecallParams overrides). The legs alone are as ``quality.py``'s.
PLAIN: tuple[tuple[str, Any], ...] = (("dates", False), ("successor", 0.0), ("predecessor", 0.0))
METHODS: tuple[tuple[str, tuple[Leg, ...], tuple[tuple[str, Any], ...]], ...] = (
    ("default", (Leg.VECTOR, Leg.TEXT), ()),
    ("BM25 leg alone", (Leg.TEXT,), PLAIN),
    ("vector leg alone", (Leg.VECTOR,), PLAIN),
    # issue 26's ranking signals, each alone on top of the default (as quality.py's ablation rows)
    *((name, (Leg.VECTOR, Leg.TEXT), overrides) for name, overrides in ABLATIONS),
)


def positions_of(store: Store, key_of: Callable[[Row], str]) -> dict[Position, str]:
    return {(r.session_id, r.seq): key_of(r) for r in store.scan()}


def ask_in_process(
    store: Store,
    q: Q,
    embedder: CachedEmbedder,
    now: datetime,
    legs: tuple[Leg, ...],
    overrides: tuple[tuple[str, Any], ...],
    candidates: int,
) -> list[Position]:
    params = RecallParams(k=DEEP_K, candidates=candidates, neighbors=0, legs=legs, **dict(overrides))
    embed = embedder.embed_query if Leg.VECTOR in legs else None
    result = recall(store, q.text, params, embed_query=embed, now=now)
    return [(h.row.session_id, h.row.seq) for h in result.hits]


def parse_get_lines(text: str) -> list[Position]:
    """The hits of a ``recall`` text as an agent reads them: one ``→ get`` line per hit."""
    out = []
    for line in text.splitlines():
        m = _GET.match(line)
        if m:
            out.append((m.group(1), int(m.group(3)) - 3))
    return out


def ask_mcp(
    home: Home, questions: Sequence[Q], as_of: datetime, on_answer: Callable[[Q, list[Position], float], None]
) -> None:
    """Every question as a ``recall`` tool call to ``funes mcp`` on ``home`` (the real model)."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {**os.environ, "FUNES_HOME": str(home.root)}
    env.pop("FUNES_EMBEDDER", None)
    params = StdioServerParameters(command=FUNES, args=["mcp"], env=env)
    clock = as_of.isoformat()

    async def session() -> None:
        async with Client(params) as client:
            for q in questions:
                args = {"query": q.text, "k": MCP_K, "neighbors": 0, "as_of": clock}
                t = time.perf_counter()
                res = await client.call_tool("recall", args)
                ms = 1000 * (time.perf_counter() - t)
                text = "".join(c.text for c in res.content if getattr(c, "type", "") == "text")
                if res.is_error:
                    raise SystemExit(f"MCP recall failed on {q.id}: {text}")
                on_answer(q, parse_get_lines(text), ms)

    anyio.run(session)


def run_case(
    case: Case,
    embedder: CachedEmbedder,
    progress: Progress,
    *,
    mcp: bool,
    legs: bool,
    candidates: int,
) -> dict[str, PathScores]:
    """Every path of one case: row name → scores."""
    from quality import MemoStore

    rows: dict[str, PathScores] = {}

    def row(name: str) -> PathScores:
        return rows.setdefault(name, PathScores())

    for part in case.parts:
        for owed, home in ((False, part.home), (True, part.owed)):
            if home is None:
                continue
            tag = ", owed" if owed else ""
            raw = open_store(home=home, expect=embedder.stamp)
            where = positions_of(raw, case.key_of)
            store: Any = MemoStore(raw)
            methods = METHODS if legs and not owed else METHODS[:1]
            task = progress.add_task(f"{case.name}{tag}: in process", total=len(part.questions))
            for q in part.questions:
                for name, which, overrides in methods:
                    t = time.perf_counter()
                    hits = ask_in_process(store, q, embedder, case.as_of, which, overrides, candidates)
                    ms = 1000 * (time.perf_counter() - t)
                    _record(row(f"in process, {name}{tag}"), q, where, hits, ms, deep=True)
                progress.advance(task)
            progress.remove_task(task)
            if mcp:
                _mcp_row(home, part.questions, case, where, row(f"MCP, default{tag}"), progress, tag)
    return rows


def _record(
    scores: PathScores, q: Q, where: dict[Position, str], hits: list[Position], ms: float, deep: bool
) -> None:
    scores.load.append(os.getloadavg()[0])
    scores.ms.append(ms)
    scores.per_question[q.id] = figures(q, [where[h] for h in hits], [s for s, _ in hits], deep=deep)
    scores.groups[q.id] = q.group


def _mcp_row(
    home: Home,
    questions: Sequence[Q],
    case: Case,
    where: dict[Position, str],
    scores: PathScores,
    progress: Progress,
    tag: str,
) -> None:
    task = progress.add_task(f"{case.name}{tag}: MCP", total=len(questions))

    def on_answer(q: Q, hits: list[Position], ms: float) -> None:
        _record(scores, q, where, hits, ms, deep=False)
        progress.advance(task)

    ask_mcp(home, questions, case.as_of, on_answer)
    progress.remove_task(task)


# ----------------------------------------------------------------------------- tables


def _f(x: Any) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "—"
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def tables(
    results: dict[str, dict[str, dict[str, Any]]], cases: Sequence[Case]
) -> list[tuple[str, list[str], list[list[str]]]]:
    main_cols = [
        "history",
        "path",
        "R@5",
        "R@10",
        "NDCG@10",
        "hit@1",
        "hit@5",
        "found@25",
        "found@50",
        "ms/question (median)",
        "load",
        "questions",
    ]
    main = []
    growth = []
    by_group: list[tuple[tuple[str, ...], list[str]]] = []
    for case in cases:
        for path, s in results[case.name].items():
            load = f"{s['load'][0]:.1f}–{s['load'][1]:.1f}" if s["load"] else "—"
            ms = f"{s['ms_median']:.0f}" if s["ms_median"] is not None else "—"
            main.append(
                [
                    case.name,
                    path,
                    *(_f(s[m]) for m in ("r@5", "r@10", "ndcg@10", "hit@1", "hit@5", "found@25", "found@50")),
                    ms,
                    load,
                    str(s["questions"]),
                ]
            )
            by_group.append(
                (
                    case.groups,
                    [
                        case.name,
                        path,
                        *(
                            " / ".join(_f(s.get(f"{g} {m}")) for m in ("r@10", "r@5", "ndcg@10"))
                            for g in case.groups
                        ),
                    ],
                )
            )
        d = results[case.name].get("in process, default")
        if d:
            growth.append(
                [
                    case.name,
                    f"{case.sessions:,}",
                    f"{case.turns:,}",
                    *(_f(d[m]) for m in ("r@10", "ndcg@10", "hit@1", "hit@5", "found@50")),
                    f"{d['ms_median']:.0f}" if d["ms_median"] is not None else "—",
                ]
            )
    growth_cols = [
        "history",
        "sessions",
        "turns",
        "R@10",
        "NDCG@10",
        "hit@1",
        "hit@5",
        "found@50",
        "ms/question",
    ]
    out = [
        ("Whole history: in process and through MCP, embedded and owed", main_cols, main),
        ("Whole history: growth (in process, default)", growth_cols, growth),
    ]
    for groups in dict.fromkeys(c.groups for c in cases):
        cols = ["history", "path", *(f"{g} R@10 / R@5 / NDCG@10" for g in groups)]
        rows = [r for g, r in by_group if g == groups]
        out.append((f"Whole history: by {'kind' if groups == KINDS else 'category'}", cols, rows))
    return out


# ----------------------------------------------------------------------------- the run


def run_whole(args: Any, embedder: CachedEmbedder, progress: Progress) -> Any:
    """Every whole-history case, every path: the ``Run`` that ``quality.py`` prints."""
    from _common import machine_info
    from quality import Run

    started = time.perf_counter()
    base = 13
    sizes = sorted({base * g for g in args.growth} | {base + args.crowd})
    cases: list[Case] = []
    if args.whole in ("both", "locomo"):
        cases += locomo_cases(embedder, progress, owed=not args.no_owed)
    if args.whole in ("both", "agent"):
        owed_sizes = () if args.no_owed else (base, base + args.crowd)
        cases += agent_cases(embedder, progress, sizes, owed_sizes)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for case in cases:
        legs = case.name.startswith("LoCoMo, all") or case.sessions in (base, base + args.crowd)
        mcp = not args.no_mcp and (
            case.sessions in (base, base + args.crowd) or case.name.startswith("LoCoMo")
        )
        rows = run_case(case, embedder, progress, mcp=mcp, legs=legs, candidates=args.candidates)
        results[case.name] = {name: s.summary(case.groups) for name, s in rows.items()}
    elapsed = time.perf_counter() - started
    lines = [
        f"Whole history: {len(cases)} histories in {elapsed:.0f} s; in process k={DEEP_K}, MCP k={MCP_K}, "
        f"neighbours 0, {args.candidates} candidates per leg; crowd of {args.crowd} distractor sessions "
        f"(bench/_crowd.py); load at the end {machine_info()['load_avg']}",
    ]
    report = {
        "elapsed_s": round(elapsed, 1),
        "crowd": args.crowd,
        "cases": {
            c.name: {"sessions": c.sessions, "turns": c.turns, "paths": results[c.name]} for c in cases
        },
    }
    return Run(report, tables(results, cases), lines, {})

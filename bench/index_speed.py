"""Index throughput benchmark: how fast a fresh memory fills, with the real model.

Builds a corpus of about N chunks from the example sessions in ``examples/sessions/`` (each
copy gets new ids, shifted timestamps and reshuffled wording, so nothing is deduplicated away),
drops it into the spool of a throwaway ``$FUNES_HOME`` and runs the real indexing engine on it.

Reports:

- rows/s written: chunks stored per second of the write phase (parse, redact, chunk, commit);
- time until BM25-searchable: from the start of the run until every text/thinking row is
  committed (checked with an actual keyword search), i.e. how soon a fresh session is recallable;
- embeddings/s: vectors computed and committed per second of the embedding phase;
- model load, optimize (index refresh + compaction) and total wall time;
- peak RSS of this process (``funes_core.portable.peak_rss_bytes``);
- bytes on disk right after the run (older versions are kept for a 5-minute grace period, so
  rows rewritten to gain their vector still count twice) and once old versions are cleaned up,
  per chunk.

Usage::

    uv run python bench/index_speed.py                 # 10k chunks, ~10 minutes on 2 CPU cores
    uv run python bench/index_speed.py --chunks 300    # a quick smoke run
    uv run python bench/index_speed.py --embedder hash # everything but the model (test double)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from funes_core.home import Home, State  # noqa: E402
from funes_core.ingest.chunking import Tier, chunk_turn  # noqa: E402
from funes_core.ingest.engine import Indexer, IndexOptions, discover, load_redactor  # noqa: E402
from funes_core.models.embed import Embedder, FastEmbedder, HashEmbedder  # noqa: E402
from funes_core.portable import peak_rss_bytes  # noqa: E402
from funes_core.store import open_store  # noqa: E402
from funes_core.turns.format import Block, Turn, read_turns_file, write_turns_file  # noqa: E402

EXAMPLES = ROOT / "examples" / "sessions"
_WORD = re.compile(r"[A-Za-z]{4,}")


# ----------------------------------------------------------------------------- corpus


def _vocabulary(turns: list[Turn]) -> list[str]:
    words = {w.lower() for t in turns for b in t.blocks for w in _WORD.findall(b.text)}
    return sorted(words)


def _vary(text: str, rng: random.Random, vocab: list[str], tag: str) -> str:
    """Swap about one word in eight for another from the corpus, and tag the text with its copy."""

    def swap(match: re.Match[str]) -> str:
        return rng.choice(vocab) if rng.random() < 0.125 else match.group(0)

    return f"{_WORD.sub(swap, text)} [{tag}]"


def build_corpus(target_chunks: int, out: Path, seed: int = 7) -> tuple[int, int, str]:
    """Write session copies into ``out`` until they hold about ``target_chunks`` chunks.

    Returns (files, chunks, a rare word planted in one text block, for the BM25 check).
    """
    sources = [read_turns_file(p).turns for p in sorted(EXAMPLES.glob("*.funes.jsonl"))]
    if not sources:
        raise SystemExit(f"no example sessions under {EXAMPLES}")
    vocab = _vocabulary([t for s in sources for t in s])
    rng = random.Random(seed)
    needle = "quixotically"
    chunks = files = 0
    base = 1_772_000_000
    while chunks < target_chunks:
        src = sources[files % len(sources)]
        sid = f"bench-{files:06d}"
        turns: list[Turn] = []
        for t in src:
            blocks = tuple(
                replace(b, text=_vary(b.text, rng, vocab, f"{sid}/{t.seq}/{i}"))
                for i, b in enumerate(t.blocks)
            )
            if files == 0 and t.seq == 0:
                blocks = (*blocks, Block("text", f"the one passage that says {needle}"))
            hour = files % 24
            ts = t.ts[:11] + f"{hour:02d}" + t.ts[13:]
            turns.append(
                replace(t, session_id=sid, turn_uuid=f"{sid}-{t.seq}", ts=ts, blocks=blocks, parent_uuid=None)
            )
        per_file = sum(len(chunk_turn(t)[0]) for t in turns)
        write_turns_file(out / f"{sid}.funes.jsonl", turns, mtime=base + files)
        chunks += per_file
        files += 1
    return files, chunks, needle


# ----------------------------------------------------------------------------- instrumented run


@dataclass
class Timeline:
    start: float = 0.0
    text_done: float | None = None
    write_done: float | None = None
    embed_start: float | None = None
    embed_done: float | None = None
    commits: list[tuple[float, int, int]] = field(default_factory=list)


class TimedIndexer(Indexer):
    """The real engine, with timestamps at the phase boundaries."""

    timeline: Timeline

    def _commit(self, batch, pending, tier):  # type: ignore[no-untyped-def]
        super()._commit(batch, pending, tier)
        self.timeline.commits.append((time.perf_counter(), int(tier), len(batch.rows)))

    def write(self, files):  # type: ignore[no-untyped-def]
        super().write(files)
        self.timeline.write_done = time.perf_counter()
        text_commits = [t for t, tier, _ in self.timeline.commits if tier == int(Tier.TEXT)]
        self.timeline.text_done = max(text_commits) if text_commits else self.timeline.write_done

    def embed(self) -> None:
        self.timeline.embed_start = time.perf_counter()
        super().embed()
        self.timeline.embed_done = time.perf_counter()


def peak_rss_mb() -> float:
    return peak_rss_bytes() / (1024 * 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000, help="corpus size in chunks (default 10000)")
    parser.add_argument("--embedder", choices=("real", "hash"), default="real")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway FUNES_HOME")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()

    home = Home(Path(tempfile.mkdtemp(prefix="funes-bench-")))
    try:
        spool = home.spool_dir / "bench"
        t = time.perf_counter()
        files, _estimated, needle = build_corpus(args.chunks, spool)
        corpus_s = time.perf_counter() - t
        corpus_bytes = sum(p.stat().st_size for p in spool.iterdir())

        embedder: Embedder
        load_s = 0.0
        if args.embedder == "real":
            fast = FastEmbedder(home.cache_dir)
            t = time.perf_counter()
            fast.load()
            load_s = time.perf_counter() - t
            embedder = fast
        else:
            embedder = HashEmbedder()

        home.ensure()
        state = State.load(home.state_path)
        discovery = discover(home, IndexOptions(), state)
        store = open_store(home=home, create=True, read_consistency_interval=None)
        store.stamp_model(embedder.stamp)
        indexer = TimedIndexer(home, store, embedder, state=state, redactor=load_redactor(print))
        indexer.timeline = Timeline(start=time.perf_counter())
        report = indexer.run(discovery)
        end = time.perf_counter()
        tl = indexer.timeline
        assert tl.write_done and tl.text_done and tl.embed_start and tl.embed_done

        disk_after_run = store.disk_bytes()
        # What a later run's cleanup leaves: versions older than the grace period are gone
        # (nothing else reads this throwaway memory, so a zero grace is safe here).
        from datetime import timedelta

        store._tbl().optimize(cleanup_older_than=timedelta(0))
        reader = open_store(home=home)
        hits = reader.text_search(needle, 3)
        assert hits and needle in hits[0].row.text, "the planted word is not found by BM25"
        stats = reader.stats()
        write_s = tl.write_done - tl.start
        embed_s = tl.embed_done - tl.embed_start
        optimize_s = end - tl.embed_done
        machine = f"{platform.machine()} {platform.system()} {platform.release()}, {os.cpu_count()} CPUs"
        results = {
            "machine": machine,
            "python": platform.python_version(),
            "embedder": embedder.stamp.model,
            "corpus": {
                "files": files,
                "chunks": stats.chunks,
                "bytes": corpus_bytes,
                "build_s": round(corpus_s, 2),
            },
            "model_load_s": round(load_s, 2),
            "write_s": round(write_s, 2),
            "rows_per_s_written": round(stats.chunks / write_s, 1) if write_s else None,
            "bm25_searchable_after_s": round(tl.text_done - tl.start, 2),
            "embed_s": round(embed_s, 2),
            "embeddings_per_s": round(report.embedded / embed_s, 1) if embed_s else None,
            "optimize_s": round(optimize_s, 2),
            "total_s": round(end - tl.start, 2),
            "peak_rss_mb": round(peak_rss_mb(), 1),
            "disk_bytes_after_run": disk_after_run,
            "disk_bytes_live": stats.disk_bytes,
            "bytes_per_chunk_live": round(stats.disk_bytes / stats.chunks) if stats.chunks else None,
            "owed_after": stats.owed,
            "commits": len(tl.commits),
        }
        if args.json:
            print(json.dumps(results, indent=2))
        else:
            width = max(len(k) for k in results)
            for key, value in results.items():
                print(f"{key:<{width}}  {value}")
        if args.keep:
            print(f"kept FUNES_HOME={home.root}", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(home.root, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Shared pieces of the benchmarks: the LoCoMo converter, a cached real embedder, machine facts.

Nothing here changes how funes indexes or recalls; it only prepares inputs and measures.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from funes_core.models.embed import DIM, MODEL_NAME, FastEmbedder
from funes_core.models.vectors import ModelStamp, Vector
from funes_core.turns.format import Block, Turn

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".cache"
EXAMPLES = ROOT / "examples" / "sessions"
#: Environment override for the LoCoMo file (default: ``shared/bench/locomo10.json`` beside the checkout).
LOCOMO_ENV = "FUNES_LOCOMO"
#: Environment override for the embedding cache file (default: :func:`embedding_cache_path`).
EMBEDDINGS_ENV = "FUNES_BENCH_EMBEDDINGS"


def embedding_cache_path() -> Path:
    """Where the benchmarks keep every vector the real model computed: ``$FUNES_BENCH_EMBEDDINGS``, else
    ``$XDG_CACHE_HOME/funes-bench/embeddings.sqlite`` (``~/.cache/...``).

    Outside the checkout on purpose: embedding is the slow part of every benchmark (15–20 passages a
    second on two cores), and a cache shared by every checkout and worktree on the machine embeds each
    text once. Keys name the model, so one file serves any model.
    """
    env = os.environ.get(EMBEDDINGS_ENV)
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "funes-bench" / "embeddings.sqlite"


CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


# ----------------------------------------------------------------------------- LoCoMo


def find_locomo() -> Path:
    """``$FUNES_LOCOMO``, else ``shared/bench/locomo10.json`` in the folder that holds the checkout."""
    env = os.environ.get(LOCOMO_ENV)
    if env:
        return Path(env)
    for parent in ROOT.parents:
        candidate = parent / "shared" / "bench" / "locomo10.json"
        if candidate.is_file():
            return candidate
    raise SystemExit(
        f"locomo10.json not found: put the shared folder beside the checkout or set {LOCOMO_ENV}=PATH"
    )


def load_locomo(path: Path | None = None) -> list[dict[str, Any]]:
    data = json.loads((path or find_locomo()).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise SystemExit("locomo10.json: expected a list of conversations")
    return data


_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA = re.compile(r"D:?(\d+):(\d+)")


def parse_locomo_date(text: str) -> datetime:
    """``'1:56 pm on 8 May, 2023'`` → an aware UTC datetime (LoCoMo gives no zone; UTC is assumed)."""
    return datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turn_uuid_of(dia_id: str) -> str:
    """``D3:12`` → ``D3-12``: ``:`` is forbidden in a turn_uuid (it is part of the chunk id)."""
    return dia_id.replace(":", "-")


def dia_id_of(turn_uuid: str) -> str:
    """The inverse of :func:`turn_uuid_of`."""
    head, _, tail = turn_uuid.rpartition("-")
    return f"{head}:{tail}"


def normalize_evidence(raw: Iterable[str]) -> list[str]:
    """Evidence ids as ``D<s>:<t>``: splits the few ``'D8:6; D9:17'`` lists, drops leading zeros
    (``D30:05``), reads ``D:11:26`` as ``D11:26``, skips what names no turn (``D``); order kept,
    duplicates removed."""
    out: list[str] = []
    for item in raw:
        for m in _DIA.finditer(str(item)):
            ident = f"D{int(m.group(1))}:{int(m.group(2))}"
            if ident not in out:
                out.append(ident)
    return out


@dataclass(frozen=True, slots=True)
class TextOptions:
    """What goes into each converted turn's text, besides the utterance itself.

    - ``speaker``: prefix ``"<name>: "``. The turns format has no author field besides ``role``
      (which funes stores but does not index); a converter of any multi-party chat log (the turns
      format's own examples include one) has to keep the author in the text, so this is on by default.
    - ``caption``: append ``[shared a photo: <BLIP caption>]`` for turns that shared an image, the
      dataset's textual stand-in for the picture (a chat export keeps an attachment's alt text). On.
    - ``date``: prefix the session's date. Real transcripts carry it in ``ts`` (stored, rendered,
      filterable), never in the message text, so this is off by default; it is an ablation only.
    - ``context``: also put the text of this many preceding utterances of the session into each
      turn (before its own). An ablation that simulates context-aware indexing; funes stores each
      turn on its own, so this is off by default.
    """

    speaker: bool = True
    caption: bool = True
    date: bool = False
    context: int = 0

    @property
    def tag(self) -> str:
        flags = "".join(c for c, on in (("s", self.speaker), ("c", self.caption), ("d", self.date)) if on)
        if self.context:
            flags += f"p{self.context}"
        return flags or "plain"


def turn_text(utt: dict[str, Any], session_date: str, opts: TextOptions) -> str:
    text = str(utt.get("text", "")).strip()
    if opts.caption and utt.get("blip_caption"):
        text = f"{text} [shared a photo: {utt['blip_caption']}]".strip()
    if opts.speaker:
        text = f"{utt['speaker']}: {text}"
    if opts.date:
        text = f"({session_date}) {text}"
    return text


def sessions_of(sample: dict[str, Any]) -> list[tuple[int, str, list[dict[str, Any]]]]:
    """(session number, date text, utterances) of one conversation, in session order."""
    conv = sample["conversation"]
    out = []
    for key, value in conv.items():
        m = _SESSION_KEY.fullmatch(key)
        if m and isinstance(value, list) and value:
            out.append((int(m.group(1)), str(conv.get(f"{key}_date_time", "")), value))
    return sorted(out, key=lambda s: s[0])


def convert_conversation(sample: dict[str, Any], opts: TextOptions) -> list[list[Turn]]:
    """One list of turns per LoCoMo session: session_id ``<sample_id>-s<n>``, turn_uuid from the dia_id.

    ``ts`` is the session's date plus 30 s per utterance; ``role`` is the speaker's name; one text
    block per utterance (a LoCoMo utterance is always shorter than a chunk, so one turn is one chunk).
    """
    sample_id = re.sub(r"[^A-Za-z0-9_-]", "-", str(sample["sample_id"]))
    sessions: list[list[Turn]] = []
    for number, date_text, utterances in sessions_of(sample):
        start = parse_locomo_date(date_text)
        sid = f"{sample_id}-s{number}"
        turns: list[Turn] = []
        texts = [turn_text(u, date_text, opts) for u in utterances]
        for seq, utt in enumerate(utterances):
            text = "\n".join(texts[max(0, seq - opts.context) : seq + 1])
            ts = (start + timedelta(seconds=30 * seq)).strftime("%Y-%m-%dT%H:%M:%SZ")
            turns.append(
                Turn(
                    session_id=sid,
                    turn_uuid=turn_uuid_of(str(utt["dia_id"])),
                    seq=seq,
                    ts=ts,
                    role=str(utt["speaker"]),
                    harness="locomo",
                    blocks=(Block("text", text),),
                    parent_uuid=turns[-1].turn_uuid if turns else None,
                )
            )
        sessions.append(turns)
    return sessions


@dataclass(frozen=True, slots=True)
class Question:
    conv: str
    index: int
    text: str
    category: int
    evidence: tuple[str, ...]


def questions_of(sample: dict[str, Any]) -> list[Question]:
    """Every question with at least one well-formed evidence id that names a real turn."""
    known = {str(u["dia_id"]) for _, _, utts in sessions_of(sample) for u in utts}
    out = []
    for i, qa in enumerate(sample.get("qa", [])):
        evidence = tuple(e for e in normalize_evidence(qa.get("evidence", [])) if e in known)
        if evidence and str(qa.get("question", "")).strip():
            out.append(
                Question(str(sample["sample_id"]), i, str(qa["question"]), int(qa["category"]), evidence)
            )
    return out


# ----------------------------------------------------------------------------- metrics


def recall_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    """Proportional recall: the share of the relevant items found in the first ``k``."""
    top = set(ranked[:k])
    return sum(1 for r in relevant if r in top) / len(relevant)


def ndcg_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    """Binary-relevance NDCG@k."""
    rel = set(relevant)
    dcg = sum(1.0 / np.log2(i + 2) for i, r in enumerate(ranked[:k]) if r in rel)
    ideal = sum(1.0 / np.log2(i + 2) for i in range(min(len(rel), k)))
    return float(dcg / ideal) if ideal else 0.0


def dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


# ----------------------------------------------------------------------------- cached embedder


class CachedEmbedder:
    """The real model (:class:`FastEmbedder`), with every vector it computes kept in a SQLite file.

    Keyed by (model, kind, sha1 of the text), so a re-run, another benchmark or another checkout over
    the same texts never embeds a text twice (:func:`embedding_cache_path`). The vectors are exactly
    the model's; the stamp is the real model's, so a memory built through this class is
    indistinguishable from one built by ``funes index``.
    """

    model: str = MODEL_NAME
    dim: int = DIM

    def __init__(self, path: Path | None = None, *, cache_dir: Path | None = None) -> None:
        self.path = path or embedding_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fast = FastEmbedder(cache_dir or CACHE / "model")
        self._lock = threading.Lock()
        # Several benchmarks (and checkouts) may share the file at once: wait for each other's writes.
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=120)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB NOT NULL)")
        self._db.commit()
        self.computed = 0
        self.hits = 0

    @property
    def stamp(self) -> ModelStamp:
        return ModelStamp(self.model, self.dim)

    def _key(self, kind: str, text: str) -> str:
        digest = hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()
        return f"{self.model}/{self.dim}:{kind}:{digest}"

    def _lookup(self, keys: Sequence[str]) -> dict[str, Vector]:
        found: dict[str, Vector] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                marks = ",".join("?" * len(part))
                for key, blob in self._db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", part):
                    found[key] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def _store(self, items: Sequence[tuple[str, Vector]]) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO vec (key, v) VALUES (?, ?)",
                [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items],
            )
            self._db.commit()

    def cached_count(self, texts: Sequence[str], kind: str = "d") -> int:
        return len(self._lookup([self._key(kind, t) for t in dict.fromkeys(texts)]))

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        keys = [self._key("d", t) for t in texts]
        found = self._lookup(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(texts) - len(missing)
        if missing:
            todo = dict.fromkeys(texts[i] for i in missing)
            vectors = self._fast.embed_documents(list(todo))
            fresh = [(self._key("d", t), v) for t, v in zip(todo, vectors, strict=True)]
            self._store(fresh)
            found.update(fresh)
            self.computed += len(todo)
        return [found[k] for k in keys]

    def model_itself(self) -> FastEmbedder:
        """The real model behind the cache: every query embedded afresh (latency as users see it)."""
        return self._fast

    def embed_query(self, text: str) -> Vector:
        key = self._key("q", text)
        found = self._lookup([key])
        if key in found:
            self.hits += 1
            return found[key]
        vector = self._fast.embed_query(text)
        self._store([(key, vector)])
        self.computed += 1
        return vector

    def close(self) -> None:
        with self._lock:
            self._db.close()


# ----------------------------------------------------------------------------- machine and stats


def machine_info() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor()
    ram_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
                break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "ram_gb": ram_gb,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load_avg": [round(x, 2) for x in load],
    }


def median_p95(samples: Sequence[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * (len(ordered) - 1))))]
    return statistics.median(ordered), p95


def file_sha(paths: Iterable[Path]) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for p in paths:
        digest.update(p.read_bytes())
    return digest.hexdigest()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_moto(log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """moto's S3 server on a free port of 127.0.0.1 (as in the tests), once it answers; its log to ``log``."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/moto-api/", timeout=1).read()
            return proc, port
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("moto did not start")


def stop_moto(proc: subprocess.Popen[bytes], work: Path) -> None:
    """Stop the server :func:`start_moto` started and delete the benchmark's work folder with its log."""
    proc.terminate()
    proc.wait()
    shutil.rmtree(work, ignore_errors=True)


def report(results: dict[str, Any], out: Path | None) -> dict[str, Any]:
    """Print a benchmark's results as JSON, and write them to ``out`` (``--out``) when given."""
    print(json.dumps(results, indent=2))
    if out:
        out.write_text(json.dumps(results, indent=2) + "\n")
    return results

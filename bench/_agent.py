"""The coding-agent recall benchmark: real agent transcripts, converted by funes' own converters.

``bench/agent_sessions/`` holds what this project wrote: the questions (``questions.jsonl``) and
the manifest (``benchmark.json``: where each transcript came from, its licence, the sha256 of
every transcript file and of every converted session). The transcripts themselves are public,
permissively licensed sessions written by other people; they are read where the shared material
is kept (``shared/corpus/`` beside the checkout, or ``$FUNES_AGENT_CORPUS``), never fetched at
run time and never copied into the project.

Everything here is deterministic: the same transcript files give the same turns and ids (the
converters guarantee it, ``tests/test_bench_agent.py`` pins it with the manifest's digests), and
the dev/test split is a hash of the question id.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from funes_core.turns.format import Turn, turns_to_jsonl

ROOT = Path(__file__).resolve().parents[1]
AGENT_DIR = ROOT / "bench" / "agent_sessions"
MANIFEST = AGENT_DIR / "benchmark.json"
QUESTIONS = AGENT_DIR / "questions.jsonl"
#: Environment override for the folder that holds the transcripts (default: ``shared/corpus``).
CORPUS_ENV = "FUNES_AGENT_CORPUS"
#: Question kinds, in the order the tables show them.
KINDS: tuple[str, ...] = ("exact", "paraphrase", "temporal", "multi-session", "superseded")


@dataclass(frozen=True, slots=True)
class Source:
    """One folder of transcripts: where it came from, under which licence, and what it must yield."""

    corpus: str  #: folder under the corpus root, e.g. ``claude/spotter``
    converter: str  #: the integration id whose converter reads it
    origin: str  #: repository, path and commit the files were taken from
    licence: str
    files: dict[str, str]  #: file (relative to ``corpus``) → sha256 of its bytes
    sessions: dict[str, str]  #: session id → sha256 of its converted turns (``turns_to_jsonl``)


@dataclass(frozen=True, slots=True)
class Manifest:
    now: datetime  #: the moment the questions are asked ("yesterday" is the day before this)
    sources: tuple[Source, ...]


@dataclass(frozen=True, slots=True)
class AgentQuestion:
    id: str
    kind: str
    text: str
    #: Evidence turns as ``session_id/turn_uuid`` keys. For ``superseded`` questions the first is
    #: the current answer and the others are what it replaced (still to be findable).
    evidence: tuple[str, ...]

    @property
    def split(self) -> str:
        return split_of(self.id)


def split_of(qid: str) -> str:
    """``dev`` or ``test``, from a hash of the question id: stable, and blind to the question's text."""
    digest = hashlib.sha1(qid.encode(), usedforsecurity=False).digest()
    return "test" if digest[0] % 2 else "dev"


def turn_key(session_id: str, turn_uuid: str) -> str:
    return f"{session_id}/{turn_uuid}"


def load_manifest(path: Path = MANIFEST) -> Manifest:
    raw = json.loads(path.read_text(encoding="utf-8"))
    sources = tuple(
        Source(
            corpus=str(s["corpus"]),
            converter=str(s["converter"]),
            origin=str(s["origin"]),
            licence=str(s["licence"]),
            files={str(k): str(v) for k, v in s["files"].items()},
            sessions={str(k): str(v) for k, v in s["sessions"].items()},
        )
        for s in raw["sources"]
    )
    return Manifest(datetime.fromisoformat(str(raw["now"]).replace("Z", "+00:00")), sources)


def load_questions(path: Path = QUESTIONS) -> list[AgentQuestion]:
    out: list[AgentQuestion] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        item: dict[str, Any] = json.loads(line)
        qid = str(item["id"])
        kind = str(item["kind"])
        if qid in seen:
            raise SystemExit(f"{path.name}:{number}: duplicate question id {qid}")
        if kind not in KINDS:
            raise SystemExit(f"{path.name}:{number}: unknown kind {kind!r} (one of {', '.join(KINDS)})")
        evidence = tuple(turn_key(e["session_id"], e["turn_uuid"]) for e in item["evidence"])
        if not evidence:
            raise SystemExit(f"{path.name}:{number}: {qid} names no evidence turn")
        seen.add(qid)
        out.append(AgentQuestion(qid, kind, str(item["question"]), evidence))
    return out


def find_corpus() -> Path:
    """``$FUNES_AGENT_CORPUS``, else ``shared/corpus`` in the folder that holds the checkout."""
    env = os.environ.get(CORPUS_ENV)
    if env:
        return Path(env)
    for parent in ROOT.parents:
        candidate = parent / "shared" / "corpus"
        if candidate.is_dir():
            return candidate
    raise SystemExit(
        f"the agent transcripts were not found: put the shared folder beside the checkout or set {CORPUS_ENV}"
    )


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def session_digest(turns: Sequence[Turn]) -> str:
    return hashlib.sha256(turns_to_jsonl(turns).encode("utf-8")).hexdigest()


def check_files(root: Path, source: Source) -> list[str]:
    """What differs between the transcript files on disk and the manifest (empty when they match)."""
    problems: list[str] = []
    for name, digest in sorted(source.files.items()):
        path = root / source.corpus / name
        if not path.is_file():
            problems.append(f"{source.corpus}/{name}: missing")
        elif file_digest(path) != digest:
            problems.append(f"{source.corpus}/{name}: changed (sha256 differs from the manifest)")
    return problems


def convert_source(root: Path, source: Source) -> list[list[Turn]]:
    """Every session of one source, converted by the converter its integration registers.

    Each listed file is converted on its own (a folder walk would pick up whatever else lies
    there), in name order; sessions come back in that order.
    """
    from funes_core.host.manager import load_plugins

    integration = load_plugins().integration(source.converter)
    if integration is None or integration.converter is None:
        raise SystemExit(
            f"no converter for {source.converter!r}: install its plugin (uv sync --all-packages)"
        )
    converter = integration.converter()
    sessions: list[list[Turn]] = []
    for name in sorted(source.files):
        for ref in sorted(converter.sessions_in(root / source.corpus / name), key=lambda r: r.session_id):
            turns = converter.convert(ref)
            if turns:
                sessions.append(turns)
    return sessions


def convert_all(root: Path, manifest: Manifest) -> list[list[Turn]]:
    """All sessions of the benchmark; refuses (with what differs) when the transcripts changed."""
    problems = [p for s in manifest.sources for p in check_files(root, s)]
    if problems:
        raise SystemExit(
            "the agent transcripts differ from bench/agent_sessions/benchmark.json:\n  "
            + "\n  ".join(problems)
        )
    return [turns for source in manifest.sources for turns in convert_source(root, source)]


def evidence_problems(questions: Iterable[AgentQuestion], sessions: Sequence[Sequence[Turn]]) -> list[str]:
    """Evidence keys that name no converted turn (a typo, or a converter that changed its ids)."""
    known = {turn_key(t.session_id, t.turn_uuid) for turns in sessions for t in turns}
    return [f"{q.id}: {key}" for q in questions for key in q.evidence if key not in known]

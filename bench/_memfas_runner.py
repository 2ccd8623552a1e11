"""Run agent-memfas's FTS5 search over given documents; executed by ``bench/quality.py`` in its own venv.

Input (JSON file, argv[1]): ``{"db_dir": str, "limit": int, "modes": ["as-is", "or"],
"conversations": {conv: {"docs": [[doc_id, text], ...], "questions": [[qid, text], ...]}}}``.
Output (JSON on stdout): ``{"version": str, "ranked": {mode: {qid: [doc_id, ...]}}}``.

Documents go in through ``FTS5Backend.index`` and questions through ``FTS5Backend.search``, the
backend behind ``Memory.search`` (which only re-wraps its results without their doc ids). Mode
``as-is`` passes the question unchanged: FTS5 joins bare words with an implicit AND, so a whole
question rarely matches one short turn, and punctuation the package does not strip (``,`` ``.``
``!``) is an FTS5 syntax error that the package turns into no result. Mode ``or`` keeps only the
question's words and joins them with ``OR``, to show what its BM25 ranking does once terms match.
"""

from __future__ import annotations

import json
import re
import sys
from importlib.metadata import version
from pathlib import Path

_WORD = re.compile(r"\w+")


def main() -> None:
    from agent_memfas import Config, Memory
    from agent_memfas.search.fts5 import FTS5Backend

    job = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    db_dir = Path(job["db_dir"])
    db_dir.mkdir(parents=True, exist_ok=True)
    limit = int(job["limit"])
    ranked: dict[str, dict[str, list[str]]] = {mode: {} for mode in job["modes"]}
    for conv, payload in job["conversations"].items():
        db = db_dir / f"{conv}.db"
        db.unlink(missing_ok=True)
        memory = Memory(Config(db_path=str(db)))
        backend = memory.backend
        assert isinstance(backend, FTS5Backend)
        for doc_id, text in payload["docs"]:
            backend.index(doc_id, text, {"source": conv, "date": "2024-01-01T00:00:00"})
        for qid, question in payload["questions"]:
            for mode in job["modes"]:
                if mode == "or":
                    words = [w for w in _WORD.findall(question) if w.upper() not in ("AND", "OR", "NOT")]
                    query = " OR ".join(words)
                else:
                    query = question
                results = backend.search(query, limit) if query else []
                ranked[mode][qid] = [str(r.metadata.get("doc_id", "")) for r in results]
        memory.close()
    json.dump({"version": version("agent-memfas"), "ranked": ranked}, sys.stdout)


if __name__ == "__main__":
    main()

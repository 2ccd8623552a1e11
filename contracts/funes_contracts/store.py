"""``StoreContract``: the behaviour every funes chunk store must have, as a base test class.

Subclass it in a ``test_*.py`` file and provide a ``make_store`` fixture returning a callable
that builds a fresh, empty store (a new one per call)::

    class TestMyStore(StoreContract):
        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda: MyStore(tmp_path / "db")

The class is named so that pytest never collects it on its own. Every test carries a
``requirement("store:…")`` marker naming the rule it checks, so a conformance report can say
which rule a backend breaks. One test embeds real text with funes' pinned model (loaded once
per process) to check that vector search finds a paraphrase; the rest use fixed vectors.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from funes_core.models.embed import DIM, Embedder, FastEmbedder, HashEmbedder
from funes_core.models.vectors import ModelMismatchError, ModelStamp, Vector
from funes_core.store.base import (
    CandidateSearch,
    Filters,
    Row,
    SessionFacets,
    Store,
    candidate_row,
    facets_of,
)

__all__ = ["StoreContract", "make_row", "shared_real_embedder"]

STAMP = ModelStamp("funes-contract/model-a", DIM)
OTHER = ModelStamp("funes-contract/model-b", DIM)

_EMBEDDER: FastEmbedder | None = None
_EMBEDDER_LOCK = threading.Lock()


def shared_real_embedder(cache_dir: Path) -> FastEmbedder:
    """funes' real embedder, loaded once per process (the first caller's ``cache_dir`` wins)."""
    global _EMBEDDER
    with _EMBEDDER_LOCK:
        if _EMBEDDER is None:
            embedder = FastEmbedder(cache_dir)
            embedder.load()
            _EMBEDDER = embedder
        return _EMBEDDER


def make_row(
    row_id: str,
    text: str = "some text",
    *,
    session_id: str = "s1",
    seq: int = 0,
    ts: str = "2026-03-05T12:00:00Z",
    role: str = "user",
    harness: str = "claude",
    block_type: str = "text",
    block_idx: int = 0,
    split_idx: int = 0,
    repo: str = "",
    vector: Vector | None = None,
    **extra: str | None,
) -> Row:
    """A row with sensible defaults; the turn id is derived from the session and seq."""
    return Row(
        id=row_id,
        text=text,
        session_id=session_id,
        turn_uuid=f"{session_id}-t{seq}",
        seq=seq,
        ts=ts,
        role=role,
        harness=harness,
        block_type=block_type,
        block_idx=block_idx,
        split_idx=split_idx,
        repo=repo,
        vector=vector,
        **extra,  # type: ignore[arg-type]
    )


def _unit(seed: int) -> Vector:
    vec = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return (vec / np.linalg.norm(vec)).astype(np.float32)


def _ids(items: list[Row]) -> list[str]:
    return [r.id for r in items]


#: One row per filter facet value, so each filter has exactly one known answer set.
def _facet_rows() -> list[Row]:
    emb = HashEmbedder()
    web, api = "acme/web", "acme/api"
    specs: list[tuple[str, dict[str, str]]] = [
        (
            "f1",
            {
                "harness": "claude",
                "role": "user",
                "block_type": "text",
                "repo": web,
                "ts": "2026-03-01T09:00:00Z",
            },
        ),
        (
            "f2",
            {
                "harness": "claude_code",
                "role": "assistant",
                "block_type": "thinking",
                "ts": "2026-03-02T23:59:59Z",
            },
        ),
        (
            "f3",
            {"harness": "codex", "role": "tool", "block_type": "tool_result", "repo": f"acme/web-ui {api}"},
        ),
        (
            "f4",
            {
                "harness": "pi",
                "role": "assistant",
                "block_type": "tool_use",
                "ts": "2026-03-04T00:00:00Z",
                "repo": api,
            },
        ),
        ("f5", {"harness": "codex", "role": "user", "block_type": "text", "session_id": "s2"}),
    ]
    rows = []
    for i, (rid, kw) in enumerate(specs):
        text = f"deployment pipeline notes {rid}"
        kw.setdefault("ts", "2026-03-03T10:00:00Z" if rid != "f5" else "2026-03-03T12:00:00.500Z")
        rows.append(make_row(rid, text, seq=i, vector=emb.embed_query(text), **kw))  # type: ignore[arg-type]
    return rows


FILTER_CASES: list[tuple[str, Filters, set[str]]] = [
    ("harness", Filters(harness="codex"), {"f3", "f5"}),
    ("harness-claude-alias", Filters(harness="claude"), {"f1", "f2"}),
    ("role", Filters(role="assistant"), {"f2", "f4"}),
    ("block_type", Filters(block_type="tool_use"), {"f4"}),
    ("repo-whole-identity", Filters(repo="acme/web"), {"f1"}),
    ("repo-one-of-several", Filters(repo="acme/api"), {"f3", "f4"}),
    ("since-inclusive", Filters(since=date(2026, 3, 3)), {"f3", "f4", "f5"}),
    ("until-inclusive", Filters(until=date(2026, 3, 2)), {"f1", "f2"}),
    ("since-until-one-day", Filters(since=date(2026, 3, 3), until=date(2026, 3, 3)), {"f3", "f5"}),
    ("session", Filters(session_id="s2"), {"f5"}),
    ("combined", Filters(harness="codex", role="user"), {"f5"}),
]


class StoreContract:
    """The shared suite; see the module docstring for how to run it against a store."""

    # -- fixtures a subclass provides or may override -------------------------------------
    @pytest.fixture
    def make_store(self) -> Callable[[], Store]:
        raise NotImplementedError("a StoreContract subclass must provide a `make_store` fixture")

    @pytest.fixture
    def store(self, make_store: Callable[[], Store]) -> Iterator[Store]:
        yield make_store()

    @pytest.fixture
    def stamped(self, store: Store) -> Store:
        store.stamp_model(STAMP)
        return store

    @pytest.fixture
    def real_embedder(self, tmp_path_factory: pytest.TempPathFactory) -> Embedder:
        """The real model; loaded once per process however many tests and subclasses ask."""
        return shared_real_embedder(tmp_path_factory.getbasetemp() / "funes-model-cache")

    # -- model stamp ----------------------------------------------------------------------
    @pytest.mark.requirement("store:model-stamp")
    def test_model_stamp_is_recorded_and_idempotent(self, store: Store) -> None:
        assert store.model_stamp() is None
        store.stamp_model(STAMP)
        store.stamp_model(STAMP)
        assert store.model_stamp() == STAMP

    @pytest.mark.requirement("store:model-mismatch")
    def test_other_model_is_refused_with_the_rebuild_message(self, stamped: Store) -> None:
        stamped.add([make_row("a", vector=_unit(1))])
        with pytest.raises(ModelMismatchError) as info:
            stamped.stamp_model(OTHER)
        assert str(info.value) == (
            f"memory {stamped.label} was built with {STAMP.model}; this funes embeds with {OTHER.model}. "
            "Rebuild it with: funes index --rebuild"
        )
        assert stamped.model_stamp() == STAMP
        assert stamped.count() == 1

    # -- append and dedup -----------------------------------------------------------------
    @pytest.mark.requirement("store:append-dedup")
    def test_add_appends_and_dedups_by_id(self, stamped: Store) -> None:
        assert stamped.add([make_row("a", "first"), make_row("b", "second")]) == 2
        assert stamped.add([make_row("a", "first again, different text"), make_row("c", "third")]) == 1
        assert stamped.add([make_row("a"), make_row("b"), make_row("c")]) == 0
        assert stamped.count() == 3
        assert {r.id: r.text for r in stamped.scan()}["a"] == "first"

    @pytest.mark.requirement("store:append-dedup")
    def test_duplicate_ids_within_one_add_keep_the_first(self, stamped: Store) -> None:
        assert stamped.add([make_row("a", "kept"), make_row("a", "dropped")]) == 1
        assert [r.text for r in stamped.scan()] == ["kept"]

    @pytest.mark.requirement("store:append-dedup")
    def test_add_nothing(self, stamped: Store) -> None:
        assert stamped.add([]) == 0
        assert stamped.count() == 0

    @pytest.mark.requirement("store:existing-ids")
    def test_existing_ids(self, stamped: Store) -> None:
        stamped.add([make_row("a"), make_row("b")])
        assert stamped.existing_ids(["a", "x", "b", "a"]) == {"a", "b"}
        assert stamped.existing_ids([]) == set()
        assert stamped.existing_ids(["it's"]) == set()

    @pytest.mark.requirement("store:roundtrip")
    def test_every_field_round_trips(self, stamped: Store) -> None:
        full = make_row(
            "full",
            "text with 'quotes' and ünïcode ✓",
            session_id="sess'1",
            seq=7,
            ts="2026-03-05T12:00:01.500000Z",
            role="assistant",
            harness="codex",
            block_type="tool_use",
            block_idx=3,
            split_idx=2,
            repo="acme/web acme/api",
            workdir="-home-u-web",
            parent_uuid="p-1",
            tool_name="Bash",
            source_path="/spool/codex/x.funes.jsonl",
            taint="external",
        )
        bare = make_row("bare")
        stamped.add([full, bare])
        got = {r.id: r for r in stamped.scan()}
        assert got["full"] == full
        assert got["bare"] == bare
        assert got["bare"].parent_uuid is None and got["bare"].tool_name is None
        assert all(r.vector is None for r in got.values())  # scans never load vectors

    # -- filters --------------------------------------------------------------------------
    @pytest.mark.requirement("store:filters")
    @pytest.mark.parametrize(("name", "filters", "expected"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
    def test_each_filter_applies_to_every_read(
        self, stamped: Store, name: str, filters: Filters, expected: set[str]
    ) -> None:
        rows = _facet_rows()
        stamped.add(rows)
        assert {r.id for r in rows if filters.matches(r)} == expected, "the case itself is wrong"
        assert {r.id for r in stamped.scan(filters)} == expected
        assert stamped.count(filters) == len(expected)
        assert {h.row.id for h in stamped.text_search("deployment pipeline", 10, filters)} == expected
        query = HashEmbedder().embed_query("deployment pipeline notes")
        assert {h.row.id for h in stamped.vector_search(query, 10, filters)} == expected

    @pytest.mark.requirement("store:filters")
    def test_filter_values_are_escaped(self, stamped: Store) -> None:
        stamped.add([make_row("q", "quoted", session_id="o'neil", role="it's")])
        assert stamped.count(Filters(session_id="o'neil")) == 1
        assert stamped.count(Filters(role="it's' OR '1'='1")) == 0
        assert _ids(stamped.session_rows("o'neil")) == ["q"]

    @pytest.mark.requirement("store:prefilter")
    def test_filters_apply_before_ranking(self, stamped: Store) -> None:
        best, worse = _unit(10), _unit(11)
        stamped.add(
            [
                make_row("best", "zephyr zephyr zephyr", harness="codex", vector=best),
                make_row("worse", "zephyr and many other words here", harness="pi", vector=worse),
            ]
        )
        only_pi = Filters(harness="pi")
        assert _ids([h.row for h in stamped.text_search("zephyr", 1, only_pi)]) == ["worse"]
        assert _ids([h.row for h in stamped.vector_search(best, 1, only_pi)]) == ["worse"]

    # -- full-text search ------------------------------------------------------------------
    @pytest.mark.requirement("store:fts-exact-word")
    def test_text_search_finds_an_exact_rare_word(self, stamped: Store) -> None:
        filler = [
            make_row(f"n{i}", f"routine note {i} about the build, tests and the deploy of the web service")
            for i in range(40)
        ]
        needle = make_row("needle", "the crash was ERR_QUIC_PROTOCOL_ERROR from the proxy, again")
        stamped.add([*filler[:20], needle, *filler[20:]])
        hits = stamped.text_search("ERR_QUIC_PROTOCOL_ERROR", 5)
        assert hits and hits[0].row.id == "needle"
        assert hits[0].score > 0
        assert all(h.score >= n.score for h, n in itertools.pairwise(hits))

    @pytest.mark.requirement("store:fts-exact-word")
    def test_text_search_misses_and_odd_queries(self, stamped: Store) -> None:
        stamped.add([make_row("a", "alpha beta"), make_row("b", "gamma delta")])
        assert stamped.text_search("nonexistentword", 5) == []
        assert stamped.text_search("", 5) == []
        for odd in ['"alpha beta"', "alpha AND (beta", "alpha:beta", "it's", "*", "alpha~2 ^ -beta"]:
            stamped.text_search(odd, 5)  # never raises: user words are never query syntax
        assert stamped.text_search("alpha", 0) == []

    @pytest.mark.requirement("store:fts-before-embedding")
    def test_rows_without_vectors_are_found_by_text_but_not_by_vector(self, stamped: Store) -> None:
        stamped.add(
            [
                make_row("owed", "flaky flush in the writer thread"),
                make_row("done", "unrelated words entirely", vector=_unit(3)),
            ]
        )
        assert [h.row.id for h in stamped.text_search("flush", 5)] == ["owed"]
        assert [h.row.id for h in stamped.vector_search(_unit(3), 5)] == ["done"]

    @pytest.mark.requirement("store:candidate-search")
    def test_candidate_legs_find_what_the_full_legs_find(self, stamped: Store) -> None:
        """Optional (``CandidateSearch``): the same hits, scores and owed flags, rows holding only
        what ranking reads. A store without the two methods skips this."""
        if not isinstance(stamped, CandidateSearch):
            pytest.skip("this store has no candidate legs (optional)")
        stamped.add(
            [
                make_row("a", "the deploy pipeline broke", session_id="s'1", seq=3, vector=_unit(1)),
                make_row("b", "deploy again tomorrow", seq=7, ts="2026-01-02T00:00:00Z", vector=_unit(2)),
                make_row("owed", "deploy keys rotated", session_id="s2", seq=1),
                make_row("c", "nothing to see", vector=_unit(3)),
            ]
        )
        filters = Filters(since=date(2026, 1, 1))
        for full, slim in (
            (stamped.text_search("deploy", 5), stamped.text_candidates("deploy", 5)),
            (stamped.text_search("deploy", 5, filters), stamped.text_candidates("deploy", 5, filters)),
            (stamped.vector_search(_unit(1), 5), stamped.vector_candidates(_unit(1), 5)),
            (stamped.vector_search(_unit(2), 1, filters), stamped.vector_candidates(_unit(2), 1, filters)),
        ):
            assert full, "the case must find something"
            assert [(h.row.id, h.vector_owed) for h in slim] == [(h.row.id, h.vector_owed) for h in full]
            assert [h.score for h in slim] == pytest.approx([h.score for h in full])
            for candidate, whole in zip(slim, full, strict=True):
                expected = candidate_row(whole.row.id, whole.row.session_id, whole.row.seq, whole.row.ts)
                assert candidate.row == expected
        assert stamped.text_candidates("", 5) == []
        assert stamped.vector_candidates(_unit(1), 0) == []

    @pytest.mark.requirement("store:session-facets")
    def test_session_facets_are_what_the_rows_say(self, stamped: Store) -> None:
        """Optional (``SessionFacets``): one facet per session, as :func:`facets_of` computes them
        from a scan (first row in reading order, latest ts, distinct turns), filters applied first.
        A store without the method skips this."""
        if not isinstance(stamped, SessionFacets):
            pytest.skip("this store has no session facets (optional)")
        assert stamped.session_facets() == []
        stamped.add(
            [
                make_row("a2", session_id="s'1", seq=2, ts="2026-01-03T00:00:00Z", harness="codex"),
                make_row("a0", session_id="s'1", seq=0, ts="2026-01-02T00:00:00Z", repo="acme/x"),
                make_row("a0b", session_id="s'1", seq=0, ts="2026-01-05T00:00:00Z", block_idx=1),
                make_row("b1", session_id="s2", seq=1, ts="2026-01-01T00:00:00Z", workdir="/w"),
                make_row("b1s", session_id="s2", seq=1, ts="2026-01-01T00:00:00Z", split_idx=1),
                make_row("c", session_id="s3", seq=4, ts="2026-02-01T00:00:00Z", harness="codex"),
            ]
        )
        for filters in (
            None,
            Filters(harness="codex"),
            Filters(since=date(2026, 1, 3)),
            Filters(repo="acme/x"),
        ):
            expected = facets_of(stamped.scan(filters))
            assert stamped.session_facets(filters) == expected
        whole = stamped.session_facets()
        assert [f.session_id for f in whole] == ["s2", "s'1", "s3"]
        first = whole[1]
        assert (first.start_ts, first.end_ts, first.repo, first.turns) == (
            "2026-01-02T00:00:00Z",
            "2026-01-05T00:00:00Z",
            "acme/x",
            2,
        )
        assert (first.first_seq, first.last_seq) == (0, 2)

    # -- vector search ---------------------------------------------------------------------
    @pytest.mark.requirement("store:vector-cosine")
    def test_vector_score_is_cosine_similarity(self, stamped: Store) -> None:
        a, b = _unit(1), _unit(2)
        stamped.add([make_row("a", vector=a), make_row("b", vector=b)])
        hits = stamped.vector_search(a, 2)
        assert [h.row.id for h in hits] == ["a", "b"]
        assert hits[0].score == pytest.approx(1.0, abs=1e-3)
        assert hits[1].score == pytest.approx(float(np.dot(a, b)), abs=1e-3)
        assert hits[0].row.vector is None or np.allclose(hits[0].row.vector, a)
        assert stamped.vector_search(a, 0) == []

    @pytest.mark.slow
    @pytest.mark.requirement("store:vector-paraphrase")
    def test_vector_search_finds_a_paraphrase(self, store: Store, real_embedder: Embedder) -> None:
        store.stamp_model(real_embedder.stamp)
        passages = {
            "arm": "the build broke on ARM",
            "lunch": "we had pasta for lunch at the office",
            "docs": "update the README with the new install steps",
            "perf": "the database query got slower after the migration",
            "ui": "the login button is misaligned on mobile screens",
        }
        vectors = real_embedder.embed_documents(list(passages.values()))
        store.add([make_row(k, t, vector=v) for (k, t), v in zip(passages.items(), vectors, strict=True)])
        hits = store.vector_search(real_embedder.embed_query("arm64 compile failure"), 3)
        assert hits[0].row.id == "arm"
        assert hits[0].score > hits[1].score + 0.1

    # -- owed embeddings -------------------------------------------------------------------
    @pytest.mark.requirement("store:owed")
    def test_owed_oldest_first_and_set_vectors(self, stamped: Store) -> None:
        stamped.add(
            [
                make_row("late", ts="2026-03-05T00:00:00Z"),
                make_row("early-b", ts="2026-03-01T00:00:00Z"),
                make_row("early-a", ts="2026-03-01T00:00:00Z"),
                make_row("has", ts="2026-01-01T00:00:00Z", vector=_unit(5)),
            ]
        )
        assert _ids(stamped.owed(10)) == ["early-a", "early-b", "late"]
        assert _ids(stamped.owed(2)) == ["early-a", "early-b"]
        assert stamped.owed(0) == []
        stamped.set_vectors({"early-a": _unit(6), "nope": _unit(7)})
        assert _ids(stamped.owed(10)) == ["early-b", "late"]
        assert stamped.stats().owed == stamped.owed_count() == 2
        hits = stamped.vector_search(_unit(6), 1)
        assert hits[0].row.id == "early-a" and hits[0].score == pytest.approx(1.0, abs=1e-3)

    @pytest.mark.requirement("store:owed")
    def test_set_vectors_never_replaces_an_embedding(self, stamped: Store) -> None:
        stamped.add([make_row("a", vector=_unit(1))])
        stamped.set_vectors({"a": _unit(2)})
        assert stamped.vector_search(_unit(1), 1)[0].score == pytest.approx(1.0, abs=1e-3)
        stamped.set_vectors({})

    @pytest.mark.requirement("store:owed")
    def test_wrong_dimension_is_refused(self, stamped: Store) -> None:
        stamped.add([make_row("a")])
        with pytest.raises(ValueError):
            stamped.set_vectors({"a": np.ones(DIM + 1, dtype=np.float32)})
        with pytest.raises(ValueError):
            stamped.add([make_row("b", vector=np.ones(3, dtype=np.float32))])
        assert stamped.count() == 1
        assert _ids(stamped.owed(5)) == ["a"]

    # -- sequential reads ------------------------------------------------------------------
    @pytest.mark.requirement("store:session-order")
    def test_session_rows_are_ordered_and_bounded(self, stamped: Store) -> None:
        stamped.add(
            [
                make_row("s1-2-0-0", seq=2),
                make_row("s1-0-1-0", seq=0, block_idx=1),
                make_row("s1-0-0-1", seq=0, split_idx=1),
                make_row("s1-0-0-0", seq=0),
                make_row("s1-1-0-0", seq=1),
                make_row("other", session_id="s9", seq=1),
            ]
        )
        assert _ids(stamped.session_rows("s1")) == [
            "s1-0-0-0",
            "s1-0-0-1",
            "s1-0-1-0",
            "s1-1-0-0",
            "s1-2-0-0",
        ]
        assert _ids(stamped.session_rows("s1", 1, 2)) == ["s1-1-0-0", "s1-2-0-0"]
        assert _ids(stamped.session_rows("s1", seq_to=0)) == ["s1-0-0-0", "s1-0-0-1", "s1-0-1-0"]
        assert _ids(stamped.session_rows("s1", seq_from=2)) == ["s1-2-0-0"]
        assert stamped.session_rows("missing") == []

    @pytest.mark.requirement("store:session-order")
    def test_session_windows_read_several_sessions_at_once(self, stamped: Store) -> None:
        stamped.add(
            [
                make_row("a0", seq=0),
                make_row("a1", seq=1),
                make_row("a3", seq=3),
                make_row("b2-1", session_id="o'b", seq=2, split_idx=1),
                make_row("b2-0", session_id="o'b", seq=2),
                make_row("b5", session_id="o'b", seq=5),
                make_row("c0", session_id="c", seq=0),
            ]
        )
        got = stamped.session_windows({"s1": (1, 3), "o'b": (0, 2), "missing": (0, 9)})
        assert _ids(got) == ["b2-0", "b2-1", "a1", "a3"]  # ordered by session, seq, block, split
        assert all(r.vector is None for r in got)
        assert stamped.session_windows({}) == []

    @pytest.mark.requirement("store:session-vectors")
    def test_session_vectors_returns_only_that_sessions_embedded_rows(self, stamped: Store) -> None:
        stamped.add(
            [
                make_row("a", vector=_unit(1)),
                make_row("b", seq=1, vector=_unit(2)),
                make_row("owed", seq=2),
                make_row("elsewhere", session_id="s2", vector=_unit(3)),
            ]
        )
        got = stamped.session_vectors("s1")
        assert set(got) == {"a", "b"}
        assert got["a"].dtype == np.float32 and got["a"].shape == (DIM,)
        # A store may keep vectors at half precision (about 3 significant digits): what comes back
        # must be the vector that went in, to that precision, as float32.
        assert np.allclose(got["a"], _unit(1), atol=1e-3) and np.allclose(got["b"], _unit(2), atol=1e-3)
        assert stamped.session_vectors("missing") == {}

    # -- counts ----------------------------------------------------------------------------
    @pytest.mark.requirement("store:stats")
    def test_counts_and_stats(self, stamped: Store) -> None:
        stamped.add(_facet_rows())
        stamped.add([make_row("owed-1", session_id="s3", harness="codex")])
        stats = stamped.stats()
        assert stats.chunks == stamped.count() == 6
        assert stats.sessions == 3
        assert stats.owed == 1
        assert dict(stats.harnesses) == {"claude": 1, "claude_code": 1, "codex": 3, "pi": 1}
        assert stats.disk_bytes >= 0

    @pytest.mark.requirement("store:empty")
    def test_an_empty_store_answers_every_read(self, store: Store) -> None:
        assert store.count() == 0
        assert store.scan() == []
        assert store.owed(5) == []
        assert store.text_search("anything", 5) == []
        assert store.vector_search(_unit(1), 5) == []
        assert store.session_rows("s1") == []
        assert store.existing_ids(["a"]) == set()
        assert store.stats().chunks == 0
        store.optimize()

    @pytest.mark.requirement("store:optimize")
    def test_optimize_keeps_everything_findable(self, stamped: Store) -> None:
        for batch in range(3):
            stamped.add(
                [make_row(f"b{batch}-{i}", f"batch {batch} item {i} marker{batch}x{i}") for i in range(5)]
            )
        stamped.set_vectors({"b0-0": _unit(9)})
        stamped.optimize()
        stamped.add([make_row("after", "written after optimize: quokka")])
        assert stamped.count() == 16
        assert [h.row.id for h in stamped.text_search("marker2x3", 3)][:1] == ["b2-3"]
        assert [h.row.id for h in stamped.text_search("quokka", 3)] == ["after"]
        assert stamped.vector_search(_unit(9), 1)[0].row.id == "b0-0"
        assert stamped.stats().owed == 15

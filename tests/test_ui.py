"""The web viewer without a browser: its security rules, escaping of hostile passages, the
timeline's paging and cache, the reader, search and health, through Starlette's test client.
The browser flows are in test_ui_browser.py."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from uimemory import AGENTS, XSS_SESSION, build, session_turns, write_corpus

from funes_core.faces.web.app import make_app
from funes_core.faces.web.guard import CSP
from funes_core.faces.web.pages import PAGE_SIZE, captures
from funes_core.home import Home
from funes_core.read.handle import Memory
from funes_core.store.base import SessionFacet

TOKEN = "t0ken-for-the-tests-0123456789"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    """One indexed memory (hash double) for the module: 12 sessions and the hostile one."""
    root = tmp_path_factory.mktemp("ui")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FUNES_EMBEDDER", "hash")
        mp.setenv("FUNES_HOME", str(root / "home"))
        mp.setenv("FUNES_STATS", "off")
        h = Home(root / "home")
        write_corpus(root / "corpus")
        build(h, root / "corpus")
        yield h


@pytest.fixture
def client(home: Home, monkeypatch: pytest.MonkeyPatch) -> TestClient:
    """A client already holding the cookie, as a browser does after opening the printed address."""
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    monkeypatch.setenv("FUNES_HOME", str(home.root))
    app = make_app(Memory.resolve(None, home=home), token=TOKEN, hosts=["testserver"])
    c = TestClient(app)
    assert c.get(f"/?token={TOKEN}").status_code == 200
    return c


# -- security ----------------------------------------------------------------------------------------


def test_only_this_starts_token_gets_in_and_it_moves_into_a_strict_cookie(home: Home) -> None:
    app = make_app(Memory.resolve(None, home=home), token=TOKEN, hosts=["testserver"])
    c = TestClient(app)
    assert c.get("/").status_code == 403
    assert c.get("/static/app.js").status_code == 403, "static files are behind the token too"
    assert c.get("/?token=wrong-token-wrong-token").status_code == 403
    first = c.get(f"/search?q=parser&token={TOKEN}", follow_redirects=False)
    assert first.status_code == 303
    assert first.headers["location"] == "/search?q=parser", "the token leaves the address at once"
    cookie = first.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and f"funes_ui={TOKEN}".lower() in cookie
    assert c.get("/").status_code == 200
    stranger = TestClient(app, cookies={"funes_ui": "another-token-another-token"})
    assert stranger.get("/").status_code == 403


def test_wrong_host_cross_site_origin_and_writes_are_refused(client: TestClient) -> None:
    assert client.get("/", headers={"host": "evil.example:80"}).status_code == 400
    assert client.get("/", headers={"host": "127.0.0.1.evil.example"}).status_code == 400
    assert client.get("/", headers={"origin": "http://evil.example"}).status_code == 403
    assert client.get("/", headers={"origin": "null"}).status_code == 403
    assert client.get("/", headers={"sec-fetch-site": "cross-site"}).status_code == 403
    assert (
        client.get("/", headers={"origin": "http://testserver", "sec-fetch-site": "same-origin"}).status_code
        == 200
    )
    for method in ("post", "put", "delete", "patch"):
        assert getattr(client, method)("/").status_code == 405


def test_every_answer_carries_a_strict_csp_and_no_cors(client: TestClient) -> None:
    for path in ("/", "/search?q=flush", "/health", "/static/app.js", "/session?id=nope"):
        r = client.get(path, headers={"origin": "http://testserver"})
        assert r.headers["content-security-policy"] == CSP
        assert "access-control-allow-origin" not in r.headers
        assert r.headers["x-content-type-options"] == "nosniff"
        cached = path.startswith("/static/")
        assert r.headers["cache-control"] == ("private, max-age=3600" if cached else "no-store")
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP and "default-src 'none'" in CSP


def test_the_guard_wants_a_real_token(home: Home) -> None:
    with pytest.raises(ValueError, match="at least 16"):
        make_app(Memory.resolve(None, home=home), token="short", hosts=["x"])


# -- escaping ----------------------------------------------------------------------------------------


class _Tags(HTMLParser):
    """Every element and attribute the browser would build from a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _inert(html: str) -> None:
    parser = _Tags()
    parser.feed(html)
    for tag, attrs in parser.tags:
        assert tag not in ("iframe", "img", "svg"), f"a passage became a <{tag}>"
        assert not any(name.startswith("on") for name in attrs), f"an event handler on <{tag}>: {attrs}"
        for name in ("href", "src"):
            assert not (attrs.get(name) or "").lower().startswith("javascript:"), f"{name} runs script"
        if tag == "script":
            assert attrs == {"src": "/static/app.js", "defer": None}, "the one script is our own file"


def test_a_hostile_transcript_renders_as_text_in_the_reader(client: TestClient) -> None:
    r = client.get(f"/session?id={XSS_SESSION}")
    assert r.status_code == 200
    _inert(r.text)
    assert "&lt;script&gt;window.pwned = &#39;script&#39;&lt;/script&gt;" in r.text
    assert "onerror=&#34;window.pwned" in r.text or "onerror=&quot;window.pwned" in r.text
    assert "[click me](javascript:window.pwned=&#39;link&#39;)" in r.text
    assert '<span class="redacted">[REDACTED:github_token]</span>' in r.text, "the marker is shown, marked"
    assert "ghp_" not in r.text


def test_hostile_hits_and_query_words_render_as_text_in_search(client: TestClient) -> None:
    for query in ("xsscheck", "<script>window.pwned", "onerror javascript"):
        r = client.get("/search", params={"q": query})
        assert r.status_code == 200
        _inert(r.text)
        fragment = client.get("/search/hits", params={"q": query})
        _inert(fragment.text)
    r = client.get("/search", params={"q": '"><img src=x onerror=alert(1)>'})
    _inert(r.text)
    assert 'value="&#34;&gt;&lt;img src=x onerror=alert(1)&gt;"' in r.text


def test_a_hostile_error_message_is_escaped_too(client: TestClient) -> None:
    r = client.get("/session", params={"id": "<script>x</script>"})
    assert r.status_code == 404
    _inert(r.text)
    assert "no session &lt;script&gt;x&lt;/script&gt;" in r.text


# -- the timeline ------------------------------------------------------------------------------------


def _session_ids(html: str) -> list[str]:
    return re.findall(r'href="/session\?id=([^"&#]+)"', html)


def test_timeline_groups_by_day_newest_first_with_agent_repo_turns_and_span(client: TestClient) -> None:
    r = client.get("/")
    days = re.findall(r"<h2>(\d{4}-\d\d-\d\d)</h2>", r.text)
    assert days == sorted(days, reverse=True) and days[0] == "2026-03-20"
    assert _session_ids(r.text)[0] == XSS_SESSION
    assert "13 sessions" in r.text
    assert '<span class="agent">codex</span>' in r.text and "6 turns" in r.text
    assert '<span class="span">09:00–09:05</span>' in r.text
    assert "why does the parser flush fail in session sess-0000 step 0" in r.text


def test_timeline_filters_by_agent_repo_and_dates(client: TestClient) -> None:
    codex = _session_ids(client.get("/", params={"agent": "codex"}).text)
    assert codex and all(int(s[-4:]) % 2 == 1 for s in codex)
    dated = client.get("/", params={"since": "2026-03-02", "until": "2026-03-03"}).text
    assert sorted(_session_ids(dated)) == ["sess-0001", "sess-0002"]
    bad = client.get("/", params={"since": "2026-03-09", "until": "2026-03-01"})
    assert bad.status_code == 400 and "--since 2026-03-09 is after --until 2026-03-01" in bad.text
    assert "No session matches" in client.get("/", params={"agent": "nobody"}).text


class _CountingStore:
    """A store that counts its reads of every session and says its data version (as LanceDB does)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.scans, self.version = inner, 0, 1

    def data_version(self) -> int:
        return self.version

    def scan(self, filters: Any = None) -> Any:
        self.scans += 1
        return self.inner.scan(filters)

    def session_facets(self, filters: Any = None) -> Any:
        self.scans += 1
        return self.inner.session_facets(filters)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_paging_scans_once_per_version_not_once_per_page(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    from funes_core.ingest.chunking import chunk_turn
    from funes_core.models.embed import HashEmbedder
    from funes_core.store.reference import MemoryStore

    inner = MemoryStore("local")
    total = PAGE_SIZE * 2 + 7
    for i in range(total):
        turns = session_turns(f"p-{i:04d}", 1 + i // 10, agent="claude", n=1)
        inner.add([c.to_row() for t in turns for c in chunk_turn(t)[0]])
    store = _CountingStore(inner)
    app = make_app(Memory.of(store, HashEmbedder(), home=home), token=TOKEN, hosts=["testserver"])  # type: ignore[arg-type]
    c = TestClient(app)
    c.get(f"/?token={TOKEN}")
    seen: list[str] = []
    offset: str | None = "0"
    while offset is not None:
        html = c.get("/", params={"offset": offset}).text
        seen += _session_ids(html)
        more = re.search(r'rel="next" href="[^"]*offset=(\d+)"', html)
        offset = more.group(1) if more else None
    assert seen == [f"p-{i:04d}" for i in reversed(range(total))], "every session once, newest first"
    assert store.scans == 1, "three pages, one scan"
    store.version = 2
    c.get("/")
    assert store.scans == 2, "a new version is summarised again"


class _ReadCountingStore:
    """Counts the session listings and every other read a page can make (openings, whole sessions,
    searches, scans), and says its data version, as LanceDB does."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.lists, self.reads = inner, 0, 0

    def data_version(self) -> int:
        return 1

    def session_facets(self, filters: Any = None) -> Any:
        self.lists += 1
        return self.inner.session_facets(filters)

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.inner, name)
        if name.startswith(("session_", "search", "scan", "vector", "text")) and callable(found):

            def counted(*args: Any, **kwargs: Any) -> Any:
                self.reads += 1
                return found(*args, **kwargs)

            return counted
        return found


def _counted_memory(home: Home) -> tuple[Memory, _ReadCountingStore, Any]:
    from funes_core.ingest.chunking import chunk_turn
    from funes_core.models.embed import HashEmbedder
    from funes_core.store.reference import MemoryStore

    class Embedder(HashEmbedder):
        queries = 0

        def embed_query(self, text: str) -> Any:
            self.queries += 1
            return super().embed_query(text)

    inner = MemoryStore("local")
    for i in range(PAGE_SIZE + 3):
        turns = session_turns(f"w-{i:04d}", 1 + i // 10, agent="claude", n=3)
        inner.add([c.to_row() for t in turns for c in chunk_turn(t)[0]])
    store = _ReadCountingStore(inner)
    embedder = Embedder()
    return Memory.of(store, embedder, home=home), store, embedder  # type: ignore[arg-type]


def test_funes_ui_prints_its_address_only_once_the_first_page_and_search_are_warm(home: Home) -> None:
    """The first visit after start must cost what a later one does (issue 24: < 500 ms at 100k):
    the session list, the first page's openings and the query model are loaded before the
    address is printed, not by the first request."""
    from funes_core.faces.web.server import bind, serve

    memory, store, embedder = _counted_memory(home)
    seen: dict[str, int] = {}

    class Printed(Exception):
        pass

    def ready(url: str) -> None:
        seen.update(facets=store.lists, reads=store.reads, queries=embedder.queries)
        raise Printed(url)

    bound = bind(0)
    try:
        with pytest.raises(Printed):
            serve(memory, bound, installed=[], on_ready=ready)
    finally:
        bound.sock.close()
    assert seen["facets"] == 1, "the session list is summarised before the address is printed"
    assert seen["queries"] == 1, "the query model has embedded a query before the address is printed"
    assert seen["reads"] > 1, "the first page's openings and a search have been read"


def test_the_viewers_connections_send_without_waiting_for_acks() -> None:
    """Nagle off on every accepted connection: with it on, each answer's last write waited for
    the browser's delayed ACK (~40 ms per page, fragment and static file)."""
    import asyncio
    import socket

    from funes_core.faces.web.server import bind

    bound = bind(0)

    async def accept_one() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=bound.sock)
        async with server:
            _, client = await asyncio.open_connection("127.0.0.1", bound.port)
            nodelay = await asyncio.wait_for(accepted, 30)
            client.close()
        return nodelay

    try:
        assert asyncio.run(accept_one()) != 0
    finally:
        bound.sock.close()


def test_after_the_warm_up_the_first_page_reads_nothing_and_search_embeds_only_its_query(home: Home) -> None:
    memory, store, embedder = _counted_memory(home)
    app = make_app(memory, token=TOKEN, hosts=["testserver"], installed=[], warm=True)
    facets, reads, queries = store.lists, store.reads, embedder.queries
    assert (facets, queries) == (1, 1)
    c = TestClient(app)
    page = c.get(f"/?token={TOKEN}")
    assert page.status_code == 200 and "w-0022" in page.text
    assert (store.lists, store.reads) == (facets, reads), "the first page is served from the warm-up"
    hits = c.get("/search/hits", params={"q": "parser flush"})
    assert hits.status_code == 200 and "w-00" in hits.text
    assert embedder.queries == queries + 1, "one embedding: the query's own"
    cold, cold_store, _ = _counted_memory(home)
    make_app(cold, token=TOKEN, hosts=["testserver"], installed=[])
    assert cold_store.lists == cold_store.reads == 0, "without warm nothing is read until a page asks"


def test_a_live_search_superseded_while_it_waited_is_dropped(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys faster than searches: the searches a page no longer wants answer 204 without searching,
    the newest is answered, and another page's search is not touched."""
    import threading
    import time as clock

    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    app = make_app(Memory.resolve(None, home=home), token=TOKEN, hosts=["testserver"], installed=[])
    viewer = app.app.state.viewer  # type: ignore[attr-defined]
    c = TestClient(app)
    c.get(f"/?token={TOKEN}")
    answers: dict[str, Any] = {}

    def ask(name: str, query: str, tab: str) -> threading.Thread:
        seen = dict(viewer.searches)
        t = threading.Thread(
            target=lambda: answers.update({name: c.get("/search/hits", params={"q": query, "tab": tab})})
        )
        t.start()
        deadline = clock.monotonic() + 60
        while viewer.searches.get(tab) == seen.get(tab):  # its ticket is taken: it waits for the lock
            assert clock.monotonic() < deadline, f"{name} never arrived"
            clock.sleep(0.01)
        return t

    with viewer.lock:  # a search in progress: the next ones wait
        waiting = [
            ask("old", "parser", "page-a"),
            ask("other", "parser", "page-b"),
            ask("new", "arm build", "page-a"),
        ]
    for t in waiting:
        t.join(60)
    assert answers["old"].status_code == 204 and answers["old"].text == "", "superseded: not searched"
    assert answers["new"].status_code == 200 and "<mark>arm</mark>" in answers["new"].text
    assert answers["other"].status_code == 200 and "<mark>parser</mark>" in answers["other"].text
    assert c.get("/search/hits", params={"q": "parser"}).status_code == 200, "no page id: always answered"
    assert viewer.ask("x" * 33) is None, "an overlong page id is not remembered"


# -- reader, search, health ---------------------------------------------------------------------------


def test_reader_shows_turns_in_order_marked_collapsed_with_permalinks_and_get(
    client: TestClient, home: Home
) -> None:
    from funes_core.read.get import get_turns
    from funes_core.read.status import human_bytes
    from funes_core.store import open_store

    html = client.get("/session", params={"id": "sess-0000"}).text
    assert re.findall(r'<article class="turn role-\w+" id="seq-(\d+)">', html) == [str(i) for i in range(6)]
    assert '<a class="permalink" href="#seq-4"' in html
    assert '<details class="block thinking" open><summary>thinking · ' in html
    tool = re.search(
        r'<details class="block tool tool_result"><summary>tool_result Bash · ([^<]+)</summary>', html
    )
    stored = (
        get_turns(open_store(home=home), "local", "sess-0000", seq_from=2, seq_to=2).turns[0].units[0].text
    )
    assert tool and tool.group(1) == human_bytes(len(stored.encode())), "collapsed, with its size"
    assert 'data-cmd="funes get sess-0000 --from 4 --to 4 --memory ' in html


def test_search_uses_recall_marks_words_and_links_each_hit_to_its_turn(client: TestClient) -> None:
    html = client.get("/search", params={"q": "arm build flush", "agent": "codex"}).text
    links = re.findall(r'href="/session\?id=(sess-\d+)#seq-(\d+)"', html)
    assert links and all(int(sid[-4:]) % 2 == 1 for sid, _ in links), "the agent filter applies"
    assert "<mark>arm</mark> <mark>build</mark> <mark>flush</mark>" in html
    bad = client.get("/search/hits", params={"q": "flush", "type": "nonsense"})
    assert bad.status_code == 400 and "nonsense" in bad.text
    assert "no results" in client.get("/search/hits", params={"q": "flush", "since": "2027-01-01"}).text


def test_search_reads_several_memories_and_names_each_hits_memory(
    client: TestClient, home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = Home(tmp_path / "other")
    write_corpus(tmp_path / "c2", 2, hostile=False, prefix="team")
    build(other, tmp_path / "c2")
    folder = str(other.root / "memory")
    html = client.get("/search", params={"q": "parser flush", "memory": f"local,{folder}", "k": "50"}).text
    assert "memory=local" in html and f"memory={folder}" in html
    link = re.search(r'href="(/session\?id=team-0000&(?:amp;)?memory=[^"]+)"', html)
    assert link, "a hit links to the reader of its own memory"
    reader = client.get(link.group(1).replace("&amp;", "&"))
    assert reader.status_code == 200 and "why does the parser flush fail in session team-0000" in reader.text


def test_health_shows_figures_owed_captures_and_usage(client: TestClient) -> None:
    html = client.get("/health").text
    assert '<dd id="chunks">' in html and '<dd id="sessions">13</dd>' in html
    assert 'embeddings owed: <b id="owed">0</b>' in html
    assert "<td>codex</td><td>6</td>" in html
    owed = client.get("/health/owed").json()
    assert owed == {"owed": 0, "summary": ""}


def test_an_installed_agent_silent_past_its_usual_gap_is_flagged() -> None:
    now = datetime(2026, 4, 1, tzinfo=UTC)

    def s(agent: str, day: int) -> SessionFacet:
        ts = (datetime(2026, 3, 1, tzinfo=UTC) + timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return SessionFacet(f"{agent}{day}", ts, ts, agent, "", "", 1, 0, 0)

    rows = captures(
        [s("claude", d) for d in range(0, 10)] + [s("codex", d) for d in (0, 10, 20, 28)],
        installed=["claude", "codex", "pi"],
        now=now,
    )
    by = {r["agent"]: r for r in rows}
    assert by["claude"]["warning"] == "nothing captured for 22 days; usually every 24 h"
    assert by["codex"]["warning"] is None, "silent 3 days, usually every 10: not overdue"
    assert by["pi"]["warning"] == "installed, but nothing captured yet"
    assert set(by) == {"claude", "codex", "pi"} and AGENTS


def test_cli_ui_help_and_a_bad_port() -> None:
    from typer.testing import CliRunner

    from funes_core.faces.cli.app import make_app as cli_app

    result = CliRunner().invoke(cli_app(), ["ui", "--help"])
    assert result.exit_code == 0 and "127.0.0.1 only" in result.stdout
    result = CliRunner().invoke(cli_app(), ["ui", "--port", "70000"])
    assert result.exit_code != 0


def test_a_viewer_of_several_memories_searches_all_and_lists_the_first(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from funes_core.read.handle import resolve_memories

    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    other = Home(tmp_path / "other")
    write_corpus(tmp_path / "c2", 2, hostile=False, prefix="team")
    build(other, tmp_path / "c2")
    both = resolve_memories(f"local,{other.root / 'memory'}", home=home)
    c = TestClient(make_app(both, token=TOKEN, hosts=["testserver"]))
    c.get(f"/?token={TOKEN}")
    assert "13 sessions" in c.get("/").text
    assert '<dd id="sessions">13</dd>' in c.get("/health").text
    hits = c.get("/search/hits", params={"q": "parser flush", "k": "50"}).text
    assert "team-0000" in hits and "sess-0000" in hits


def test_health_plots_recalls_per_day_by_interface_and_latency(funes_home: Home) -> None:
    import json
    import time as clock

    folder = funes_home.root / "stats"
    folder.mkdir(parents=True)
    now = clock.time()
    events = [
        {"v": 1, "at": now, "kind": "recall", "face": "cli", "ms": 40.0, "ok": True},
        {"v": 1, "at": now, "kind": "recall", "face": "cli", "ms": 60.0, "ok": True},
        {"v": 1, "at": now, "kind": "recall", "face": "mcp", "ms": 900.0, "ok": True},
        {"v": 1, "at": now - 86400 * 30, "kind": "recall", "face": "mcp", "ms": 5.0, "ok": True},
    ]
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    app = make_app(Memory.resolve(None, home=funes_home), token=TOKEN, hosts=["testserver"])
    c = TestClient(app)
    c.get(f"/?token={TOKEN}")
    html = c.get("/health").text
    today = clock.strftime("%Y-%m-%d", clock.gmtime(now))
    assert "recalls per day by interface (3 in all; peak 3)" in html, "the 30-day-old recall is left out"
    assert f"<title>{today} cli: 2</title>" in html and f"<title>{today} mcp: 1</title>" in html
    assert f"<title>{today} p50: 60 ms</title>" in html and f"<title>{today} p95: 900 ms</title>" in html
    (folder / "settings.json").write_text("not json")
    assert "usage figures unreadable" in c.get("/health").text


# -- health: the worker, captures, remotes, triggers, charts -------------------------------------------


def _viewer_client(home: Home, **kwargs: Any) -> TestClient:
    c = TestClient(make_app(Memory.resolve(None, home=home), token=TOKEN, hosts=["testserver"], **kwargs))
    assert c.get(f"/health?token={TOKEN}").status_code == 200
    return c


@pytest.fixture(scope="module")
def owed_home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    """A memory whose embeddings are all owed (indexed with ``embed="none"``)."""
    root = tmp_path_factory.mktemp("ui-owed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FUNES_EMBEDDER", "hash")
        mp.setenv("FUNES_HOME", str(root / "home"))
        h = Home(root / "home")
        write_corpus(root / "corpus", 2, hostile=False)
        build(h, root / "corpus", embed=False)
    return h


def test_health_shows_the_workers_rate_and_finish_while_it_embeds_then_why_it_stopped(
    owed_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from funes_core import portable
    from funes_core.ingest.worker import Progress, lock_path, progress_path

    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    monkeypatch.setenv("FUNES_HOME", str(owed_home.root))
    c = _viewer_client(owed_home, installed=[])
    rate = 0.1  # vectors a second: slow enough that the finish is minutes away
    started = datetime.now(UTC)
    stamp = started.strftime("%Y-%m-%dT%H:%M:%SZ")
    Progress(state="running", pid=4242, started=stamp, rate=rate, commits=[(stamp, 1)]).save(
        progress_path(owed_home)
    )
    fd = os.open(lock_path(owed_home), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        assert portable.try_lock(fd), "the test holds the worker's lock: a worker is alive"
        html = c.get("/health").text
        found = re.search(r'<b id="owed">(\d+)</b>', html)
        assert found and int(found.group(1)) > 0
        owed = int(found.group(1))
        minutes = round(owed / rate / 60)
        assert 1 <= minutes < 60
        assert f"the background worker (pid 4242) is embedding 0.1/s, done in about {minutes} min" in html
        eta = re.search(r"worker rate 0\.1/s, done around (\S+)</p>", html)
        assert eta, "the rate and the expected finish are shown"
        finish = datetime.strptime(eta.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        expected = started + timedelta(seconds=owed / rate)
        assert timedelta(seconds=-2) <= finish - expected <= timedelta(seconds=60)
        live = c.get("/health/owed").json()
        assert live["owed"] == owed
        assert live["summary"].startswith("the background worker (pid 4242) is embedding")
    finally:
        os.close(fd)  # the worker is gone
    Progress(state="stopped", pid=4242, error="the model file is corrupt").save(progress_path(owed_home))
    html = c.get("/health").text
    assert "background embedding stopped: the model file is corrupt" in html
    assert "worker rate" not in html, "a stopped worker has no rate to show"
    assert (
        c.get("/health/owed").json()["summary"] == "background embedding stopped: the model file is corrupt"
    )


def test_health_flags_an_installed_agent_silent_past_its_usual_gap(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    html = _viewer_client(home, installed=["claude", "pi"]).get("/health").text
    # claude's sessions: days 1, 3, 5, 7, 9, 11 and 20 of March 2026; nothing since.
    claude = re.search(
        r'<tr class="warn"><td>claude <span class="badge">installed</span></td><td>7</td>'
        r"<td>2026-03-20 09:02 UTC \(\d+ days ago\)</td>"
        r"<td>⚠ nothing captured for \d+ days; usually every 9 days</td></tr>",
        html,
    )
    assert claude, "an installed agent silent for months is flagged on the page"
    assert '<tr class=""><td>codex</td><td>6</td>' in html, "codex is not installed here: no warning"
    assert (
        '<tr class="warn"><td>pi <span class="badge">installed</span></td><td>0</td><td>never</td>'
        "<td>⚠ installed, but nothing captured yet</td></tr>"
    ) in html


def test_the_installed_integrations_are_those_install_recorded(tmp_path: Path) -> None:
    from funes_core.faces.web.pages import installed_integrations

    home = Home(tmp_path / "home")
    assert installed_integrations(home) == [], "no integrations folder: none installed"
    folder = home.root / "integrations"
    folder.mkdir(parents=True)
    for name in ("codex.json", "claude.json", "notes.txt"):
        (folder / name).write_text("{}")
    assert installed_integrations(home) == ["claude", "codex"]


def test_health_lists_remotes_marks_external_ones_and_says_a_broken_file(funes_home: Home) -> None:
    from funes_core.share.remotes import REMOTES_FILE, Remote, save_remotes

    c = _viewer_client(funes_home)
    assert "no remotes (<code>funes remote add NAME URI</code>)" in c.get("/health").text
    vendor = Remote("vendor", "s3://vendor-bucket/memory", taint="external")
    save_remotes(funes_home, [Remote("team", "/srv/team-memory"), vendor])
    html = c.get("/health").text
    never = '<span class="meta">never pushed from this machine</span></li>'
    assert f"<li><b>team</b> /srv/team-memory {never}" in html
    assert (
        f'<b>vendor</b> s3://vendor-bucket/memory <span class="badge external">external</span> {never}'
        in html
    )
    assert "another machine's pushes are not listed here" in html, "the page says what it cannot know"
    (funes_home.root / REMOTES_FILE).write_text("remotes = [not toml")
    broken = c.get("/health")
    assert broken.status_code == 200 and '<p class="error">' in broken.text, "a broken file is one line"


def test_health_shows_each_remotes_last_push_its_failure_since_escaped_and_an_unreadable_record(
    funes_home: Home,
) -> None:
    from funes_core.share import lastpush
    from funes_core.share.remotes import Remote, save_remotes

    save_remotes(funes_home, [Remote("team", "/srv/team"), Remote("spare", "/srv/spare")])
    lastpush.record_failure(funes_home, "team", "an older failure, before the push that finished")
    lastpush.record_success(funes_home, "team", chunks=12, turns=3, table_version=7)
    lastpush.record_failure(funes_home, "spare", 'remote spare: <script>alert(1)</script> <img onerror="x">')
    html = _viewer_client(funes_home).get("/health").text
    team = re.search(r"<li><b>team</b>.*?</li>", html, re.S)[0]  # type: ignore[index]
    assert re.search(
        r'<span class="meta">last push: just now \(12 chunk\(s\), 3 turn\(s\), version 7; '
        r"\d{4}-\d\d-\d\d \d\d:\d\d UTC\)</span></li>",
        team,
    ), team
    assert "older failure" not in team, "a failure before the last push that finished is not shown"
    spare = re.search(r"<li><b>spare</b>.*?</li>", html, re.S)[0]  # type: ignore[index]
    assert "never pushed from this machine" in spare and "last push failed just now" in spare
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &lt;img onerror=&#34;x&#34;&gt;" in spare, spare
    _inert(html)
    lastpush.record_path(funes_home, "team").write_text("{not json")
    broken = _viewer_client(funes_home).get("/health")
    assert broken.status_code == 200
    team = re.search(r"<li><b>team</b>.*?</li>", broken.text, re.S)[0]  # type: ignore[index]
    assert re.search(r'<span class="error">[^<\n]*team\.json is not valid JSON[^<\n]*</span></li>', team), (
        team
    )
    assert "last push failed just now" in broken.text, "the other remote's record is still read"


def test_health_lists_live_triggers_newest_first_escaped_and_not_forgotten_ones(
    funes_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from funes_core.faces.cli.app import make_app as cli_app

    monkeypatch.setenv("FUNES_EMBEDDER", "hash")
    runner = CliRunner()
    for args in (
        ["remember", "deploy", "--hint", "run make release <script>window.pwned=1</script>"],
        ["remember", "flaky", "--hint", "retry test_sync once"],
        ["remember", "oldname", "--hint", "was renamed"],
        ["forget", "oldname"],
    ):
        result = runner.invoke(cli_app(), args)
        assert result.exit_code == 0, result.output
    c = _viewer_client(funes_home)
    html = c.get("/health").text
    _inert(html)
    items = re.findall(r"<li><b>([^<]+)</b>: ([^<]*) <span", html)
    assert items == [
        ("flaky", "retry test_sync once"),
        ("deploy", "run make release &lt;script&gt;window.pwned=1&lt;/script&gt;"),
    ], "live triggers, newest first; a forgotten one is gone; the hint is text"
    hits = c.get("/search/hits", params={"q": "how do I deploy"}).text
    assert "trigger <b>deploy</b>: run make release &lt;script&gt;" in hits, "search fires it as recall does"


def _recall_events(folder: Path, events: list[dict[str, Any]]) -> None:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))


def test_health_charts_scale_bars_leave_failed_recalls_out_of_latency_and_say_when_empty(
    funes_home: Home,
) -> None:
    import json
    import time as clock

    folder = funes_home.root / "stats"
    now = clock.time()
    today = clock.strftime("%Y-%m-%d", clock.gmtime(now))
    c = _viewer_client(funes_home)
    _recall_events(folder, [{"v": 1, "at": now - 86400 * 20, "kind": "recall", "face": "cli", "ms": 5.0}])
    assert "no recall recorded in the last 14 days" in c.get("/health").text
    _recall_events(
        folder,
        [
            {"v": 1, "at": now, "kind": "recall", "face": "cli", "ms": 40.0, "ok": True},
            {"v": 1, "at": now, "kind": "recall", "face": "cli", "ms": 60.0, "ok": True},
            {"v": 1, "at": now, "kind": "recall", "face": "mcp", "ms": 9000.0, "ok": False},
            {"v": 1, "at": now, "kind": "get", "face": "cli", "ms": 1.0, "ok": True},
        ],
    )
    html = c.get("/health").text
    heights = {
        face: float(h)
        for h, face in re.findall(
            rf'<rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="([\d.]+)" '
            rf'class="face-(\w+)"><title>{today} ',
            html,
        )
    }
    assert set(heights) == {"cli", "mcp"}, "one bar per interface; a get is not a recall"
    assert heights["cli"] == pytest.approx(2 * heights["mcp"], abs=0.2), "bars scale with the count"
    assert f"<title>{today} p95: 60 ms</title>" in html, "a failed recall counts, but not in latency"
    assert "recalls per day by interface (3 in all; peak 3)" in html
    (folder / "settings.json").write_text(json.dumps({"record": False, "queries": False}))
    assert "recording is off (<code>funes stats --record on</code>)" in c.get("/health").text

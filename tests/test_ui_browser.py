"""The viewer in a real browser: headless Chromium (Debian's ``chromium`` and ``chromium-driver``)
driven through Selenium against ``funes ui`` itself, started as a person starts it.

Each flow of the issue is one test: open the printed address, list sessions, open one, filter by
agent, search as you type and follow a hit to its turn, see owed embeddings drop while the worker
runs, and see a hostile transcript rendered inert. Every page visited is saved as a 1280×800
screenshot under ``$FUNES_UI_ARTIFACTS`` (default: the test session's temporary folder,
``ui-screenshots/``). Without a browser the tests skip, saying why; CI installs one (.ci/run).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from uimemory import HOSTILE, XSS_SESSION, build, write_corpus

pytestmark = pytest.mark.slow

CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,800",
)
#: Generous: the tests must pass on a machine at load 15.
PATIENCE = 120.0


def _find(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the module, with a fresh profile, at exactly 1280×800."""
    browser = _find("chromium", "chromium-browser")
    chromedriver = _find("chromedriver")
    if browser is None or chromedriver is None:
        pytest.skip("no browser: install Debian's chromium and chromium-driver (.ci/run does)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:  # pragma: no cover - a dev dependency
        pytest.skip("selenium is not installed (uv sync --all-packages)")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    d = webdriver.Chrome(options=options, service=Service(chromedriver))
    d.set_page_load_timeout(PATIENCE)
    d.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        yield d
    finally:
        d.quit()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("FUNES_UI_ARTIFACTS") or tmp_path_factory.getbasetemp() / "ui-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shoot(d: Any, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    assert d.save_screenshot(str(path)), f"screenshot {name} not saved"
    return path


def wait_for(condition: Callable[[], Any], what: str, timeout: float = PATIENCE) -> Any:
    """Poll ``condition`` until it returns something truthy (a condition, never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


class Viewer:
    """``funes ui --no-open`` over a memory, and the address it printed.

    Served in-process (``--no-service``): a module's viewer outlives each test, and the detached
    service ``funes ui`` would otherwise start is stopped after every test (``conftest.py``). The
    service-hosted viewer's own tests are in test_ui_serve.py; the pages are the same application.
    """

    def __init__(self, home: Path) -> None:
        self.env = {**os.environ, "FUNES_HOME": str(home), "FUNES_EMBEDDER": "hash", "FUNES_STATS": "off"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "funes_core", "ui", "--no-open", "--no-service"],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # blocks until funes ui prints its address (or exits)
        assert line.startswith("funes ui: http://127.0.0.1:"), f"funes ui said {line!r}: {self.proc.stderr}"
        self.url = line.removeprefix("funes ui: ").strip()
        self.base = self.url.split("/?", 1)[0]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def _memory(tmp_path_factory: pytest.TempPathFactory, name: str, *, embed: bool) -> Path:
    from funes_core.home import Home

    root = tmp_path_factory.mktemp(name)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FUNES_EMBEDDER", "hash")
        write_corpus(root / "corpus")
        build(Home(root / "home"), root / "corpus", embed=embed)
    return root / "home"


@pytest.fixture(scope="module")
def viewer(driver: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    v = Viewer(_memory(tmp_path_factory, "ui-browser", embed=True))
    driver.get(v.url)  # the printed address, as `funes ui` opens it
    try:
        yield v
    finally:
        v.stop()


def css(d: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(d.find_elements(By.CSS_SELECTOR, selector))


def test_the_printed_address_opens_the_timeline_and_the_token_leaves_the_address_bar(
    driver: Any, viewer: Viewer, artifacts: Path
) -> None:
    driver.get(viewer.url)
    assert "token=" not in driver.current_url
    assert driver.current_url.rstrip("/") == viewer.base
    sessions = wait_for(lambda: css(driver, "li.session"), "the session list")
    assert len(sessions) == 13
    assert next(h.text for h in css(driver, "section.day h2")) == "2026-03-20"
    shoot(driver, artifacts, "sessions")
    driver.delete_all_cookies()
    driver.get(viewer.base + "/")
    assert "open the address" in driver.find_element("tag name", "body").text, "no cookie, no memory"
    driver.get(viewer.url)


def test_open_a_session_from_the_timeline(driver: Any, viewer: Viewer, artifacts: Path) -> None:
    driver.get(viewer.base + "/?agent=codex")
    first = css(driver, "li.session a.open")[0]
    first.click()
    wait_for(lambda: css(driver, "article.turn"), "the reader")
    assert "/session?id=sess-00" in driver.current_url
    turns = css(driver, "article.turn")
    assert [t.get_attribute("id") for t in turns] == [f"seq-{i}" for i in range(6)]
    tool = css(driver, "details.tool")[0]
    assert tool.get_attribute("open") is None, "tool calls start collapsed"
    assert "·" in tool.find_element("tag name", "summary").text
    shoot(driver, artifacts, "session")


def test_filter_by_agent(driver: Any, viewer: Viewer, artifacts: Path) -> None:
    from selenium.webdriver.support.ui import Select

    driver.get(viewer.base + "/")
    Select(driver.find_element("id", "agent")).select_by_value("codex")
    driver.find_element("css selector", "form.filters button[type=submit]").click()
    wait_for(lambda: "agent=codex" in driver.current_url, "the filtered page")
    agents = {s.get_attribute("data-agent") for s in css(driver, "li.session")}
    assert agents == {"codex"}
    shoot(driver, artifacts, "sessions-codex")


def test_search_as_you_type_then_follow_a_hit_to_its_turn(
    driver: Any, viewer: Viewer, artifacts: Path
) -> None:
    driver.get(viewer.base + "/search")
    box = driver.find_element("id", "q")
    box.send_keys("arm build")
    # On a loaded machine a pause between two keys can outlast the debounce: an answer for "arm"
    # may come first; the answer for the whole query follows.
    wait_for(lambda: "q=arm+build" in driver.current_url, "the address to follow the query (no submit)")
    wait_for(
        lambda: {"arm", "build"} <= {m.text.lower() for m in css(driver, "#hits mark")},
        "results for the whole query, its words marked",
    )
    hits = css(driver, "#hits li.hit")
    asked = driver.execute_script(
        "return performance.getEntriesByType('resource').map(r => r.name)"
        ".filter(n => n.includes('/search/hits'));"
    )
    assert asked and all("tab=" in n for n in asked), "each live search names its page (superseding)"
    shoot(driver, artifacts, "search")
    link = hits[0].find_element("css selector", "a.follow")
    href = link.get_attribute("href")
    seq = href.rsplit("#seq-", 1)[1]
    link.click()
    wait_for(lambda: css(driver, "article.turn"), "the reader at the hit")
    target = driver.execute_script("const t = document.querySelector(':target'); return t && t.id;")
    assert target == f"seq-{seq}", "the hit opens the reader at its turn"
    shoot(driver, artifacts, "search-hit")


def test_a_hostile_transcript_is_inert_in_the_reader_and_in_search(
    driver: Any, viewer: Viewer, artifacts: Path
) -> None:
    driver.get(viewer.base + f"/session?id={XSS_SESSION}")
    body = wait_for(lambda: css(driver, "article.turn"), "the hostile session")[0].text
    for payload in HOSTILE[:3]:
        assert payload.split("\n")[0] in body, "the payload is shown as text"
    assert css(driver, "span.redacted"), "the redaction marker is visible"
    assert driver.execute_script("return window.pwned === undefined && parent.pwned === undefined;")
    assert not css(driver, "main img, main iframe, main svg")
    shoot(driver, artifacts, "xss-reader")
    driver.get(viewer.base + "/search?q=xsscheck+javascript+onerror")
    wait_for(lambda: css(driver, "#hits li.hit"), "hostile hits")
    assert driver.execute_script("return window.pwned === undefined;")
    assert not css(driver, "main img, main iframe, main svg")
    shoot(driver, artifacts, "xss-search")


#: Installed in every page before its own script (CDP), so that anything a passage made the browser
#: try, and the CSP blocked, is counted: escaping should leave nothing to block at all.
_WATCH_VIOLATIONS = (
    "window.__violations = [];"
    " document.addEventListener('securitypolicyviolation',"
    " e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));"
)


def test_markdown_image_tricks_stay_text_and_load_nothing(
    driver: Any, viewer: Viewer, artifacts: Path
) -> None:
    """``![pic](javascript:…)``, a tracking image and ``<img onerror>`` in a session: shown as the
    text they are on the timeline, in the reader and in search; no image element, no request for
    the image, no ``javascript:`` link, nothing run, and nothing the CSP had to block."""
    watch = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _WATCH_VIOLATIONS})
    image = next(p for p in HOSTILE if p.startswith("!["))
    try:
        for path, ready, shot in (
            ("/", "li.session", "xss-md-timeline"),
            (f"/session?id={XSS_SESSION}", "article.turn", "xss-md-reader"),
            ("/search?q=xsscheck+pic+track+onerror", "#hits li.hit", "xss-md-search"),
        ):
            driver.get(viewer.base + path)
            wait_for(lambda r=ready: css(driver, r), f"{path} to render")
            if path != "/":
                text = driver.find_element("tag name", "main").text
                assert image in text, f"{path}: the markdown image is shown as its own text"
                assert "<img src=x onerror=" in text, f"{path}: the <img onerror> is shown as text"
            state = driver.execute_script(
                "return {pwned: window.pwned === undefined ? null : String(window.pwned),"
                " images: document.images.length,"
                " scriptLinks: [...document.querySelectorAll('[href], [src]')]"
                ".map(e => e.getAttribute('href') || e.getAttribute('src'))"
                ".filter(u => u.trim().toLowerCase().startsWith('javascript:')).length,"
                " fetched: performance.getEntriesByType('resource').map(r => r.name)"
                ".filter(n => n.includes('pixel.png') || n.includes(':9/')),"
                " violations: window.__violations};"
            )
            assert state == {"pwned": None, "images": 0, "scriptLinks": 0, "fetched": [], "violations": []}, (
                f"{path}: {state}"
            )
            shoot(driver, artifacts, shot)
    finally:
        driver.execute_cdp_cmd(
            "Page.removeScriptToEvaluateOnNewDocument", {"identifier": watch["identifier"]}
        )


def test_owed_embeddings_drop_while_the_worker_runs(
    driver: Any, tmp_path_factory: pytest.TempPathFactory, artifacts: Path
) -> None:
    v = Viewer(_memory(tmp_path_factory, "ui-owed", embed=False))
    try:
        driver.get(v.url)
        driver.get(v.base + "/health")
        before = int(driver.find_element("id", "owed").text)
        assert before > 0, "nothing embedded yet"
        shoot(driver, artifacts, "health-owed")
        worker = subprocess.run(
            [sys.executable, "-m", "funes_core", "index", "--wait"],
            env=v.env,
            capture_output=True,
            text=True,
            timeout=PATIENCE * 3,
        )
        assert worker.returncode == 0, worker.stderr
        # The page was not reloaded: its figure follows the memory by itself.
        wait_for(lambda: driver.find_element("id", "owed").text == "0", "the page to show 0 owed")
        shoot(driver, artifacts, "health")
    finally:
        v.stop()

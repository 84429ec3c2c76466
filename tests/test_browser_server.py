"""The shared server in a real browser: no request to any other host, and one session's big upload
does not slow another session's filter change beyond twice its usual time.

Starts `streamlit run app.py` (tests/server.py) and drives Debian's Chromium with Playwright; skipped
where either is missing. The second test is the issue's check that parsing an upload happens in a
worker process (`dashboard.worker`): it compares medians of the same filter change in one session
with and without another session reading a large upload, on the same server.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from server import running_app
from test_browser import CHROMIUM, SCREENSHOTS, SOFT_NAVIGATE, counts, no_errors, open_page, settle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM} (apt install chromium)"
    ),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with running_app(log_path=SCREENSHOTS / "server-uploads.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
        )  # fmt: skip
        yield chromium
        chromium.close()


def _upload(page: object, path: Path) -> None:
    page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary').first.click()  # type: ignore[attr-defined]
    page.locator('[data-testid="stSidebar"] input[type="file"]').set_input_files(str(path))  # type: ignore[attr-defined]


def test_no_request_leaves_the_apps_host(app_url: str, browser: object, tmp_path: Path) -> None:
    page = open_page(browser)
    own = urlsplit(app_url).netloc
    outside: list[str] = []

    def record(request: object) -> None:
        url = request.url  # type: ignore[attr-defined]
        if urlsplit(url).scheme in ("http", "https", "ws", "wss") and urlsplit(url).netloc != own:
            outside.append(url)

    page.on("request", record)  # type: ignore[attr-defined]
    page.on("websocket", lambda socket: record(socket))  # type: ignore[attr-defined]
    for name in ("overview", "papers", "topics", "terms", "links", "compare"):
        page.goto(f"{app_url}/{name}")  # type: ignore[attr-defined]
        settle(page)
        page.wait_for_timeout(1500)  # type: ignore[attr-defined]  # lazy chunks, fonts, the favicon
        no_errors(page)
    upload = tmp_path / "two.csv"
    upload.write_text("title,abstract\nGraph paper,We study graphs.\nVideo paper,We generate video.\n")
    _upload(page, upload)
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => /\\b2 of 2 papers\\b/.test(document.querySelector('[data-testid=\"stSidebar\"]').innerText)"
    )
    page.evaluate(SOFT_NAVIGATE, "/papers?paper=two-1")  # type: ignore[attr-defined]
    settle(page)
    icon = page.evaluate("() => document.querySelector('link[rel~=\"icon\"]')?.href || ''")  # type: ignore[attr-defined]
    assert urlsplit(icon).netloc in ("", own), icon  # the page icon is the app's own file
    assert outside == []


# Words for a synthetic corpus: enough different abstracts that reading and fitting topics take a
# while (about 10,000 papers, 8 MB).
_VOCABULARY = (
    "graph neural network diffusion model training data language vision robot policy reward agent "
    "learning transformer attention image video text speech protein molecule sparse dense kernel "
    "gradient optimisation convex bound theorem proof sample efficient benchmark dataset evaluate"
)
_WORDS = _VOCABULARY.split()


def _large_upload(path: Path, n_papers: int = 10_000, seed: int = 7) -> Path:
    chooser = random.Random(seed)
    lines = ["title,abstract"]
    for i in range(n_papers):
        words = " ".join(chooser.choice(_WORDS) for _ in range(120))
        lines.append(f"Paper {i} on {chooser.choice(_WORDS)},We study {words}.")
    path.write_text("\n".join(lines) + "\n")
    return path


# Every change of the app's script state, with the time it happened (a run can start and end
# between two polls, so the page records them itself).
_WATCH_RUNS = """() => {
  window.__changes = [];
  const app = document.querySelector('[data-testid="stApp"]');
  new MutationObserver(records => records.forEach(() => window.__changes.push(performance.now())))
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""
_RUN_DONE = """([since, search]) => window.__changes.some(t => t >= since) &&
  new URLSearchParams(location.search).get('q') === search &&
  document.querySelector('[data-testid="stApp"]').getAttribute('data-test-script-state') === 'notRunning'"""
_RUN_SECONDS = "(since) => (Math.max(...window.__changes.filter(t => t >= since)) - since) / 1000"
SEARCHES = ("graph", "diffusion", "model", "learning", "language", "robot", "video")
_changes = iter(range(1_000_000))


def _filter_change(page: object) -> float | None:
    """Seconds from a new search typed in the sidebar (Enter) to the end of the run it starts.

    A keystroke that lands while the page redraws can be lost; then the search is typed again (the
    time counts from the try that took); None if no try took.
    """
    search = SEARCHES[next(_changes) % len(SEARCHES)]  # never the search shown now
    box = page.locator('[data-testid="stSidebar"] [data-testid="stTextInput"] input').first  # type: ignore[attr-defined]
    for _ in range(3):
        box.fill(search)
        since = page.evaluate("() => performance.now()")  # type: ignore[attr-defined]
        box.press("Enter")
        try:
            page.wait_for_function(_RUN_DONE, arg=[since, search], timeout=20_000)  # type: ignore[attr-defined]
        except sync_api.TimeoutError:
            continue
        page.wait_for_timeout(300)  # type: ignore[attr-defined]  # a run that ends in two steps has ended
        page.wait_for_function(_RUN_DONE, arg=[since, search], timeout=120_000)  # type: ignore[attr-defined]
        return float(page.evaluate(_RUN_SECONDS, since))  # type: ignore[attr-defined]
    return None


def _busy(page: object) -> bool:
    return page.get_by_text("in a separate process").count() > 0  # type: ignore[attr-defined]


def test_one_sessions_large_upload_leaves_another_sessions_filter_change_within_twice_its_time(
    app_url: str, browser: object, tmp_path: Path
) -> None:
    watcher = open_page(browser)
    watcher.goto(f"{app_url}/papers")
    settle(watcher)
    watcher.evaluate(_WATCH_RUNS)
    for _ in range(2 * len(SEARCHES)):  # warm the caches of every search used below
        _filter_change(watcher)
    usual = [s for s in (_filter_change(watcher) for _ in range(7)) if s is not None]
    assert len(usual) >= 5, usual

    uploader = open_page(browser)
    uploader.goto(f"{app_url}/papers")
    settle(uploader)
    _upload(uploader, _large_upload(tmp_path / "large.csv"))
    uploader.get_by_text("in a separate process").first.wait_for(timeout=60_000)
    during: list[float] = []
    started = time.monotonic()
    while _busy(uploader) and len(during) < 7 and time.monotonic() - started < 300:
        seconds = _filter_change(watcher)
        if seconds is not None and _busy(uploader):  # only changes made while the upload is read
            during.append(seconds)
    print(f"filter change alone: {usual}; while another session reads a large upload: {during}")
    assert len(during) >= 3, f"the upload was read before enough changes were made: {during}"
    assert statistics.median(during) <= 2 * statistics.median(usual), (usual, during)
    no_errors(watcher)
    uploader.wait_for_function(  # the upload itself still loads in the end
        "() => /\\b10,000 of 10,000 papers\\b/.test("
        "document.querySelector('[data-testid=\"stSidebar\"]').innerText)",
        timeout=600_000,
    )
    assert counts(uploader) == (10_000, 10_000)

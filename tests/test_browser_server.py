"""The shared server in a real browser: no request goes to any host but the app's.

Starts `streamlit run app.py` (tests/server.py) and drives Debian's Chromium with Playwright; skipped
where either is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from server import running_app
from test_browser import CHROMIUM, SCREENSHOTS, SOFT_NAVIGATE, no_errors, open_page, settle

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

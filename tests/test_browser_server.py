"""The shared server in a real browser: no request goes to any host but the app's.

Starts `streamlit run app.py` (tests/server.py) and drives Debian's Chromium with Playwright; skipped
where either is missing.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from test_browser import (  # the module's skips, app server and browser fixtures, shared
    CHROMIUM,
    SCREENSHOTS,
    SOFT_NAVIGATE,
    app_url,
    browser,
    no_errors,
    open_page,
    settle,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM} (apt install chromium)"
    ),
]


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

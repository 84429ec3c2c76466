"""The shared server in a real browser: no request goes to any host but the app's.

Starts `streamlit run app.py` (tests/server.py) and drives Debian's Chromium with Playwright; skipped
where either is missing.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.browser import (  # the module's skips, app server and browser fixtures, shared
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


def _many_papers(path: Path, n: int) -> Path:
    """``n`` papers made of the seeds' sentences (seeded): seconds of reading, topics and map."""
    import json
    import random

    from support.browser import REPO

    text = " ".join((REPO / "seeds" / name).read_text(encoding="utf-8") for name in sorted(
        p.name for p in (REPO / "seeds").iterdir() if p.is_file()
    ))  # fmt: skip
    sentences = [s.strip() + "." for s in text.replace("\n", " ").split(". ") if len(s.split()) > 6]
    rng = random.Random(0)
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            abstract = " ".join(rng.sample(sentences, 6))
            out.write(
                json.dumps({"id": f"up-{i}", "title": f"Uploaded paper {i}", "abstract": abstract}) + "\n"
            )
    return path


SIDEBAR = '[data-testid="stSidebar"]'
DONE = "2,000 of 2,000 papers"


def test_an_upload_in_one_session_leaves_another_sessions_filters_working(
    app_url: str, browser: object, tmp_path: Path
) -> None:
    """While one session's large upload is read (in a worker process), another session changes its
    filters again and again, each change answered before the upload is done. (How much slower each
    change gets is a benchmark's figure: bench/upload_isolation.py.)"""
    from support.browser import counts, sidebar_text

    upload = _many_papers(tmp_path / "many.jsonl", 2000)
    uploader, reader = open_page(browser), open_page(browser)
    for page in (uploader, reader):
        page.goto(f"{app_url}/papers")  # type: ignore[attr-defined]
        settle(page)
    total = counts(reader)[1]
    _upload(uploader, upload)
    uploader.wait_for_function(  # type: ignore[attr-defined]
        "() => document.querySelector('[data-testid=\"stApp\"]').dataset.testScriptState === 'running'"
    )

    def upload_done() -> bool:
        return DONE in sidebar_text(uploader)

    answered_during_upload = 0
    for word in ("graph", "video", "language", "diffusion", "robot", "learning", "model", "data"):
        if upload_done() or answered_during_upload == 3:
            break
        reader.evaluate(SOFT_NAVIGATE, f"/papers?q={word}")  # type: ignore[attr-defined]
        settle(reader, quiet=0.3)
        shown, of = counts(reader)
        assert of == total and shown <= total  # the reader's own corpus, filtered
        answered_during_upload += not upload_done()
    uploader.wait_for_function(  # type: ignore[attr-defined]
        f"() => document.querySelector('{SIDEBAR}').innerText.includes('{DONE}')",
        timeout=300_000,
    )
    assert answered_during_upload >= 2, (
        f"only {answered_during_upload} filter changes while the upload was read"
    )
    no_errors(reader)
    no_errors(uploader)

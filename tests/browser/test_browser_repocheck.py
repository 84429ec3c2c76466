"""The repository check in the real app and Chromium: the button asks the local fake APIs (never the
internet), the state chart and columns appear, the `repo` filter narrows the papers and the download
carries the repository columns."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from support.browser import (
    CHARTS_DRAWN_JS,
    CHROMIUM,
    SCREENSHOTS,
    counts,
    no_errors,
    open_page,
    settle,
    shoot,
)
from support.repo_api import FakeRepo, World, serving
from support.server import REPO, running_app

from dashboard import corpus
from dashboard.repocheck.targets import targets_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM}"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")


@pytest.fixture(scope="module")
def world() -> World:
    world = World()
    for i, target in enumerate(targets_in(corpus.load([REPO / "seeds"]).papers)):
        if i == 0:
            world.add_github(FakeRepo(target.repo, files=["README.md"], readme="Code coming soon."))
        else:
            world.add_github(FakeRepo(target.repo, size=90_000, archived=i == 1))
    return world


@pytest.fixture(scope="module")
def app_url(world: World, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    cache = tmp_path_factory.mktemp("browser-cache") / "repositories.sqlite"
    with serving(world) as apis:
        env = {**apis, "PAPER_DASHBOARD_CACHE": str(cache), "GITHUB_TOKEN": "ghp_browserSecret42"}
        with running_app(env=env, log_path=SCREENSHOTS / "server_repocheck.log") as url:
            yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        yield chromium
        chromium.close()


def test_check_shows_states_then_the_filter_and_the_download_use_them(
    app_url: str, browser: object, world: World
) -> None:
    page = open_page(browser, height=2400)
    page.goto(f"{app_url}/links")
    settle(page, timeout=240)  # the first run analyses the seeds
    assert world.requests == []  # a page load asks nothing
    check = page.get_by_role("button", name="Check repositories (11 to check)")
    check.click()
    deadline = time.monotonic() + 60
    while "Checked 11 repositories" not in page.inner_text("body"):  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, "the check did not finish"
        time.sleep(0.2)
    settle(page)
    no_errors(page)
    assert len(world.requests) >= 11
    assert all(r.raw_path.startswith("/github/") for r in world.requests)
    assert page.get_by_role("button", name="Check repositories (0 to check)").is_disabled()
    body = page.inner_text("body")  # type: ignore[attr-defined]
    assert "Repository states, per" in body
    page.wait_for_function(CHARTS_DRAWN_JS, timeout=60_000)  # type: ignore[attr-defined]
    assert page.locator('[data-testid="stPlotlyChart"] .legend').filter(has_text="placeholder").count() >= 1
    assert "ghp_browserSecret42" not in page.content()  # type: ignore[attr-defined]
    shoot(page, "links_repositories")

    page.goto(f"{app_url}/papers?repo=placeholder")
    settle(page)
    assert counts(page)[0] == 1
    with page.expect_download() as download_info:
        page.get_by_role("button", name=re.compile(r"^Download .* as CSV$")).first.click()
    rows = pd.read_csv(
        io.BytesIO(Path(download_info.value.path()).read_bytes()), dtype=str, keep_default_na=False
    )
    assert rows["repo_state"].tolist() == ["placeholder"]
    assert {"repo_stars", "repo_license", "repo_pushed_at"} <= set(rows.columns)
    assert download_info.value.suggested_filename == "papers_repo-placeholder.csv"

    page.goto(f"{app_url}/papers?repo=archived&repo=live")
    settle(page)
    assert counts(page)[0] == 9  # ten papers have their own repository; one is the placeholder
    no_errors(page)


def test_twenty_app_sessions_checking_at_once_share_one_cache(
    browser: object, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Twenty browser sessions of ONE server click "Check repositories" at about the same time. Each
    # session's click runs in its own script thread, all on one SQLite file: every repository is
    # answered once in it (nothing lost, nothing twice), the file stays sound, and every session ends
    # with nothing left to check and no error on its page. The twenty are tabs of one browser context:
    # each tab is its own app session (its own connection and script thread), and the context's shared
    # HTTP and code caches load and compile the app's scripts once, not twenty times, which is most of
    # what twenty contexts cost the browser.
    import sqlite3

    world = World(auto=True)
    world.delay = 0.05  # a slow API, so the sessions' checks overlap
    wanted = {t.key for t in targets_in(corpus.load([REPO / "seeds"]).papers)}
    cache = tmp_path_factory.mktemp("sessions-cache") / "repositories.sqlite"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with serving(world) as apis:
        env = {**apis, "PAPER_DASHBOARD_CACHE": str(cache)}
        with running_app(env=env, log_path=SCREENSHOTS / "server_repocheck_sessions.log") as url:
            context = open_page(browser, height=1400).context  # type: ignore[attr-defined]
            pages = list(context.pages)
            for _ in range(19):
                pages.append(context.new_page())
            for page in pages:
                page.goto(f"{url}/links", wait_until="commit")  # type: ignore[attr-defined]
            pending = re.compile(r"^Check repositories \(\d+ to check\)$")
            buttons = [page.get_by_role("button", name=pending) for page in pages]  # type: ignore[attr-defined]
            for button in buttons:  # every page drawn first,
                button.wait_for(timeout=240_000)
            for button in buttons:  # then the clicks, as fast as they go: the checks run side by side
                button.click()
            for page in pages:
                page.get_by_role("button", name="Check repositories (0 to check)").wait_for(timeout=180_000)  # type: ignore[attr-defined]
                page.get_by_text("Repository states, per").first.wait_for(timeout=60_000)  # type: ignore[attr-defined]
                no_errors(page)
            assert len(pages) == 20
            context.close()
    connection = sqlite3.connect(cache)
    try:
        keys = [row[0] for row in connection.execute("SELECT key FROM answers")]
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        connection.close()
    assert len(keys) == len(set(keys)) and set(keys) == wanted
    asked = {r.raw_path for r in world.requests}
    assert len(asked) >= len(wanted)  # every repository was really asked about, by some session

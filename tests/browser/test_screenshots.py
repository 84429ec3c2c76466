"""Every page at 1024, 1280 and 1920 px, in the light and the dark theme, in headless Chromium.

The pictures go to artifacts/screenshots/themes/ (ignored by git) for a person to look at; the test
checks what a script can, at every width: no page raises, each page has its title, the dark theme is
the one drawn, nothing sticks out sideways (the page, a table's columns) and no chart or metric label
is cut. One session per theme, each page opened once and shot at the three widths, to keep it short.

On the seeds by default; ``PAPER_DASHBOARD_SCREENSHOT_CORPUS=/path/to/index`` shoots another corpus
(e.g. a prebuilt index of the 27k corpus) into a folder named after it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.browser import (
    CHARTS_DRAWN_JS,
    CHROMIUM,
    CUT_LABELS_JS,
    GRID_OVERFLOW_JS,
    PAGES,
    counts,
    no_errors,
    settle,
)
from support.server import REPO, running_app

from dashboard.ui import components

WIDTHS = (1024, 1280, 1920)
CLASSIC_SCROLLBAR_PX = 17  # a scrollbar that takes room, as on Windows (headless Chromium's overlay none)
PAGE_ROOM_PX = components.PAGE_WIDTH_PX + CLASSIC_SCROLLBAR_PX + 2  # and the grid's two borders
# Grids in a pair of columns, which stack below 1280 px; a grid as wide as its content (Trends' venues
# per year) stands alone and is narrower by design.
GRID_WIDTHS_JS = """() => [...document.querySelectorAll(
    '[data-testid="stColumn"] [data-testid="stDataFrame"]')].map(e => e.getBoundingClientRect().width)"""
THEMES = {"light": "", "dark": "embed_options=dark_theme"}  # Streamlit's own switch, no embed mode
BACKGROUNDS = {"light": "rgb(255, 255, 255)", "dark": "rgb(15, 17, 23)"}  # .streamlit/config.toml
CORPUS = os.environ.get("PAPER_DASHBOARD_SCREENSHOT_CORPUS", "")
FOLDER = REPO / "artifacts" / "screenshots" / "themes" / (Path(CORPUS).name if CORPUS else "seeds")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM}"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    FOLDER.mkdir(parents=True, exist_ok=True)
    # The product's own topics (the suite otherwise runs LSA: tests/conftest.py): the pictures are what
    # a visitor sees.
    default_topics = {"PAPER_DASHBOARD_TOPIC_SPACE": "auto"}
    with running_app(
        ["--corpus", CORPUS] if CORPUS else [], env=default_topics, log_path=FOLDER / "server.log"
    ) as url:
        yield url


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
        )  # fmt: skip
        yield browser
        browser.close()


@pytest.mark.parametrize("theme", THEMES)
def test_every_page_at_three_widths(app_url: str, chromium: object, theme: str) -> None:
    context = chromium.new_context(viewport={"width": WIDTHS[1], "height": 900})  # type: ignore[attr-defined]
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.goto(f"{app_url}/?{THEMES[theme]}")
    settle(page)
    background = page.evaluate(
        "() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"
    )
    assert background == BACKGROUNDS[theme]
    total = counts(page)[1]
    assert counts(page) == (total, total)
    for label, name in PAGES.items():
        # A click on the page link keeps the session (and its theme); a new address would not.
        page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a', has_text=label).first.click()
        page.wait_for_url(re.compile(rf"/{name}" if name != "overview" else r"/(overview)?(\?.*)?$"))
        settle(page)
        assert page.locator("h1").first.inner_text().strip() == label
        shoot_widths(page, name, theme)
        if name == "papers":  # and with a paper open below the table
            grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
            page.mouse.click(grid["x"] + 16, grid["y"] + 35 + 34)
            page.locator(".pd-abstract").first.wait_for()
            settle(page)
            shoot_widths(page, "papers_opened", theme)
        if name == "compare":  # and with two papers found by the search box and compared
            for _ in range(2):
                find = page.locator('input[aria-label="Find a paper to add"]')
                find.fill("the")
                find.press("Enter")
                settle(page)
                page.locator("button:not([disabled])", has_text="Add ·").first.click()
                settle(page)
            page.locator(".pd-compare").first.wait_for()
            shoot_widths(page, "compare_two", theme)
    context.close()


def shoot_widths(page: object, name: str, theme: str) -> None:
    """The page at each width, as tall as its content (the main column scrolls, not the window), after
    checking its layout there."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})  # type: ignore[attr-defined]
        page.wait_for_timeout(400)  # type: ignore[attr-defined]  # charts redraw at the new width
        no_errors(page)
        check_layout(page, name, width)
        height = page.evaluate(  # type: ignore[attr-defined]
            "() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight"
        )
        page.set_viewport_size({"width": width, "height": min(max(900, int(height)), 6000)})  # type: ignore[attr-defined]
        page.wait_for_timeout(300)  # type: ignore[attr-defined]
        page.screenshot(path=str(FOLDER / f"{name}_{width}_{theme}.png"))  # type: ignore[attr-defined]
    page.set_viewport_size({"width": WIDTHS[1], "height": 900})  # type: ignore[attr-defined]


def check_layout(page: object, name: str, width: int) -> None:
    """Nothing sticks out sideways: not the page, not a table's columns (each in view without scrolling
    its grid), and no label of a chart or a metric is cut. The Papers views must have drawn a grid."""
    where, has_grid = f"{name} at {width} px", name.startswith("papers")
    page.wait_for_function(CHARTS_DRAWN_JS, timeout=60_000)  # type: ignore[attr-defined]  # Plotly loads lazily
    overflow = page.evaluate(  # type: ignore[attr-defined]
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, where
    if has_grid:  # grids draw after the script
        page.wait_for_selector('[data-testid="stDataFrame"] .dvn-scroller')  # type: ignore[attr-defined]
    grids = page.evaluate(GRID_OVERFLOW_JS)  # type: ignore[attr-defined]
    assert max(grids, default=0) <= 1, (where, grids)
    if width == WIDTHS[0]:  # every grid of a pair spans the main column there (pairs stack below 1280 px)
        # The widths a table is fitted to leave room for a classic scrollbar (`components.PAGE_WIDTH_PX`).
        wide = page.evaluate(GRID_WIDTHS_JS)  # type: ignore[attr-defined]
        assert min(wide, default=PAGE_ROOM_PX) >= PAGE_ROOM_PX, (where, wide)
    assert grids or not has_grid, f"{where}: no grid drawn, so no column was checked"
    # A chart redrawn at a new width may take a moment to settle its margins: cut for 5 s is cut.
    deadline = time.monotonic() + 5
    while (cut := page.evaluate(CUT_LABELS_JS)) and time.monotonic() < deadline:  # type: ignore[attr-defined]
        page.wait_for_timeout(250)  # type: ignore[attr-defined]
    assert cut == [], (where, cut)

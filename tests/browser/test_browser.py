"""The real app in headless Chromium: every page, a filter in the URL, the back button, the download.

Starts `streamlit run app.py` on a free port (tests/server.py) and drives Debian's Chromium with
Playwright. Screenshots of every page go to artifacts/screenshots/ (not committed). Skipped where
/usr/bin/chromium or Playwright is missing.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from support.browser import (  # noqa: F401
    CHARTS_DRAWN_JS,
    CHROMIUM,
    COUNT,
    CUT_LABELS_JS,
    GRID_OVERFLOW_JS,
    PAGES,
    SCREENSHOTS,
    SOFT_NAVIGATE,
    act_until_query,
    app_url,
    browser,
    counts,
    href,
    no_errors,
    open_page,
    query,
    search_for,
    select_a_box,
    settle,
    shoot,
    sidebar_text,
    sync_api,
    wait_for_query,
    wait_for_value,
)
from support.server import REPO, running_app

from dashboard import corpus

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM} (apt install chromium)"
    ),
]


def test_a_filter_goes_into_the_url_the_count_and_the_download_and_back_undoes_it(
    app_url: str, browser: object
) -> None:
    page = open_page(browser)
    page.goto(f"{app_url}/papers")
    settle(page)
    shown, total = counts(page)
    assert shown == total

    search_for(page, "model")
    assert query(page)["q"] == ["model"]
    shown, _ = counts(page)
    assert 0 < shown < total
    grid = page.locator('[data-testid="stDataFrame"] table[role="grid"]').first
    assert int(grid.get_attribute("aria-rowcount")) == shown + 1

    with page.expect_download() as download_info:
        page.get_by_role("button", name=re.compile(r"^Download .* as CSV$")).first.click()
    download = download_info.value
    assert download.suggested_filename == "papers_q-model.csv"
    rows = pd.read_csv(io.BytesIO(Path(download.path()).read_bytes()), dtype=str, keep_default_na=False)
    assert len(rows) == shown
    assert rows["abstract_clean"].str.contains(r"\bmodel", case=False).all()

    shoot(page, "papers_filtered")
    page.go_back()
    wait_for_query(page, "q", present=False)
    settle(page)
    assert counts(page) == (total, total)
    wait_for_value(page.locator('[data-testid="stSidebar"] input[type="text"]').first, "")


def test_clicking_a_topic_bar_filters_the_papers(app_url: str, browser: object) -> None:
    page = open_page(browser)
    page.goto(f"{app_url}/topics")
    settle(page)
    total = counts(page)[1]
    bars = page.locator('[data-testid="stPlotlyChart"] .barlayer .point')
    bars.first.wait_for()
    # force: plotly catches clicks on a drag layer above the bars
    act_until_query(page, "topic", lambda: bars.first.click(force=True))
    settle(page)
    shown = counts(page)[0]
    assert 0 < shown < total
    assert query(page)["topic"]
    no_errors(page)


def test_selecting_a_row_opens_the_paper(app_url: str, browser: object) -> None:
    page = open_page(browser)
    page.goto(f"{app_url}/papers")
    settle(page)
    grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
    # The table draws on a canvas: click the second row's checkbox (header and rows are 35 px).
    x, y = grid["x"] + 16, grid["y"] + 35 + 35 + 17
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    wait_for_query(page, "paper")
    settle(page)
    title = page.locator(".pd-title").first
    title.wait_for()
    assert title.inner_text().strip()
    assert page.locator(".pd-abstract").count() == 1
    no_errors(page)


def test_selecting_points_on_the_map_filters_to_them(app_url: str, browser: object) -> None:
    page = open_page(browser, height=1400)
    page.goto(f"{app_url}/topics")
    settle(page)
    total = counts(page)[1]
    select_a_box(page, 0.7)
    settle(page)
    # The box is kept as its corners: a short URL however many papers it holds.
    assert 0 < counts(page)[0] < total
    assert "id" not in query(page) and len(query(page)["box"][0].split(",")) == 4
    assert len(href(page)) < 200
    no_errors(page)


def test_a_lasso_around_a_point_of_the_map_filters_to_that_paper(app_url: str, browser: object) -> None:
    """The map's points carry row numbers (`components.PaperIds`): a selection must still name the
    paper under the mouse, the one its hover box shows."""
    page = open_page(browser, height=1400)
    page.goto(f"{app_url}/topics")
    settle(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').nth(1)  # type: ignore[attr-defined]
    point = chart.locator(".scatterlayer .point").nth(5)
    point.wait_for()
    # The map in view first: the mouse moves to page coordinates, and a hover over the chart below
    # scrolls the page if the map reaches below the window (as after taller tables above it).
    chart.scroll_into_view_if_needed()

    def centre() -> tuple[float, float]:
        box = point.bounding_box()
        return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    x, y = centre()
    r = 6
    page.mouse.move(x, y)  # type: ignore[attr-defined]
    hover = page.locator(".hoverlayer .hovertext")  # type: ignore[attr-defined]
    hover.first.wait_for()
    shown = hover.first.text_content() or ""

    def lasso() -> None:
        chart.hover()
        chart.locator('.modebar-btn[data-title="Lasso Select"]').click()
        x, y = centre()  # where the point is now
        page.mouse.move(x - r, y - r)  # type: ignore[attr-defined]
        page.mouse.down()  # type: ignore[attr-defined]
        for dx, dy in ((r, -r), (r, r), (-r, r), (-r, -r)):
            page.mouse.move(x + dx, y + dy, steps=5)  # type: ignore[attr-defined]
        page.mouse.up()  # type: ignore[attr-defined]

    act_until_query(page, "id", lasso)
    settle(page)
    (picked,) = query(page)["id"]
    papers = corpus.load(sorted((REPO / "seeds").glob("*"))).papers.set_index("id")
    assert picked in papers.index  # an id, not the row number the point carries
    assert " ".join(str(papers.loc[picked, "title"]).split()[:4]) in " ".join(shown.split())
    assert counts(page)[0] == 1
    no_errors(page)


def test_uploading_a_file_shows_it(app_url: str, browser: object, tmp_path: Path) -> None:
    upload = tmp_path / "two.csv"
    upload.write_text("title,abstract\nGraph paper,We study graphs.\nVideo paper,We generate video.\n")
    page = open_page(browser)
    page.goto(f"{app_url}/papers")
    settle(page)
    page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary').first.click()
    page.locator('[data-testid="stSidebar"] input[type="file"]').set_input_files(str(upload))
    page.wait_for_function(
        "() => /\\b2 of 2 papers\\b/.test(document.querySelector('[data-testid=\"stSidebar\"]').innerText)"
    )
    settle(page)
    assert counts(page) == (2, 2)
    no_errors(page)


HOSTILE = (
    "Hostile Conference 2026\n\n"
    "<script>window.__pwned = 1</script> We propose ScriptNet "
    '<img src=x onerror="window.__pwned = 2"> for graphs.\n\n'
    "We study :red[red] and :material/home: icons, $x^2$ math "
    "and [a link](javascript:window.__pwned=3) on graphs.\n"
)


def test_hostile_abstracts_show_as_text_and_run_nothing(
    app_url: str, browser: object, tmp_path: Path
) -> None:
    upload = tmp_path / "hostile.txt"
    upload.write_text(HOSTILE)
    page = open_page(browser)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{app_url}/papers")
    settle(page)
    page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary').first.click()
    page.locator('[data-testid="stSidebar"] input[type="file"]').set_input_files(str(upload))
    page.wait_for_function(
        "() => /\\b2 of 2 papers\\b/.test(document.querySelector('[data-testid=\"stSidebar\"]').innerText)"
    )
    # Move within the session (a reload would start a new one, without the upload).
    for path in (
        "/papers?paper=hostile-1&q=scriptnet",
        "/papers?paper=hostile-2",
        "/compare?cmp=hostile-1&cmp=hostile-2",
    ):
        page.evaluate(SOFT_NAVIGATE, path)
        settle(page)
        no_errors(page)
        assert counts(page) == (1 if "q=" in path else 2, 2)
        assert page.evaluate("() => window.__pwned") is None
        assert page.locator('img[src="x"]').count() == 0
        assert page.locator('a[href^="javascript"]').count() == 0
        shown = page.locator(".pd-abstract, .pd-compare").first.inner_text()
        assert "<script>window." in shown or ":red[red]" in shown  # shown as text
    shoot(page, "compare_hostile")
    assert dialogs == []


def test_the_chart_library_is_fetched_with_the_page_once(app_url: str, browser: object) -> None:
    # The page's head names Plotly's module (`dashboard.ui.preload`): the Library page, which draws no
    # chart, fetches it too; the Overview fetches it once for both the link and its charts (a link
    # Chromium could not match to the chart's import would fetch it twice). No script is the app's own.
    chart_module = """() => performance.getEntriesByType('resource')
        .filter(e => /PlotlyChart\\.[^/]*\\.js$/.test(e.name)).length"""
    page = open_page(browser)
    for path in ("library", ""):
        page.goto(f"{app_url}/{path}")  # type: ignore[attr-defined]
        settle(page)
        if path == "":
            page.wait_for_function(CHARTS_DRAWN_JS)  # type: ignore[attr-defined]
            assert page.locator('[data-testid="stPlotlyChart"]').count() > 0  # type: ignore[attr-defined]
        else:
            assert page.locator('[data-testid="stPlotlyChart"]').count() == 0  # type: ignore[attr-defined]
        assert page.evaluate(chart_module) == 1, path  # type: ignore[attr-defined]
        assert page.locator('link[rel="modulepreload"][href*="PlotlyChart."]').count() == 1  # type: ignore[attr-defined]
        assert page.locator('[data-testid="stHtml"] script').count() == 0  # type: ignore[attr-defined]
        no_errors(page)
    page.context.close()  # type: ignore[attr-defined]


def test_the_tables_module_is_loaded_after_the_first_page_and_before_the_first_table(
    app_url: str, browser: object
) -> None:
    # The Overview draws no table; once it is drawn, the head's warm-up (`dashboard.ui.preload`)
    # imports the table's module, so a first switch to Papers draws its table without fetching it.
    table_module = """() => performance.getEntriesByType('resource')
        .filter(e => /\\/DataFrame\\.[^/]*\\.js$/.test(e.name)).length"""
    page = open_page(browser)
    page.goto(f"{app_url}/")  # type: ignore[attr-defined]
    settle(page)
    page.wait_for_function(CHARTS_DRAWN_JS)  # type: ignore[attr-defined]
    assert page.locator('[data-testid="stDataFrame"]').count() == 0  # type: ignore[attr-defined]
    page.wait_for_function(f"() => ({table_module})() === 1", timeout=30_000)  # type: ignore[attr-defined]
    link = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a', has_text="Papers")  # type: ignore[attr-defined]
    link.first.click()
    settle(page)
    page.locator('[data-testid="stDataFrame"]').first.wait_for()  # type: ignore[attr-defined]
    assert page.evaluate(table_module) == 1  # type: ignore[attr-defined]
    no_errors(page)
    page.context.close()  # type: ignore[attr-defined]

"""The Trends page in headless Chromium: a click on a cell or a point sets exactly its filters.

AppTest cannot click a Plotly chart, so this drives the real app on a multi-year synthetic corpus: the
hover of the clicked element says how many papers it stands for, and after the click the URL holds
exactly the filters it names and the sidebar counts exactly those papers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from support.browser import (
    CHARTS_DRAWN_JS,
    CHROMIUM,
    browser,
    counts,
    no_errors,
    open_page,
    query,
    settle,
    wait_for_query,
)
from support.server import running_app
from support.synthetic import trend_papers
from support.venue_mix import JOINS_LATER, venue_mix_papers

__all__ = ["browser"]  # the fixture, shared with test_browser

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM}"),
]
PAPERS_IN_HOVER = re.compile(r"\(?([\d,]+) papers")


@pytest.fixture(scope="module")
def trends_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("trends-browser") / "trends.jsonl"
    trend_papers(per_venue_year=30).drop(columns=["topic"]).to_json(path, orient="records", lines=True)
    with running_app(["--corpus", str(path)]) as url:
        yield url


def _click(page: object, chart_title: str, index: int) -> int:
    """Hover then click the ``index``-th point of the chart titled ``chart_title``; its papers."""
    chart = page.locator('[data-testid="stPlotlyChart"]').filter(has_text=chart_title).first  # type: ignore[attr-defined]
    chart.scroll_into_view_if_needed()
    point = chart.locator(".scatterlayer .point").nth(index)
    point.hover(force=True)
    hover = page.locator(".hoverlayer .hovertext").first  # type: ignore[attr-defined]
    hover.wait_for()
    match = PAPERS_IN_HOVER.search(hover.text_content())
    assert match, hover.text_content()
    point.click(force=True)  # plotly catches clicks on a drag layer above the points
    return int(match.group(1).replace(",", ""))


@pytest.mark.parametrize(
    ("chart_title", "index", "keys"),
    [("Topic share per venue", 4, {"topic", "venue"}), ("fastest-rising", 2, {"topic", "year"})],
)
def test_a_click_sets_exactly_the_filters_of_what_was_clicked(
    trends_url: str, browser: object, chart_title: str, index: int, keys: set[str]
) -> None:
    page = open_page(browser, width=1280)
    page.goto(f"{trends_url}/trends")  # type: ignore[attr-defined]
    settle(page, timeout=240)  # the first run fits the topics (a minute on a busy 2-core machine)
    total = counts(page)[1]
    if chart_title == "Topic share per venue":  # in an expander below the terms, drawn once opened
        page.locator('[data-testid="stExpander"] summary').filter(has_text="Topic by venue").click()  # type: ignore[attr-defined]
        settle(page)
        page.wait_for_function(CHARTS_DRAWN_JS, timeout=60_000)  # type: ignore[attr-defined]
    papers = _click(page, chart_title, index)
    wait_for_query(page, "topic")
    settle(page)
    filters = query(page)
    assert set(filters) == keys and all(len(values) == 1 for values in filters.values())
    assert counts(page) == (papers, total)
    assert 0 < papers < total
    no_errors(page)


# Per chart with a legend in a row under it (horizontal): the lowest x-axis label's bottom and the
# legend's top (pixels).
_LEGEND_AND_TICKS_JS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
  .filter(chart => chart.querySelector('.legend') && chart.querySelector('.xtick text')
    && chart.querySelector('.js-plotly-plot')._fullLayout.legend.orientation === 'h')
  .map(chart => [
    Math.max(...[...chart.querySelectorAll('.xtick text')].map(t => t.getBoundingClientRect().bottom)),
    chart.querySelector('.legend').getBoundingClientRect().top])"""


def test_the_legend_under_a_chart_leaves_the_years_readable_after_a_resize(
    trends_url: str, browser: object
) -> None:
    """A wider window takes rows off a legend under a chart; it must still sit below the year labels
    (placed at a share of the plot's height, it stayed over them after 1024 -> 1280 px)."""
    page = open_page(browser, width=1024)
    page.goto(f"{trends_url}/trends")  # type: ignore[attr-defined]
    settle(page, timeout=240)
    page.wait_for_function(CHARTS_DRAWN_JS, timeout=60_000)  # type: ignore[attr-defined]
    for width in (1024, 1280, 1920, 1024):
        page.set_viewport_size({"width": width, "height": 900})  # type: ignore[attr-defined]
        page.wait_for_timeout(1_500)  # type: ignore[attr-defined]  # Plotly lays the charts out again
        placed = page.evaluate(_LEGEND_AND_TICKS_JS)  # type: ignore[attr-defined]
        assert placed, "no chart with a legend under its axis"
        for ticks_bottom, legend_top in placed:
            assert ticks_bottom <= legend_top, (width, ticks_bottom, legend_top)
    no_errors(page)


@pytest.fixture(scope="module")
def joins_later_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Venue B joins in 2022 with more of the graph topic; flat within each venue."""
    path = tmp_path_factory.mktemp("trends-venues-browser") / "joins.jsonl"
    venue_mix_papers(JOINS_LATER, per_cell=60).drop(columns=["topic"]).to_json(
        path, orient="records", lines=True
    )
    with running_app(["--corpus", str(path)]) as url:
        yield url


def test_the_shares_setting_goes_to_the_url_and_every_point_names_its_n(
    joins_later_url: str, browser: object
) -> None:
    page = open_page(browser, width=1280)
    page.goto(f"{joins_later_url}/trends")  # type: ignore[attr-defined]
    settle(page, timeout=240)
    page.wait_for_function(CHARTS_DRAWN_JS, timeout=60_000)  # type: ignore[attr-defined]
    lines = page.locator('[data-testid="stPlotlyChart"]').filter(has_text="the largest topics").first  # type: ignore[attr-defined]
    assert "(shares within venues)" in lines.text_content()
    point = lines.locator(".scatterlayer .point").first
    point.hover(force=True)
    hover = page.locator(".hoverlayer .hovertext").first  # type: ignore[attr-defined]
    hover.wait_for()
    text = hover.text_content()
    # 2020 holds venue A only (60 papers, 6 of them in the graph topic): a hollow point, and it says so
    assert "within venues (pooled: 10.0%)" in text and "6 papers of 60; one venue only" in text, text
    page.get_by_text("Pooled", exact=True).click()  # type: ignore[attr-defined]
    wait_for_query(page, "shares")
    settle(page)
    assert query(page)["shares"] == ["pooled"]
    page.wait_for_function(CHARTS_DRAWN_JS, timeout=60_000)  # type: ignore[attr-defined]
    titles = page.locator('[data-testid="stPlotlyChart"]').filter(has_text="fastest-rising")  # type: ignore[attr-defined]
    assert titles.count() >= 1 and "(shares within venues)" not in titles.first.text_content()
    no_errors(page)

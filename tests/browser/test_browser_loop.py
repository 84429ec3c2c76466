"""The loop the product exists for, in the real app and Chromium: filter on one page, then read and
download on another.

A search and a topic are set on the Overview through the sidebar's widgets; then each sidebar link is
followed in turn. Every page must show the same count line and carry the same filter keys in its URL;
the CSV on Papers must hold exactly those rows; back, forward and a reload keep the filters; and
"Open these N papers" goes from a counting page to Papers with the filter it counted.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from support.browser import (  # the module's server and browser fixtures too
    CHROMIUM,
    SEARCH_BOX,
    app_url,
    browser,
    counts,
    href,
    no_errors,
    open_page,
    query,
    search_for,
    settle,
    wait_for_query,
    wait_for_value,
)

from dashboard.ui import navigation

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM}"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")

FILTER_KEYS = ("q", "topic")
LINKS = '[data-testid="stSidebar"] [data-testid="stPageLink"] a'


def filter_part(page: object) -> dict[str, list[str]]:
    return {key: values for key, values in query(page).items() if key in FILTER_KEYS}


def path_of(page: object) -> str:
    return urlsplit(href(page)).path.rstrip("/").rsplit("/", 1)[-1]


def set_search_and_topic(page: object) -> None:
    """Type a search and pick the first topic offered, through the sidebar's widgets."""
    search_for(page, "model")
    topics = page.locator('[data-testid="stSidebar"] [data-testid="stMultiSelect"]').first  # type: ignore[attr-defined]
    topics.locator('input[role="combobox"]').click()
    page.get_by_role("option").first.wait_for()  # type: ignore[attr-defined]
    page.keyboard.press("ArrowDown")  # type: ignore[attr-defined]
    page.keyboard.press("Enter")  # type: ignore[attr-defined]
    page.wait_for_timeout(300)  # type: ignore[attr-defined]
    page.keyboard.press("Escape")  # type: ignore[attr-defined]
    wait_for_query(page, "topic")
    settle(page)


def test_filters_follow_every_sidebar_link_back_forward_and_a_reload(app_url: str, browser: object) -> None:
    page = open_page(browser, width=1280)
    page.goto(app_url)  # type: ignore[attr-defined]
    settle(page)
    total = counts(page)[1]
    set_search_and_topic(page)
    shown, _ = counts(page)
    wanted = filter_part(page)
    assert set(wanted) == set(FILTER_KEYS) and 0 < shown < total

    labels = [text.split()[-1] for text in page.locator(LINKS).all_inner_texts()]  # type: ignore[attr-defined]
    assert len(labels) == len(navigation.PAGES), labels
    for number, label in enumerate(labels):
        page.locator(LINKS).nth(number).click()  # type: ignore[attr-defined]
        settle(page)
        assert filter_part(page) == wanted, f"{label}: {href(page)}"
        assert counts(page) == (shown, total), label
        no_errors(page)

    page.locator(LINKS, has_text="Papers").first.click()  # type: ignore[attr-defined]
    settle(page)
    assert path_of(page) == "papers"
    with page.expect_download() as download_info:  # type: ignore[attr-defined]
        page.get_by_role("button", name=re.compile(r"^Download .* as CSV$")).first.click()  # type: ignore[attr-defined]
    rows = pd.read_csv(
        io.BytesIO(Path(download_info.value.path()).read_bytes()), dtype=str, keep_default_na=False
    )
    assert len(rows) == shown
    assert rows["topic"].nunique() == 1
    text = rows["title"] + " " + rows["abstract_clean"]
    assert text.str.contains(r"\bmodel", case=False).all()

    page.go_back()  # type: ignore[attr-defined]
    settle(page)
    assert path_of(page) != "papers"
    assert filter_part(page) == wanted and counts(page) == (shown, total)
    page.go_forward()  # type: ignore[attr-defined]
    settle(page)
    assert path_of(page) == "papers"
    assert filter_part(page) == wanted and counts(page) == (shown, total)
    page.reload()  # type: ignore[attr-defined]
    settle(page)
    assert filter_part(page) == wanted and counts(page) == (shown, total)
    wait_for_value(page.locator(SEARCH_BOX).first, "model")  # type: ignore[attr-defined]


def test_page_settings_stay_with_their_page(app_url: str, browser: object) -> None:
    """Terms' ``ngram`` is not carried to Papers, and comes back with a link to Terms."""
    page = open_page(browser, width=1280)
    page.goto(f"{app_url}/terms?q=model&ngram=2")  # type: ignore[attr-defined]
    settle(page)
    page.locator(LINKS, has_text="Papers").first.click()  # type: ignore[attr-defined]
    settle(page)
    assert query(page) == {"q": ["model"]}
    page.locator(LINKS, has_text="Terms").first.click()  # type: ignore[attr-defined]
    settle(page)
    assert query(page) == {"q": ["model"], "ngram": ["2"]}


@pytest.mark.parametrize("start", ["", "topics", "terms", "trends", "links"])  # "": the Overview
def test_open_these_papers_goes_to_papers_with_the_counted_filter(
    app_url: str, browser: object, start: str
) -> None:
    page = open_page(browser, width=1280)
    page.goto(f"{app_url}/{start}?q=model")  # type: ignore[attr-defined]
    settle(page)
    shown, total = counts(page)
    button = page.get_by_role("button", name=f"Open these {shown:,} papers")  # type: ignore[attr-defined]
    button.click()
    settle(page)
    assert path_of(page) == "papers"
    assert parse_qs(urlsplit(href(page)).query)["q"] == ["model"]
    assert counts(page) == (shown, total)
    grid = page.locator('[data-testid="stDataFrame"] table[role="grid"]').first  # type: ignore[attr-defined]
    assert int(grid.get_attribute("aria-rowcount")) == shown + 1


def test_a_column_header_click_does_not_reorder_the_rows_behind_the_caption(
    app_url: str, browser: object
) -> None:
    """One order, said once: the caption names the table's order, and a header click cannot change it.

    The grid draws on a canvas: its rows are compared as pixels, before and after a click on the Title
    header (which sorted the rows on screen before the header stopped taking clicks).
    """
    page = open_page(browser, width=1280)
    page.goto(f"{app_url}/papers")  # type: ignore[attr-defined]
    settle(page)
    box = page.locator('[data-testid="stDataFrame"]').first.bounding_box()  # type: ignore[attr-defined]
    rows = {"x": box["x"] + 40, "y": box["y"] + 40, "width": box["width"] - 60, "height": 200}
    page.mouse.move(box["x"] + box["width"] + 30, box["y"] - 30)  # type: ignore[attr-defined]
    page.wait_for_timeout(800)  # type: ignore[attr-defined]
    before = page.screenshot(clip=rows)  # type: ignore[attr-defined]
    page.mouse.click(box["x"] + 120, box["y"] + 18)  # type: ignore[attr-defined]  # the Title header
    page.mouse.move(box["x"] + box["width"] + 30, box["y"] - 30)  # type: ignore[attr-defined]
    page.wait_for_timeout(1500)  # type: ignore[attr-defined]
    assert page.screenshot(clip=rows) == before  # type: ignore[attr-defined]
    assert "in corpus order" in page.locator('[data-testid="stMain"]').inner_text()  # type: ignore[attr-defined]

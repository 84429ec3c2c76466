"""Topics' map as a picture, in headless Chromium (issue 49, item 3): the picture is sharp (twice the
pixels it is shown at: Streamlit shrinks a wider image, so its size is chosen under that), "Interactive"
draws the selectable Plotly map and writes ``map=interactive`` to the URL, a box drawn on it filters,
and the choice stays with the Topics page across a visit to another page.

On the seeds with ``map=picture`` in the URL: the picture of a small map is the same picture as a
large one's, and the seeds start in seconds (the AppTests check which map a large corpus gets).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.browser import (  # noqa: F401
    CHROMIUM,
    app_url,
    browser,
    counts,
    no_errors,
    open_page,
    query,
    select_a_box,
    settle,
    wait_for_query,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM} (apt install chromium)"
    ),
]

PICTURE = '[data-testid="stImage"] img'
SIDEBAR_LINK = '[data-testid="stSidebar"] [data-testid="stPageLink"] a'


def test_the_picture_is_sharp_and_interactive_is_one_click_away_and_stays(
    app_url: str, browser: object
) -> None:
    page = open_page(browser, width=1280, height=1400)
    page.goto(f"{app_url}/topics?map=picture")
    settle(page)
    picture = page.locator(PICTURE).first
    picture.wait_for()
    picture.evaluate("image => image.decode()")
    natural, shown = picture.evaluate("image => [image.naturalWidth, image.clientWidth]")
    assert natural == 2 * shown, (natural, shown)  # not shrunk by Streamlit, not stretched by the page
    assert f"map of {counts(page)[1]:,} papers" in (picture.get_attribute("alt") or "")  # says what it shows
    assert page.locator('[data-testid="stPlotlyChart"] .scatterlayer').count() == 0  # no Plotly map
    with page.expect_download() as saved:
        page.get_by_role("button", name="Save picture").click()
    assert saved.value.suggested_filename.startswith("map") and saved.value.suggested_filename.endswith(
        ".png"
    )
    assert Path(saved.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    page.get_by_text("Interactive", exact=True).click()  # the segmented control's option
    page.wait_for_function("() => new URLSearchParams(location.search).get('map') === 'interactive'")
    settle(page)
    assert page.locator(PICTURE).count() == 0
    total = counts(page)[1]
    select_a_box(page, 0.7)  # the map's selection works as before
    settle(page)
    assert 0 < counts(page)[0] < total

    # To Papers and back by the sidebar's links: the Topics page keeps its own setting.
    page.locator(SIDEBAR_LINK).filter(has_text="Papers").first.click()
    wait_for_query(page, "map", present=False)
    settle(page)
    page.locator(SIDEBAR_LINK).filter(has_text="Topics").first.click()
    wait_for_query(page, "map")
    settle(page)
    assert query(page)["map"] == ["interactive"]
    assert page.locator(PICTURE).count() == 0
    no_errors(page)

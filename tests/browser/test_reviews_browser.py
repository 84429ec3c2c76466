"""The Reviews page with scores in the real browser: axe-core in both themes finds nothing serious that a
bare Streamlit page (the floor) has not (the page-wide pass of `test_browser_a11y` runs on the seeds,
which carry no scores)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.axe import AXE, FAILING, THEMES, checked_page, floor_url, run_axe  # noqa: F401
from support.browser import CHROMIUM, browser, open_page  # noqa: F401  (browser: a fixture)
from support.server import REPO, running_app

SCORED = REPO / "tests" / "fixtures" / "reviews"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM}"),
    pytest.mark.skipif(not AXE.exists(), reason=f"needs axe-core at {AXE} (cd tests/axe && npm ci)"),
]


@pytest.fixture(scope="module")
def scored_url() -> Iterator[str]:
    with running_app(["--corpus", str(SCORED)]) as url:
        yield url


@pytest.mark.parametrize("theme", THEMES)
def test_axe_on_the_reviews_page_with_scores(
    scored_url: str,
    floor_url: str,  # noqa: F811  (the fixture imported above)
    browser: Any,  # noqa: F811
    theme: str,
) -> None:
    suffix = f"?{THEMES[theme]}" if THEMES[theme] else ""
    page = open_page(browser, width=1280, height=900)
    page.goto(f"{floor_url}/{suffix}")
    checked_page(page)
    allowed = {v["id"] for v in run_axe(page) if v["impact"] in FAILING}
    page.close()
    page = open_page(browser, width=1280, height=900)
    page.goto(f"{scored_url}/reviews{suffix}")
    checked_page(page)
    assert page.locator("h2", has_text="Scores per decision").count() == 1
    ours = [v for v in run_axe(page) if v["impact"] in FAILING and v["id"] not in allowed]
    page.close()
    assert not ours, ours

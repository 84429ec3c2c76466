"""One whole task with the keyboard alone (issue 19): search, filter, open a paper, download.

Only Tab, typing, Enter, arrows and Shift+Space, as a keyboard user would; no click anywhere. Each
control is reached by pressing Tab until it has the focus, and while tabbing the focus must always
be visible (an outline or a box shadow), which is what WCAG 2.4.7 asks.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from support.browser import (  # the module's skips, app server and browser fixtures, shared
    CHROMIUM,
    app_url,
    browser,
    counts,
    no_errors,
    open_page,
    query,
    settle,
    wait_for_query,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM}"),
]

# What has the focus, and whether a keyboard user can see it: an outline or a ring (box shadow)
# on the element or, for a grid's canvas, on its grid.
FOCUSED_JS = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const style = getComputedStyle(e);
  const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1;
  const ring = style.boxShadow && style.boxShadow !== 'none';
  return {tag: e.tagName, label: e.getAttribute('aria-label') || '', text: (e.innerText || '').trim(),
          testid: e.getAttribute('data-testid') || '', role: e.getAttribute('role') || '',
          visible: outline || ring || e.tagName === 'CANVAS' || e.tagName === 'MAIN'};
}"""


def tab_to(page: Any, wanted: Any, *, most: int = 80, backwards: bool = False) -> dict[str, Any]:
    """Press Tab (Shift+Tab) until ``wanted(focused)`` holds; every stop on the way shows its focus."""
    unseen: list[str] = []
    for _ in range(most):
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
        focused = page.evaluate(FOCUSED_JS)
        if focused is None:
            continue
        if not focused["visible"]:
            unseen.append(f"{focused['tag']} {focused['label'] or focused['text'][:30]}")
        if wanted(focused):
            assert unseen == [], f"focus not visible on: {unseen}"
            return focused
    raise AssertionError(f"no focus stop matched within {most} presses of Tab")


def test_search_filter_open_a_paper_and_download_with_the_keyboard_alone(app_url: str, browser: Any) -> None:
    page = open_page(browser, width=1280, height=900)
    page.goto(f"{app_url}/papers")
    settle(page)
    total = counts(page)[1]

    # Search: the sidebar's search box.
    tab_to(page, lambda f: f["tag"] == "INPUT" and f["label"] == "Search")
    page.keyboard.type("model")
    page.keyboard.press("Enter")
    wait_for_query(page, "q")
    settle(page)
    searched = counts(page)[0]
    assert 0 < searched < total

    # Filter: the Topics picker (a combobox): the first topic offered, Enter, Escape.
    tab_to(page, lambda f: f["role"] == "combobox" and f["label"] == "Topics")
    page.keyboard.press("ArrowDown")
    page.get_by_role("option").first.wait_for()
    page.keyboard.press("ArrowDown")  # the first option gets the highlight
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    page.keyboard.press("Escape")
    wait_for_query(page, "topic")
    settle(page)
    filtered = counts(page)[0]
    assert 0 < filtered <= searched
    assert query(page)["q"] == ["model"]

    # Open a paper: into the table's grid, down to the first row, Shift+Space ticks it.
    tab_to(page, lambda f: f["tag"] == "CANVAS")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Shift+Space")
    wait_for_query(page, "paper")
    settle(page)
    page.locator(".pd-abstract").first.wait_for()
    assert page.locator(".pd-title").first.inner_text().strip()

    # Download the filtered papers: back up to the download button, Enter.
    button = re.compile(rf"Download {filtered:,} papers as CSV")
    with page.expect_download() as download_info:
        tab_to(page, lambda f: f["tag"] == "BUTTON" and bool(button.search(f["text"])), backwards=True)
        page.keyboard.press("Enter")
    download = download_info.value
    rows = pd.read_csv(io.BytesIO(Path(download.path()).read_bytes()), dtype=str, keep_default_na=False)
    assert len(rows) == filtered
    no_errors(page)

"""The browser tests' shared parts: Chromium, the app server and browser fixtures, waits and page readers."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from support.server import REPO, running_app

CHROMIUM = Path("/usr/bin/chromium")


SCREENSHOTS = REPO / "artifacts" / "screenshots"


COUNT = re.compile(r"([\d,]+) of ([\d,]+) papers")
SEARCH_BOX = '[data-testid="stSidebar"] [data-testid="stTextInput"] input'  # the sidebar's search, first


PAGES = {"Overview": "overview", "Papers": "papers", "Topics": "topics", "Terms": "terms",
         "Trends": "trends", "Reviews": "reviews", "Links & code": "links", "Compare": "compare",
         "Library": "library"}  # fmt: skip


sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with running_app(log_path=SCREENSHOTS / "server.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-quic",
            ],  # fmt: skip
        )
        yield chromium
        chromium.close()


def open_page(browser: object, width: int = 1440, height: int = 1000) -> object:
    context = browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True)  # type: ignore[attr-defined]
    context.set_default_timeout(60_000)
    return context.new_page()


def settle(page: object, quiet: float = 0.8, timeout: float = 60.0) -> None:
    """Wait until the script has finished and the sidebar count and URL stop changing."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        state = page.locator('[data-testid="stApp"]').get_attribute("data-test-script-state")  # type: ignore[attr-defined]
        snapshot = (state, href(page), sidebar_text(page))
        if snapshot != last:
            last, since = snapshot, time.monotonic()
        elif state == "notRunning" and COUNT.search(snapshot[2]) and time.monotonic() - since >= quiet:
            return
        time.sleep(0.15)
    raise AssertionError(f"the app did not settle within {timeout:.0f} s (last state: {last})")


def sidebar_text(page: object) -> str:
    sidebar = page.locator('[data-testid="stSidebar"]')  # type: ignore[attr-defined]
    return sidebar.inner_text() if sidebar.count() else ""


def counts(page: object) -> tuple[int, int]:
    match = COUNT.search(sidebar_text(page))
    assert match, "no 'N of M papers' line in the sidebar"
    return int(match.group(1).replace(",", "")), int(match.group(2).replace(",", ""))


def href(page: object) -> str:
    # Read from the page: Playwright's page.url can lag behind history.pushState.
    return str(page.evaluate("() => location.href"))  # type: ignore[attr-defined]


def query(page: object) -> dict[str, list[str]]:
    return parse_qs(urlsplit(href(page)).query)


def wait_for_query(page: object, key: str, present: bool = True, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while (key in query(page)) != present:
        if time.monotonic() > deadline:
            raise AssertionError(f"URL {href(page)} {'lacks' if present else 'still has'} {key}=")
        time.sleep(0.15)


def wait_for_value(field: object, value: str, timeout: float = 60.0) -> None:
    """Wait until the input ``field`` shows ``value``: on a loaded machine the widget's value can reach
    the page a moment after the count line that the same script run drew."""
    deadline = time.monotonic() + timeout
    while (shown := field.input_value()) != value:  # type: ignore[attr-defined]
        if time.monotonic() > deadline:
            raise AssertionError(f"the field shows {shown!r}, not {value!r}, after {timeout:.0f} s")
        time.sleep(0.15)


def search_for(page: object, text: str) -> None:
    """Type ``text`` into the sidebar's search and press Enter, until the URL carries it as ``q``.

    An Enter pressed while the page is still busy (a loaded CI machine) can be lost; the search is then
    typed again, as a person would, rather than the test failing on the browser's timing.
    """
    field = page.locator(SEARCH_BOX).first  # type: ignore[attr-defined]
    for attempt in range(3):
        settle(page)
        field.fill(text)
        field.press("Enter")
        try:
            wait_for_query(page, "q", timeout=20.0 if attempt < 2 else 60.0)
            break
        except AssertionError:
            if attempt == 2:
                raise
    settle(page)


def act_until_query(page: object, key: str, act: Callable[[], None], tries: int = 3) -> None:
    """Do ``act`` (a click or drag on a chart) until the URL has ``key``: one that lands while Plotly still
    lays the chart out does nothing (seen in loaded CI runs), so it is done again once the browser is idle."""
    for attempt in range(tries):
        page.evaluate(  # type: ignore[attr-defined]
            "() => new Promise(done => requestIdleCallback(() => done(true), {timeout: 3000}))"
        )
        act()
        try:
            wait_for_query(page, key, timeout=10.0 if attempt < tries - 1 else 30.0)
            return
        except AssertionError:
            if attempt == tries - 1:
                raise


def select_a_box(page: object, share: float) -> None:
    """Drag a box over the map (the page's second chart) from its corner to ``share`` of its width and
    height, until the URL holds the selection (`act_until_query`)."""

    def drag_a_box() -> None:
        drag = page.locator('[data-testid="stPlotlyChart"]').nth(1).locator(".nsewdrag").first  # type: ignore[attr-defined]
        drag.wait_for()
        area = drag.bounding_box()
        page.mouse.move(area["x"] + 5, area["y"] + 5)  # type: ignore[attr-defined]
        page.mouse.down()  # type: ignore[attr-defined]
        page.mouse.move(area["x"] + area["width"] * share, area["y"] + area["height"] * share, steps=15)  # type: ignore[attr-defined]
        page.mouse.up()  # type: ignore[attr-defined]

    act_until_query(page, "box", drag_a_box)


def no_errors(page: object) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0  # type: ignore[attr-defined]


def shoot(page: object, name: str) -> None:
    page.wait_for_timeout(600)  # type: ignore[attr-defined]
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)  # type: ignore[attr-defined]


SOFT_NAVIGATE = "(path) => { history.pushState({}, '', path); dispatchEvent(new PopStateEvent('popstate')); }"


GRID_OVERFLOW_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller')]
    .map(e => e.scrollWidth - e.clientWidth)"""


# Chart text (tick labels, bar labels, titles) outside its chart is cut off; so is a metric label
# wider than its box ("Released c...") and a button's label ("Check repositories (11 to c...").
CUT_LABELS_JS = """() => {
  const cut = [];
  for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const svg = chart.querySelector('.main-svg');
    if (!svg) continue;
    const box = svg.getBoundingClientRect();
    for (const t of chart.querySelectorAll('.ytick text, .xtick text, .bartext, .gtitle, .g-xtitle text')) {
      const r = t.getBoundingClientRect();
      if (r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1)) cut.push(t.textContent);
    }
  }
  for (const label of document.querySelectorAll('[data-testid="stMetricLabel"] p')) {
    if (label.scrollWidth > label.clientWidth + 1) cut.push(label.textContent);
  }
  for (const label of document.querySelectorAll('button [data-testid="stMarkdownContainer"]')) {
    if (label.clientWidth > 0 && label.scrollWidth > label.clientWidth + 1) cut.push(label.textContent);
  }
  return cut;
}"""


# Every chart has drawn. A chart whose module is still loading shows as Streamlit's Suspense fallback
# (`stSkeleton`), not as `stPlotlyChart`: without the first clause a page still loading its charts
# would count as drawn (`every` of none is true), as it did once in CI.
CHARTS_DRAWN_JS = """() => !document.querySelector('[data-testid="stMain"] [data-testid="stSkeleton"]')
    && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .every(chart => chart.querySelector('.main-svg'))"""

"""Reports and saved charts in the real browser: the report opens offline with every chart and runs no
corpus script; the app's "Download report" equals the CLI's report; a chart saves as SVG from the app."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import SEEDS_DIR
from support.browser import SCREENSHOTS, app_url, browser, counts, no_errors, open_page, settle
from support.report import HOSTILE, analysed, chart_blocks, report_rows, report_view

from dashboard.cli import main as cli
from dashboard.report.html import build_report, without_timestamp

pytestmark = pytest.mark.browser
REPORT_BUTTON = '[data-testid="stSidebar"] [data-testid="stDownloadButton"]'


def _open_offline(browser: object, path: Path) -> tuple[object, list[str]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)  # type: ignore[attr-defined]
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("dialog", lambda d: (problems.append("dialog " + d.message), d.dismiss()))
    page.on(
        "request", lambda r: None if r.url.startswith(("file:", "data:", "blob:")) else problems.append(r.url)
    )
    page.goto(path.as_uri())
    page.wait_for_function("() => document.querySelectorAll('.chart .main-svg').length > 0")
    page.wait_for_timeout(500)
    return page, problems


def test_a_report_opens_offline_draws_every_chart_and_runs_no_corpus_script(
    browser: object, tmp_path: Path
) -> None:
    report = build_report(report_view(analysed(40, title=HOSTILE, url="javascript:window.__pwned=3")))
    path = tmp_path / "hostile.html"
    path.write_text(report, encoding="utf-8")
    page, problems = _open_offline(browser, path)
    assert problems == []
    drawn = page.evaluate(
        "() => [...document.querySelectorAll('.chart')].filter(c => c.querySelector('.main-svg')).length"
    )
    assert drawn == len(chart_blocks(report)) >= 4
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator('img[src="x"]').count() == 0 and page.locator('a[href^="javascript"]').count() == 0
    assert page.locator("tbody tr").count() == 40
    assert "</script><script>window.__pwned" in page.locator("tbody").inner_text()  # shown as text
    page.screenshot(path=str(SCREENSHOTS / "report_hostile.png"), full_page=True)


def test_the_apps_report_is_the_clis_report_for_the_same_view(
    app_url: str,
    browser: object,
    tmp_path: Path,
) -> None:
    page = open_page(browser)
    page.goto(f"{app_url}/?q=diffusion")
    settle(page)
    shown = counts(page)[0]
    button = page.get_by_role("button", name="Download report")
    page.wait_for_function(f"() => document.querySelectorAll('{REPORT_BUTTON}').length === 1")
    with page.expect_download(timeout=120_000) as download:
        button.click()
    saved = tmp_path / "app.html"
    download.value.save_as(saved)
    assert download.value.suggested_filename == "report_q-diffusion.html"
    from_app = saved.read_text(encoding="utf-8")
    link = re.search(r'View in the app:</strong> <a href="([^"?]+)', from_app)
    assert link, "the report links back to the app"
    out = tmp_path / "cli.html"
    assert (
        cli.main(
            [
                "report",
                str(SEEDS_DIR),
                "--filters",
                "q=diffusion",
                "--out",
                str(out),
                "--base-url",
                link.group(1),
            ]
        )
        == 0
    )
    assert without_timestamp(from_app) == without_timestamp(out.read_text(encoding="utf-8"))
    assert report_rows(from_app) == shown
    page, problems = _open_offline(browser, saved)
    assert problems == []
    page.screenshot(path=str(SCREENSHOTS / "report_seeds.png"), full_page=True)


def test_a_chart_saves_as_svg_titled_with_the_filters(app_url: str, browser: object) -> None:
    page = open_page(browser)
    page.goto(f"{app_url}/terms?q=diffusion")
    settle(page)
    no_errors(page)
    page.locator('[data-testid="stPopover"] button', has_text="Save chart").first.click()
    with page.expect_download(timeout=120_000) as download:
        page.locator(
            '[data-testid="stPopoverBody"] [data-testid="stDownloadButton"] button', has_text="SVG"
        ).click()
    assert download.value.suggested_filename.endswith("_q-diffusion.svg")
    svg = Path(download.value.path()).read_text(encoding="utf-8")
    assert svg.startswith("<svg") and 'search "diffusion"' in svg


def test_show_the_data_is_made_when_opened_and_lists_the_charts_numbers(
    app_url: str, browser: object
) -> None:
    """The popover's table is made only while it is open (`components.lazy_popover`): none is sent with
    the page; a click opens it, the page runs again, and the table and its description fill it."""
    page = open_page(browser)
    page.goto(app_url)
    settle(page)
    no_errors(page)
    assert page.locator('[data-testid="stPopoverBody"] table').count() == 0  # type: ignore[attr-defined]
    page.locator('[data-testid="stPopover"] button', has_text="Show the data").first.click()  # type: ignore[attr-defined]
    body = page.locator('[data-testid="stPopoverBody"]').first  # type: ignore[attr-defined]
    body.locator("table").wait_for(timeout=60_000)
    assert body.locator("tbody tr").count() > 1
    assert body.get_by_text(re.compile(r"^Bar chart: ")).count() == 1
    no_errors(page)

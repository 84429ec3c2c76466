"""The library in headless Chromium: add from the Papers table and from a map selection, reload, the
list is still there (in the SQLite file), and the export downloads exactly its entries."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import bibtexparser
import pytest
from support.browser import CHROMIUM, counts, open_page, select_a_box, settle, wait_for_query
from support.server import running_app

from dashboard.library.store import Library, bib_unescape

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's Chromium at {CHROMIUM}"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")


@pytest.fixture(scope="module")
def library_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("browser-library") / "library.sqlite"


@pytest.fixture(scope="module")
def app_url(library_file: Path) -> Iterator[str]:
    with running_app(env={"PAPER_DASHBOARD_LIBRARY": str(library_file)}) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        yield chromium
        chromium.close()


def add_with_popover(page: object, label: str) -> None:
    """Open the "Add … to a list" popover and press its Add button (the default list, "to read")."""
    page.locator('[data-testid="stPopover"] button').filter(has_text=label).first.click()  # type: ignore[attr-defined]
    body = page.locator('[data-testid="stPopoverBody"]')  # type: ignore[attr-defined]
    body.wait_for()
    body.locator("button").filter(has_text="Add").last.click()
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => /Added \\d+ papers to/.test(document.body.innerText)"
    )
    page.keyboard.press("Escape")  # type: ignore[attr-defined]
    settle(page)


def stored_titles(path: Path) -> list[str]:
    with Library.open(path) as lib:
        return list(lib.entries("to read")["title"])


def test_add_from_the_table_and_the_map_reload_and_export(
    app_url: str, browser: object, library_file: Path, tmp_path: Path
) -> None:
    page = open_page(browser, height=1400)
    page.goto(f"{app_url}/papers")
    settle(page)
    grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
    x, y = grid["x"] + 16, grid["y"] + 35 + 35 + 17  # the second row's checkbox (rows are 35 px)
    page.mouse.click(x, y)
    wait_for_query(page, "paper")
    settle(page)
    add_with_popover(page, "Add to a list")
    assert len(stored_titles(library_file)) == 1

    page.goto(f"{app_url}/topics")
    settle(page)
    select_a_box(page, 0.5)  # a box selection is kept as the box, not as 500 ids
    settle(page)
    picked = counts(page)[0]
    add_with_popover(page, "picked papers")
    titles = stored_titles(library_file)
    assert 0 < picked <= len(titles) <= picked + 1

    page.reload()  # a new session: the list comes from the file
    page.goto(f"{app_url}/library")
    settle(page)
    grid = page.locator('[data-testid="stDataFrame"] table[role="grid"]').first
    grid.wait_for(state="attached")
    assert int(grid.get_attribute("aria-rowcount")) == len(titles) + 1
    with page.expect_download() as download_info:
        page.get_by_role("button", name=re.compile(r"^Download .* papers as BibTeX$")).first.click()
    download = download_info.value
    assert download.suggested_filename == "to-read.bib"
    parsed = bibtexparser.parse_string(Path(download.path()).read_text(encoding="utf-8"))
    assert [bib_unescape(e.fields_dict["title"].value) for e in parsed.entries] == titles

    page.locator("button").filter(has_text="Show this list on every page").first.click()
    wait_for_query(page, "list")
    settle(page)
    assert counts(page)[0] == len(titles)

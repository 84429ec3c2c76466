"""The Library page's saved searches and "New since" view (AppTest, on the bundled seeds). Each test
gets its own library file (tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import corpus
from dashboard.filters import Filters
from dashboard.library import searches
from dashboard.library.store import Library
from dashboard.ui import keys

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


def library_path() -> Path:
    return Path(os.environ["PAPER_DASHBOARD_LIBRARY"])


def library_page(query: dict[str, Any] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page("src/dashboard/app_pages/library.py")
    return ok(at.run())


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def an_older_version_seen() -> int:
    """Mark the first two seed files seen as an older version, with two saved searches; the number of
    papers of the seeds that version lacked."""
    files = sorted((REPO / "seeds").glob("*.txt"))
    older = corpus.load(files[:2]).papers
    with Library.open(library_path()) as lib:
        searches.save_search(lib, "everything", Filters())
        searches.save_search(lib, "learning", Filters(q="learning"))
        searches.mark_seen(lib, "an-older-version", older, label="last month's dump")
    return len(corpus.load([REPO / "seeds"]).papers) - len(older)


def test_nothing_seen_yet_offers_to_mark_this_corpus() -> None:
    at = library_page()
    assert at.button(key=keys.LIBRARY_MARK_SEEN).label == "Mark this corpus as seen"
    ok(at.button(key=keys.LIBRARY_MARK_SEEN).click().run())
    with Library.open(library_path()) as lib:
        [version] = searches.versions(lib)
    assert version.papers == 57
    assert any("marked seen on" in c.value for c in at.caption)


def test_new_since_lists_each_saved_searchs_new_papers_then_marks_them_seen() -> None:
    new = an_older_version_seen()
    at = library_page()
    [heading] = [h.value for h in at.subheader if h.value.startswith("New since")]
    assert any(f"{new:,} of the 57 papers" in c.value for c in at.caption)
    texts = [m.value for m in at.markdown]
    assert any("Saved search **everything** · 19 new" in t for t in texts)
    assert any("Saved search **learning**" in t for t in texts)
    tables = [d.value for d in at.dataframe]
    assert len(tables[0]) == min(new, 20)
    assert "Reading list" not in " ".join(texts)  # no reading list yet
    assert at.button(key=keys.LIBRARY_MARK_SEEN).label == f"Mark these {new} papers as seen"
    at = ok(at.button(key=keys.LIBRARY_MARK_SEEN).click().run())
    assert not [h for h in at.subheader if h.value.startswith("New since")]
    assert any("marked seen on" in c.value for c in at.caption)


def test_a_reading_list_gets_its_recommended_new_papers() -> None:
    an_older_version_seen()
    files = sorted((REPO / "seeds").glob("*.txt"))
    with Library.open(library_path()) as lib:
        lib.add("to read", corpus.load(files[:1]).papers.head(4))
    at = library_page()
    assert any("Reading list **to read** · " in m.value for m in at.markdown)
    assert any("why" in d.value.columns for d in at.dataframe)


def test_save_the_current_filters_open_and_delete() -> None:
    at = library_page({"q": "graph", "year": "2026"})
    at = ok(at.text_input(key=keys.LIBRARY_SEARCH_NAME).set_value("graphs this year").run())
    at = ok(at.button(key=keys.LIBRARY_SEARCH_SAVE).click().run())
    with Library.open(library_path()) as lib:
        [saved] = searches.saved_searches(lib)
    assert (saved.name, saved.filters) == ("graphs this year", Filters(q="graph", year=(2026,)))
    at = library_page()
    ok(at.button(key=f"{keys.LIBRARY_SEARCH_OPEN}.graphs this year").click().run())
    assert at.query_params.get("q") in ("graph", ["graph"])
    ok(at.button(key=f"{keys.LIBRARY_SEARCH_DELETE}.graphs this year").click().run())
    with Library.open(library_path()) as lib:
        assert searches.saved_searches(lib) == []

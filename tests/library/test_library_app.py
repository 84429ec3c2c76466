"""The library in the app (AppTest): add from the Papers table, the opened paper, a map selection and
Compare; the ``list`` filter on every page; the Library page; a library that is off, per session,
corrupt. Each test gets its own library file (tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from support.apptest import full_titles

from dashboard import corpus
from dashboard.analytics import analysis
from dashboard.filters import Filters
from dashboard.library import store as library
from dashboard.library.store import Library
from dashboard.ui import library as library_ui

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
PAGES = ("overview", "papers", "topics", "terms", "links", "compare", "library")


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


@pytest.fixture(scope="module")
def seeds() -> pd.DataFrame:
    return analysis.analyze(corpus.load([REPO / "seeds"]).papers).papers


def library_path() -> Path:
    return Path(os.environ["PAPER_DASHBOARD_LIBRARY"])


def app(page: str, query: dict[str, Any] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page(f"src/dashboard/app_pages/{page}.py")
    return at.run()


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def entries(name: str) -> pd.DataFrame:
    with Library.open(library_path()) as lib:
        return lib.entries(name)


def test_add_the_filtered_papers_from_the_papers_table(seeds: pd.DataFrame) -> None:
    at = ok(app("papers", {"q": "graph"}))
    at.button(key="papers.add_to_list.add").click()
    ok(at.run())
    expected = list(seeds.loc[Filters(q="graph").mask(seeds).to_numpy(), "title"])
    # The papers the search table shows and its download holds (in the table's order: by relevance).
    assert sorted(entries(library.DEFAULT_LIST)["title"]) == sorted(expected)
    assert f'Added {len(expected)} papers to \\"to read\\"' in captions(at)


def test_adding_many_papers_asks_first(monkeypatch: pytest.MonkeyPatch, seeds: pd.DataFrame) -> None:
    monkeypatch.setattr("dashboard.ui.library.CONFIRM_ABOVE", 10)
    at = ok(app("papers"))
    assert at.button(key="papers.add_to_list.add").disabled
    at.checkbox(key="papers.add_to_list.confirm").check()
    ok(at.run())
    at.selectbox(key="papers.add_to_list.list").select(library_ui.NEW_LIST)
    ok(at.run())
    at.text_input(key="papers.add_to_list.new").input("everything")
    at.button(key="papers.add_to_list.add").click()
    ok(at.run())
    assert len(entries("everything")) == len(seeds)


def test_the_opened_paper_is_added_noted_tagged_and_marked_read(seeds: pd.DataFrame) -> None:
    paper = seeds.iloc[4]
    at = ok(app("papers", {"paper": str(paper["id"])}))
    key = f"paper.library.{paper['id']}"
    at.button(key=f"{key}.add").click()
    ok(at.run())
    at.text_area(key=f"{key}.note").input("Read the proof in section 4")
    at.text_input(key=f"{key}.tags").input("theory, to cite")
    at.checkbox(key=f"{key}.read").check()
    at.button(key=f"{key}.save").click()
    ok(at.run())
    saved = entries(library.DEFAULT_LIST)
    assert list(saved["title"]) == [paper["title"]]
    assert saved.iloc[0]["note"] == "Read the proof in section 4"
    assert saved.iloc[0]["tags"] == ["theory", "to cite"] and saved.iloc[0]["read"]


def test_a_map_selection_and_compare_add_exactly_their_papers(seeds: pd.DataFrame) -> None:
    picked = list(seeds["id"].astype(str).iloc[[1, 7, 12]])
    at = ok(app("topics", {"id": picked}))
    at.button(key="topics.add_to_list.add").click()
    ok(at.run())
    assert set(entries(library.DEFAULT_LIST)["corpus_id"]) == set(picked)
    pair = list(seeds["id"].astype(str).iloc[[20, 21]])
    at = ok(app("compare", {"cmp": pair}))
    at.selectbox(key="compare.add_to_list.list").select(library_ui.NEW_LIST)
    ok(at.run())
    at.text_input(key="compare.add_to_list.new").input("compared")
    at.button(key="compare.add_to_list.add").click()
    ok(at.run())
    assert list(entries("compared")["corpus_id"]) == pair


@pytest.mark.parametrize("page", PAGES)
def test_the_list_filter_narrows_every_page(page: str, seeds: pd.DataFrame) -> None:
    with Library.open(library_path()) as lib:
        lib.add("mine", seeds.iloc[[2, 3, 5]])
    at = ok(app(page, {"list": "mine"}))
    counts = [m.value for m in at.sidebar.markdown if " of " in m.value and "papers" in m.value]
    assert counts and counts[0] == f"**3 of {len(seeds)} papers**"
    if page == "papers":
        shown = full_titles(at.main.dataframe[0].value["title"], seeds["title"])
        assert shown == list(seeds["title"].iloc[[2, 3, 5]])


def test_an_unknown_list_in_the_url_says_so(seeds: pd.DataFrame) -> None:
    at = ok(app("papers", {"list": "nothing"}))
    assert 'no \\"nothing\\" in the library' in "\n".join(c.value for c in at.sidebar.caption)


def test_the_library_page_lists_renames_merges_and_exports(
    seeds: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Library.open(library_path()) as lib:
        lib.add("to read", seeds.iloc[[0, 1]])
        lib.add("later", seeds.iloc[[1, 2]])
        lib.tag([library.fingerprint(seeds.title[2], seeds.abstract[2])], "theory")
    exports: list[tuple[str, pd.DataFrame]] = []
    real = library.export_list
    monkeypatch.setattr(library, "export_list", lambda e, f: exports.append((f, e)) or real(e, f))
    at = ok(app("library"))
    assert at.selectbox(key="library.list").value == "later"
    shown = full_titles(at.main.dataframe[0].value["title"], seeds["title"])
    assert shown == list(seeds["title"].iloc[[1, 2]])
    assert exports[-1][0] == "bibtex" and list(exports[-1][1]["title"]) == list(seeds["title"].iloc[[1, 2]])
    at.selectbox(key="library.tag").select("theory")
    ok(at.run())
    assert full_titles(at.main.dataframe[0].value["title"], seeds["title"]) == [seeds["title"].iloc[2]]
    assert list(exports[-1][1]["title"]) == [seeds["title"].iloc[2]]  # the download is what is shown
    at.selectbox(key="library.tag").select("Any")
    at.text_input(key="library.rename").input("someday")
    at.button(key="library.rename.button").click()
    ok(at.run())
    at.multiselect(key="library.merge").select("to read")
    at.button(key="library.merge.button").click()
    ok(at.run())
    with Library.open(library_path()) as lib:
        assert [(s.name, s.size) for s in lib.lists()] == [("someday", 3)]
    at.button(key="library.show_everywhere").click()
    ok(at.run())
    assert at.query_params["list"] in ("someday", ["someday"])
    assert any(m.value == f"**3 of {len(seeds)} papers**" for m in at.sidebar.markdown)


def test_topic_names_show_on_the_topics_page_and_a_lost_one_is_reported(seeds: pd.DataFrame) -> None:
    at = ok(app("library"))
    topic = at.multiselect(key="library.topics").options[0]
    at.multiselect(key="library.topics").set_value([int(str(topic).split(":")[0])])
    at.text_input(key="library.topic_name").input("My favourite topic")
    ok(at.run())
    at.button(key="library.topic_rename").click()
    ok(at.run())
    with Library.open(library_path()) as lib:
        lib.rename_topic("bundled seeds", ["zebra", "quokka", "okapi"], "Animals")
    at = ok(app("topics"))
    at.session_state["topics.detail.open"] = True  # "One topic in detail" is drawn while open
    ok(at.run())
    # The focus widget's key carries the model's identity (issue 12: it resets with the model).
    (focus,) = [box for box in at.selectbox if str(box.key).startswith("topics.focus")]
    assert any("My favourite topic" in str(o) for o in focus.options)
    at = ok(app("library"))
    assert any('\\"Animals\\" is not among' in w.value for w in at.warning)


def test_without_a_library_every_page_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPER_DASHBOARD_LIBRARY", "none")
    for page in PAGES:
        at = ok(app(page))
        assert not [b for b in at.button if b.key and "add_to_list" in b.key]
    assert "switched off" in ok(app("library")).warning[0].value


def test_a_corrupt_library_file_switches_the_feature_off_and_is_untouched(tmp_path: Path) -> None:
    path = library_path()
    path.write_bytes(b"definitely not sqlite" * 64)
    before = path.read_bytes()
    for page in ("papers", "topics", "library"):
        ok(app(page, {"list": "x"} if page == "papers" else None))
    warning = ok(app("library")).warning[0].value
    assert "not a database" in warning and "the library file" in warning
    assert str(path.parent.name) not in warning  # a visitor is never shown the server's path
    assert path.read_bytes() == before


def test_session_libraries_are_not_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPER_DASHBOARD_LIBRARY", "session")
    first = ok(app("papers"))
    first.button(key="papers.add_to_list.add").click()
    ok(first.run())
    first.switch_page("src/dashboard/app_pages/library.py")
    assert ok(first.run()).main.dataframe  # this session sees its list
    other = ok(app("library"))  # another visitor: an empty library of their own
    assert not other.main.dataframe and "No lists yet" in other.info[0].value
    assert not library_path().exists()

"""The Papers page's "Recommended for <list>" order (AppTest): ``?rec=NAME`` orders the filtered papers
not in the list with a score and a why, a filter narrows it, and a library write changes it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import corpus
from dashboard.analytics import analysis
from dashboard.library.store import Library
from dashboard.ui import components, keys, library

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


@pytest.fixture(scope="module")
def seeds() -> pd.DataFrame:
    return analysis.analyze(corpus.load([REPO / "seeds"]).papers).papers


def add(name: str, papers: pd.DataFrame) -> None:
    with Library.open(Path(os.environ["PAPER_DASHBOARD_LIBRARY"])) as lib:
        lib.add(name, papers)


def remove(name: str, paper_ids: list[str]) -> None:
    with Library.open(Path(os.environ["PAPER_DASHBOARD_LIBRARY"])) as lib:
        entries = lib.entries(name)
        lib.remove(name, entries.loc[entries["corpus_id"].isin(paper_ids), "fingerprint"])


def papers_page(query: dict[str, Any]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page("src/dashboard/app_pages/papers.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def table(at: AppTest) -> pd.DataFrame:
    """The Papers table as shown (the grid with the paper titles)."""
    return next(frame.value for frame in at.dataframe if "title" in frame.value.columns)


def shown_ids(at: AppTest, seeds: pd.DataFrame) -> list[str]:
    ids = dict(zip(seeds["title"].astype(str), seeds["id"].astype(str), strict=False))
    return [ids[title.removesuffix("…")] if title in ids else title for title in table(at)["title"]]


def test_rec_orders_the_papers_without_the_lists_with_score_and_why(seeds: pd.DataFrame) -> None:
    mine = seeds.iloc[[0, 1, 2]]
    add("mine", mine)
    at = papers_page({"rec": "mine"})
    grid = table(at)
    assert {"score", "why"} <= set(grid.columns)
    assert not set(mine["title"]) & set(grid["title"])
    assert len(grid) == min(len(seeds) - 3, components.SHOW_MORE_ROWS)  # every other paper
    assert grid["score"].is_monotonic_decreasing
    assert grid["why"].str.contains("shared: |closest: ").all()
    assert any("Recommended for" in m.value and "mine" in m.value for m in at.markdown)
    assert any("by fit to the reading list" in c.value for c in at.caption)


def test_add_to_a_list_takes_the_recommended_papers_the_download_holds(seeds: pd.DataFrame) -> None:
    """The table, its download and "Add to a list" hold one set of papers: the recommended ones, never
    the list's own (the button offered every filtered paper, the list's included)."""
    mine = seeds.iloc[[0, 1, 2]]
    add("mine", mine)
    at = papers_page({"rec": "mine"})
    others = len(seeds) - len(mine)
    assert at.button(key=f"{keys.PAPERS_ADD}.add") is not None
    labels = [b.proto.label for b in at.get("download_button")]
    assert any(f"Download {others} papers" in label for label in labels), labels
    at.selectbox(key=f"{keys.PAPERS_ADD}.list").set_value(library.NEW_LIST).run()
    at.text_input(key=f"{keys.PAPERS_ADD}.new").input("picked").run()
    at.button(key=f"{keys.PAPERS_ADD}.add").click().run()
    assert not at.exception, [e.value for e in at.exception]
    with Library.open(Path(os.environ["PAPER_DASHBOARD_LIBRARY"])) as lib:
        added = set(lib.entries("picked")["corpus_id"])
    assert len(added) == others and not added & set(mine["id"])


def test_a_filter_narrows_the_recommendations_in_the_same_order(seeds: pd.DataFrame) -> None:
    add("mine", seeds.iloc[[0, 1, 2]])
    everything = table(papers_page({"rec": "mine"}))
    topic = int(seeds["topic"].iloc[5])
    narrowed = table(papers_page({"rec": "mine", "topic": str(topic)}))
    in_topic = set(seeds.loc[seeds["topic"] == topic, "title"])
    assert 0 < len(narrowed) < len(everything)
    assert set(narrowed["title"]) <= in_topic
    assert narrowed["title"].tolist() == [t for t in everything["title"] if t in set(narrowed["title"])]


def test_adding_and_removing_a_paper_updates_the_order(seeds: pd.DataFrame) -> None:
    add("mine", seeds.iloc[[0, 1, 2]])
    at = papers_page({"rec": "mine"})
    newcomer = str(table(at)["title"].iloc[0])
    add("mine", seeds[seeds["title"] == newcomer])
    at.run()
    assert newcomer not in set(table(at)["title"])
    remove("mine", seeds.loc[seeds["title"] == newcomer, "id"].astype(str).tolist())
    at.run()
    assert newcomer in set(table(at)["title"])


def test_below_three_papers_it_says_these_are_papers_like_them(seeds: pd.DataFrame) -> None:
    add("pair", seeds.iloc[[0, 1]])
    at = papers_page({"rec": "pair"})
    assert any("fewer than 3" in i.value for i in at.info)
    assert not set(seeds["title"].iloc[[0, 1]]) & set(table(at)["title"])


def test_an_unknown_list_says_so_and_shows_the_papers(seeds: pd.DataFrame) -> None:
    at = papers_page({"rec": "nothing"})
    assert any(
        'No reading list \\"nothing\\"' in i.value or 'No reading list "nothing"' in i.value for i in at.info
    )
    assert "why" not in table(at).columns


def test_the_chooser_sets_rec_and_clear_forgets_it(seeds: pd.DataFrame) -> None:
    add("mine", seeds.iloc[[0, 1, 2]])
    at = papers_page({})
    at.selectbox(key=keys.PAPERS_RECOMMEND).select("mine").run()
    assert at.query_params[keys.URL_RECOMMEND] in ("mine", ["mine"])
    assert "why" in table(at).columns
    at.button(key=keys.PAPERS_RECOMMEND_CLEAR).click().run()
    assert keys.URL_RECOMMEND not in at.query_params

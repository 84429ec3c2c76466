"""The Overview and the sidebar on a corpus with authors, institutions, countries and decisions.

The corpus is `people_corpus` (Paper Copilot-shaped); answers come from the fixture's own rules and
from `Filters.mask` on the loaded table, so the page is checked against what the filters select.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io
import pytest
from streamlit.testing.v1 import AppTest
from support import people_corpus
from support.plotly_arrays import values

from dashboard import corpus
from dashboard.filters import Filters
from dashboard.text import extract
from dashboard.ui import keys, tables

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
NO_LINKS_CSV = (
    b"title,abstract\n"
    b"Paper one,We study graphs and message passing on molecules with a new network.\n"
    b'Paper two,"A diffusion model, with guidance, for video generation."\n'
)


@pytest.fixture(scope="module")
def people_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return people_corpus.write(tmp_path_factory.mktemp("people"))


@pytest.fixture(scope="module")
def people(people_file: Path) -> pd.DataFrame:
    return corpus.load([people_file]).papers


@pytest.fixture(autouse=True)
def _people_corpus(monkeypatch: pytest.MonkeyPatch, people_file: Path) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py", "--corpus", str(people_file)])


def app(page: str = "overview", query: dict[str, Any] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page(f"src/dashboard/app_pages/{page}.py")
    return at.run()


def assert_no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def shown_count(at: AppTest) -> int:
    for element in at.sidebar.markdown:
        if element.value.startswith("**") and " of " in element.value:
            return int(element.value.strip("*").split(" of ")[0].replace(",", ""))
    raise AssertionError("no count line")


def charts_by_title(at: AppTest) -> dict[str, go.Figure]:
    figures = [plotly.io.from_json(chart.proto.spec) for chart in at.main.get("plotly_chart")]
    return {fig.layout.title.text: fig for fig in figures}


def bars(fig: go.Figure) -> dict[str, int]:
    trace = fig.data[0]
    return {str(v): int(n) for v, n in zip(values(trace.customdata), values(trace.x), strict=True)}


def needs(papers: pd.DataFrame, *columns: str) -> None:
    missing = [c for c in columns if c not in papers.columns]
    if missing:
        pytest.skip(f"the readers do not give {', '.join(missing)} yet (issue 10's column contract)")


# --------------------------------------------------------------------- the charts


def test_top_authors_count_papers_and_mark_the_chosen_ones() -> None:
    at = app()
    assert_no_exception(at)
    authors = bars(charts_by_title(at)["Top authors (click to filter)"])
    assert authors["Alan Turing"] == 12 and authors["Grace Hopper"] == 12 and authors["Ada Lovelace"] == 6
    assert list(authors)[:3] == ["Alan Turing", "Grace Hopper", "Ada Lovelace"]
    # Under a filter on one author, the chart still counts every author (what a click would add),
    # and only the chosen one keeps the accent colour.
    at = app(query={"author": "Ada Lovelace"})
    assert shown_count(at) == 6
    spec = charts_by_title(at)["Top authors (click to filter)"]
    assert bars(spec)["Alan Turing"] == 12
    colours = dict(zip(spec.data[0].customdata, spec.data[0].marker.color, strict=True))
    assert len({colours["Ada Lovelace"], colours["Alan Turing"]}) == 2


def test_institution_country_and_decision_charts(people: pd.DataFrame) -> None:
    needs(people, "affiliations", "countries", "decision_tier")
    at = app()
    assert_no_exception(at)
    charts = charts_by_title(at)
    assert bars(charts["Top institutions (click to filter)"])["Yale University"] == 12
    assert bars(charts["Countries (click to filter)"]) == {"United Kingdom": 24, "United States": 12}
    decisions = bars(charts["Papers per decision (click to filter)"])
    assert list(decisions) == ["oral", "spotlight", "poster", "reject"]  # the tiers' order, not counts
    assert decisions == {"oral": 4, "spotlight": 4, "poster": 12, "reject": 4}
    at = app(query={"decision": "poster", "country": "United States"})
    assert shown_count(at) == int(
        Filters(decision=("poster",), country=("United States",)).mask(people).sum()
    )


def test_a_corpus_without_people_draws_no_people_charts() -> None:
    at = app(query={})
    at.sidebar.get("file_uploader")[0].set_value(("plain.csv", NO_LINKS_CSV, "text/csv")).run()
    assert_no_exception(at)
    assert not any("click to filter" in title and "topic" not in title for title in charts_by_title(at))
    assert not at.main.subheader and not at.main.header
    assert not [m for m in at.sidebar.multiselect if m.label in ("Authors", "Decision")]


# --------------------------------------------------------------------- the sidebar


def test_the_author_filter_in_the_sidebar_writes_the_url(people: pd.DataFrame) -> None:
    at = app("papers")
    widget = at.multiselect(key=keys.AUTHOR)
    assert "Ada Lovelace" in widget.options[:3] or "Ada Lovelace (6)" in widget.options[:3]
    widget.set_value(["Ada Lovelace", "Grace Hopper"]).run()
    assert_no_exception(at)
    filters = Filters(author=("Ada Lovelace", "Grace Hopper"))
    assert Filters.from_query(at.query_params)[0] == filters
    assert shown_count(at) == int(filters.mask(people).sum()) == 15
    assert list(at.main.dataframe[0].value["title"]) == list(people.loc[filters.mask(people), "title"])


def test_the_author_list_offers_the_most_frequent_names_and_any_selected_one(
    monkeypatch: pytest.MonkeyPatch, people: pd.DataFrame
) -> None:
    monkeypatch.setattr("dashboard.ui.sidebar.NAME_OPTIONS", 2)
    counts = people["authors"].explode().dropna().value_counts()
    top, rare = counts.index[:2].tolist(), counts.index[-1]
    at = app("papers")
    widget = at.multiselect(key=keys.AUTHOR)
    assert widget.options == [f"{name} ({counts[name]:,})" for name in top]
    # A name beyond the list (typed, or from a shared link) is offered too, selected, with its count.
    at = app("papers", {"author": rare})
    widget = at.multiselect(key=keys.AUTHOR)
    assert widget.options == [f"{name} ({counts[name]:,})" for name in [*top, rare]]
    assert widget.value == [rare]
    assert shown_count(at) == int(Filters(author=(rare,)).mask(people).sum())


def test_a_typed_author_name_finds_the_corpus_spelling() -> None:
    at = app(query={"author": "ada  LOVELACE"})
    assert_no_exception(at)
    assert shown_count(at) == 6
    assert at.multiselect(key=keys.AUTHOR).value == ["Ada Lovelace"]
    at = app(query={"author": "Nobody"})
    assert shown_count(at) == 24
    assert any('author: no "Nobody"' in c.value.replace("\\", "") for c in at.sidebar.caption)


def test_the_search_finds_authors() -> None:
    at = app(query={"q": "lovelace"})
    assert_no_exception(at)
    assert shown_count(at) == 6


def test_the_decision_filter_is_offered_where_the_corpus_has_decisions(people: pd.DataFrame) -> None:
    needs(people, "decision_tier")
    at = app("papers")
    widget = at.multiselect(key=keys.DECISION)
    widget.set_value(["oral", "spotlight"]).run()
    assert_no_exception(at)
    assert Filters.from_query(at.query_params)[0] == Filters(decision=("oral", "spotlight"))
    assert shown_count(at) == 8


# --------------------------------------------------------------------- what the Overview says


def test_papers_without_a_usable_abstract_are_counted_on_the_overview(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [people_corpus.record(i) for i in range(6)]
    records[2]["abstract"] = "Abstract Unavailable"
    (tmp_path / "icml2019.json").write_text(json.dumps(records), encoding="utf-8")
    needs(corpus.load([tmp_path]).papers, "has_abstract")
    monkeypatch.setattr("sys.argv", ["app.py", "--corpus", str(tmp_path)])
    at = app()
    assert_no_exception(at)
    assert any("1 of these 6 papers has no usable abstract" in c.value for c in at.main.caption)


def test_an_upload_without_links_says_there_is_nothing_to_show() -> None:
    at = app()
    at.sidebar.get("file_uploader")[0].set_value(("plain.csv", NO_LINKS_CSV, "text/csv")).run()
    assert_no_exception(at)
    metrics = {m.label: m.value for m in at.main.metric}
    assert metrics["Venues"] == "–"
    assert "Code released, per topic" not in charts_by_title(at)
    assert any("None of these papers links its own code" in c.value for c in at.main.caption)


SHARED_ACRONYM_CSV = (
    b"title,abstract\n"
    b"One,We propose Margin-Aware Distillation (MAD) for compact students.\n"
    b"Two,We propose MAD (Masking Adversarial Damage) to prune robust networks.\n"
    b"Three,We propose Multi-Agent Debate (MAD) for reasoning with language models.\n"
    b"Four,We propose MAD (multi-agent debate) for vision.\n"
)


def method_rows(at: AppTest) -> list[list[str]]:
    """The Overview's table of method names, as text cells (markdown unescaped)."""
    (table,) = [c.value for c in at.main.caption if c.value.startswith("| Name | Papers |")]
    return [
        [re.sub(r"\\(.)", r"\1", cell).strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        for line in table.splitlines()[2:]
    ]


def test_method_names_are_counted_per_meaning_not_per_spelling() -> None:
    at = app()
    at.sidebar.get("file_uploader")[0].set_value(("mad.csv", SHARED_ACRONYM_CSV, "text/csv")).run()
    assert_no_exception(at)
    assert not at.main.expander  # three names: the table holds them all
    counts = {name: int(papers) for name, papers, _ in method_rows(at)}
    assert counts == {
        "MAD (Multi-Agent Debate)": 2,
        "MAD (Margin-Aware Distillation)": 1,
        "MAD (Masking Adversarial Damage)": 1,
    }


# --------------------------------------------------------------------- a failed upload (issue 12 item 10)

BROKEN = ("broken.json", b"\x00\x01{not json", "application/json")
WHOLE_REASON = "binary file (contains NUL bytes), not text: nothing read; export the abstracts as text"


def test_a_failed_upload_opens_its_report_with_the_whole_reason() -> None:
    at = app()
    at.sidebar.get("file_uploader")[0].set_value(BROKEN).run()
    assert_no_exception(at)
    assert any("No papers could be read" in e.value for e in at.main.error)
    # The report is on the page, every reason whole; the sidebar's report is open.
    report = at.main.table[0].value
    assert WHOLE_REASON in report["Message"].iloc[0]
    corpus_box = at.sidebar.expander[0]
    assert corpus_box.proto.expanded
    assert corpus_box.label.endswith("· 0 papers")
    assert any(WHOLE_REASON in c.value.replace("\\", "") for c in corpus_box.caption)


def test_the_load_report_gets_its_plurals_right() -> None:
    at = app()
    one = ("one.json", b'[{"title": "Only a title"}]', "application/json")
    at.sidebar.get("file_uploader")[0].set_value(one).run()
    assert_no_exception(at)
    corpus_box = at.sidebar.expander[0]
    assert corpus_box.label.endswith("· 1 paper")
    captions = [c.value.replace("\\", "") for c in corpus_box.caption]
    assert "1 paper from 1 file; 1 warning" in captions
    assert any(c.startswith("1 problem (") for c in captions), captions
    assert "Showing the uploaded file." in captions
    assert not corpus_box.proto.expanded  # a warning is no failure: the report stays closed


# --------------------------------------------------------------------- Links & code (issue 12 item 17)

LINKS_CSV = (
    b"title,abstract\n"
    b"One,We propose FooNet. Project page: https://foo.github.io/net and code at https://github.com/a/foo.\n"
    b"Two,We propose BarNet; code will be released upon acceptance.\n"
    b"Three,We propose BazNet. See https://baz.example.org/project for videos.\n"
)


def seeds_app(page: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setattr("sys.argv", ["app.py"])
    return app(page)


def test_links_page_says_project_page_and_hides_the_seeds_file_hashes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = seeds_app("links", monkeypatch)
    assert_no_exception(at)
    titles = list(charts_by_title(at))
    assert "Code released, per source file" not in titles  # the seeds' hashed names split nothing
    at.session_state[keys.LINKS_ALL_OPEN] = True  # the table of every link, drawn once opened
    at.run()
    (links,) = [d.value for d in at.main.dataframe if "kind" in d.value.columns]
    assert "project page" in set(links["kind"]) and not any("_" in kind for kind in links["kind"])


def test_links_page_shows_source_files_only_when_there_are_several(monkeypatch: pytest.MonkeyPatch) -> None:
    at = seeds_app("links", monkeypatch)
    uploader = at.sidebar.get("file_uploader")[0]
    uploader.set_value(("one.csv", LINKS_CSV, "text/csv")).run()
    assert_no_exception(at)
    at.session_state[keys.LINKS_PROMISED_OPEN] = True
    at.run()
    promised = [d.value for d in at.main.dataframe if "title" in d.value.columns and len(d.value) == 1]
    assert promised and "source" not in promised[-1].columns  # one file: no column repeating its name
    second = LINKS_CSV.replace(b"One,", b"Four,").replace(b"Two,", b"Five,").replace(b"Three,", b"Six,")
    at = seeds_app("links", monkeypatch)
    files = [("iclr2025.csv", LINKS_CSV, "text/csv"), ("nips2024.csv", second, "text/csv")]
    at.sidebar.get("file_uploader")[0].set_value(files).run()
    assert_no_exception(at)
    assert "Code released, per source file" in charts_by_title(at)


# --------------------------------------------------------------------- captions that are true (item 15)


@pytest.mark.parametrize("page", ["overview", "papers", "topics", "terms", "links", "compare"])
def test_no_caption_promises_a_download_the_page_lacks(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Pages of 20 rows, so every paged table says how it is paged (57 seed papers, 14 links...).
    monkeypatch.setattr("dashboard.ui.components.PAGE_ROWS", 20)
    at = seeds_app(page, monkeypatch)
    assert_no_exception(at)
    texts = [c.value for c in at.main.caption] + [m.value for m in at.main.markdown]
    mentions = [t for t in texts if "download" in t.lower()]
    # Compare no longer pages a table of its own (its search box finds any paper), so it has no
    # paging caption to check; a caption anywhere that mentions a download needs the button.
    if mentions:
        assert at.main.get("download_button"), (page, mentions)


def test_compare_says_what_its_similarity_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.argv", ["app.py"])
    papers = corpus.load([REPO / "seeds"]).papers
    at = app("compare", {"cmp": list(papers["id"].iloc[:2])})
    assert_no_exception(at)
    (title,) = [t for t in charts_by_title(at) if "similarity" in t.lower()]
    assert "1 = same words" not in title and "words" in title
    assert any("tf-idf" in c.value for c in at.main.caption)


def test_the_repository_table_sends_one_page_and_the_download_holds_every_repository(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 10 seed papers link their own repository: pages of 4 send 4 rows, the download says all 10 (a row
    # per paper: papers sharing a repository are counted as papers, not as one repository)
    monkeypatch.setattr("dashboard.ui.components.PAGE_ROWS", 4)
    at = seeds_app("links", monkeypatch)
    assert_no_exception(at)
    labels = [b.proto.label for b in at.main.get("download_button")]
    assert "Download 10 papers with their repository as CSV" in labels  # with the table closed too
    at.session_state[keys.LINKS_REPOS_OPEN] = True
    at.run()
    repositories = [d.value for d in at.main.dataframe if "repo_state" in d.value.columns]
    assert len(repositories) == 1 and len(repositories[0]) == 4
    assert any(c.value.startswith("Papers with their repository 1–4 of 10") for c in at.main.caption)
    labels = [b.proto.label for b in at.main.get("download_button")]
    assert "Download 10 papers with their repository as CSV" in labels


def test_the_shared_repositories_table_sends_one_page_and_a_few_titles_a_repository(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Seven papers share org/alpha, three org/beta, two org/gamma: pages of 2 rows list alpha and beta,
    # and alpha's row names TITLES_SHOWN titles and how many more.
    shares = {"alpha": 7, "beta": 3, "gamma": 2}
    rows = [
        f"{name.title()} paper {i},We study {name} models in setting {i}. Code: https://github.com/org/{name}.\n"
        for name, n in shares.items()
        for i in range(n)
    ]
    body = ("title,abstract\n" + "".join(rows)).encode()
    monkeypatch.setattr("dashboard.ui.components.PAGE_ROWS", 2)
    at = seeds_app("links", monkeypatch)
    at.sidebar.get("file_uploader")[0].set_value(("shared.csv", body, "text/csv")).run()
    assert_no_exception(at)
    assert any(e.label == "Repositories shared by several papers (3)" for e in at.main.expander)
    at.session_state[keys.LINKS_SHARED_OPEN] = True
    at.run()
    (shared,) = [d.value for d in at.main.dataframe if "titles" in d.value.columns]
    assert list(shared["repo"]) == ["org/alpha", "org/beta"] and list(shared["papers"]) == [7, 3]
    alpha, beta = shared["titles"]
    assert alpha.count(" | ") == 5 and alpha.endswith("| and 2 more") and "Beta" not in alpha
    assert beta == "Beta paper 0 | Beta paper 1 | Beta paper 2"
    assert any(c.value.startswith("Repositories 1–2 of 3") for c in at.main.caption)


def test_a_charts_popovers_send_nothing_until_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    # "Show the data" and "Save chart" are made only while open (components.lazy_popover): the Overview
    # sends no chart table and no PNG/SVG button with its charts; the browser test opens one.
    at = seeds_app("overview", monkeypatch)
    assert_no_exception(at)
    assert charts_by_title(at)
    assert not at.main.table
    labels = [b.proto.label for b in at.main.get("download_button")]
    assert not [label for label in labels if label.startswith(("PNG", "SVG"))]


def test_the_most_named_methods_are_a_table_and_every_name_a_grid_sent_once_opened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No data grid with the page: its module held the first chart back 0.2 s (bench/floor.py).
    at = seeds_app("overview", monkeypatch)
    assert_no_exception(at)
    assert not at.main.dataframe
    seeds = corpus.load([REPO / "seeds"]).papers
    meanings = extract.name_meanings(seeds["abstract_clean"], seeds["method_names"])
    expected = tables.method_names_in_view(
        tables.list_items(pd.Series(meanings, index=seeds.index, dtype=object), once_per_row=False),
        np.ones(len(seeds), dtype=bool),
        seeds["title"],
    )
    assert len(expected) > tables.METHOD_NAMES_SHOWN  # the seeds name more than the table shows
    rows = method_rows(at)
    assert [name for name, _, _ in rows] == list(expected["name"][: tables.METHOD_NAMES_SHOWN])
    assert [int(papers) for _, papers, _ in rows] == list(expected["papers"][: tables.METHOD_NAMES_SHOWN])
    assert [e.label for e in at.main.expander] == [f"All {len(expected):,} names"]
    at.session_state[keys.OVERVIEW_METHODS] = True  # opened
    at.run()
    assert_no_exception(at)
    (grid,) = [d.value for d in at.main.dataframe]
    assert list(grid["name"]) == list(expected["name"]) and list(grid["papers"]) == list(expected["papers"])


def test_a_headline_metric_is_as_wide_as_its_number_needs() -> None:
    # "1,000,000" was cut to "1,000…" in the Overview's 120 px metrics at a million papers.
    from dashboard.ui.components import METRIC_PX, metric_px

    assert metric_px("57") == metric_px("27,179") == METRIC_PX
    assert metric_px("1,000,000") >= 150 > metric_px("219,845") >= METRIC_PX

"""The Papers, Compare, Topics and Terms pages as a reviewer met them (issue 12), headless (AppTest).

Each test drives the page through its widgets by key and checks what a user would see; each failed
before the fix it names.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from support.apptest import full_titles

from dashboard import corpus
from dashboard.analytics import analysis
from dashboard.figures import charts
from dashboard.schema import OUTLIER_TOPIC
from dashboard.ui import components, data, keys

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


@pytest.fixture(scope="module")
def seeds() -> pd.DataFrame:
    return analysis.analyze(corpus.load([REPO / "seeds"]).papers).papers


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
    """Every caption of the page as plain text (corpus text in them is markdown-escaped)."""
    return " ".join(c.value for c in at.main.caption).replace("\\", "")


def widget(at: AppTest, kind: str, prefix: str) -> Any:
    """The one widget of this kind whose key starts with ``prefix`` (keys carry the model's identity)."""
    found = [w for w in getattr(at, kind) if str(w.key or "").startswith(prefix)]
    assert len(found) == 1, [w.key for w in getattr(at, kind)]
    return found[0]


# --------------------------------------------------------------------- Topics


def test_topics_without_matches_shows_only_the_empty_state() -> None:
    at = ok(app("topics", {"q": "zzzz-no-such-word"}))
    assert any("No papers match" in info.value for info in at.main.info)
    assert not at.main.get("plotly_chart")  # no empty chart,
    assert not at.main.dataframe  # no table of zeros


def test_topics_in_detail_resets_when_the_model_changes(seeds: pd.DataFrame) -> None:
    at = ok(app("topics"))
    assert not [w for w in at.selectbox if str(w.key or "").startswith(keys.TOPICS_FOCUS)]  # drawn when open
    at.session_state[f"{keys.TOPICS_DETAIL}.open"] = True
    ok(at.run())
    focus = widget(at, "selectbox", keys.TOPICS_FOCUS)
    # Topic 2 is in both models and the largest in neither: kept, it showed the old topic's label.
    other = 2
    assert focus.value != other
    focus.set_value(other).run()
    assert widget(at, "selectbox", keys.TOPICS_FOCUS).value == other
    at.selectbox(key=keys.N_TOPICS).set_value("3").run()
    ok(at)
    new = widget(at, "selectbox", keys.TOPICS_FOCUS)
    # The new model's largest topic, labelled by the new model: nothing kept from the old one. (Three
    # topics are a cut of the fitted topics' tree, not a refit.)
    fitted = analysis.analyze(corpus.load([REPO / "seeds"]).papers)
    refit = analysis.cut(fitted, analysis.topic_tree(fitted), 3)
    sizes = refit.papers["topic"][refit.papers["topic"] >= 0].value_counts()
    largest = int(sizes[sizes == sizes.max()].index.min())  # a tie goes to the lower number, as on the page
    assert largest != other
    assert new.value == largest
    assert len(new.options) == len(set(refit.topics["topic"]))


# --------------------------------------------------------------------- Terms


def test_terms_group_comparison_lists_topics_as_everywhere_else() -> None:
    # k=12: with ten topics or more, text order put 10 and 11 between 1 and 2.
    at = ok(app("terms", {"group": "topic", "k": "12"}))
    groups = list(at.main.dataframe[0].value["group"])
    numbers = [int(g.split(":")[0]) for g in groups if g.split(":")[0].lstrip("-").isdigit()]
    assert len(numbers) >= 10
    sidebar_topics = at.sidebar.multiselect(key=keys.TOPIC).options  # "3: label (12)", largest first
    order = [int(t.split(":")[0]) for t in sidebar_topics if t.split(":")[0].lstrip("-").isdigit()]
    assert numbers == [t for t in order if t in numbers]


def test_the_word_cloud_is_drawn_in_a_thread_and_shown_beside_the_chart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Drawn while the page counts the distinctive terms, then placed in the column beside the chart.
    threads: list[str] = []
    real = charts.word_cloud_png

    def recorded(*args: Any, **kwargs: Any) -> bytes:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(charts, "word_cloud_png", recorded)
    data._word_cloud.cache_clear()
    at = ok(app("terms", {"q": "diffusion"}))
    assert len(threads) == 1 and threads[0].startswith("page-steps"), threads
    clouds = [e for e in at.main if type(e).__name__ == "Image"]
    assert len(clouds) == 1 and "Word cloud of the" in clouds[0].proto.imgs[0].alt
    assert clouds[0].proto.imgs[0].url.endswith(".png")  # the PNG drawn, not a JPEG made of it
    # The stack of the chart and the cloud holds the cloud (not the end of the page).
    stack = next(b for b in at.main if getattr(b, "key", None) == keys.TERMS_STACK)
    assert [e for e in stack if type(e).__name__ == "Image"]
    # Nothing drawable (a term in a script the font lacks): the page says so instead of a picture.
    monkeypatch.setattr(charts, "word_cloud_png", lambda *a, **k: (_ for _ in ()).throw(ValueError("none")))
    data._word_cloud.cache_clear()
    at = ok(app("terms", {"q": "diffusion"}))
    assert "No term here can be drawn as a word cloud" in captions(at)


def test_keyword_in_context_keeps_the_words_next_to_the_term_and_sorts_by_them() -> None:
    at = ok(app("terms", {"term": "diffusion"}))
    lines = at.main.dataframe[-1].value
    assert len(lines) > 5
    # The whole Before window fits its column at 1280 px, so the word before the term is never cut.
    assert lines["left"].str.len().max() <= 37
    assert lines["right"].str.len().max() <= 37
    at.segmented_control(key=keys.TERMS_KWIC_ORDER).set_value("before").run()
    ok(at)
    assert at.query_params.get("kwic") in ("before", ["before"])
    left = at.main.dataframe[-1].value["left"]
    words = [(t.strip("… ").split() or [""])[-1].lower().strip(".,;:()[]{}\"'") for t in left]
    present = [w for w in words if w]
    assert present == sorted(present)
    assert words[: len(present)] == present  # lines with nothing before the term come last
    assert "sorted by the word before" in captions(at)


# --------------------------------------------------------------------- the sidebar's "Select all"


def test_selecting_every_topic_is_no_topic_filter(seeds: pd.DataFrame) -> None:
    at = ok(app("papers"))
    topics = at.sidebar.multiselect(key=keys.TOPIC)
    # Labels are "3: terms (12)", and "Outlier (1)" where the model set papers aside.
    every = [
        OUTLIER_TOPIC if label.startswith("Outlier") else int(label.split(":")[0]) for label in topics.options
    ]
    topics.set_value(every).run()
    ok(at)
    assert "topic" not in at.query_params
    assert at.sidebar.multiselect(key=keys.TOPIC).value == []
    assert len(at.main.dataframe[0].value) == len(seeds)


# --------------------------------------------------------------------- Papers


def test_the_papers_table_says_its_order_and_sorts_every_filtered_paper(seeds: pd.DataFrame) -> None:
    at = ok(app("papers"))
    assert "in corpus order" in captions(at)
    at.selectbox(key=keys.PAPERS_SORT).set_value("title").run()
    ok(at)
    assert at.query_params.get("sort") in ("title", ["title"])
    titles = full_titles(at.main.dataframe[0].value["title"], seeds["title"])
    assert titles == sorted(seeds["title"], key=lambda t: t.lower().strip())
    assert "by title, A to Z" in captions(at)
    at.segmented_control(key=keys.PAPERS_SORT_DESCENDING).set_value("desc").run()
    ok(at)
    assert at.query_params.get("sort") in ("-title", ["-title"])
    assert full_titles(at.main.dataframe[0].value["title"], seeds["title"]) == titles[::-1]  # distinct here


def test_a_title_longer_than_its_row_ends_in_an_ellipsis(
    seeds: pd.DataFrame,
) -> None:
    at = ok(app("papers"))
    shown = list(at.main.dataframe[0].value["title"])
    whole = list(seeds["title"][: len(shown)])
    cut = [(s, w) for s, w in zip(shown, whole, strict=True) if s != w]
    # the seeds' longest titles do not fit four lines of the title's column at 1024 px
    assert cut, "no title was long enough to be cut: the case checks nothing"
    for s, w in cut:
        assert s.endswith("…") and w.startswith(s[:-1].replace("- ", "-")), (s, w)
    assert full_titles(shown, seeds["title"]) == whole


def test_sorting_by_words_puts_the_longest_abstract_first(seeds: pd.DataFrame) -> None:
    at = ok(app("papers", {"sort": "-n_words"}))
    words = list(at.main.dataframe[0].value["n_words"])
    assert words == sorted(seeds["n_words"], reverse=True)


def test_a_long_table_grows_with_show_more_instead_of_pages(
    seeds: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(components, "SHOW_MORE_ROWS", 20)
    at = ok(app("papers"))
    assert not at.main.number_input  # no page number box
    assert full_titles(at.main.dataframe[0].value["title"], seeds["title"]) == list(seeds["title"][:20])
    more = [b for b in at.main.button if b.label.startswith("Show 20 more")]
    assert more and "(20 of 57 shown)" in more[0].label
    more[0].click().run()
    ok(at)
    assert full_titles(at.main.dataframe[0].value["title"], seeds["title"]) == list(seeds["title"][:40])
    assert "The first 40 of 57 papers" in captions(at)


def test_the_opened_paper_offers_compare_and_a_link(seeds: pd.DataFrame) -> None:
    paper = str(seeds["id"].iloc[3])
    at = ok(app("papers", {"paper": paper, "q": "diffusion"}))
    link = [c.value for c in at.main.code]
    assert link == [f"/papers?q=diffusion&paper={paper}"]  # no browser address under AppTest
    at.button(key=f"{keys.PAPERS_COMPARE}.{paper}").click().run()
    ok(at)
    assert at.query_params.get("cmp") in (paper, [paper])
    assert "paper" not in at.query_params
    assert at.main.text_input(key=keys.COMPARE_FIND)  # now on Compare


# --------------------------------------------------------------------- Compare


def test_compare_finds_any_paper_by_title_or_id_and_adds_it(seeds: pd.DataFrame) -> None:
    at = ok(app("compare"))
    last = seeds.iloc[-1]
    at.text_input(key=keys.COMPARE_FIND).set_value(str(last["title"]).upper()).run()
    add = at.button(key=f"{keys.COMPARE_ADD_PREFIX}.found.{last['id']}")
    assert str(last["title"])[:40] in add.label.replace("\\", "")
    add.click().run()
    ok(at)
    assert at.query_params.get("cmp") in (last["id"], [last["id"]])
    first = str(seeds["id"].iloc[0])
    at.text_input(key=keys.COMPARE_FIND).set_value(first).run()
    labels = [b.key for b in at.main.button if str(b.key).startswith(f"{keys.COMPARE_ADD_PREFIX}.found.")]
    assert labels[0] == f"{keys.COMPARE_ADD_PREFIX}.found.{first}"  # the exact id first
    at.button(key=labels[0]).click().run()
    ok(at)
    assert at.query_params.get("cmp") == [last["id"], first]
    assert at.main.get("plotly_chart")  # two papers: compared


def test_compare_with_four_papers_takes_no_more_and_says_so(seeds: pd.DataFrame) -> None:
    at = ok(app("compare", {"cmp": list(seeds["id"][:6])}))
    assert at.text_input(key=keys.COMPARE_FIND).disabled
    assert "4 papers picked" in captions(at)
    at.button(key=f"{keys.COMPARE_REMOVE_PREFIX}.{seeds['id'].iloc[1]}").click().run()
    ok(at)
    assert at.query_params.get("cmp") == [seeds["id"].iloc[i] for i in (0, 2, 3)]
    assert not at.text_input(key=keys.COMPARE_FIND).disabled


@pytest.mark.parametrize(
    "page", ["overview", "topics", "terms", "links", "compare"]
)  # the pages with charts on the seeds
def test_chart_titles_show_as_text_not_as_markup(seeds: pd.DataFrame, page: str) -> None:
    # Titles are escaped (they may hold corpus text): markup written into one shows as "<br><sup>".
    query = {"cmp": list(seeds["id"][:3])} if page == "compare" else None
    at = ok(app(page, query))
    charts_seen = at.main.get("plotly_chart")
    assert charts_seen
    for chart in charts_seen:
        title = json.loads(chart.proto.spec).get("layout", {}).get("title", {})
        shown = f"{title.get('text', '')} {title.get('subtitle', {}).get('text', '')}"
        assert "&lt;" not in shown and "&gt;" not in shown, shown


def test_keyword_in_context_says_once_that_it_shows_the_first_lines_in_corpus_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 60 abstracts with ten "graph"s each: more than the 500 lines shown
    words = ["kernel", "tensor", "sparse", "spectral", "random", "latent"]
    abstracts = [f"Paper {n} about {words[n % 6]} graph " + "graph " * 9 + "methods." for n in range(60)]
    corpus = tmp_path / "many.txt"
    corpus.write_text("Test Papers\n\n" + "\n\n".join(abstracts) + "\n", encoding="utf-8")
    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(corpus))
    at = ok(app("terms", {"term": "graph"}))
    first = 'The first 500 of more than 500 occurrences of "graph" in the filtered papers'
    assert f"{first}, in corpus order" in captions(at)
    at.segmented_control(key=keys.TERMS_KWIC_ORDER).set_value("after").run()
    assert f"{first} (the first in corpus order), sorted by the word after" in captions(ok(at))


@pytest.mark.parametrize(
    ("page", "query", "column"),
    [
        ("topics", {}, "top terms"),
        ("terms", {"q": "model"}, "term"),
        ("overview", {}, "title"),  # the method names and the paper naming each
        ("links", {}, "url"),
    ],
)
def test_tables_of_titles_and_term_lists_wrap_in_rows_four_lines_tall(
    page: str, query: dict[str, str], column: str
) -> None:
    # In half a page one line of a topic's top terms showed two or three, and a title a few words.
    at = ok(app(page, query))
    if page == "overview":  # the method names' grid is sent once its expander is opened
        at.session_state[keys.OVERVIEW_METHODS] = True
        at = ok(at.run())
    if page == "links":  # so is the table of every link
        at.session_state[keys.LINKS_ALL_OPEN] = True
        at = ok(at.run())
    tables = [d for d in at.main.dataframe if column in d.value.columns]
    assert tables, [list(d.value.columns) for d in at.main.dataframe]
    assert all(grid.proto.row_height == components.WRAPPED_ROW_PX for grid in tables)


def test_compare_puts_code_datasets_methods_authors_venue_and_year_side_by_side(seeds: pd.DataFrame) -> None:
    # Issue 49: the compared papers' facts side by side, one column per paper.
    ids = list(seeds["id"][:2])
    at = ok(app("compare", {"cmp": ids}))
    tables = [t.value for t in at.main.table]
    table = next(t for t in tables if "Code" in t.index)
    for row in ("Venue", "Year", "Authors", "Code", "Datasets", "Method names"):
        assert row in table.index, row
    assert [c[:2] for c in table.columns] == ["A.", "B."]
    first = seeds.iloc[0]
    assert table.loc["Venue"].iloc[0] == (first["venue"] or "—")
    authors = list(first["authors"])
    if authors:
        assert table.loc["Authors"].iloc[0].startswith(str(authors[0]))
    assert table.loc["Code"].iloc[0] == str(first["code_status"]).replace("_", " ")
    assert "papers.jsonl" not in " ".join(e.value for e in at.main.markdown)  # no raw file names


def test_compare_lists_no_boilerplate_among_the_distinctive_terms(seeds: pd.DataFrame) -> None:
    from dashboard.analytics.similarity import COMPARE_STOP_WORDS

    at = ok(app("compare", {"cmp": list(seeds["id"][:3])}))
    html = " ".join(str(getattr(h, "proto", h)) for h in at.main.get("html"))
    assert "Distinctive:" in html
    chips = html.split("Distinctive:")[1:]
    for chunk in chips:
        for word in ("alleviate", "certain", "share "):
            assert f">{word}" not in chunk.split("</div>")[0]
    assert {"alleviate", "certain", "share"} <= COMPARE_STOP_WORDS


def test_the_word_cloud_shows_distinctive_words_by_default_and_says_so() -> None:
    # Issue 49: by default the cloud shows what sets the filtered papers apart; frequency is a setting
    # (URL key "cloud"), and the page says which the cloud shows.
    at = ok(app("terms", {"q": "diffusion"}))
    assert "set the filtered papers apart from the rest of the corpus" in captions(at)
    assert at.segmented_control(key=keys.TERMS_CLOUD).value == "distinctive"
    alt = next(e for e in at.main if type(e).__name__ == "Image").proto.imgs[0].alt
    assert "most distinctive" in alt
    at = ok(app("terms", {"q": "diffusion", "cloud": "frequent"}))
    assert "most frequent words of the filtered papers" in captions(at)
    assert "most frequent" in next(e for e in at.main if type(e).__name__ == "Image").proto.imgs[0].alt
    at = ok(app("terms"))  # no filter: each topic against the others, said on the page
    assert "each topic's" in captions(at) and "against the other topics" in captions(at)


def test_keyword_in_context_fits_every_cell_to_its_column_and_marks_each_cut() -> None:
    # Issue 49: on the seeds one Before text spilled into the Paper column (wide letters in 36
    # characters) and After texts were clipped at the cell's edge. Every cell now fits its column
    # at its narrowest (1024 px), and a text that was cut says so with an ellipsis.
    from dashboard.analytics import terms as term_counts
    from dashboard.ui import components, tables

    columns = {"title": 190, "left": 270, "match": 90, "right": 270}  # the page's KWIC_COLUMNS
    room = tables.fit_widths(columns, components.PAGE_WIDTH_PX)
    for term in ("diffusion", "model", "graph"):
        at = ok(app("terms", {"term": term}))
        lines = at.main.dataframe[-1].value
        assert len(lines) > 0, term
        for column in ("title", "left", "right"):
            widths = lines[column].map(term_counts.text_width_px)
            assert (widths <= room[column] - 16).all(), (term, column, lines[column][widths.idxmax()])
        assert lines["left"].str.startswith("…").any() and lines["right"].str.endswith("…").any()

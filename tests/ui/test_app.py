"""The app, headless (AppTest): every page on the seeds, each filter, the URL, downloads, uploads.

Expected answers come from the core modules directly (load, analyse, `Filters.mask`), so these tests
check that the pages show and export exactly what the filters select.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from support.apptest import APP, COUNT_LINE, REPO, app, assert_no_exception, count_line, full_titles  # noqa: F401

from dashboard import corpus, export
from dashboard.analytics import analysis
from dashboard.filters import Filters
from dashboard.ui import components, keys

PAGES = ("overview", "papers", "topics", "terms", "trends", "links", "compare")


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # The app reads its corpus from the command line or this variable; tests always use the seeds.
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


@pytest.fixture(scope="module")
def seeds() -> pd.DataFrame:
    """The seed papers as the app sees them: loaded and analysed with the default settings."""
    return analysis.analyze(corpus.load([REPO / "seeds"]).papers).papers


def table_titles(at: AppTest, titles: Iterable[str] | None = None) -> list[str]:
    """The Papers table's titles, each the whole title among ``titles`` where the table cut it."""
    shown = list(at.main.dataframe[0].value["title"])
    return shown if titles is None else full_titles(shown, titles)


def expected_titles(papers: pd.DataFrame, filters: Filters) -> list[str]:
    return list(papers.loc[filters.mask(papers).to_numpy(), "title"])


# --------------------------------------------------------------------- every page


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_the_seeds(page: str, seeds: pd.DataFrame) -> None:
    at = app(page)
    assert_no_exception(at)
    assert count_line(at) == (len(seeds), len(seeds))
    assert at.title[0].value  # every page says what it is
    # Every table shows a missing value as a dash, never as Streamlit's word "None".
    assert all(frame.proto.placeholder == components.MISSING for frame in at.dataframe)
    assert page != "papers" or len(at.dataframe) > 0  # Links & code's tables are drawn once opened


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_with_filters_that_select_nothing(page: str) -> None:
    at = app(page, {"q": "zzzz-no-such-word"})
    assert_no_exception(at)
    assert count_line(at)[0] == 0
    # The page stops early; the filters to loosen it are in the sidebar all the same.
    assert "Topics" in [widget.label for widget in at.sidebar.multiselect]
    assert "More filters" in [expander.label for expander in at.sidebar.expander]
    if page != "compare":
        assert any("No papers match" in info.value for info in at.main.info)
        assert at.main.button(key=getattr(keys, f"{page.upper()}_CLEAR")).label == "Clear filters"


def test_compare_shows_two_papers_side_by_side(seeds: pd.DataFrame) -> None:
    ids = list(seeds["id"][:3])
    at = app("compare", {"cmp": ids})
    assert_no_exception(at)
    html = " ".join(element.proto.body for element in at.get("html"))
    assert "A. " in html and "C. " in html
    assert at.main.get("plotly_chart"), "pairwise similarity heatmap"


def test_papers_page_opens_the_paper_in_the_url(seeds: pd.DataFrame) -> None:
    paper = seeds.iloc[5]
    at = app("papers", {"paper": paper["id"], "q": "the"})
    assert_no_exception(at)
    html = " ".join(element.proto.body for element in at.get("html"))
    assert "pd-abstract" in html and "<mark>" in html


# --------------------------------------------------------------------- filters


def _middle_half(n_words: pd.Series) -> tuple[int, int]:
    return int(n_words.quantile(0.25)), int(n_words.quantile(0.75))


def _most_common(values: pd.Series) -> Any:
    exploded = values.explode().dropna()
    return exploded.value_counts().index[0]


FILTER_CASES = ["q", "topic", "area", "code", "source", "dataset", "link", "words"]


@pytest.mark.parametrize("case", FILTER_CASES)
def test_each_filter_changes_the_table_as_expected(case: str, seeds: pd.DataFrame) -> None:
    at = app("papers")
    if case == "q":
        at.text_input(key=keys.SEARCH).set_value('diffusion -"video"')
        filters = Filters(q='diffusion -"video"')
    elif case == "topic":
        topic = int(seeds["topic"].value_counts().index[0])
        at.multiselect(key=keys.TOPIC).set_value([topic])
        filters = Filters(topic=(topic,))
    elif case == "area":
        area = _most_common(seeds["areas"])
        at.multiselect(key=keys.AREA).set_value([area])
        filters = Filters(area=(area,))
    elif case == "code":
        at.multiselect(key=keys.CODE).set_value(["released"])
        filters = Filters(code=("released",))
    elif case == "source":
        source = seeds["source"].iloc[-1]
        at.multiselect(key=keys.SOURCE).set_value([source])
        filters = Filters(source=(source,))
    elif case == "dataset":
        dataset = _most_common(seeds["datasets"])
        at.multiselect(key=keys.DATASET).set_value([dataset])
        filters = Filters(dataset=(dataset,))
    elif case == "link":
        at.multiselect(key=keys.LINK).set_value(["code"])
        filters = Filters(link=("code",))
    else:
        slider = at.slider(key=keys.WORDS)  # its ends are the corpus's (kept per corpus: data.word_bounds)
        assert (slider.min, slider.max) == (int(seeds["n_words"].min()), int(seeds["n_words"].max()))
        slider.set_range(*_middle_half(seeds["n_words"]))
        filters = Filters(words=_middle_half(seeds["n_words"]))
    at.run()
    assert_no_exception(at)
    expected = expected_titles(seeds, filters)
    assert 0 < len(expected) < len(seeds), "the case must select some papers but not all"
    if case == "q":  # a search lists its hits by relevance (tests/search/test_search.py checks the order)
        assert sorted(table_titles(at, seeds["title"])) == sorted(expected)
    else:
        assert table_titles(at, seeds["title"]) == expected
    assert count_line(at) == (len(expected), len(seeds))
    # The widget wrote the filter to the URL.
    assert Filters.from_query(at.query_params)[0] == filters


VENUES_CSV = (
    b"title,abstract,venue,year\n"
    b"A,Graph networks for molecules.,ICML,2024\n"
    b"B,Diffusion models for video.,ICLR,2025\n"
    b"C,Bandits with regret bounds.,ICML,2025\n"
    b"D,Message passing on graphs.,NeurIPS,2023\n"
)


def test_venue_and_year_filters_on_a_corpus_with_several() -> None:
    at = app("papers")
    at.sidebar.get("file_uploader")[0].set_value(("venues.csv", VENUES_CSV, "text/csv"))
    at.run()
    assert count_line(at) == (4, 4)
    # Venue and year share one column of the table, which leaves room for the rest at 1280 px.
    shown = at.main.dataframe[0].value
    assert "year" not in shown.columns
    assert list(shown["venue"]) == ["ICML 2024", "ICLR 2025", "ICML 2025", "NeurIPS 2023"]
    at.multiselect(key=keys.VENUE).set_value(["ICML"]).run()
    assert table_titles(at) == ["A", "C"]
    at.multiselect(key=keys.YEAR).set_value([2025]).run()
    assert_no_exception(at)
    assert table_titles(at) == ["C"]
    assert count_line(at) == (1, 4)
    assert Filters.from_query(at.query_params)[0] == Filters(venue=("ICML",), year=(2025,))


def test_seeding_the_url_restores_the_filters(seeds: pd.DataFrame) -> None:
    area = _most_common(seeds["areas"])
    query = {"q": "model", "code": ["released", "none"], "area": area}
    at = app("papers", query)
    assert_no_exception(at)
    filters = Filters(q="model", code=("none", "released"), area=(area,))
    assert at.text_input(key=keys.SEARCH).value == "model"
    assert sorted(at.multiselect(key=keys.CODE).value) == ["none", "released"]
    assert at.multiselect(key=keys.AREA).value == [area]
    assert sorted(table_titles(at, seeds["title"])) == sorted(expected_titles(seeds, filters))  # by relevance


def test_bad_url_values_fall_back_with_a_notice(seeds: pd.DataFrame) -> None:
    at = app("papers", {"year": "soon", "code": "open-ish", "words": "lots", "topic": "999", "k": "1"})
    assert_no_exception(at)
    notices = " ".join(caption.value for caption in at.sidebar.caption)
    for fragment in ("soon", "open\\-ish", "lots", "999"):
        assert fragment in notices
    assert count_line(at) == (len(seeds), len(seeds))


def test_clear_filters_empties_the_url_filters(seeds: pd.DataFrame) -> None:
    at = app("papers", {"q": "model", "code": "released", "ngram": "2"})
    assert count_line(at)[0] < len(seeds)
    at.sidebar.button(key=keys.CLEAR_FILTERS).click().run()
    assert_no_exception(at)
    assert count_line(at) == (len(seeds), len(seeds))
    assert "q" not in at.query_params and "code" not in at.query_params
    assert at.query_params.get("ngram") in ("2", ["2"]), "page settings survive Clear filters"


def test_changing_the_number_of_topics_cuts_the_tree_and_drops_the_topic_filter(seeds: pd.DataFrame) -> None:
    at = app("topics", {"topic": str(int(seeds["topic"].iloc[0]))})
    at.selectbox(key=keys.N_TOPICS).set_value("3").run()
    assert_no_exception(at)
    assert at.query_params.get("k") in ("3", ["3"])
    assert "topic" not in at.query_params
    assert count_line(at) == (len(seeds), len(seeds))


# --------------------------------------------------------------------- downloads


@pytest.fixture
def exported(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, pd.DataFrame, bytes]]]:
    """Every file the app builds for a download in this test: (format, table, bytes)."""
    calls: list[tuple[str, pd.DataFrame, bytes]] = []
    real = export.to_bytes

    def spy(df: pd.DataFrame, fmt: str, **kwargs: Any) -> bytes:
        data = real(df, fmt, **kwargs)
        calls.append((fmt, df, data))
        return data

    monkeypatch.setattr(export, "to_bytes", spy)
    yield calls


def test_the_csv_download_holds_exactly_the_filtered_rows(
    seeds: pd.DataFrame, exported: list[tuple[str, pd.DataFrame, bytes]]
) -> None:
    at = app("papers", {"q": "model", "code": "none"})
    assert_no_exception(at)
    filters = Filters(q="model", code=("none",))
    expected_ids = list(seeds.loc[filters.mask(seeds).to_numpy(), "id"])
    csv = [data for fmt, _, data in exported if fmt == "csv"][-1]
    downloaded = pd.read_csv(io.BytesIO(csv), dtype=str, keep_default_na=False)
    # The same papers, in the table's order (a search lists them by relevance).
    assert sorted(downloaded["id"]) == sorted(expected_ids)
    by_id = dict(zip(seeds["id"], seeds["title"], strict=True))
    assert [by_id[i] for i in downloaded["id"]] == table_titles(at, seeds["title"])
    assert len(downloaded) == count_line(at)[0]
    # (The file name is checked in the browser test: AppTest does not expose it.)
    assert at.main.get("download_button")[0].proto.label == f"Download {len(expected_ids)} papers as CSV"


@pytest.mark.parametrize(("label", "fmt"), list(components.DOWNLOAD_FORMATS.items()))
def test_every_download_format_exports_the_filtered_rows(
    label: str, fmt: str, seeds: pd.DataFrame, exported: list[tuple[str, pd.DataFrame, bytes]]
) -> None:
    at = app("papers", {"code": "released"})
    at.segmented_control(key=keys.PAPERS_FORMAT).set_value(label).run()
    assert_no_exception(at)
    fmt_seen, table, data = exported[-1]
    assert fmt_seen == fmt
    assert list(table["id"]) == list(seeds.loc[seeds["code_status"] == "released", "id"])
    assert data
    if fmt == "json":
        assert [row["id"] for row in json.loads(data)] == list(table["id"])


# --------------------------------------------------------------------- uploads


GOOD_CSV = (
    b"title,abstract,code\n"
    b"Paper one,We study graphs and message passing on molecules.,https://github.com/a/one\n"
    b'Paper two,"A diffusion model, with guidance, for video.",\n'
)


def test_uploading_a_valid_and_a_broken_file() -> None:
    at = app("papers")
    uploader = at.sidebar.get("file_uploader")[0]
    uploader.set_value(
        [("good.csv", GOOD_CSV, "text/csv"), ("broken.json", b"\x00\x01{not json", "application/json")]
    )
    at.run()
    assert_no_exception(at)
    assert count_line(at) == (2, 2)
    assert table_titles(at) == ["Paper one", "Paper two"]
    summary = " ".join(caption.value for caption in at.sidebar.caption)
    assert "1 skipped" in summary
    # The report opens by itself and gives the whole reason, naming the file.
    reasons = [c.value.replace("\\", "") for c in at.sidebar.caption]
    assert any(r.startswith("**broken.json · skipped**: binary file") for r in reasons), reasons


def test_uploading_only_broken_files_says_why_and_offers_the_bundled_corpus() -> None:
    at = app("overview")
    at.sidebar.get("file_uploader")[0].set_value(("empty.txt", b"", "text/plain"))
    at.run()
    assert_no_exception(at)
    assert any("No papers could be read" in error.value for error in at.main.error)
    assert any(button.label == "Back to the bundled corpus" for button in at.sidebar.button)


class _Upload:
    def __init__(self, name: str, data: bytes) -> None:
        self.name, self._data = name, data

    def getvalue(self) -> bytes:
        return self._data


def test_read_uploads_keeps_names_and_bytes_in_order() -> None:
    from dashboard.ui.context import read_uploads

    files = [_Upload("b.csv", b"x"), _Upload("a.txt", b"")]
    assert read_uploads(files) == [("b.csv", b"x"), ("a.txt", b"")]
    assert read_uploads(None) == []


# --------------------------------------------------------------------- untrusted text


HOSTILE_ABSTRACTS = [
    '<script>alert("x")</script> We propose ScriptNet for graphs. <img src=x onerror="alert(1)">',
    "We study :red[red text] and :material/home: icons with $x^2$ math and [a link](javascript:alert(1)).",
    "A **bold** _claim_ with &lt;b&gt; entities and a data link [d](data:text/html,<b>x</b>) on graphs.",
]


def test_hostile_abstracts_are_shown_as_text() -> None:
    body = "Hostile Conference 2026\n\n" + "\n\n".join(HOSTILE_ABSTRACTS) + "\n"
    at = app("papers")
    at.sidebar.get("file_uploader")[0].set_value(("hostile.txt", body.encode(), "text/plain"))
    at.run()
    assert len(at.main.dataframe[0].value) == 3
    shown_as_text = False
    for page in PAGES:
        at.switch_page(f"src/dashboard/app_pages/{page}.py")
        for paper_id in (None, "hostile-1", "hostile-2"):
            if paper_id:
                at.query_params["paper"] = paper_id
                at.query_params["cmp"] = ["hostile-1", "hostile-2", "hostile-3"]
            at.run()
            assert_no_exception(at)
            for element in at.get("html"):
                html = element.proto.body
                assert not element.proto.unsafe_allow_javascript  # the app sends no script of its own
                assert "<script" not in html and "<img" not in html
                assert all(
                    href.startswith(("http://", "https://")) for href in re.findall(r'href="([^"]*)"', html)
                )
                shown_as_text = shown_as_text or "&lt;script&gt;alert" in html
            texts = [e.value for e in [*at.markdown, *at.caption]] + [b.label for b in at.button]
            for text in texts:
                # Markdown-rendered text must carry these only backslash-escaped.
                assert not re.search(r"(?<!\\)(<script|:red|:material|\$x)", str(text)), text
    assert shown_as_text, "the hostile abstract was shown (escaped) somewhere"


# --------------------------------------------------------------------- where the corpus comes from


@pytest.mark.parametrize(
    ("argv", "environ", "expected"),
    [
        ([], {}, ([str(REPO / "seeds")], "bundled seeds")),
        (["--corpus", "a.csv"], {}, (["a.csv"], "command line")),
        (
            ["--corpus", "a.csv", "dir/"],
            {"PAPER_DASHBOARD_CORPUS": "x.json"},
            (["a.csv", "dir/"], "command line"),
        ),
        ([], {"PAPER_DASHBOARD_CORPUS": "x.json:y/"}, (["x.json", "y/"], "PAPER_DASHBOARD_CORPUS")),
        ([], {"PAPER_DASHBOARD_CORPUS": " "}, ([str(REPO / "seeds")], "bundled seeds")),
        (["--corpus"], {}, ([str(REPO / "seeds")], "bundled seeds")),
        (["--other", "1"], {}, ([str(REPO / "seeds")], "bundled seeds")),
    ],
)
def test_corpus_paths_come_from_the_command_line_or_the_environment(
    argv: list[str], environ: dict[str, str], expected: tuple[list[str], str]
) -> None:
    from dashboard.ui.data import corpus_paths

    assert corpus_paths(argv, environ) == expected


def test_the_app_opens_a_corpus_given_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "venues.csv").write_bytes(VENUES_CSV)
    monkeypatch.setattr("sys.argv", ["app.py", "--corpus", str(tmp_path / "venues.csv")])
    at = app("overview")
    assert_no_exception(at)
    assert count_line(at) == (4, 4)


def test_the_app_opens_a_corpus_named_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "venues.csv").write_bytes(VENUES_CSV)
    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(tmp_path))
    at = app("links")
    assert_no_exception(at)
    assert count_line(at) == (4, 4)


def test_a_corpus_path_in_the_url_is_ignored(tmp_path: Path, seeds: pd.DataFrame) -> None:
    (tmp_path / "venues.csv").write_bytes(VENUES_CSV)
    at = app("overview", {"corpus": str(tmp_path), "path": str(tmp_path)})
    assert count_line(at) == (len(seeds), len(seeds))


def test_picked_values_come_from_customdata_or_the_lookup() -> None:
    points = [
        {"curve_number": 1, "point_index": 0, "customdata": "p9"},
        {"curve_number": 0, "point_index": 1},
        {"curve_number": 1, "point_index": 1, "customdata": ["p8"]},
        {"curve_number": 5, "point_index": 0},
        {"curve_number": 1, "point_index": 0, "customdata": "p9"},
    ]
    assert components.picked(points, [["a", "b"], ["p9", "p8"]]) == ["p9", "b", "p8"]
    assert components.picked(points[1:2], [[]]) == []


def test_terms_page_settings_live_in_the_url() -> None:
    at = app("terms", {"ngram": "2", "stop": "on", "group": "source", "term": "diffusion", "q": "model"})
    assert_no_exception(at)
    assert at.segmented_control(key=keys.TERMS_NGRAM).value == "2"
    assert at.toggle(key=keys.TERMS_STOP_WORDS).value is True
    assert at.selectbox(key=keys.TERMS_GROUP_BY).value == "source"
    kwic = at.main.dataframe[-1].value
    assert len(kwic) > 0 and kwic["match"].str.lower().str.startswith("diffusion").all()
    at.segmented_control(key=keys.TERMS_NGRAM).set_value("3").run()
    assert at.query_params.get("ngram") in ("3", ["3"])


def test_terms_page_ignores_bad_settings() -> None:
    at = app("terms", {"ngram": "7", "stop": "maybe", "group": "../../etc"})
    assert_no_exception(at)
    assert at.segmented_control(key=keys.TERMS_NGRAM).value == "1"
    assert at.toggle(key=keys.TERMS_STOP_WORDS).value is False


def test_more_topics_than_the_corpus_supports_falls_back_to_auto(seeds: pd.DataFrame) -> None:
    at = app("topics", {"k": "40", "topic": "3"})
    assert_no_exception(at)
    assert any("more than this corpus supports" in caption.value for caption in at.sidebar.caption)
    assert at.selectbox(key=keys.N_TOPICS).value == "auto"
    assert count_line(at) == (len(seeds), len(seeds))
    assert at.selectbox(key=keys.N_TOPICS).options[-1] == str(len(seeds) // 2)


def test_the_title_takes_the_width_of_the_columns_left_out() -> None:
    every = (*components.PAPER_COLUMNS, "venue")
    widths = {c: components.PAPER_COLUMN_CONFIG[c]["width"] for c in every}
    others = {c: w for c, w in widths.items() if c != "title"}
    # Every column: more than 1024 px holds, so the title keeps its least width.
    assert components.paper_column_config(every)["title"]["width"] == components.TITLE_WIDTH
    # The seeds' columns (one venue, no authors): the title fills the grid at 1024 px.
    seeds = [c for c in every if c not in ("venue", "authors")]
    grown = components.paper_column_config(seeds)["title"]["width"]
    assert grown + sum(w for c, w in others.items() if c in seeds) == components.GRID_WIDTH
    assert grown >= components.TITLE_WIDTH
    # With every column the grid still fits a 1280 px window (820 px, 36 of them for ticks).
    assert components.TITLE_WIDTH + sum(others.values()) + 36 <= 820


@pytest.mark.parametrize(
    ("shown", "given_up"),
    [
        # the seeds: every column fits beside the title
        (("title", "method_names", "topic", "areas", "code_url", "n_words"), ()),
        # authors and venues too (the 27k corpus): the words and the areas go, the code link stays
        ((*components.PAPER_COLUMNS, "venue"), ("n_words", "areas")),
        # a search there: its score and matched sentence take the room of the least telling columns
        (
            ("title", "score", "match", "authors", "topic", "code_url", "n_words", "venue"),
            ("n_words", "venue"),
        ),
    ],
)
def test_a_paper_table_gives_up_its_least_telling_columns_to_fit_1024_px(
    shown: tuple[str, ...], given_up: tuple[str, ...]
) -> None:
    kept = components.fitted_columns(shown)
    assert kept == [c for c in shown if c not in given_up]
    others = sum(components.PAPER_COLUMN_CONFIG[c]["width"] for c in kept if c != "title")
    assert others <= components.GRID_WIDTH - components.TITLE_WIDTH  # a 1024 px window holds it
    if given_up:  # and nothing was given up that fitted
        back = [*kept, given_up[-1]]
        assert sum(components.PAPER_COLUMN_CONFIG[c]["width"] for c in back if c != "title") > (
            components.GRID_WIDTH - components.TITLE_WIDTH
        )


def test_the_code_links_text_fits_its_column_uncut() -> None:
    # The grid clips a link's text with no sign: "owner/repo" showed as "Seunghyeok(" at 60 px.
    from dashboard.ui import tables

    config = components.PAPER_COLUMN_CONFIG["code_url"]
    assert config["type_config"]["display_text"] == components.CODE_LINK_TEXT
    assert tables.text_px(components.CODE_LINK_TEXT) + tables.CELL_PADDING_PX <= config["width"]


def test_a_loaded_corpus_is_kept_out_of_the_garbage_collectors_full_passes() -> None:
    import gc

    import streamlit as st

    st.cache_resource.clear()
    gc.unfreeze()
    try:
        assert_no_exception(app("overview"))
        assert gc.get_freeze_count() > 0  # the corpus and its analysis were frozen once loaded
    finally:
        gc.unfreeze()


def test_terms_each_topic_against_the_others_is_named_like_the_topic_list(seeds: pd.DataFrame) -> None:
    at = app("terms", {"q": "model"})
    assert_no_exception(at)
    (table,) = [d.value for d in at.main.dataframe if "group" in d.value.columns]
    labels = dict(zip(seeds["topic"], seeds["topic_label"], strict=False))
    names = {f"{t}: {label}" if t >= 0 else label for t, label in labels.items()}
    assert len(table) >= 2 and set(table["group"]) <= names  # "3: graph · gnn", not "3"


def test_a_long_load_report_lists_ten_problems_and_makes_the_full_table_when_asked() -> None:
    # 12 records without an abstract: the sidebar lists the first 10 as text; the table of all 12 is
    # made only while its popover is open (components.lazy_popover), not sent with every run.
    lines = [json.dumps({"title": f"Paper {i}", "abstract": f"We study graphs, case {i}."}) for i in range(3)]
    lines += [json.dumps({"title": f"Empty {i}"}) for i in range(12)]
    at = app("overview")
    body = "\n".join(lines).encode()
    at.sidebar.get("file_uploader")[0].set_value(("gaps.jsonl", body, "application/json"))
    at.run()
    assert_no_exception(at)
    reasons = [c.value for c in at.sidebar.caption if "· skipped**" in c.value or "· warning**" in c.value]
    assert len(reasons) == 10
    assert any(c.value.startswith("12 problems") for c in at.sidebar.caption)
    assert not at.sidebar.dataframe

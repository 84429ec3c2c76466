"""The Trends page headless (AppTest): the note on the one-year seeds, every chart on a multi-year corpus,
its settings in the URL, and the CLI behind it."""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from support.synthetic import trend_papers
from support.venue_mix import JOINS_LATER, venue_mix_papers

from dashboard import export
from dashboard.analytics import trends
from dashboard.cli import common as cli_common
from dashboard.cli import main as cli
from dashboard.ui import data, keys

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
PAGE = "src/dashboard/app_pages/trends.py"


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A multi-year, two-venue corpus with planted trends, as a file the app reads (no topic column)."""
    path = tmp_path_factory.mktemp("trends") / "trends.jsonl"
    trend_papers(per_venue_year=30).drop(columns=["topic"]).to_json(path, orient="records", lines=True)
    return path


def trends_page(
    monkeypatch: pytest.MonkeyPatch, corpus: Path | None, query: dict[str, Any] | None = None
) -> AppTest:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py", *(["--corpus", str(corpus)] if corpus else [])])
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page(PAGE)
    return at.run()


def test_the_seeds_get_a_note_of_what_the_page_needs_not_empty_charts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = trends_page(monkeypatch, None)
    assert not at.exception, [e.value for e in at.exception]
    notes = [info.value for info in at.main.info]
    assert any("one year" in n and "one venue" in n and "several years or venues" in n for n in notes)
    # the note is escaped whole (it names the corpus's venue): no markdown of ours may show as symbols
    assert not any("`" in n for n in notes), notes
    assert not at.get("plotly_chart")


def test_every_chart_on_a_multi_year_corpus(monkeypatch: pytest.MonkeyPatch, corpus_file: Path) -> None:
    at = trends_page(monkeypatch, corpus_file)
    assert not at.exception, [e.value for e in at.exception]
    headers = [s.value for s in at.header]
    assert headers[:2] == ["Topic share over time", "Rising and falling terms, 2020–2021 → 2023–2024"]
    # Below the terms, each section is an expander that says what it holds, drawn once opened.
    labels = [e.label for e in at.main.expander]
    assert any(label.startswith("Topic by venue (2 venues)") for label in labels), labels
    assert "Code release over time (2020–2024)" in labels
    assert len(at.get("plotly_chart")) == 3  # topic lines, terms, topics
    for key in (keys.TRENDS_VENUES_OPEN, keys.TRENDS_CODE_OPEN, keys.TRENDS_PAPERS_OPEN):
        at.session_state[key] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("plotly_chart")) >= 5  # topic lines, terms, topics, venue heatmap, code release
    assert len(at.get("download_button")) >= 6  # every chart's data
    assert at.segmented_control(key=keys.TRENDS_BY).value == "year"


def test_the_sections_below_the_terms_are_drawn_only_once_opened(
    monkeypatch: pytest.MonkeyPatch, corpus_file: Path
) -> None:
    """Topic by venue, code release and the list of papers are absent on arrival, each present once its
    expander is opened (and the others stay undrawn); the button to the Papers page is always there."""
    at = trends_page(monkeypatch, corpus_file)
    assert not at.exception, [e.value for e in at.exception]

    def titles() -> str:
        return " ".join(str(c.proto.spec) for c in at.get("plotly_chart"))

    assert "Topic share per venue" not in titles() and "Papers with released code" not in titles()
    assert not at.main.dataframe or all("title" not in d.value.columns for d in at.main.dataframe)
    assert at.button(key=keys.TRENDS_OPEN_PAPERS)
    at.session_state[keys.TRENDS_VENUES_OPEN] = True
    at.run()
    assert "Topic share per venue" in titles() and "Papers with released code" not in titles()
    assert any("label" in d.value.columns for d in at.main.dataframe)  # each venue's distinctive topics
    at.session_state[keys.TRENDS_CODE_OPEN] = True
    at.session_state[keys.TRENDS_PAPERS_OPEN] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Papers with released code" in titles()
    listed = next(d.value for d in at.main.dataframe if "title" in d.value.columns)
    assert len(listed) == min(len(trend_papers(per_venue_year=30)), 200)
    assert any(e.label.startswith("List the first 200 of these") for e in at.main.expander)


def test_the_settings_come_from_the_url(monkeypatch: pytest.MonkeyPatch, corpus_file: Path) -> None:
    query = {"by": "venue,year", "from": "2021", "to": "2024", "scale": "papers", "tngram": "2"}
    at = trends_page(monkeypatch, corpus_file, query)
    assert not at.exception, [e.value for e in at.exception]
    assert at.segmented_control(key=keys.TRENDS_BY).value == "venue,year"
    assert at.segmented_control(key=keys.TRENDS_SCALE).value == "papers"
    assert at.segmented_control(key=keys.TRENDS_NGRAM).value == "2"
    assert at.selectbox(key=keys.TRENDS_FROM).value == "2021"
    assert "Rising and falling terms, 2021 → 2024" in [s.value for s in at.header]
    # A changed setting goes back to the URL.
    at.segmented_control(key=keys.TRENDS_BY).set_value("year").run()
    assert "by" not in at.query_params
    assert at.query_params["from"] in ("2021", ["2021"])


def test_one_year_picked_compares_it_with_the_other_end_of_the_span(
    monkeypatch: pytest.MonkeyPatch, corpus_file: Path
) -> None:
    at = trends_page(monkeypatch, corpus_file, {"from": "2022"})
    assert "Rising and falling terms, 2022 → 2024" in [s.value for s in at.header]
    assert at.selectbox(key=keys.TRENDS_TO).value == "2024"
    at = trends_page(monkeypatch, corpus_file, {"to": "2021"})
    assert "Rising and falling terms, 2020 → 2021" in [s.value for s in at.header]


def test_the_rising_terms_are_counted_in_a_thread_while_the_page_goes_on(
    monkeypatch: pytest.MonkeyPatch, corpus_file: Path
) -> None:
    # The costliest step of a filter change (the period sums) runs beside the topic section, not before it.
    threads: list[str] = []
    real = trends.rising_terms

    def recorded(*args: Any, **kwargs: Any) -> pd.DataFrame:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(trends, "rising_terms", recorded)
    at = trends_page(monkeypatch, corpus_file, {"venue": "ConfA"})
    assert not at.exception, [e.value for e in at.exception]
    assert len(threads) == 1 and threads[0].startswith("page-steps"), threads
    assert "Rising and falling terms, 2020–2021 → 2023–2024" in [s.value for s in at.header]
    assert at.get("plotly_chart")  # its chart is drawn from the thread's table


def test_a_run_with_the_filters_of_the_run_before_counts_no_table_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The masks come back as the same read-only arrays (`data.mask_array`), whose tables are kept.
    # Its own corpus (one more paper per venue and year): counts are shared by every session of a
    # corpus, and another test's run of the same filters would have counted these tables already.
    corpus_file = tmp_path / "trends-own.jsonl"
    trend_papers(per_venue_year=31).drop(columns=["topic"]).to_json(corpus_file, orient="records", lines=True)
    counted: list[tuple[str, ...]] = []
    real = trends._Counted.put

    def recorded(self: Any, names: tuple[str, ...], mask: object, table: Any) -> None:
        counted.append(names)
        real(self, names, mask, table)

    monkeypatch.setattr(trends._Counted, "put", recorded)
    at = trends_page(monkeypatch, corpus_file, {"venue": "ConfA"})
    assert not at.exception, [e.value for e in at.exception]
    assert len(counted) >= 5, counted  # the first run counts its tables
    counted.clear()
    at.run()
    assert not at.exception
    assert counted == [], counted
    at.query_params["q"] = "graph"  # another filter: counted again
    at.run()
    assert counted


def test_a_step_in_the_background_gives_its_value_or_its_error() -> None:
    assert data.in_background(sum, [1, 2, 3]).result() == 6
    with pytest.raises(ZeroDivisionError):
        data.in_background(divmod, 1, 0).result()


def test_bad_settings_fall_back_to_the_defaults(monkeypatch: pytest.MonkeyPatch, corpus_file: Path) -> None:
    at = trends_page(monkeypatch, corpus_file, {"by": "nonsense", "from": "1900", "to": "x", "scale": "?"})
    assert not at.exception, [e.value for e in at.exception]
    assert at.segmented_control(key=keys.TRENDS_BY).value == "year"
    assert "Rising and falling terms, 2020–2021 → 2023–2024" in [s.value for s in at.header]


def test_the_topic_share_download_holds_shares_that_sum_to_one(
    monkeypatch: pytest.MonkeyPatch, corpus_file: Path
) -> None:
    made: list[pd.DataFrame] = []
    real = export.to_bytes
    monkeypatch.setattr(export, "to_bytes", lambda df, fmt, **kw: made.append(df) or real(df, fmt, **kw))
    at = trends_page(monkeypatch, corpus_file, {"venue": "ConfA"})
    assert not at.exception
    shares = next(df for df in made if {"group", "topic", "share"} <= set(df.columns) and "label" in df)
    assert set(shares["group"]) == {"2020", "2021", "2022", "2023", "2024"}
    assert shares.groupby("group")["share"].sum().round(5).eq(1).all()
    assert shares["papers"].sum() == 30 * 5  # the venue filter holds: ConfA's papers only


def test_the_cli_writes_the_topic_shares_and_the_terms(
    corpus_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, terms = tmp_path / "shares.csv", tmp_path / "terms.csv"
    code = cli.main(
        [
            "trends",
            str(corpus_file),
            "--by",
            "venue,year",
            "--out",
            str(out),
            "--terms",
            str(terms),
            "--topics",
            "3",
        ]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    shares = pd.read_csv(out)
    assert list(shares.columns) == ["group", "topic", "label", "papers", "share"]
    assert shares.groupby("group")["share"].sum().round(5).eq(1).all() and len(shares["group"].unique()) == 10
    rising = pd.read_csv(terms)
    assert list(rising.columns)[:4] == ["term", "from_share", "to_share", "score"]
    assert rising["score"].iloc[0] > 0 > rising["score"].iloc[-1]
    assert "fastest-rising topic (shares within venues):" in err  # two venues: it says which shares


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--from", "2020"], "both --from and --to"),
        (["--from", "2020", "--to", "1999"], "no papers from 1999"),
    ],
)
def test_the_cli_rejects_bad_periods(
    extra: list[str], message: str, corpus_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["trends", str(corpus_file), "--topics", "3", *extra])
    captured = capsys.readouterr()
    assert code == cli_common.EXIT_USAGE and message in captured.err
    assert pd.read_csv(io.StringIO(captured.out))["share"].sum() > 0  # the shares were still written


def test_a_run_makes_each_mask_once_for_the_filters_left() -> None:
    # `View.mask_without` for a filter that is not set is the run's own mask: the same object (and a
    # read-only array, so `trends.Axes.cells` counts each table once per run), not a new one per chart.
    from types import SimpleNamespace

    import numpy as np

    from dashboard.filters import Filters
    from dashboard.ui.context import View

    papers = trend_papers(per_venue_year=5)
    filters = Filters(q="graph", venue=(str(papers["venue"].iloc[0]),))
    mask = filters.mask(papers)
    view = View(SimpleNamespace(digest="mask-memo-test"), None, papers, filters, mask, {})
    unfiltered_year = view.array_without("year")
    assert view.array_without("year") is unfiltered_year
    assert view.array_without("topic", "year") is unfiltered_year  # neither is set: the same filters
    assert not unfiltered_year.flags.writeable
    assert np.array_equal(unfiltered_year, mask.to_numpy())
    without_venue = view.array_without("venue")
    assert without_venue is not unfiltered_year
    assert np.array_equal(without_venue, Filters(q="graph").mask(papers).to_numpy())
    assert view.mask_without("venue") is view.mask_without("venue", "year")


@pytest.fixture(scope="module")
def joins_later_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Venue B joins in 2022 with five times venue A's share of the graph topic; flat within each venue."""
    path = tmp_path_factory.mktemp("trends-venues") / "joins.jsonl"
    venue_mix_papers(JOINS_LATER, per_cell=60).drop(columns=["topic"]).to_json(
        path, orient="records", lines=True
    )
    return path


def _texts(at: AppTest) -> str:
    return "\n".join(
        [str(e.value) for e in (*at.caption, *at.markdown, *at.warning, *at.info)]
        + [str(c.proto.spec) for c in at.get("plotly_chart")]
    )


def test_the_page_shows_which_venues_each_year_holds_and_compares_within_venues(
    monkeypatch: pytest.MonkeyPatch, joins_later_file: Path
) -> None:
    at = trends_page(monkeypatch, joins_later_file)
    assert not at.exception, [e.value for e in at.exception]
    grid = next(df.value for df in at.dataframe if "2020" in df.value.columns)
    assert grid.set_index("venue").fillna(0).astype(int).to_dict("index") == {
        "A": {"2020": 60, "2021": 60, "2022": 60, "2023": 60},
        "B": {"2020": 0, "2021": 0, "2022": 60, "2023": 60},
    }
    assert at.segmented_control(key=keys.TRENDS_SHARES).value == "venues"
    texts = _texts(at)
    assert "Shares within venues" in texts and "(shares within venues)" in texts
    # Pooled, the graph topic rises (10% -> 30%) only because B joins: flagged, and not drawn as rising.
    warnings = [w.value.replace("\\", "") for w in at.warning]  # the note is escaped markdown
    assert any("pooled rises 10.0% → 30.0%, within venues flat" in w for w in warnings), warnings
    assert "No topic rose or fell clearly" in texts


def test_the_pooled_share_is_a_setting_in_the_url(
    monkeypatch: pytest.MonkeyPatch, joins_later_file: Path
) -> None:
    at = trends_page(monkeypatch, joins_later_file, {"shares": "pooled"})
    assert not at.exception, [e.value for e in at.exception]
    assert at.segmented_control(key=keys.TRENDS_SHARES).value == "pooled"
    texts = _texts(at)
    assert "Pooled shares" in texts and "fastest-rising" in texts and "(shares within venues)" not in texts
    assert any("within venues flat" in w.value for w in at.warning)  # still flagged
    at.segmented_control(key=keys.TRENDS_SHARES).set_value("venues").run()
    assert "shares" not in at.query_params  # the default leaves the URL


def test_with_one_venue_the_page_says_nothing_of_venues(
    monkeypatch: pytest.MonkeyPatch, corpus_file: Path
) -> None:
    at = trends_page(monkeypatch, corpus_file, {"venue": "ConfA"})
    assert not at.exception, [e.value for e in at.exception]
    texts = _texts(at)
    assert "within venues" not in texts.lower() and "Pooled" not in texts and "Which venues" not in texts
    assert not [c for c in at.segmented_control if c.key == keys.TRENDS_SHARES]

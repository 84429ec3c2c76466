"""The Reviews page, headless (AppTest): one line without scores; with them every section, the URL's score
filters, the sidebar's sliders, the opened paper's scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.ui import keys

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
SCORED = REPO / "tests" / "fixtures" / "reviews"


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


def page(name: str, query: dict[str, Any] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page(f"src/dashboard/app_pages/{name}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def scored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(SCORED))


def count(at: AppTest) -> int:
    for element in at.sidebar.markdown:
        if element.value.endswith(" papers**"):
            return int(element.value.strip("*").split(" of ")[0].replace(",", ""))
    raise AssertionError("no count line")


def test_without_scores_the_page_says_so_in_one_line() -> None:
    at = page("reviews")
    assert len(at.info) == 1 and "no review scores" in at.info[0].value
    assert not at.header
    assert keys.RATING not in [s.key for s in at.sidebar.slider]


@pytest.mark.usefixtures("scored")
def test_with_scores_every_section_is_drawn_and_scales_are_not_pooled_silently() -> None:
    at = page("reviews")
    headers = [h.value for h in at.header]
    assert headers[:3] == ["Scores per decision", "Borderline papers", "Split decisions"]
    assert "Confidence against score" in headers and "The papers" in headers
    # ICLR 2017, 2018, 2024 and a stated 1-5 scale: the warning names them
    assert any("not known to match" in w.value for w in at.warning)
    assert {m.label for m in at.metric} >= {"Rated papers", "Reviews", "Mean score"}
    assert at.metric[0].value == "10"  # pc3, pc4, mm4, v1c, v2b, v2c: none
    sliders = {s.key for s in at.sidebar.slider}
    assert {keys.RATING, keys.SPREAD, keys.REVIEWS} <= sliders


@pytest.mark.usefixtures("scored")
@pytest.mark.parametrize(
    ("query", "n"),
    [({}, 16), ({"rating": "6-"}, 4), ({"spread": "1-"}, 3), ({"reviews": "3-"}, 4), ({"rating": "x"}, 16)],
)
def test_score_filters_from_the_url(query: dict[str, str], n: int) -> None:
    at = page("reviews", query)
    assert count(at) == n
    if query.get("rating") == "x":
        assert any("mean score" in c.value and "ignored" in c.value for c in at.sidebar.caption)


@pytest.mark.usefixtures("scored")
def test_a_slider_writes_its_filter_to_the_url() -> None:
    at = page("reviews")
    slider = next(s for s in at.sidebar.slider if s.key == keys.REVIEWS)
    slider.set_value((3, slider.max)).run()
    assert at.query_params["reviews"] in ("3-", ["3-"])
    assert count(at) == 4


@pytest.mark.usefixtures("scored")
def test_the_opened_paper_shows_its_scores() -> None:
    at = page("papers", {"paper": "pc5"})
    shown = " ".join(str(h.proto.body) for h in at.get("html"))
    assert "Review scores 1, 9, 8 (mean 6.00, sd 3.56)" in shown


@pytest.mark.usefixtures("scored")
def test_filters_that_select_nothing_offer_the_way_back() -> None:
    at = page("reviews", {"q": "zzzz-no-such-word"})
    assert any("No papers match" in info.value for info in at.main.info)
    assert at.main.button(key=keys.REVIEWS_CLEAR).label == "Clear filters"


@pytest.mark.usefixtures("scored")
def test_score_filters_that_leave_no_rated_paper_say_so() -> None:
    at = page("reviews", {"decision": "withdrawn"})  # pc4: withdrawn, no reviews
    assert any("None of these papers has a review score" in c.value for c in at.main.caption)


@pytest.mark.usefixtures("scored")
def test_per_year_cells_give_the_mean_the_share_accepted_and_the_n() -> None:
    at = page("reviews")
    tables = [df.value for df in at.main.dataframe if any(str(c).isdigit() for c in df.value.columns)]
    assert tables, "a table per group and year where the corpus spans years"
    cells = [str(v) for column in tables[0].columns if str(column).isdigit() for v in tables[0][column] if v]
    assert cells and all(" · n=" in cell for cell in cells)
    assert any("accepted" in cell for cell in cells)

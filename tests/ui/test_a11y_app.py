"""Keyboard paths and text alternatives of issue 19, headless (AppTest): what a mouse does, a key does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.figures import images as figures
from dashboard.ui import components, keys

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


def _page(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.switch_page(f"src/dashboard/app_pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_map_region_is_picked_with_sliders_and_a_button_as_a_drag_would() -> None:
    at = _page("topics")
    x, y = at.slider(key=f"{keys.MAP_REGION}.x"), at.slider(key=f"{keys.MAP_REGION}.y")
    (x0, x1), (y0, y1) = x.value, y.value

    def offered() -> int:
        return int(str(at.button(key=f"{keys.MAP_REGION}.apply").label).split()[2].replace(",", ""))

    whole = offered()  # the whole map: every paper (the seeds all have a place on it)
    assert f"{whole:,} of {whole:,} papers" in " ".join(m.value for m in at.sidebar.markdown)
    x.set_range(x0, round((x0 + x1) / 2, 1)).run()
    button = at.button(key=f"{keys.MAP_REGION}.apply")
    every = offered()
    assert 0 < every < whole
    button.click().run()
    assert not at.exception
    box = at.query_params["box"]
    corners = [float(v) for v in (box if isinstance(box, str) else box[-1]).split(",")]
    assert corners[0] == pytest.approx(x0) and corners[1] == pytest.approx(round((x0 + x1) / 2, 1))
    assert corners[2:] == pytest.approx([y0, y1])


def test_the_papers_page_says_how_to_open_a_paper_from_the_keyboard() -> None:
    at = _page("papers")
    assert components.TABLE_KEYBOARD_HINT in [c.value for c in at.main.caption]


def test_every_chart_has_a_text_alternative_and_its_data() -> None:
    fig = go.Figure(go.Bar(x=[7, 3], y=["graphs", "video"], orientation="h"), layout={"title": "Topics"})
    fig.update_xaxes(title="Papers")
    assert figures.describe(fig) == "Bar chart: Topics. 2 bars; largest graphs (7), video (3)."
    table = figures.data_table(fig)
    assert list(table.columns) == ["label", "Papers"]
    assert table.to_dict("records") == [{"label": "graphs", "Papers": 7.0}, {"label": "video", "Papers": 3.0}]
    scatter = go.Figure(
        [go.Scatter(x=[0.0, 1.0], y=[1.0, 2.0], mode="markers", name="0: a", customdata=["p1", "p2"])]
    )
    assert "2 points in 1 groups" in figures.describe(scatter)
    assert list(figures.data_table(scatter)["id"]) == ["p1", "p2"]
    assert figures.plain("<b>a</b><br>b &amp; c") == "a b & c"


def test_show_the_data_of_a_map_lists_its_first_papers_not_the_grey_ones_behind() -> None:
    behind = go.Scatter(x=[9.0] * 300, y=[9.0] * 300, mode="markers", name="Filtered out", hoverinfo="skip")
    groups = [
        go.Scatter(x=[float(g)] * 150, y=[1.0] * 150, mode="markers", name=f"{g}: t",
                   customdata=[f"p{g}.{i}" for i in range(150)])
        for g in range(3)
    ]  # fmt: skip
    fig = go.Figure([behind, *groups])
    table = figures.data_table(fig, max_rows=200)
    assert len(table) == 200 and figures.data_rows(fig) == 450  # the grey points are no data
    assert table["id"].tolist() == [f"p0.{i}" for i in range(150)] + [f"p1.{i}" for i in range(50)]
    assert set(table["series"]) == {"0: t", "1: t"}
    # The dashboard's map: points carry row numbers; the table names the papers
    rows = go.Figure(go.Scatter(x=[0.0, 1.0, 2.0], y=[0.0] * 3, customdata=np.array([2, 0, 1])))
    ids = components.PaperIds(pd.Series(["first", "second", "third"], index=[10, 11, 12]))
    assert figures.data_table(rows, ids=ids)["id"].tolist() == ["third", "first", "second"]
    heat = go.Figure(go.Heatmap(z=[[1, 2], [3, 4]], x=["a", "b"], y=["c", "d"]))
    rows = figures.data_table(heat).to_dict("records")
    assert rows == [{"": "c", "a": 1, "b": 2}, {"": "d", "a": 3, "b": 4}]

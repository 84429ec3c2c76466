"""Topics' paper map as a picture (issue 49, item 3): a map of many points arrives as a PNG drawn on the
server (a WebGL chart cost the browser most of a switch to the page), the interactive map on request;
a small map is interactive from the start. The choice is the page's own URL setting (``map``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest
from support.apptest import app, assert_no_exception

from dashboard.ui import components, keys


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seeds' map counted as a large one: a picture by default (its 57 points stand for 10,000)."""
    monkeypatch.setattr(components, "MAP_PICTURE_ABOVE", 10)


def map_charts(at: AppTest) -> list[Any]:
    """The page's Plotly paper maps."""
    found = []
    for chart in at.main.get("plotly_chart"):
        title = json.loads(chart.proto.spec)["layout"].get("title", {})
        if "Map of papers" in str(title.get("text", "") if isinstance(title, dict) else title):
            found.append(chart)
    return found


def pictures(at: AppTest) -> list[Any]:
    """The page's images (`st.image`): each an ImageList proto's first image."""
    return [element.proto.imgs[0] for element in at.main.get("image")]


def test_a_small_map_is_interactive_from_the_start() -> None:
    at = app("topics")
    assert_no_exception(at)
    assert len(map_charts(at)) == 1
    assert not pictures(at)
    assert at.segmented_control(key=keys.TOPICS_MAP_VIEW).value == "interactive"


@pytest.mark.usefixtures("large")
def test_a_large_map_arrives_as_a_picture_and_turns_interactive_on_request() -> None:
    at = app("topics")
    assert_no_exception(at)
    assert not map_charts(at), "no Plotly map on arrival"
    (picture,) = pictures(at)
    assert picture.url  # served as a file, not inlined
    # ... as the PNG drawn: Streamlit's "auto" format took it for a photograph and sent a JPEG made
    # anew on every run (blurred letters; a third of the picture's time at a million papers).
    assert picture.url.endswith(".png"), picture.url
    assert "57 papers" in picture.caption and "Interactive" in picture.caption
    assert "57 papers" in picture.alt
    saves = [b for b in at.get("download_button") if b.proto.id and "Save picture" in b.proto.label]
    assert len(saves) == 1  # as the interactive map's "Save chart"
    # The keyboard's way to filter to a region needs no chart: it stays.
    assert at.slider(key=f"{keys.MAP_REGION}.x")
    control = at.segmented_control(key=keys.TOPICS_MAP_VIEW)
    assert control.value == "picture"
    control.set_value("interactive").run()
    assert_no_exception(at)
    assert len(map_charts(at)) == 1
    assert not pictures(at)
    assert at.query_params[keys.URL_MAP_VIEW] == "interactive"  # the page's own setting, in its URL
    at.segmented_control(key=keys.TOPICS_MAP_VIEW).set_value("picture").run()
    assert pictures(at) and not map_charts(at)


def test_the_url_chooses_the_picture_even_for_a_small_map() -> None:
    at = app("topics", {keys.URL_MAP_VIEW: "picture"})
    assert_no_exception(at)
    assert pictures(at) and not map_charts(at)
    assert at.segmented_control(key=keys.TOPICS_MAP_VIEW).value == "picture"


@pytest.mark.usefixtures("large")
def test_an_unknown_view_in_the_url_falls_back_to_the_maps_size() -> None:
    at = app("topics", {keys.URL_MAP_VIEW: "3d"})
    assert_no_exception(at)
    assert pictures(at) and not map_charts(at)


@pytest.mark.usefixtures("large")
def test_the_picture_says_what_a_filter_left_and_the_search_hits() -> None:
    at = app("topics", {"q": "graph"})
    assert_no_exception(at)
    (picture,) = pictures(at)
    shown = int(picture.caption.split(" papers")[0].rsplit(" ", 1)[-1].replace(",", ""))
    assert 0 < shown < 57
    caption = " ".join(c.value for c in at.main.caption)
    assert "search hits are the large outlined points" in caption
    assert "On the interactive map" in caption  # where a box filters: not on the picture


@pytest.mark.usefixtures("large")
def test_the_picture_is_made_once_per_view_and_theme(monkeypatch: pytest.MonkeyPatch) -> None:
    from dashboard.figures import mapimage

    made: list[str] = []
    real = mapimage.map_png

    def counting(fig: Any, theme: str = "light", **options: Any) -> bytes:
        made.append(theme)
        return real(fig, theme, **options)

    monkeypatch.setattr(mapimage, "map_png", counting)
    components._map_png.clear()
    at = app("topics", {"q": "video"})
    at.run()  # the same view again: the cached picture
    assert_no_exception(at)
    assert made == ["light"]

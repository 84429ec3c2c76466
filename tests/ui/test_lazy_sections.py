"""What a page switch no longer draws until asked, and the grid's breaks at hyphens (issue 49).

Topics' tree and its list of topics are drawn only while their expanders are open: each was drawn with
every switch to the page, below the map and out of sight. A title with a compound wider than its
cell gets a break at a hyphen (the grid breaks lines only at spaces, so it broke such a word
mid-word).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.ui import components, keys, tables

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


def chart_titles(at: AppTest) -> list[str]:
    """The titles of the page's Plotly charts."""
    titles = []
    for chart in at.main.get("plotly_chart"):
        title: Any = json.loads(chart.proto.spec)["layout"].get("title", {})
        titles.append(str(title.get("text", "") if isinstance(title, dict) else title))
    return titles


def test_the_topics_tree_is_drawn_only_once_its_expander_is_opened() -> None:
    at = AppTest.from_file(APP, default_timeout=180)
    at.switch_page("src/dashboard/app_pages/topics.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Map of papers" in " ".join(chart_titles(at))
    assert not [t for t in chart_titles(at) if "fitted topics merge" in t]
    finds = [w for w in at.text_input if str(w.key).startswith(keys.TOPICS_MAP_FIND)]
    assert not finds, "the topic list's search is drawn only with the list"
    at.session_state[f"{keys.TOPICS_TREE}.open"] = True
    at.session_state[f"{keys.TOPICS_MAP_FIND}.open"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t for t in chart_titles(at) if "fitted topics merge" in t]
    assert [w for w in at.text_input if str(w.key).startswith(keys.TOPICS_MAP_FIND)]


def test_one_topic_in_detail_is_drawn_when_opened_or_when_the_filters_name_one_topic() -> None:
    def detail_drawn(at: AppTest) -> bool:
        assert not at.exception, [e.value for e in at.exception]
        focus = [w for w in at.selectbox if str(w.key).startswith(keys.TOPICS_FOCUS)]
        return bool(focus) and "Top terms and their weight" in chart_titles(at)

    at = AppTest.from_file(APP, default_timeout=180)
    at.switch_page("src/dashboard/app_pages/topics.py")
    assert not detail_drawn(at.run())
    at.session_state[f"{keys.TOPICS_DETAIL}.open"] = True
    assert detail_drawn(at.run())
    # A link to one topic opens it at once, showing that topic.
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["topic"] = "2"
    at.switch_page("src/dashboard/app_pages/topics.py")
    assert detail_drawn(at.run())
    assert [w.value for w in at.selectbox if str(w.key).startswith(keys.TOPICS_FOCUS)] == [2]


def test_a_compound_wider_than_its_cell_breaks_after_a_hyphen_that_fits() -> None:
    title = "Robust Hand-Occlusion-and-Orientation-Aware Pose Estimation"
    broken = components.break_at_hyphens(title, 200)
    assert broken.replace("- ", "-") == title  # only spaces added, each after a hyphen
    room = (200 - tables.CELL_PADDING_PX) * 0.92
    assert all(tables.text_px(word) <= room for word in broken.split())
    assert tables.text_px("Hand-Occlusion-and-Orientation-Aware") > room  # the grid broke it mid-word


def test_words_that_fit_and_words_without_hyphens_are_left_alone() -> None:
    assert (
        components.break_at_hyphens("Out-of-Distribution Detection", 300) == "Out-of-Distribution Detection"
    )
    long_word = "Pneumonoultramicroscopicsilicovolcanoconiosis"
    assert components.break_at_hyphens(long_word, 120) == long_word
    assert components.break_at_hyphens("", 120) == ""

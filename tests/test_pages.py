"""The Papers, Compare, Topics and Terms pages as a reviewer met them (issue 12), headless (AppTest).

Each test drives the page through its widgets by key and checks what a user would see; each failed
before the fix it names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import analysis, corpus
from dashboard.ui import keys

REPO = Path(__file__).resolve().parents[1]
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
    focus = widget(at, "selectbox", keys.TOPICS_FOCUS)
    # Topic 2 is in both models and the largest in neither: kept, it showed the old topic's label.
    other = 2
    assert focus.value != other
    focus.set_value(other).run()
    assert widget(at, "selectbox", keys.TOPICS_FOCUS).value == other
    at.selectbox(key=keys.N_TOPICS).set_value("3").run()
    ok(at)
    new = widget(at, "selectbox", keys.TOPICS_FOCUS)
    # The new model's largest topic, labelled by the new model: nothing kept from the old one.
    refit = analysis.analyze(corpus.load([REPO / "seeds"]).papers, n_topics=3)
    largest = int(refit.papers["topic"][refit.papers["topic"] >= 0].value_counts().idxmax())
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
    assert "sorted by the word before" in " ".join(c.value for c in at.main.caption)


# --------------------------------------------------------------------- the sidebar's "Select all"


def test_selecting_every_topic_is_no_topic_filter(seeds: pd.DataFrame) -> None:
    at = ok(app("papers"))
    topics = at.sidebar.multiselect(key=keys.TOPIC)
    every = [int(label.split(":")[0]) for label in topics.options]  # labels are "3: terms (12)"
    topics.set_value(every).run()
    ok(at)
    assert "topic" not in at.query_params
    assert at.sidebar.multiselect(key=keys.TOPIC).value == []
    assert len(at.main.dataframe[0].value) == len(seeds)

"""The Topics page in the topics' default space (headless, AppTest): it says what the papers are grouped
by, and shows the topics every other caller fits (`dashboard.search.topicspace`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard import corpus
from dashboard.search import semantic, topicspace

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")

pytestmark = [
    pytest.mark.skipif(not semantic.available(), reason=f"needs the embedding model: {semantic.EXTRA_HINT}"),
    pytest.mark.default_topics,
]


@pytest.fixture(autouse=True)
def _seeds_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])
    # The server's caches are per corpus, not per space: an earlier test of this process fitted the
    # seeds in LSA (tests/conftest.py), and a server keeps one space for its life.
    st.cache_resource.clear()
    st.cache_data.clear()


def topics_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.switch_page("src/dashboard/app_pages/topics.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.main.caption).replace("\\", "")


def bar_labels(at: AppTest) -> set[str]:
    """The topic names the page's bar chart draws (``"3: a · b ·<br>c"`` drawn, ``"a · b · c"`` read)."""
    names: set[str] = set()
    for chart in at.get("plotly_chart"):
        figure = json.loads(chart.proto.spec)
        for trace in figure.get("data", []):
            if trace.get("type") == "bar" and trace.get("orientation") == "h":
                names.update(re.sub(r"^\d+: ", "", str(y)).replace("<br>", " ") for y in trace.get("y", []))
    return names


def test_the_seeds_topics_are_found_in_the_sentence_embedding_and_the_page_says_so() -> None:
    at = topics_page()
    assert "Papers are grouped by what their titles and abstracts say" in captions(at)
    fitted = topicspace.fit_topics(corpus.load([REPO / "seeds"]).papers)
    assert fitted.model.representation_ == "minilm"
    named = fitted.topics.loc[fitted.topics["topic"] >= 0, "label"]
    assert bar_labels(at) == set(named)


def test_an_operator_who_chose_lsa_gets_lsa_and_the_page_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(topicspace.ENV_SPACE, "lsa")
    at = topics_page()
    assert "Papers are grouped by the words of their titles and abstracts (LSA of TF-IDF)" in captions(at)

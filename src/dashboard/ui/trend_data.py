"""The Trends page's cached steps: the papers' codes (`trends.Axes`) and the topics' terms per year.

Both are made once per corpus and number of topics (the rows keep their order for every number of
topics) and shared read-only by every session, like the other per-corpus codes in `dashboard.ui.data`.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.analytics import terms, trends
from dashboard.ui import data


@st.cache_resource(show_spinner=False, max_entries=8)
def axes(digest: str, model: str, _papers: pd.DataFrame) -> trends.Axes:
    """The papers' year, venue, topic, code, repository, decision and area codes."""
    return trends.Axes.of(_papers)


@st.cache_data(show_spinner=False, max_entries=8)
def topic_year_terms(digest: str, model: str, _papers: pd.DataFrame) -> dict[tuple[int, int], list[str]]:
    """``{(topic, year): terms}``: each topic's c-TF-IDF terms in each year (`trends.topic_year_terms`)."""
    counts = data.term_counts(digest, 1, False, _papers)
    table = trends.topic_year_terms(counts, axes(digest, model, _papers))
    return {
        (int(t), int(y)): list(words)
        for t, y, words in zip(table["topic"], table["year"], table["terms"], strict=True)
    }


@st.cache_resource(show_spinner=False, max_entries=8)
def period_counts(
    digest: str, ngram: int, years: tuple[int, ...], _counts: terms.TermCounts, _axes: trends.Axes
) -> terms.Subset:
    """The term counts of all the papers of ``years`` (`trends.period_counts`), once per corpus and
    period: a filter's papers in the period are then counted as these less the papers it leaves out,
    or directly, whichever reads fewer (a filter that keeps most papers read a million papers' rows
    twice a run)."""
    return trends.period_counts(_counts, _axes, years)

"""The sidebar on every page: the corpus and its load report, the filters, `N of M papers`, clear.

Filter widgets mirror the URL (see `dashboard.ui.url`): values are set from the URL before each
widget is drawn and written back by its callback. Options show how many papers have each value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from dashboard.analytics import reviews
from dashboard.schema import DECISION_TIERS
from dashboard.ui import data, keys
from dashboard.ui.markup import escape_markdown
from dashboard.ui.url import read_filters, sync_widget, update_filters, write_filters

if TYPE_CHECKING:
    from dashboard.ui.view import View

# Widgets whose filters live behind "More filters": opened by itself when one of them is in use.
MORE_FILTER_KEYS: tuple[str, ...] = (
    "venue",
    "year",
    "source",
    "link",
    "dataset",
    "institution",
    "country",
    "words",
)
# Names offered in a name list (authors, institutions): every one up to this many, else the ones with
# the most papers. A multiselect sends all its options to the browser on every run (52k authors at
# 27k papers would be a megabyte a click); any other name can be typed in full, and the filter
# finds it whatever its case and spacing (`Filters.restrict`).
NAME_OPTIONS = 5_000


def decision_label(tier: str) -> str:
    """How a decision tier is named to a user: ``oral``, ..., ``no decision`` for ``unknown``."""
    return "no decision" if tier == "unknown" else tier


def has_decisions(counts: pd.Series | None) -> bool:
    """True when the corpus says a decision for some paper (every paper ``unknown``: no filter)."""
    return counts is not None and bool((counts.index != "unknown").any())


def count_line(shown: int, total: int) -> str:
    """The sidebar's count, e.g. ``12 of 57 papers``."""
    return f"{shown:,} of {total:,} papers"


# --------------------------------------------------------------------- callbacks (run before the script)


# Every paper has exactly one topic: choosing all of them ("Select all") is no filter at all.
WHOLE_WHEN_ALL: frozenset[str] = frozenset({"topic"})


def _on_filter_change(field: str, widget_key: str, options: Sequence[Any] = ()) -> None:
    value: Any = st.session_state.get(widget_key)
    if field == "q":
        new: Any = value or ""
    elif field in SCORE_SLIDERS:
        low, high = value
        lowest, highest = st.session_state[keys.SCORE_BOUNDS][field]
        new = (None if low <= lowest else low, None if high >= highest else high)
    elif field == "words":
        low, high = value
        lowest, highest = st.session_state[keys.WORDS_BOUNDS]
        # The full slider range means "no limit" on that side, so the URL stays clean.
        new = (None if low <= lowest else low, None if high >= highest else high)
    else:
        new = tuple(value or ())
        if field in WHOLE_WHEN_ALL and len(options) > 1 and set(new) >= set(options):
            new = ()  # the same papers as "Any", so the URL says nothing rather than every value
            st.session_state[widget_key] = []
    update_filters(lambda f: dataclasses.replace(f, **{field: new}))


def clear_filters() -> None:
    """Callback of every "Clear filters" button: the same view without filters."""
    filters, _ = read_filters()
    write_filters(filters.cleared())


# --------------------------------------------------------------------- drawing


def _option_label(counts: Mapping[Any, int], labels: dict[Any, str] | None = None) -> Any:
    def label(value: Any) -> str:
        name = labels.get(value, str(value)) if labels else str(value)
        n = counts.get(value, 0)
        return f"{name} ({n:,})"

    return label


def _multiselect(
    label: str,
    field: str,
    widget_key: str,
    counts: pd.Series | None,
    selected: Sequence[Any],
    *,
    names: dict[Any, str] | None = None,
    help: str | None = None,
    order: Sequence[Any] | None = None,
    offered: Mapping[Any, str] | None = None,
) -> None:
    """A filter's multiselect of ``counts``' values, each labelled with its number of papers.

    ``offered`` makes it a name list (`_names_multiselect`): only those names, already labelled, plus
    whatever is selected (a typed name may lie beyond them); any other name can be typed.
    """
    if counts is None or counts.empty:
        return
    typed = offered is not None
    if offered is not None:
        labels = dict(offered)
        beyond = _option_label(counts)  # a selected name beyond them, labelled the same way
        labels.update({v: beyond(v) for v in selected if v not in labels})
        options: list[Any] = list(labels)
        format_func: Any = labels.__getitem__
    else:
        # Their labels' numbers come from a dict (a Series look-up per option was slower).
        numbers = dict(zip(counts.index.tolist(), counts.to_numpy().tolist(), strict=True))
        options = list(order) if order is not None else list(numbers)
        options = [int(o) if field in ("topic", "year") else o for o in options]
        format_func = _option_label(numbers, names)
    sync_widget(widget_key, [v for v in selected if v in options])
    st.multiselect(
        label,
        options,
        key=widget_key,
        format_func=format_func,
        on_change=_on_filter_change,
        args=(field, widget_key, tuple(options)),
        placeholder="Any" if not typed else "Any (type a name)",
        help=help,
        accept_new_options=typed,
    )


def render(view: View, notices: Sequence[str]) -> None:
    """Draw the whole sidebar for ``view`` (the corpus section is drawn by `corpus_section`)."""
    filters = view.filters
    with st.sidebar:
        sync_widget(keys.SEARCH, filters.q)
        st.text_input(
            "Search",
            key=keys.SEARCH,
            on_change=_on_filter_change,
            args=("q", keys.SEARCH),
            placeholder='words, "a phrase", -exclude',
            help='All words must occur (word starts match: "graph" finds "graphs"). '
            'Put phrases in quotes; a leading minus excludes: `diffusion -"video generation"`.',
        )
        st.markdown(f"**{count_line(int(view.mask.sum()), len(view.papers))}**")
        if not filters.is_empty:
            st.caption(escape_markdown(view.describe()))
        st.button(
            "Clear filters",
            key=keys.CLEAR_FILTERS,
            on_click=clear_filters,
            disabled=filters.is_empty,
            icon=":material/filter_alt_off:",
            width="stretch",
        )
        for notice in notices:
            st.caption(":material/info: " + escape_markdown(notice))
        _filters(view)


def _filters(view: View) -> None:
    """The filter widgets of ``view``: one per facet the corpus has."""
    filters = view.filters
    facets = view.facets
    if "topic" in facets:
        _multiselect(
            "Topics",
            "topic",
            keys.TOPIC,
            facets["topic"],
            filters.topic,
            names=view.topic_names,
            order=view.topic_order,
        )
    _multiselect("Research areas", "area", keys.AREA, facets.get("area"), filters.area)
    _spaced_multiselect("Code status", "code", keys.CODE, view)
    _names_multiselect("Authors", "author", keys.AUTHOR, view)
    decisions = facets.get("decision")
    if has_decisions(decisions):
        assert decisions is not None
        _multiselect(
            "Decision",
            "decision",
            keys.DECISION,
            decisions,
            filters.decision,
            names={tier: decision_label(tier) for tier in decisions.index},
            order=[tier for tier in DECISION_TIERS if tier in decisions.index],
            help="The source's decision as a tier: oral, spotlight, poster, accept, reject, withdrawn.",
        )
    _score_sliders(view)
    _spaced_multiselect(
        "Repository",
        "repo",
        keys.REPO,
        view,
        help="What the paper's own repository holds, from the last check (Links & code page).",
    )
    active_more = any(key in filters.active_keys() for key in MORE_FILTER_KEYS)
    with st.expander("More filters", expanded=active_more):
        _multiselect("Venue", "venue", keys.VENUE, facets.get("venue"), filters.venue)
        years = facets.get("year")
        _multiselect(
            "Year",
            "year",
            keys.YEAR,
            years,
            filters.year,
            order=sorted(years.index, reverse=True) if years is not None else None,
        )
        _multiselect(
            "Source", "source", keys.SOURCE, facets.get("source"), filters.source, names=view.source_names
        )
        _spaced_multiselect(
            "Link kinds", "link", keys.LINK, view, help="Papers with at least one link of a chosen kind."
        )
        _multiselect(
            "Datasets and benchmarks", "dataset", keys.DATASET, facets.get("dataset"), filters.dataset
        )
        _names_multiselect("Institutions", "institution", keys.INSTITUTION, view)
        _multiselect("Countries", "country", keys.COUNTRY, facets.get("country"), filters.country)
        _words_slider(view)


def _spaced_multiselect(label: str, field: str, key: str, view: View, help: str | None = None) -> None:
    """A filter whose values are identifiers (``project_page``): shown with spaces (``project page``)."""
    counts = view.facets.get(field)
    names = {s: s.replace("_", " ") for s in counts.index} if counts is not None else None
    _multiselect(label, field, key, counts, getattr(view.filters, field), names=names, help=help)


def _names_multiselect(label: str, field: str, key: str, view: View) -> None:
    """A filter by names (authors, institutions): typed to find one among the many (`_names_help`)."""
    counts = view.facets.get(field)
    if counts is None or counts.empty:
        return
    offered = data.name_options(view.source.digest, field, NAME_OPTIONS, counts)
    selected = getattr(view.filters, field)
    _multiselect(label, field, key, counts, selected, offered=offered, help=_names_help(field, counts))


def _names_help(what: str, counts: pd.Series | None) -> str:
    if counts is None or len(counts) <= NAME_OPTIONS:
        return f"Papers with any of the chosen {what}s. Type to find one."
    return (
        f"Papers with any of the chosen {what}s. The list offers the {NAME_OPTIONS:,} with the most papers "
        f"of {len(counts):,}; type any other {what}'s full name and press Enter."
    )


# The review score filters (`dashboard.filters.SCORE_KEYS`): label, widget key, step, help.
SCORE_SLIDERS: dict[str, tuple[str, str, float, str]] = {
    "rating": ("Mean review score", keys.RATING, 0.25, "The mean of each paper's review scores."),
    "spread": (
        "Spread of the scores",
        keys.SPREAD,
        0.25,
        "Standard deviation of each paper's scores: high where the reviewers disagreed.",
    ),
    "reviews": ("Number of reviews", keys.REVIEWS, 1, "Reviews with a score."),
}


def _score_sliders(view: View) -> None:
    """Sliders of the review score filters, only when the corpus has scores (full range: no filter)."""
    bounds = reviews.score_bounds(view.papers)
    if not bounds:
        return
    st.session_state[keys.SCORE_BOUNDS] = bounds
    for field, (label, key, step, help_text) in SCORE_SLIDERS.items():
        if field not in bounds:
            continue
        lowest, highest = bounds[field]
        whole = field == "reviews"
        if whole:
            lowest, highest = int(lowest), int(highest)
        low, high = getattr(view.filters, field)
        value = (
            min(max(lowest if low is None else low, lowest), highest),
            max(min(highest if high is None else high, highest), lowest),
        )
        sync_widget(key, value)
        st.slider(
            label,
            min_value=lowest,
            max_value=highest,
            step=step,
            key=key,
            on_change=_on_filter_change,
            args=(field, key),
            help=help_text,
        )


def _words_slider(view: View) -> None:
    bounds = data.word_bounds(view.source.digest, view.papers)
    if bounds is None:
        return
    lowest, highest = bounds
    st.session_state[keys.WORDS_BOUNDS] = (lowest, highest)
    low, high = view.filters.words
    value = (
        min(max(lowest if low is None else low, lowest), highest),
        max(min(highest if high is None else high, highest), lowest),
    )
    sync_widget(keys.WORDS, value)
    st.slider(
        "Words in the abstract",
        min_value=lowest,
        max_value=highest,
        key=keys.WORDS,
        on_change=_on_filter_change,
        args=("words", keys.WORDS),
    )

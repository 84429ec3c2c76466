"""The pages and every way between them: one mechanism that carries the filters along.

Streamlit's own sidebar navigation links to a page's bare path (``/papers``), which drops every query
parameter: the filters set on one page were gone on the next. So the app hides that navigation and draws
its own links (`links`), each built by `carried_query`: the filters and shared settings of the URL now
(`SHARED_KEYS`), plus the settings that belong to the target page as that page last had them in this
session (Terms' ``ngram``, Trends' periods, Papers' ``paper``). Buttons that move to another page
(Compare with..., Open these papers) build their query the same way (`switch_to`), so a link's URL can
be shared as it is, and back, forward and a reload find the filters in the URL.

Which keys are shared is decided by one rule, not a list per page: the filter keys of
`dashboard.filters.URL_KEYS` and the mark of an uploaded corpus travel; every other URL key is private
to the page it was set on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard.filters import URL_KEYS
from dashboard.ui import keys
from dashboard.ui.url import Query, read_query, remember_query, settle_query

PAGES_DIR = Path(__file__).resolve().parents[1] / "app_pages"

# Keys that mean the same on every page. Everything else in a URL is a page's own setting.
SHARED_KEYS: frozenset[str] = frozenset({*URL_KEYS, keys.URL_UPLOADED})


@dataclass(frozen=True)
class PageSpec:
    """One page of the app: its script, title and icon (the order of `PAGES` is the sidebar's)."""

    stem: str
    title: str
    icon: str
    counts: bool = False  # its charts count the filtered papers: its header offers to open them

    @property
    def path(self) -> Path:
        return PAGES_DIR / f"{self.stem}.py"


PAGES: tuple[PageSpec, ...] = (
    PageSpec("overview", "Overview", ":material/dashboard:", counts=True),
    PageSpec("papers", "Papers", ":material/article:"),
    PageSpec("topics", "Topics", ":material/bubble_chart:", counts=True),
    PageSpec("terms", "Terms", ":material/text_fields:", counts=True),
    PageSpec("trends", "Trends", ":material/trending_up:", counts=True),
    PageSpec("reviews", "Reviews", ":material/reviews:", counts=True),
    PageSpec("links", "Links & code", ":material/link:", counts=True),
    PageSpec("compare", "Compare", ":material/compare:"),
    PageSpec("library", "Library", ":material/bookmarks:"),
)
BY_STEM: dict[str, PageSpec] = {spec.stem: spec for spec in PAGES}


def shared_part(query: Mapping[str, Sequence[str]]) -> Query:
    """The part of a URL query that every page shares (filters, the number of topics, an upload)."""
    return {key: list(values) for key, values in query.items() if key in SHARED_KEYS and values}


def private_part(query: Mapping[str, Sequence[str]]) -> Query:
    """The part of a URL query that belongs to the page it is on (e.g. Terms' ``ngram``)."""
    return {key: list(values) for key, values in query.items() if key not in SHARED_KEYS and values}


def carried_query(
    current: Mapping[str, Sequence[str]],
    remembered: Mapping[str, Mapping[str, Sequence[str]]],
    target: str,
    *,
    here: str = "",
    extra: Mapping[str, str | Sequence[str] | None] | None = None,
) -> Query:
    """The query of a link from page ``here`` (with URL ``current``) to page ``target``.

    The shared keys of ``current``, then ``target``'s own settings: those of ``current`` when the link
    stays on the page, else the ones ``target`` last had (``remembered[target]``). ``extra`` sets
    (or, with None, removes) keys last, e.g. the papers a button opens.

    >>> carried_query({"q": ["graph"], "ngram": ["2"]}, {"papers": {"paper": ["p1"]}}, "papers")
    {'q': ['graph'], 'paper': ['p1']}
    """
    query = shared_part(current)
    own = private_part(current) if target == here else remembered.get(target, {})
    query.update({key: list(values) for key, values in own.items() if key not in SHARED_KEYS})
    for key, value in (extra or {}).items():
        if value is None or value == "" or (not isinstance(value, str) and not list(value)):
            query.pop(key, None)
        else:
            query[key] = [value] if isinstance(value, str) else [str(v) for v in value]
    return query


# --------------------------------------------------------------------- Streamlit side


def _remembered() -> dict[str, Query]:
    return st.session_state.setdefault(keys.NAV_REMEMBERED, {})


def _current_stem() -> str:
    return str(st.session_state.get(keys.NAV_CURRENT, ""))


def st_pages() -> list[Any]:
    """The `st.Page` of every page, for `st.navigation` (Overview is the default)."""
    return [
        st.Page(spec.path, title=spec.title, icon=spec.icon, default=spec.stem == "overview")
        for spec in PAGES
    ]


def stem_of(page: Any) -> str:
    """The stem (``papers``) of a `st.Page` that `st_pages` made."""
    return Path(str(getattr(page, "_page", ""))).stem or str(getattr(page, "url_path", ""))


def counts_papers_here() -> bool:
    """Whether the page this run shows counts the filtered papers (and so offers to open them)."""
    spec = BY_STEM.get(_current_stem())
    return spec is not None and spec.counts


@dataclass(frozen=True)
class Drawn:
    """The sidebar's slot of page links and the URL query they were drawn with."""

    slot: Any
    query: Query


def begin(page: Any) -> Drawn:
    """Before a page runs: note which page this is and draw the page links at the sidebar's top.

    They are drawn first because a page may end early (`st.stop`, after which nothing can be drawn);
    `finish` draws them again if the page changed the URL while it ran.
    """
    st.session_state[keys.NAV_CURRENT] = stem_of(page)
    settle_query()
    remember_query()
    remember_here()
    drawn = Drawn(st.sidebar.empty(), read_query())
    _draw(drawn.slot)
    return drawn


def finish(drawn: Drawn) -> None:
    """After a page ran to its end: keep its settings, and redraw the links if its URL changed."""
    remember_here()
    if read_query() != drawn.query:
        _draw(drawn.slot)


def remember_here() -> None:
    """Keep this page's own settings for the next link back to it (called after the page ran, and
    before a button leaves it)."""
    here = _current_stem()
    if here:
        _remembered()[here] = private_part(read_query())


def query_to(target: str, extra: Mapping[str, str | Sequence[str] | None] | None = None) -> Query:
    """The query a link or button to page ``target`` carries from this run's URL."""
    return carried_query(read_query(), _remembered(), target, here=_current_stem(), extra=extra)


def _draw(slot: Any) -> None:
    """The page links, each carrying the filters (`query_to`), in ``slot`` (replacing what it held)."""
    with slot.container():
        for spec in PAGES:
            st.page_link(
                spec.path, label=spec.title, icon=spec.icon, query_params=query_to(spec.stem), width="stretch"
            )


def switch_to(target: str, extra: Mapping[str, str | Sequence[str] | None] | None = None) -> None:
    """Go to page ``target`` with the filters (a button's action): the same query a link carries."""
    remember_here()
    query = query_to(target, extra)
    if target == _current_stem():  # the same page with another URL: the newest, not an old one
        remember_query(query)
    st.switch_page(BY_STEM[target].path, query_params=query)

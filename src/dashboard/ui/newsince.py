"""The Library page's saved searches and its "New since <date>" view (logic in `dashboard.library.searches`
and `dashboard.library.digest`; this module only draws and caches).

"New since" shows when the corpus on screen is not a version the library has marked seen and some
earlier version is: per saved search, and per reading list's recommendations (when the corpus is
analysed), the papers no seen version had. Seen is recorded only by the "Mark these as seen" button
(see `dashboard.library.searches` for why opening a corpus does not record it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from dashboard.filters import Filters
from dashboard.library import digest as digests
from dashboard.library import searches
from dashboard.library.store import CorpusLookup, Library, LibraryError
from dashboard.ui import components, keys
from dashboard.ui import library as library_ui
from dashboard.ui.markup import escape_markdown
from dashboard.ui.url import update_filters

if TYPE_CHECKING:
    from dashboard.ui.view import View

SHOWN = 20  # papers per section on the page (the download holds `digests.TOP`)


def _say(message: str) -> None:
    st.session_state[keys.LIBRARY_NOTICE] = message


def _run(action: Any, done: str) -> None:
    try:
        action()
    except LibraryError as error:
        _say(f"The library could not do that: {library_ui.for_visitors(error)}")
        return
    _say(done)


# --------------------------------------------------------------------- saved searches


def saved_searches_section(view: View, lib: Library) -> None:
    """Save the filters on screen under a name; open or delete a saved search."""
    st.header("Saved searches")
    st.caption(
        "A saved search keeps the filters of every page (search words, venues, years, code…). "
        "When a newer corpus is opened, its new papers are listed per saved search under “New since”."
    )
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    with left:
        st.text_input(
            "Save the current filters as",
            key=keys.LIBRARY_SEARCH_NAME,
            placeholder="e.g. graph papers with code",
            max_chars=100,
            help="Current filters: " + view.filters.describe(),
        )
    with right:
        st.button(
            "Save search",
            key=keys.LIBRARY_SEARCH_SAVE,
            on_click=_save,
            args=(view.filters,),
            icon=":material/saved_search:",
            disabled=not str(st.session_state.get(keys.LIBRARY_SEARCH_NAME, "")).strip(),
        )
    try:
        saved = searches.saved_searches(lib)
    except LibraryError as error:
        st.caption(escape_markdown(f"The saved searches could not be read: {library_ui.for_visitors(error)}"))
        return
    if not saved:
        st.caption("No saved searches yet: set some filters, name them above and save.")
        return
    for search in saved:
        cols = st.columns([3, 4, 1, 1], vertical_alignment="center")
        cols[0].markdown("**" + escape_markdown(search.name) + "**")
        cols[1].caption(escape_markdown(search.filters.describe()))
        cols[2].button(
            "Open",
            key=f"{keys.LIBRARY_SEARCH_OPEN}.{search.name}",
            on_click=_open,
            args=(search.filters,),
            help="Apply these filters on every page",
        )
        cols[3].button(
            "Delete",
            key=f"{keys.LIBRARY_SEARCH_DELETE}.{search.name}",
            on_click=_delete,
            args=(search.name,),
        )


def _save(filters: Filters) -> None:
    lib = library_ui.store().library
    name = str(st.session_state.get(keys.LIBRARY_SEARCH_NAME, ""))
    if lib is None:
        return
    _run(lambda: searches.save_search(lib, name, filters), f'Saved the search "{" ".join(name.split())}".')
    st.session_state[keys.LIBRARY_SEARCH_NAME] = ""


def _open(filters: Filters) -> None:
    update_filters(lambda current: replace(filters, k=current.k, refit=current.refit))


def _delete(name: str) -> None:
    lib = library_ui.store().library
    if lib is not None:
        _run(lambda: searches.delete_search(lib, name), f'Deleted the saved search "{name}".')


# --------------------------------------------------------------------- new since


@st.cache_resource(show_spinner="Finding the papers new since last time…", max_entries=4)
def _digest(
    digest: str, where: str, revision: int, k: str, _lib: Library, _papers: pd.DataFrame, _analysis: Any
) -> digests.Digest:
    lookup = CorpusLookup(_papers, _analysis.positions) if _analysis is not None else None
    recommender = digests.recommender(_analysis, _papers) if _analysis is not None else None
    return digests.new_since(_lib, digest, _papers, recommender=recommender, lookup=lookup)


def new_since_section(view: View, lib: Library) -> None:
    """ "New since <date>" when this corpus is a version not yet marked seen; else how to start."""
    current = library_ui.store()
    try:
        seen_versions = searches.versions(lib)
        this_seen = searches.is_seen(lib, view.source.digest)
    except LibraryError as error:
        st.caption(escape_markdown(f"What is new cannot be shown: {library_ui.for_visitors(error)}"))
        return
    if not seen_versions:
        with st.container(border=True, key=keys.LIBRARY_NEW_SINCE):
            st.markdown("**New since last time**")
            st.caption(
                "Mark this corpus as seen: when you open a newer corpus or index, this page lists its new "
                "papers per saved search and per reading list."
            )
            _mark_button(view, "Mark this corpus as seen")
        return
    if this_seen:
        when = next(v.date for v in seen_versions if v.digest == view.source.digest)
        st.caption(f":material/done_all: This corpus was marked seen on {when}: nothing in it is new.")
        return
    result = _digest(
        view.source.digest,
        current.cache_key,
        lib.revision(),
        view.filters.model,
        lib,
        view.papers,
        view.analysis,
    )
    with st.container(border=True, key=keys.LIBRARY_NEW_SINCE):
        st.subheader(result.title, anchor=False)
        last = result.since
        st.caption(
            f"{result.n_new:,} of the {result.n_papers:,} papers of this corpus were in no version marked "
            f"seen"
            + (f" (the last: {escape_markdown(last.label)}, {last.date})." if last and last.label else ".")
        )
        if not result.lists_included:
            st.caption("Reading lists' recommendations come once the corpus is analysed.")
        if not result.sections:
            st.info("Save a search or make a reading list to have new papers listed for it here.")
        for section in result.sections:
            _section(view, section)
        left, right = st.columns([1, 1], vertical_alignment="center")
        with left:
            _mark_button(view, f"Mark these {result.n_new:,} papers as seen")
        with right:
            st.download_button(
                "Download as Markdown",
                data=digests.to_markdown(result, view.papers),
                file_name="new-since-" + (last.date if last else "start") + ".md",
                mime="text/markdown",
                icon=":material/download:",
                on_click="ignore",
                key=keys.LIBRARY_NEW_SINCE_DOWNLOAD,
            )


def _section(view: View, section: digests.Section) -> None:
    if section.kind == "search":
        head = f"Saved search **{escape_markdown(section.name)}** · {section.total:,} new"
    else:
        head = f"Reading list **{escape_markdown(section.name)}** · {section.total:,} new recommended"
    st.markdown(head)
    st.caption(escape_markdown(section.description + (f" — {section.note}" if section.note else "")))
    if not section.rows:
        return
    rows = list(section.rows[:SHOWN])
    papers = view.papers.iloc[rows]
    table = pd.DataFrame(
        {
            "title": papers["title"].astype(str).to_numpy(),
            "venue": [
                " ".join(p for p in (str(v or ""), "" if pd.isna(y) else str(int(y))) if p)
                for v, y in zip(
                    papers.get("venue", [""] * len(rows)), papers.get("year", [None] * len(rows)), strict=True
                )
            ],
        }
    )
    config: dict[str, Any] = {
        "title": st.column_config.TextColumn("Title", width=360 if section.reasons else 520),
        "venue": st.column_config.TextColumn("Venue", width=90),
    }
    if section.reasons:
        table["why"] = list(section.reasons[:SHOWN])
        config["why"] = st.column_config.TextColumn("Why", width=300)
    # the app's one table: widths fitted to the page at 1024 px, titles wrapped, the "why" cut at a word
    components.show_table(table, config, visible=len(table), wrapped=True)
    if section.total > len(rows):
        st.caption(
            f"…and {section.total - len(rows):,} more; the download lists up to {digests.TOP} per section."
        )


def _mark_button(view: View, label: str) -> None:
    st.button(
        label,
        key=keys.LIBRARY_MARK_SEEN,
        on_click=_mark,
        args=(view.source.digest, view.source.label, view.papers),
        icon=":material/done_all:",
    )


def _mark(digest: str, label: str, papers: pd.DataFrame) -> None:
    lib = library_ui.store().library
    if lib is not None:
        _run(lambda: searches.mark_seen(lib, digest, papers, label=label), "Marked this corpus as seen.")

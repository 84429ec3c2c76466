"""The Papers page's "Recommended for <list>" order: every filtered paper not in a reading list, ranked
by how well it fits the list (`dashboard.search.recommend`), with a score and a why.

**The URL key ``rec`` is a page setting, not a `Filters` field**, as the table's order ``sort`` is
(`keys.URL_SORT`): it orders the Papers table and nothing else. No other page counts, charts or
exports by it, every filter (search included) narrows it as it narrows any order, and it restricts
nothing: the papers shown are the filtered papers minus the list's own. ``like`` and ``liketext`` are
`Filters` fields because "papers like" keeps only its best `ranked.LIKE_TOP` papers, which every page
then counts; ``rec`` keeps every paper, so it needs no place in the one selection model.

The ranking is cached on the corpus, the topic model and the list's papers in this corpus (their rows,
from the library as the ``list`` filter reads it, which is re-read after every library write): adding
a paper to the list, or removing one, gives a new key and a new order, with no stale order kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from dashboard.search import recommend as core
from dashboard.ui import keys
from dashboard.ui import library as library_ui
from dashboard.ui.markup import escape_markdown
from dashboard.ui.ranked import Found
from dashboard.ui.url import param, sync_widget, write_query

if TYPE_CHECKING:
    from dashboard.ui.view import View

KIND = "rec"
SCORE_LABEL = "Fit to the list"
NONE = ""  # the chooser's "no recommendation" option


def requested() -> str:
    """The list named by the URL's ``rec`` ("" when none), spaces normalised as list names are."""
    return " ".join(param(keys.URL_RECOMMEND).split())[:200]


def _list_rows(view: View, name: str) -> tuple[np.ndarray, int, bool]:
    """The list's rows in this corpus, how many of its papers this corpus lacks, and whether it exists."""
    current = library_ui.store()
    entries = library_ui.resolved(current, view.source.digest, view.papers, view.analysis)
    if entries is None or current.library is None:
        return np.zeros(0, dtype=np.int64), 0, False
    chosen = entries[entries["list"] == name]
    exists = len(chosen) > 0 or name in library_ui._safely(current.library.list_names, [])
    rows = chosen["row"].to_numpy(dtype=np.int64)
    return np.unique(rows[rows >= 0]), int((rows < 0).sum()), exists


@st.cache_data(show_spinner="Ranking the papers for the list…", max_entries=16)
def _ranked(
    digest: str, model: str, list_key: bytes, _analysis: object, _rows: np.ndarray
) -> core.Recommendations:
    fitted = _analysis.model  # type: ignore[attr-defined]
    return core.recommend(fitted.tfidf_, core.dense_rows(fitted), _rows)


def recommendations(view: View, rows: np.ndarray) -> core.Recommendations:
    """The list's ranking (cached per corpus, model and list content: ``rows`` are the list's rows)."""
    return _ranked(
        view.source.digest, view.filters.model, np.asarray(rows, np.int64).tobytes(), view.analysis, rows
    )


def _empty(note: str, name: str) -> Found:
    return Found(np.zeros(0, dtype=np.int64), np.zeros(0), KIND, notes=(note,), what=name)


def found(view: View) -> Found | None:
    """The filtered papers not in the ``rec`` list, best fit first; None when the URL asks for none.

    An unknown list, a list with no paper in this corpus or a corpus without topic model gives no rows
    and a note that says why (the page then shows the filtered papers as they are).
    """
    name = requested()
    if not name:
        return None
    if view.analysis is None:
        return _empty(
            "Recommendations need the topic model, which could not be fitted for this corpus.", name
        )
    rows, missing, exists = _list_rows(view, name)
    if not exists:
        return _empty(f'No reading list "{name}" in the library.', name)
    if not len(rows):
        return _empty(f'None of the papers of "{name}" is in this corpus: nothing to recommend from.', name)
    ranked = recommendations(view, rows)
    keep = view.mask.to_numpy(dtype=bool)[ranked.rows]
    notes = []
    if ranked.fallback:
        notes.append(
            f'"{name}" has {len(rows)} paper{"s" * (len(rows) != 1)} in this corpus, fewer than '
            f"{core.MIN_LIST}: these are the papers most like {'them' if len(rows) > 1 else 'it'} "
            f"(add more to the list for recommendations fitted to it)."
        )
    if missing:
        notes.append(f'{missing:,} of the papers of "{name}" are not in this corpus and do not count.')
    if len(ranked.rows) and not keep.any():
        notes.append(f'No filtered paper outside "{name}": loosen a filter to see recommendations.')
    return Found(ranked.rows[keep], ranked.scores[keep], KIND, notes=tuple(notes), what=name)


def reasons(view: View, result: Found, rows: np.ndarray) -> list[str]:
    """The why of each of ``rows``: the terms it shares with the list, and the list's closest paper."""
    list_rows, _, _ = _list_rows(view, result.what)
    model = view.analysis.model
    explained = core.explain(model.tfidf_, core.dense_rows(model), model.terms_, list_rows, rows)
    titles = view.papers["title"].astype(str) if "title" in view.papers.columns else None
    return [
        reason.text(str(titles.iat[reason.closest]) if titles is not None and reason.closest >= 0 else "")
        for reason in explained
    ]


def describe(result: Found) -> str:
    """The order in words, for the caption above the table."""
    return f"by fit to the reading list \u201c{result.what}\u201d, best first"


def say_how(view: View, result: Found) -> None:
    """What orders the table, how it was made, and a way back."""
    for note in result.notes:
        st.info(escape_markdown(note), icon=":material/info:")
    left, right = st.columns([5, 1], vertical_alignment="center")
    left.markdown(
        f"**Recommended for** {escape_markdown(result.what)}",
        help="Every filtered paper that is not in the list, ranked by a linear classifier of the list's "
        "papers against the rest (TF-IDF and LSA of title and abstract, as arxiv-sanity-lite does). "
        f"With fewer than {core.MIN_LIST} papers in the list: by similarity to them. The why column "
        "names the terms a paper shares with the list and the list's paper closest to it.",
    )
    right.button("Clear", key=keys.PAPERS_RECOMMEND_CLEAR, on_click=clear, icon=":material/close:")


def clear() -> None:
    """Callback: forget ``rec``."""
    write_query({keys.URL_RECOMMEND: None})


def _on_choose() -> None:
    name = str(st.session_state.get(keys.PAPERS_RECOMMEND) or "")
    write_query({keys.URL_RECOMMEND: name or None, "like": None, "liketext": None, keys.URL_SORT: None})


def box(view: View) -> None:
    """A chooser of the library's lists: pick one to order the table by what fits it."""
    current = library_ui.store()
    if current.library is None or view.analysis is None:
        return
    names = library_ui._safely(current.library.list_names, [])
    chosen = requested()
    if not names and not chosen:
        return
    options = [NONE, *names, *([chosen] if chosen and chosen not in names else [])]
    sync_widget(keys.PAPERS_RECOMMEND, chosen)
    with st.expander("Recommended for a reading list", icon=":material/thumb_up:", expanded=bool(chosen)):
        st.selectbox(
            "Reading list",
            options,
            key=keys.PAPERS_RECOMMEND,
            format_func=lambda n: n or "(none: the usual order)",
            on_change=_on_choose,
            help="Orders the filtered papers by how well they fit the list, best first; the list's own "
            "papers are left out.",
        )

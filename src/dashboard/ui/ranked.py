"""The Papers page's ranked views: a search ordered by BM25, and papers like a paper or a text.

`found(view)` answers "which papers, in which order, with which score" for the view's ``q``,
``like`` and ``liketext`` (None when none is set). The word index comes from the prebuilt index, or
is built once per raw corpus (`dashboard.search.wordindex`); the vector space is `dashboard.search.like`'s
`DEFAULT_SPACE`, fitted once per corpus and number of topics. Both are shared read-only objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.filters import highlight_spans
from dashboard.search import like as similar
from dashboard.search import ranking
from dashboard.search.wordindex import WordIndex
from dashboard.ui import data, keys
from dashboard.ui.markup import escape_markdown, marked_html
from dashboard.ui.url import sync_widget, write_query

if TYPE_CHECKING:
    from dashboard.ui.view import View

LIKE_TOP = 100  # papers listed for "papers like this"
PREVIEW = 5  # best hits shown with their matched sentence highlighted, above the table
SENTENCES_FOR = 200  # the best hits get a "Matched sentence" (a regex pass per abstract: not for all hits)


@dataclass(frozen=True)
class Found:
    """Rows of ``view.papers`` best first, their scores, what ordered them, and notes for the user."""

    rows: np.ndarray
    scores: np.ndarray
    kind: str  # "search" or "like"
    query: str = ""  # the search actually run (after a typo or plural fallback)
    notes: tuple[str, ...] = ()
    what: str = ""  # for "like": the paper's title or the start of the text

    def scores_of(self, rows: np.ndarray) -> list[float]:
        """The score of each of ``rows`` (0 for a row it did not rank), rounded for a table.

        Rows in the found order read the scores as they are; others look them up by position, never
        by a dict of every hit (800k hits for a common word at a million papers: 0.07 s a run).
        """
        rows = np.asarray(rows, dtype=np.int64)
        if np.array_equal(rows, self.rows[: len(rows)]):
            picked = self.scores[: len(rows)]
        else:
            size = int(max(rows.max(initial=-1), self.rows.max(initial=-1))) + 1
            by_row = np.zeros(size)
            by_row[self.rows] = self.scores
            picked = by_row[rows]
        return np.round(picked, 3).tolist()


@data._per_corpus(max_entries=4)
def _raw_word_index(digest: str, _papers: pd.DataFrame) -> WordIndex:
    return WordIndex.build(data.search_text(digest, _papers))


def word_index(view: View) -> WordIndex:
    """The search's inverted index: the prebuilt index's, or built once for raw files."""
    stored = data.source_of(view.source.digest).stored_word_index()
    if stored is not None:
        return stored
    with st.spinner("Indexing the words for ranked search (once per corpus)…"):
        return _raw_word_index(view.source.digest, view.papers)


@data._per_corpus(max_entries=4)
def _space(digest: str, n_topics: int | None, name: str, _analysis: Any) -> similar.VectorSpace:
    space = similar.SPACES[name](_analysis)
    if isinstance(space, similar.LsaSpace):
        space.directions()  # computed now, once, not on the first text typed
    return space


def space(view: View, name: str = similar.DEFAULT_SPACE) -> similar.VectorSpace | None:
    """The vector space "papers like this" uses (None without an analysis)."""
    if view.analysis is None:
        return None
    return _space(view.source.digest, view.filters.k, name, view.analysis)


@st.cache_data(show_spinner=False, max_entries=32)
def _searched(digest: str, key: str, q: str, _index: WordIndex, _allowed: np.ndarray) -> ranking.SearchResult:
    return ranking.search(_index, q, _allowed)


@st.cache_data(show_spinner=False, max_entries=32)
def _liked(
    digest: str, key: str, _space: Any, row: int, text: str, _allowed: np.ndarray
) -> list[tuple[int, float]]:
    if row >= 0:
        return similar.like_paper(_space, row, LIKE_TOP, _allowed)
    return similar.like_text(_space, text, LIKE_TOP, _allowed)


def found(view: View) -> Found | None:
    """The ranked papers for this view's ``like``/``liketext`` or search; None when neither is set.

    "Papers like" takes the filters (search included) as given and orders by similarity; a search
    alone orders its hits by BM25, with the typo, plural and any-word fallbacks of `ranking.search`.
    """
    f = view.filters
    key = repr(f)
    if f.like or f.liketext:
        vectors = space(view)
        if vectors is None:
            why = "Similarity needs the topic model, which could not be fitted for this corpus."
            return Found(np.zeros(0, dtype=np.int64), np.zeros(0), "like", notes=(why,))
        row = -1
        what = f.liketext
        if f.like:
            from dashboard.ui.components import positions_of

            position = positions_of(view, [f.like]).get(f.like)
            if position is None:
                return Found(
                    np.zeros(0, dtype=np.int64),
                    np.zeros(0),
                    "like",
                    notes=(f'No paper "{f.like}" in this corpus.',),
                )
            row = position
            what = str(view.papers["title"].iloc[row]) if "title" in view.papers.columns else f.like
        pairs = _liked(view.source.digest, key, vectors, row, f.liketext, view.mask.to_numpy(dtype=bool))
        rows = np.array([r for r, _ in pairs], dtype=np.int64)
        scores = np.array([s for _, s in pairs], dtype=np.float64)
        notes = () if len(rows) else ("No filtered paper shares a term with it.",)
        return Found(rows, scores, "like", notes=notes, what=what)
    if not f.q:
        return None
    allowed = view.mask_without("q").to_numpy(dtype=bool)
    result = _searched(view.source.digest, key, f.q, word_index(view), allowed)
    return Found(result.rows, result.scores, "search", result.query, result.notes)


def liked_mask(view: View) -> np.ndarray | None:
    """Which papers "papers like" lists (the `LIKE_TOP` most similar that pass the other filters), as
    a boolean array over ``view.papers``; None when the view asks for no "papers like"."""
    if not (view.filters.like or view.filters.liketext):
        return None
    result = found(view)
    mask = np.zeros(len(view.papers), dtype=bool)
    if result is not None:
        mask[result.rows] = True
    return mask


# --------------------------------------------------------------------- what the page draws


def say_how(view: View, result: Found) -> None:
    """Notes about the order: fallbacks used, what the papers are like, and a way back."""
    for note in result.notes:
        st.info(escape_markdown(note), icon=":material/info:")
    if result.kind == "like":
        left, right = st.columns([5, 1], vertical_alignment="center")
        shown = result.what if len(result.what) <= 160 else result.what[:159] + "…"
        left.markdown(
            f"**Papers like** {escape_markdown(shown)}",
            help=f"The {LIKE_TOP} filtered papers closest to it by cosine similarity in the "
            f"{space_label(view)} space (1 = the same direction, 0 = nothing shared).",
        )
        right.button("Clear", key=keys.PAPERS_LIKE_CLEAR, on_click=clear_like, icon=":material/close:")


def space_label(view: View) -> str:
    """The name of the vector space in use, e.g. ``LSA`` (without building it: the help text of the box
    asked for it, and building the LSA space took 5 s on the first Papers page at a million papers)."""
    return similar.LABELS.get(similar.DEFAULT_SPACE, "") if view.analysis is not None else ""


def clear_like() -> None:
    """Callback: forget ``like`` and ``liketext``."""
    write_query({"like": None, "liketext": None})


def like_paper(paper_id: str) -> None:
    """Callback of "More like this": order the table by similarity to this paper."""
    write_query({"like": paper_id, "liketext": None, keys.URL_SORT: None, keys.URL_RECOMMEND: None})


def _on_like_text() -> None:
    text = " ".join(str(st.session_state.get(keys.PAPERS_LIKE_TEXT, "")).split())
    write_query(
        {
            "liketext": text[: similar.MAX_LIKE_TEXT] or None,
            "like": None,
            keys.URL_SORT: None,
            keys.URL_RECOMMEND: None,
        }
    )


def like_box(view: View) -> None:
    """A text box: paste a paragraph, an abstract or a title to list the papers most like it."""
    sync_widget(keys.PAPERS_LIKE_TEXT, view.filters.liketext)
    with st.expander(
        "Papers like a text of yours", icon=":material/manage_search:", expanded=bool(view.filters.liketext)
    ):
        st.text_area(
            "A paragraph, an abstract or a title",
            key=keys.PAPERS_LIKE_TEXT,
            max_chars=similar.MAX_LIKE_TEXT,
            height=100,
            help=f"Lists the {LIKE_TOP} filtered papers most similar to it ({space_label(view)} cosine "
            "similarity over title and abstract), best first.",
        )
        st.button(
            "Find similar papers", key=keys.PAPERS_LIKE_FIND, on_click=_on_like_text, icon=":material/search:"
        )


def sentences(view: View, result: Found, rows: np.ndarray) -> list[str]:
    """The matched sentence of each row (plain text), for the table's "Matched sentence" column."""
    texts = view.papers["abstract_clean"].iloc[rows].astype(str).tolist()
    return [ranking.matched_sentence(text, result.query)[0] for text in texts]


def preview(view: View, result: Found) -> None:
    """The best few hits with the sentence that matched, the search words highlighted."""
    if result.kind != "search" or not len(result.rows):
        return
    lines: list[str] = []
    for row in result.rows[:PREVIEW]:
        paper = view.papers.iloc[int(row)]
        sentence, spans = ranking.matched_sentence(str(paper.get("abstract_clean", "")), result.query)
        title = str(paper.get("title", ""))
        line = f"<b>{marked_html(title, highlight_spans(title, result.query))}</b>"
        if sentence:
            line += f" · {marked_html(sentence, spans)}"
        lines.append(f"<div class='pd-meta'>{len(lines) + 1}. {line}</div>")
    st.html("<div class='pd-meta'>Best matches:</div>" + "".join(lines))


def describe(result: Found) -> str:
    """The order in words."""
    if result.kind == "like":
        return "by similarity, most similar first"
    return "by relevance (BM25: title words weigh more), best first"

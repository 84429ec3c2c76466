"""Papers: the filtered table in the order asked for (by relevance for a search or "papers like"),
the selected paper in full, downloads of these rows."""

from typing import Any

import streamlit as st

from dashboard.ui import components, keys, ranked, recommended
from dashboard.ui import library as library_ui
from dashboard.ui.context import page_context
from dashboard.ui.markup import escape_markdown
from dashboard.ui.timings import mark
from dashboard.ui.url import param

view = page_context()
components.page_header("Papers", view, "Tick a row to read the paper, or two to four to compare them")
mark("context")
ranked.like_box(view)
recommended.box(view)
# None: no search, no "papers like" and no "Recommended for" (corpus order or a column)
result = recommended.found(view) or ranked.found(view)
if result is not None:
    (recommended.say_how if result.kind == recommended.KIND else ranked.say_how)(view, result)
if (result is None or len(result.rows) == 0) and components.empty_state(view, keys.PAPERS_CLEAR):
    st.stop()
if result is not None and len(result.rows) == 0:
    result = None  # e.g. a text sharing no term: the filtered papers as they are

mark("ranked")
kind = "" if result is None else result.kind
label = {"like": "Similarity", recommended.KIND: recommended.SCORE_LABEL}.get(kind, "Relevance")
column, descending = components.sort_controls(view, ranked=result is not None, relevance_label=label)
order = f"{'-' if descending else ''}{column}"
# Every filtered paper is sorted; the table gets the first rows of that order and "Show more" adds
# more (st.dataframe sends every row it is given: half a million for a common word at a million papers).
if result is not None and column == components.RELEVANCE:
    rows = result.rows
    how = recommended.describe(result) if kind == recommended.KIND else ranked.describe(result)
else:
    rows = components.ordered_rows(view, column, descending, None if result is None else result.rows)
    how = components.describe_order(column, descending)
mark("ordered")
# The download holds the rows of the table, in its order (a fallback search may list other papers
# than the strict filter).
if result is None:
    n_rows, table = int(view.mask.sum()), lambda: view.filtered
else:
    n_rows, table = len(rows), lambda: view.papers.iloc[rows]
components.download(table, view, stem="papers", key=keys.PAPERS_FORMAT, n_rows=n_rows)
library_ui.add_filtered(view, keys.PAPERS_ADD, None if result is None else rows)
mark("download")
shown_key = f"{keys.PAPERS_SHOWN}.{view.filters.slug()}.{order}"
# The first screen holds ten rows: a first page of `components.FIRST_ROWS`, not a thousand, is what a
# switch to the page sends, fits and draws; "Show more" adds the usual thousand at a time.
st.session_state.setdefault(shown_key, min(components.FIRST_ROWS, components.SHOW_MORE_ROWS))
n_shown = components.shown_rows(len(rows), shown_key)
scope = (
    f"All {len(rows):,} papers" if n_shown == len(rows) else f"The first {n_shown:,} of {len(rows):,} papers"
)
st.caption(
    escape_markdown(f"{scope}, {how}.") + (" The download holds all of them." if n_shown < len(rows) else "")
)
mark("caption")
extra: dict[str, list[Any]] | None = None  # columns added to the table: score, the matched sentence
if result is not None:
    ranked.preview(view, result)
    extra = {"score": result.scores_of(rows[:n_shown])}
    if result.kind == recommended.KIND:
        extra["why"] = recommended.reasons(view, result, rows[:n_shown])
    if result.kind == "search":
        matched = ranked.sentences(view, result, rows[: min(n_shown, ranked.SENTENCES_FOR)])
        extra["match"] = matched + [""] * (n_shown - len(matched))
mark("preview and sentences")
ticked = components.selectable_papers(
    components.rows_of(view.papers, rows[:n_shown], components.SELECTABLE_COLUMNS),
    view,
    key=f"{keys.PAPERS_TABLE}.{order}",
    height=components.table_height(n_shown, visible=10, row_px=components.WRAPPED_ROW_PX),
    extra=extra,
)
mark("table")
st.caption(components.TABLE_KEYBOARD_HINT)
components.show_more_button(n_shown, len(rows), shown_key)
if len(ticked) > 1:
    components.compare_button(ticked, key=f"{keys.PAPERS_COMPARE}.ticked")

requested = param(keys.URL_PAPER)
# Looked up once by id (a set of every id costs about a second per rerun at a million papers).
found = components.positions_of(view, [requested]) if requested else {}
st.divider()
if not found:
    st.caption("Tick a row above to read its abstract, links and most similar papers here.")
else:
    (row,) = found.values()
    if not view.mask.iloc[row]:
        st.caption("This paper is not among the filtered papers.")
    components.paper_card(view, view.papers.iloc[row])
    if view.analysis is not None:
        st.button(
            "More like this",
            key=f"{keys.PAPERS_MORE_LIKE}.{requested}",
            on_click=ranked.like_paper,
            args=(requested,),
            icon=":material/manage_search:",
            help="Lists the papers most similar to this one in the table above, best first.",
        )
    library_ui.paper_controls(view, row)

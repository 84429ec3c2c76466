"""Papers: the filtered table in the order asked for, the selected paper in full, downloads of these rows."""

import streamlit as st

from dashboard.ui import components, keys
from dashboard.ui import library as library_ui
from dashboard.ui.context import page_context
from dashboard.ui.markup import escape_markdown
from dashboard.ui.url import param

view = page_context()
components.page_header("Papers", view, "Tick a row to read the paper, or two to four to compare them")
if components.empty_state(view, keys.PAPERS_CLEAR):
    st.stop()

# Every column, abstracts included, made when the button is pressed (or now, for a short table).
n_filtered = int(view.mask.sum())
components.download(lambda: view.filtered, view, stem="papers", key=keys.PAPERS_FORMAT, n_rows=n_filtered)
library_ui.add_filtered(view, keys.PAPERS_ADD)
column, descending = components.sort_controls(view)
order = f"{'-' if descending else ''}{column}"
# Every filtered paper is sorted; the table gets the first rows of that order and "Show more" adds
# more (st.dataframe sends every row it is given: half a million for a common word at a million papers).
rows = components.ordered_rows(view, column, descending)
shown_key = f"{keys.PAPERS_SHOWN}.{view.filters.slug()}.{order}"
n_shown = components.shown_rows(len(rows), shown_key)
scope = (
    f"All {len(rows):,} papers" if n_shown == len(rows) else f"The first {n_shown:,} of {len(rows):,} papers"
)
st.caption(
    escape_markdown(f"{scope}, {components.describe_order(column, descending)}.")
    + (" The download holds all of them." if n_shown < len(rows) else "")
)
ticked = components.selectable_papers(
    view.papers.iloc[rows[:n_shown]],
    view,
    key=f"{keys.PAPERS_TABLE}.{order}",
    height=components.table_height(n_shown, visible=10, row_px=components.WRAPPED_ROW_PX),
)
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
    library_ui.paper_controls(view, row)

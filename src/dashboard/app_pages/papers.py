"""Papers: the filtered table, the selected paper in full, downloads of exactly these rows."""

import numpy as np
import streamlit as st

from dashboard.ui import components, keys
from dashboard.ui import library as library_ui
from dashboard.ui.context import page_context
from dashboard.ui.url import param

view = page_context()
components.page_header("Papers", view, "Select a row to read the paper")
if components.empty_state(view, keys.PAPERS_CLEAR):
    st.stop()

# Every column, abstracts included, made when the button is pressed (or now, for a short table).
n_shown = int(view.mask.sum())
components.download(lambda: view.filtered, view, stem="papers", key=keys.PAPERS_FORMAT, n_rows=n_shown)
library_ui.add_filtered(view, keys.PAPERS_ADD)
# The table is this page's main content: room for 20 rows before it scrolls.
# Only the rows of the page on screen are taken from the table: a common word selects half a million
# papers at a million, and copying them all is most of a search's time.
page = components.page_rows(n_shown, f"{keys.PAPERS_TABLE}.page.{view.filters.slug()}")
rows = np.flatnonzero(view.mask.to_numpy())[page]
components.selectable_papers(
    view.papers.iloc[rows], view, key=keys.PAPERS_TABLE, height=components.table_height(n_shown, visible=20)
)

requested = param(keys.URL_PAPER)
# Looked up once by id (a set of every id costs about a second per rerun at a million papers).
found = components.positions_of(view, [requested]) if requested else {}
st.divider()
if not found:
    st.caption("Select a row above to read its abstract, links and most similar papers here.")
else:
    (row,) = found.values()
    if not view.mask.iloc[row]:
        st.caption("This paper is not among the filtered papers.")
    components.paper_card(view, view.papers.iloc[row])
    library_ui.paper_controls(view, row)

"""Library: your reading lists with their papers, notes and tags; export, import; topic names."""

import streamlit as st

from dashboard.ui import components, newsince
from dashboard.ui import library as library_ui
from dashboard.ui.context import page_context

view = page_context()
components.page_header("Library", view, "Your reading lists, kept between visits")
current = library_ui.store()
if current.library is None:
    library_ui.unavailable(current)
    st.stop()
st.caption(library_ui.where_kept(current.location))
library_ui.notice()
newsince.new_since_section(view, current.library)

name = library_ui.lists_section(view, current.library)
if name is not None:
    shown = library_ui.entries_section(view, current.library, name)
    library_ui.export_section(view, name, shown)
library_ui.import_section(view, current.library, name)
newsince.saved_searches_section(view, current.library)
library_ui.topic_names_section(view, current.library)

"""The page-switch floor: a bare Streamlit multipage app (bench/page_switch.py times a switch in it).

Eight pages, as the dashboard has, each drawn by the same function: one line of sidebar text and one
Plotly chart, reached through `st.page_link`s in the sidebar that carry the URL's query as the
dashboard's do. Run from the repository root so it has the same `.streamlit/config.toml`.
"""

import plotly.graph_objects as go
import streamlit as st

TITLES = ("Overview", "Papers", "Topics", "Terms", "Trends", "Links & code", "Compare", "Library")


def page() -> None:
    st.title(st.session_state.get("floor.title", ""))
    st.plotly_chart(
        go.Figure(go.Bar(x=[3, 1, 2], y=["a", "b", "c"], orientation="h")), config={"displayModeBar": False}
    )


st.set_page_config(page_title="Floor", layout="wide")
pages = [
    st.Page(page, title=title, url_path=f"p{number}", default=number == 0)
    for number, title in enumerate(TITLES)
]
current = st.navigation(pages, position="hidden")
st.session_state["floor.title"] = current.title
query = {key: st.query_params.get_all(key) for key in st.query_params}
with st.sidebar:
    for target in pages:
        st.page_link(target, query_params=query, width="stretch")
    st.markdown("**57 of 57 papers**")
current.run()

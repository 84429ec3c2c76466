"""The floor: the least a Streamlit page with one Plotly chart can cost (bench/floor.py times it).

One line of sidebar text and one `st.plotly_chart`, run from the repository root so it has the same
`.streamlit/config.toml` (theme, toolbar, server settings) as the dashboard.
"""

import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="Floor", layout="wide")
st.sidebar.markdown("**57 of 57 papers**")
st.plotly_chart(
    go.Figure(go.Bar(x=[3, 1, 2], y=["a", "b", "c"], orientation="h")), config={"displayModeBar": False}
)

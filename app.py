"""Paper Dashboard: `streamlit run app.py` (add `-- --corpus PATH...` for another corpus)."""

import streamlit as st

st.set_page_config(page_title="Paper Dashboard", page_icon=":material/newspaper:", layout="wide")
st.title("Paper Dashboard")
st.write("Under construction.")

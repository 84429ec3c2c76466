"""Overview: headline figures, papers and code releases per topic, datasets and method names."""

import streamlit as st

from dashboard import charts
from dashboard.ui import components, keys, tables
from dashboard.ui.context import page_context

view = page_context()
components.page_header("Overview", view, "What is in this corpus")
if components.empty_state(view, keys.OVERVIEW_CLEAR):
    st.stop()

papers = view.shown
released = int(papers["code_status"].eq("released").sum())
n_links = int(papers["links"].map(len).sum())
venues = papers["venue"][papers["venue"].astype("str") != ""].nunique()
metrics = st.columns(5)
metrics[0].metric("Papers", f"{len(papers):,}", help=f"{len(view.papers):,} in the corpus")
if view.analysis is not None:
    shown_topics = papers.loc[~papers["is_outlier"], "topic"].nunique()
    metrics[1].metric("Topics", f"{shown_topics:,}", help=f"{view.n_topics_found} topics in the whole corpus")
else:
    metrics[1].metric("Topics", "–", help="Topics could not be computed for this corpus.")
share = released / len(papers)
metrics[2].metric("Released code", f"{share:.0%}", help=f"{released:,} papers link their own code")
metrics[3].metric("Links found", f"{n_links:,}", help="Every URL in the abstracts, de-duplicated per paper")
metrics[4].metric("Venues", f"{venues:,}")

left, right = st.columns(2)
if view.analysis is not None:
    with left:
        components.topic_bars(view, keys.OVERVIEW_BARS)
    with right:
        by_topic = tables.release_by(papers, "topic", labels=view.topic_names)
        st.plotly_chart(
            charts.release_rate(by_topic, title="Code released, per topic", group_title=""),
            config={"displayModeBar": False},
        )
else:
    with left:
        st.plotly_chart(charts.code_status_bars(papers["code_status"]), config={"displayModeBar": False})

left, right = st.columns(2)
with left:
    datasets = tables.list_counts(papers["datasets"])
    if datasets.empty:
        st.caption("No datasets or benchmarks are named in these abstracts.")
    else:
        st.plotly_chart(
            charts.top_counts(datasets, title="Datasets and benchmarks named", x_title="Papers"),
            config={"displayModeBar": False},
        )
with right:
    methods = tables.method_names(papers)
    if methods.empty:
        st.caption("No method names found in these abstracts.")
    else:
        st.markdown("**Names papers give their methods, models and benchmarks**")
        components.show_table(
            methods,
            {
                "name": st.column_config.TextColumn("Name", width=130),
                "papers": st.column_config.NumberColumn("Papers", width=60),
                "title": st.column_config.TextColumn("Paper (the first one naming it)", width=400),
            },
            visible=10,
            within=components.HALF_WIDTH_PX,
        )

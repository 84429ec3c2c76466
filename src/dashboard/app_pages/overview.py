"""Overview: headline figures, papers and code releases per topic, datasets and method names."""

import streamlit as st

from dashboard import charts
from dashboard.ui import components, data, keys, tables
from dashboard.ui.context import page_context

view = page_context()
components.page_header("Overview", view, "What is in this corpus")
if components.empty_state(view, keys.OVERVIEW_CLEAR):
    st.stop()

# Counted from per-corpus codes with the mask (`tables.Groups`): no copy of the filtered papers.
papers, digest, k = view.papers, view.source.digest, view.filters.k
in_view = view.mask.to_numpy(dtype=bool)
n_papers = int(in_view.sum())
is_released = data.released(digest, papers)
released = int(is_released[in_view].sum())
n_links = int(data.link_counts(digest, papers)[in_view].sum())
venue_names = tables.values_in_view(data.groups(digest, k, "venue", papers), in_view)
venues = sum(1 for venue in venue_names if str(venue) != "")
metrics = st.columns(5)
metrics[0].metric("Papers", f"{n_papers:,}", help=f"{len(view.papers):,} in the corpus")
if view.analysis is not None:
    topic_groups = data.groups(digest, k, "topic", papers)
    not_outlier = ~papers["is_outlier"].to_numpy(dtype=bool)
    shown_topics = len(tables.values_in_view(topic_groups, in_view & not_outlier))
    metrics[1].metric("Topics", f"{shown_topics:,}", help=f"{view.n_topics_found} topics in the whole corpus")
else:
    metrics[1].metric("Topics", "–", help="Topics could not be computed for this corpus.")
share = released / n_papers
metrics[2].metric("Released code", f"{share:.0%}", help=f"{released:,} papers link their own code")
metrics[3].metric("Links found", f"{n_links:,}", help="Every URL in the abstracts, de-duplicated per paper")
metrics[4].metric("Venues", f"{venues:,}")

left, right = st.columns(2)
if view.analysis is not None:
    with left:
        components.topic_bars(view, keys.OVERVIEW_BARS)
    with right:
        by_topic = tables.release_in_view(topic_groups, in_view, is_released, labels=view.topic_names)
        st.plotly_chart(
            charts.release_rate(by_topic, title="Code released, per topic", group_title=""),
            config={"displayModeBar": False},
        )
else:
    with left:
        statuses = tables.categories_in_view(data.groups(digest, k, "code_status", papers), in_view)
        st.plotly_chart(charts.code_status_bars(statuses), config={"displayModeBar": False})

left, right = st.columns(2)
with left:
    datasets = tables.counts_in_view(data.list_items(digest, "datasets", True, papers), in_view)
    if datasets.empty:
        st.caption("No datasets or benchmarks are named in these abstracts.")
    else:
        st.plotly_chart(
            charts.top_counts(datasets, title="Datasets and benchmarks named", x_title="Papers"),
            config={"displayModeBar": False},
        )
with right:
    method_items = data.list_items(digest, "method_names", False, papers)
    methods = tables.method_names_in_view(method_items, in_view, papers["title"])
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

"""Overview: headline figures, topics and code releases, datasets and method names, and (where the
corpus names them) authors, institutions, countries and decisions, each a chart that filters on click."""

from typing import Any

import numpy as np
import streamlit as st

from dashboard.figures import charts
from dashboard.schema import DECISION_TIERS
from dashboard.ui import components, data, keys, sidebar, tables
from dashboard.ui.context import page_context
from dashboard.ui.markup import markdown_table, shortened
from dashboard.ui.timings import mark

view = page_context()
components.page_header("Overview", view, "What is in this corpus")
if components.empty_state(view, keys.OVERVIEW_CLEAR):
    st.stop()

mark("context")
# Counted from per-corpus codes with the mask (`tables.Groups`): no copy of the filtered papers.
papers, digest, k = view.papers, view.source.digest, view.filters.model
in_view = view.mask.to_numpy(dtype=bool)
n_papers = int(in_view.sum())
is_released = data.released(digest, papers)
# counted where the mask is set, without copying the masked values (a few ms each at a million papers)
released = np.count_nonzero(is_released & in_view)
n_links = int(np.sum(data.link_counts(digest, papers), where=in_view))
venue_names = tables.values_in_view(data.groups(digest, k, "venue", papers), in_view)
venues = sum(1 for venue in venue_names if str(venue) != "")
# Fixed-width metrics in a wrapping row (`components.metric_px`): five with small gaps fit one line
# from 1024 px (676 px of page there); a narrower window wraps them instead of cutting labels.
metrics = st.container(horizontal=True, gap="small")
metrics.metric(
    "Papers",
    f"{n_papers:,}",
    help=f"{len(view.papers):,} in the corpus",
    width=components.metric_px(f"{n_papers:,}"),
)
if view.analysis is not None:
    topic_groups = data.groups(digest, k, "topic", papers)
    not_outlier = ~papers["is_outlier"].to_numpy(dtype=bool)
    shown_topics = len(tables.values_in_view(topic_groups, in_view & not_outlier))
    metrics.metric(
        "Topics",
        f"{shown_topics:,}",
        help=f"{view.n_topics_found} topics in the whole corpus",
        width=components.metric_px(f"{shown_topics:,}"),
    )
else:
    metrics.metric(
        "Topics", "–", help="Topics could not be computed for this corpus.", width=components.METRIC_PX
    )
share = released / n_papers
metrics.metric(
    "Released code",
    f"{share:.0%}",
    help=f"{released:,} papers link their own code",
    width=components.METRIC_PX,
)
metrics.metric(
    "Links found",
    f"{n_links:,}",
    help="Every URL in the abstracts, de-duplicated per paper",
    width=components.metric_px(f"{n_links:,}"),
)
if venues:
    metrics.metric("Venues", f"{venues:,}", width=components.metric_px(f"{venues:,}"))
else:
    metrics.metric(
        "Venues", "–", help="These files name no venue for these papers.", width=components.METRIC_PX
    )

if "has_abstract" in papers.columns:
    without = n_papers - np.count_nonzero(papers["has_abstract"].to_numpy(dtype=bool) & in_view)
    if without:
        st.caption(
            f":material/info: {without:,} of these {n_papers:,} {'paper' if n_papers == 1 else 'papers'} "
            f"{'has' if without == 1 else 'have'} no usable abstract (empty, or a placeholder such as "
            "“Abstract Unavailable”): counted here and in every table, left out of the topics, terms and "
            "similarity."
        )

mark("metrics")
# Charts in pairs; below 1280 px they stack (see `markup.STYLE`): half of 1024 px cuts their labels.
body = st.container(key=keys.OVERVIEW_STACK)
left, right = body.columns(2)
if view.analysis is not None:
    with left:
        components.topic_bars(view, keys.OVERVIEW_BARS)
    with right:
        if released:
            by_topic = tables.release_in_view(topic_groups, in_view, is_released, labels=view.topic_names)
            components.chart(
                charts.release_rate(by_topic, title="Code released, per topic", group_title=""),
                view,
                name="code-per-topic",
            )
        else:
            st.markdown("**Code released, per topic**")
            st.caption(
                "None of these papers links its own code repository, so there is no release rate to draw."
                + ("" if n_links else " Their abstracts hold no links at all.")
            )
else:
    with left:
        statuses = tables.value_counts_in_view(data.groups(digest, k, "code_status", papers), in_view)
        components.chart(charts.code_status_bars(statuses), view, name="code-status")

mark("topic charts")
left, right = body.columns(2)
with left:
    datasets = tables.counts_in_view(data.list_items(digest, "datasets", True, papers), in_view)
    if datasets.empty:
        st.caption("No datasets or benchmarks are named in these abstracts.")
    else:
        components.chart(
            charts.top_counts(datasets, title="Datasets and benchmarks named", x_title="Papers"),
            view,
            name="datasets",
        )
with right:
    # Counted per meaning: a name with the long form its abstract gives, so papers that merely share
    # an acronym (MAD, CAT) are not one row (`extract.name_meanings`).
    method_items = data.method_meanings(digest, papers)
    # The most named only: every name (127,497 for a common word at a million) once "All" is opened.
    top = tables.method_names_in_view(method_items, in_view, papers["title"], first=tables.METHOD_NAMES_SHOWN)
    if top.empty:
        st.caption("No method names found in these abstracts.")
    else:
        st.markdown("**Names papers give their methods, models and benchmarks**")
        columns = {
            "name": st.column_config.TextColumn(
                "Name", width=140, help="With its long form where the abstract spells it out"
            ),
            "papers": st.column_config.NumberColumn("Papers", width=60),
            # Names are short, titles long: 140 + 60 + 164 px at 1280 px (half of the page, less the
            # expander's inset).
            "title": st.column_config.TextColumn(
                "First paper naming it", width=400, help="The first paper in the corpus that names it"
            ),
        }
        # The most named as a plain table, drawn with the page: a data grid here held the page's first
        # chart back while the browser loaded and ran the grid's module (`bench/floor.py`), and a
        # screen reader walks a table cell by cell. Every name is in a grid made only once opened.
        st.caption(
            markdown_table(
                [str(config["label"]) for config in columns.values()],
                zip(top["name"], top["papers"], (shortened(t, 60) for t in top["title"]), strict=True),
                right=[1],
            )
        )
        n_names = tables.distinct_in_view(method_items, in_view)
        if n_names > tables.METHOD_NAMES_SHOWN:
            every = st.expander(f"All {n_names:,} names", key=keys.OVERVIEW_METHODS, on_change="rerun")
            if every.open:
                with every:
                    components.show_table(
                        tables.method_names_in_view(method_items, in_view, papers["title"]),
                        columns,
                        visible=10,
                        within=components.HALF_WIDTH_PX - components.EXPANDER_INSET_PX,
                        wrapped=True,  # long forms and titles: one line of half a page cut them short
                    )

mark("datasets and methods")
# People, places and decisions: only the charts this corpus has something for. Each counts under
# every filter but its own, as the topic bars do, so a click shows what it would add.
people = [
    ("author", "Top authors (click to filter)", keys.OVERVIEW_AUTHORS),
    ("institution", "Top institutions (click to filter)", keys.OVERVIEW_INSTITUTIONS),
    ("country", "Countries (click to filter)", keys.OVERVIEW_COUNTRIES),
]
charts_to_draw: list[tuple[str, str, str, Any, dict[str, str] | None, bool]] = []
for field, title, key in people:
    counts = components.value_counts_without(view, field)
    if not counts.empty:
        charts_to_draw.append((field, title, key, counts, None, False))
decisions = components.value_counts_without(view, "decision")
if sidebar.has_decisions(decisions[decisions > 0]):
    order = [tier for tier in DECISION_TIERS if tier in decisions.index]
    tier_names = {tier: sidebar.decision_label(tier) for tier in order}
    charts_to_draw.append(
        (
            "decision",
            "Papers per decision (click to filter)",
            keys.OVERVIEW_DECISIONS,
            decisions[order],
            tier_names,
            True,
        )
    )
if charts_to_draw:
    named = {
        "author": "Authors",
        "institution": "institutions",
        "country": "countries",
        "decision": "decisions",
    }
    parts = [named[field] for field, *_ in charts_to_draw]
    heading = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    body.header(heading[0].upper() + heading[1:])
    for start in range(0, len(charts_to_draw), 2):
        for column, (field, title, key, counts, value_names, keep_order) in zip(
            body.columns(2), charts_to_draw[start : start + 2], strict=False
        ):
            with column:
                components.filter_bars(
                    view, key, field, counts, title=title, names=value_names, keep_order=keep_order
                )

"""Topics: sizes, top terms, representative papers, the map and the topics' tree; clicks and selections
filter."""

import html

import pandas as pd
import streamlit as st

from dashboard.figures import charts
from dashboard.schema import rows_of
from dashboard.ui import components, data, keys, tables, topic_tree
from dashboard.ui import library as library_ui
from dashboard.ui.context import page_context, topics_unavailable
from dashboard.ui.markup import escape_markdown
from dashboard.ui.timings import mark
from dashboard.ui.url import update_filters
from dashboard.ui.view import View


@st.cache_data(show_spinner=False, max_entries=16)
def _topic_colours(digest: str, model: str, _papers: pd.DataFrame) -> dict[int, str]:
    """The map's colour per topic (`charts.colours_of_topics`), from the points the whole map draws:
    the same whatever the filter, and the tree's too."""
    if not {"x", "y", "topic"} <= set(_papers.columns):
        return {}
    return charts.colours_of_topics(rows_of(_papers, charts.sample_rows(len(_papers)), ("x", "y", "topic")))


def _topic_list(view: View, topic_colours: dict[int, str], find: str) -> str:
    """The map's topics as a list of coloured swatches and names, those whose name holds ``find``."""
    wanted = find.strip().lower()
    counts = view.papers["topic"].value_counts()
    items = []
    for topic in view.topic_order:
        name = view.topic_names.get(topic, str(topic))
        if topic not in topic_colours or (wanted and wanted not in name.lower()):
            continue
        colour = topic_colours[topic]
        items.append(
            f"<li><span class='pd-swatch' style='background:{colour}' aria-hidden='true'></span>"
            f"{html.escape(name)} <span class='pd-meta'>({int(counts.get(topic, 0)):,})</span></li>"
        )
    if not items:
        return f"<p class='pd-meta'>No topic's name holds &ldquo;{html.escape(find.strip())}&rdquo;.</p>"
    # Its look is in the app's one style sheet (`markup.STYLE`): a page sends no <style> of its own.
    return "<ul class='pd-topic-list'>" + "".join(items) + "</ul>"


def _topic_in_detail(view: View, model: str) -> None:
    """The chosen topic's top terms (a chart) and its most representative papers (buttons)."""
    topic_ids = [t for t in view.topic_order if t in set(view.analysis.topics["topic"])]
    chosen = (
        view.filters.topic[0] if view.filters.topic and view.filters.topic[0] in topic_ids else topic_ids[0]
    )
    focus = st.columns([2, 3])[0].selectbox(
        "Topic",
        topic_ids,
        index=topic_ids.index(chosen),
        format_func=lambda t: view.topic_names.get(t, str(t)),
        key=f"{keys.TOPICS_FOCUS}.{model}",
    )
    row = view.analysis.topics.loc[view.analysis.topics["topic"] == focus].iloc[0]
    left, right = st.container(key=keys.TOPICS_STACK_DETAIL).columns(2)
    with left:
        weights = pd.Series({str(term): float(weight) for term, weight in list(row["top_terms"])[:15]})
        components.chart(
            charts.top_counts(
                weights, title="Top terms and their weight", x_title="Weight in the topic", limit=15
            ),
            view,
            name="topic-terms",
        )
    with right:
        st.markdown("**Most representative papers**")
        representatives = components.positions_of(view, list(row["representative_ids"])[:8])
        titles = view.papers["title"].iloc[list(representatives.values())]
        for paper_id, title in zip(representatives, titles, strict=True):
            components.paper_button(
                str(title),
                paper_id,
                key=f"{keys.TOPICS_REPRESENTATIVE_PREFIX}.{model}.{focus}.{paper_id}",
                on_papers_page=False,
            )
        st.caption("A click opens the paper on the Papers page.")


view = page_context()
components.page_header("Topics", view, "Groups of papers on the same subject")
if view.analysis is None:
    topics_unavailable(view)  # being computed (the disk cache's build), or not available
    st.stop()

mark("context")
settings, note = st.columns([1, 3], vertical_alignment="bottom")
with settings:
    components.topics_number(view)
    topic_tree.refit_control(view)
with note:
    st.caption(
        f"Papers are grouped by {components.topic_space(view)}; each topic is named by its most "
        "distinctive terms. Click a bar to filter to that topic (click again to remove it); select "
        "points on the map to filter to those papers."
    )
# No match: only the empty state (charts and a table of zeros above it said nothing).
if components.empty_state(view, keys.TOPICS_CLEAR):
    st.stop()

# Widgets that show something of the model carry its identity in their key: another number of
# topics (or corpus) gives new widgets, so none keeps a topic, a label or a selection of the old one.
model = view.model_key
left, right = st.container(key=keys.TOPICS_STACK).columns(2)  # stacked below 1280 px
with left:
    components.topic_bars(view, f"{keys.TOPICS_BARS}.{model}", title="Papers per topic")
with right:
    others = view.mask_without("topic")
    counts = view.papers.loc[others.to_numpy(), "topic"].value_counts()
    overview = tables.topic_overview(view.analysis.topics, counts, view.topic_names)
    st.markdown("**Top terms per topic**")
    components.show_table(
        overview.drop(columns="topic"),
        {
            "name": st.column_config.TextColumn("Topic", width=130),  # names wrap: the terms get the room
            "papers": st.column_config.NumberColumn("Papers", width=60),
            "top terms": st.column_config.TextColumn("Top terms", width=600),
        },
        within=components.HALF_WIDTH_PX,
        wrapped=True,  # one line of half a page showed two or three of the terms
    )

mark("bars and terms")
notice = st.session_state.pop(keys.TOPICS_NOTICE, "")
if notice:
    st.caption(":material/info: " + escape_markdown(notice))
if view.filters.id or view.filters.box:
    st.button(
        f"Forget the {len(view.filters.id)} picked papers"
        if view.filters.id
        else "Forget the box on the map",
        key=keys.TOPICS_FORGET_PICKED,
        on_click=update_filters,
        args=(lambda f: f.without("id", "box"),),
        icon=":material/deselect:",
    )
st.header("Map of papers")
map_view = components.map_view(view)
colour_column, map_note = st.columns([1, 3], vertical_alignment="bottom")
with colour_column:
    colour = components.map_colour(view)
with map_note:
    if data.source_of(view.source.digest).predates_map:
        st.caption(
            ":material/info: This index was built before the paper map: its points are laid out one disc "
            "per topic. Rebuild it (`paper-dashboard index ... --out INDEX`) for a map where similar "
            "papers lie close together."
        )
    else:
        st.caption(
            "Each point is a paper, placed by t-SNE of its text so that similar papers lie close together. "
            + (
                "Drag a box (or lasso) to filter to those papers"
                if map_view == "interactive"
                else "On the interactive map, a box (or lasso) filters to those papers"
            )
            + ("; the search hits are the large outlined points." if view.filters.q else ".")
        )
topic_colours = _topic_colours(view.source.digest, model, view.papers)
components.map_view_control(map_view)
components.paper_map(view, f"{keys.TOPICS_MAP}.{model}", colour, topic_colours, picture=map_view == "picture")
# Labels are drawn only where they fit without covering one another (the largest clusters first):
# every topic is named here, with its colour, and on hover over its points.
# Drawn only while open (its list is a page of names nobody reads unasked).
topic_box = components.lazy_section(
    f"The {len(topic_colours)} topics on the map and their colours", f"{keys.TOPICS_MAP_FIND}.open"
)
if topic_box.open:
    with topic_box:
        find = st.text_input(
            "Find a topic", key=f"{keys.TOPICS_MAP_FIND}.{model}", placeholder="A word of its name"
        )
        components.html(_topic_list(view, topic_colours, find))
mark("map")
library_ui.add_filtered(view, keys.TOPICS_ADD)
topic_tree.tree_section(view, topic_colours)

mark("tree")
st.header("One topic in detail")
# Drawn only while open, like the tree above: its chart and eight buttons, below the fold, were drawn
# with every switch to the page. Open at once when the filters name one topic.
detail = components.lazy_section(
    "Its top terms and most representative papers",
    f"{keys.TOPICS_DETAIL}.open",
    ":material/zoom_in:",
    expanded=len(view.filters.topic) == 1,
)
if detail.open:
    with detail:
        _topic_in_detail(view, model)

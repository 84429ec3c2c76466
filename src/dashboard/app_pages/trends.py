"""Trends: how topics, terms, code release and decisions move across years and venues, down to the papers.

Each chart is drawn under every filter except the ones its clicks set (as the topic bars elsewhere),
so a click narrows the papers listed at the bottom without redrawing the chart it came from.
"""

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import export
from dashboard.analytics import trends
from dashboard.analytics.terms import fit_width
from dashboard.figures import trends as trend_charts
from dashboard.schema import OUTLIER_TOPIC
from dashboard.ui import components, data, keys, tables, trend_data
from dashboard.ui.context import page_context
from dashboard.ui.markup import escape_markdown
from dashboard.ui.timings import mark
from dashboard.ui.url import param, setting, sync_widget, update_filters, write_query

GROUPINGS = {"year": "All venues", "venue,year": "Per venue"}
SCALES = {"share": "Share of papers", "papers": "Papers"}
SHARES = {"venues": "Within venues", "pooled": "Pooled"}
NGRAMS = {"1": "Words", "2": "Two-word phrases"}
SHOWN_TOPICS = 5  # rising and as many falling topics drawn as lines (plus any topic filtered to)
SHOWN_MIX = 6  # topics named in the warning of changes that come from the venue mix
PAPERS_LISTED = 200
PERIOD_WIDTH = 150  # px of each period picker: "First half", "Last half" or a year

view = page_context()
mark("context")
components.page_header("Trends", view, "How topics, terms, code and decisions move across years and venues")
if components.empty_state(view, keys.TRENDS_CLEAR):
    st.stop()

papers, digest, k = view.papers, view.source.digest, view.filters.model
axes = trend_data.axes(digest, k, papers)


def mask_without(*names: str) -> np.ndarray:
    """The mask of every filter but ``names`` (what a chart whose clicks set them is drawn under)."""
    return view.array_without(*names)


years, venues = axes.span(mask_without("year", "venue", "topic"))
if len(years) < 2 and len(venues) < 2:
    year_text = f"one year ({years[0]})" if years else "no year"
    venue_text = f"one venue ({venues[0]})" if venues else "no venue"
    st.info(
        escape_markdown(
            f"Trends compare years and venues, and these papers have {year_text} and {venue_text}. "
            "Load a corpus that spans several years or venues (e.g. a conference over several years, "
            "or several conferences; the venue and year come from the files' “venue” and “year” fields), "
            "or loosen the year and venue filters. The other pages describe this corpus as it is."
        ),
        icon=":material/timeline:",
    )
    st.stop()


def _on_setting(widget_key: str, url_key: str, default: str) -> None:
    value = st.session_state.get(widget_key)
    write_query({url_key: None if value in (None, default) else str(value)})


def _on_pick(chart_key: str, click_keys: Sequence[str], extra: dict[str, Any] | None = None) -> None:
    """A click on a point, cell or bar: set exactly the filters it names (``click_keys``)."""
    state = st.session_state.get(chart_key)
    points = state["selection"]["points"] if state else []
    picked = []
    for point in points:
        values = point.get("customdata")
        if isinstance(values, list) and len(values) >= len(click_keys):
            picked.append(dict(zip(click_keys, values, strict=False)))
    if not picked:
        return
    update_filters(lambda f: trends.clicked_filters(f, picked))
    if extra:
        write_query(extra)


def _on_term(chart_key: str, both: Sequence[int]) -> None:
    """A click on a term's bar: search the term (as a phrase) in the papers of the two periods."""
    state = st.session_state.get(chart_key)
    points = state["selection"]["points"] if state else []
    chosen = [p["customdata"][0] for p in points if isinstance(p.get("customdata"), list)]
    if chosen:
        term = str(chosen[0])
        update_filters(
            lambda f: replace(trends.clicked_filters(f, [{"year": y} for y in both]), q=f'"{term}"')
        )


def clickable(fig: Any, name: str) -> None:
    """Draw ``fig``; a click sets the filters named in its ``meta["click_keys"]``."""
    key = f"{keys.TRENDS_CHART_PREFIX}.{name}"
    components.chart(
        fig,
        view,
        name=f"trends_{name}",
        key=key,
        on_select=partial(_on_pick, key, tuple(fig.layout.meta["click_keys"])),
        selection_mode="points",
    )


def csv_download(table: pd.DataFrame, stem: str, what: str) -> None:
    """The chart's data as CSV, named after the filters."""
    st.download_button(
        f"Download {what} (CSV)",
        data=export.to_bytes(table, "csv"),
        file_name=view.file_name(f"trends_{stem}", "csv"),
        mime=export.MIME_TYPES.get("csv"),
        icon=":material/download:",
        on_click="ignore",
        key=f"{keys.TRENDS_CHART_PREFIX}.{stem}.download",
    )


mark("span")  # bench/: when each part of a run finished
# --------------------------------------------------------------------- settings (in the URL)
several_years, several_venues = len(years) >= 2, len(venues) >= 2
by = setting(keys.URL_TRENDS_BY, GROUPINGS, default="year") if several_venues else "year"
scale = setting(keys.URL_TRENDS_SCALE, SCALES, default="share")
# Within venues or pooled matters only where the years' papers come from several venues (papers without
# a venue count as one); with one they are the same, and the page says nothing of it.
grid = trends.coverage(axes, mask_without("year", "topic"))
mixed_venues = len(grid) >= 2 and by == "year"
method = setting(keys.URL_TRENDS_SHARES, SHARES, default=trends.DEFAULT_METHOD) if mixed_venues else "pooled"
default_from, default_to = trends.default_periods(years)
chosen_from, chosen_to = param(keys.URL_TRENDS_FROM), param(keys.URL_TRENDS_TO)
year_texts = [str(y) for y in years]
# One year given: the other end of the span is the other year (a half-made choice must not snap back).
low = int(chosen_from) if chosen_from in year_texts else (years[0] if chosen_to in year_texts else None)
high = int(chosen_to) if chosen_to in year_texts else (years[-1] if chosen_from in year_texts else None)
explicit = low is not None and high is not None and low != high
if explicit:
    low, high = sorted((int(low or 0), int(high or 0)))
    from_years, to_years = (low,), (high,)  # type: tuple[int, ...], tuple[int, ...]
else:
    from_years, to_years = default_from, default_to


def _period_name(period: Sequence[int]) -> str:
    return str(period[0]) if len(period) == 1 else f"{period[0]}–{period[-1]}"


# One row that wraps, each control as wide as it needs: in four fixed columns "Papers" was cut off at
# 1024 px.
controls = st.container(horizontal=True, vertical_alignment="bottom")
if several_venues:
    with controls:
        sync_widget(keys.TRENDS_BY, by)
        st.segmented_control(
            "Venues",
            list(GROUPINGS),
            format_func=lambda g: GROUPINGS[g],
            key=keys.TRENDS_BY,
            on_change=_on_setting,
            args=(keys.TRENDS_BY, keys.URL_TRENDS_BY, "year"),
            width="content",
        )
with controls:
    sync_widget(keys.TRENDS_SCALE, scale)
    st.segmented_control(
        "Show",
        list(SCALES),
        format_func=lambda s: SCALES[s],
        key=keys.TRENDS_SCALE,
        on_change=_on_setting,
        args=(keys.TRENDS_SCALE, keys.URL_TRENDS_SCALE, "share"),
        help="Topic lines as the share of each year's papers (normalised) or as raw paper counts.",
        width="content",
    )
if mixed_venues and several_years:
    with controls:
        sync_widget(keys.TRENDS_SHARES, method)
        st.segmented_control(
            "Shares",
            list(SHARES),
            format_func=lambda m: SHARES[m],
            key=keys.TRENDS_SHARES,
            on_change=_on_setting,
            args=(keys.TRENDS_SHARES, keys.URL_TRENDS_SHARES, trends.DEFAULT_METHOD),
            help="Within venues: a topic's share in each venue, standardised to one venue mix, so a year "
            "that holds other venues does not move it. Pooled: all the year's papers together.",
            width="content",
        )
if several_years:
    halves = "halves"
    options = [halves, *year_texts]
    labels = {halves: "First half", **{y: y for y in year_texts}}
    # the two periods side by side: where the row wraps, they move to the next line together
    periods = controls.container(horizontal=True, vertical_alignment="bottom", width="content")
    with periods:
        sync_widget(keys.TRENDS_FROM, str(from_years[0]) if explicit else halves)
        st.selectbox(
            "Compare",
            options,
            format_func=lambda o: labels[o],
            key=keys.TRENDS_FROM,
            on_change=_on_setting,
            args=(keys.TRENDS_FROM, keys.URL_TRENDS_FROM, halves),
            width=PERIOD_WIDTH,
        )
    with periods:
        labels_to = {halves: "Last half", **{y: y for y in year_texts}}
        sync_widget(keys.TRENDS_TO, str(to_years[0]) if explicit else halves)
        st.selectbox(
            "with",
            options,
            format_func=lambda o: labels_to[o],
            key=keys.TRENDS_TO,
            on_change=_on_setting,
            args=(keys.TRENDS_TO, keys.URL_TRENDS_TO, halves),
            width=PERIOD_WIDTH,
        )
st.caption(
    "Click a point, cell or bar for its papers (counted at the bottom): it sets the year, venue and topic "
    "filters of what was clicked. Each chart ignores the filters its own clicks set."
)
period_names = (_period_name(from_years), _period_name(to_years)) if several_years else ("", "")
per_venue = by == "venue,year"
has_topics = view.analysis is not None

# The rising terms' two period sums (a new filter's papers read once per period: the costliest step of
# a filter change at a million papers) start now, in a thread, and are read in their section below;
# the topic section is drawn meanwhile (scipy sums the rows without the GIL).
if several_years:
    ngram = setting(keys.URL_TRENDS_NGRAM, NGRAMS, default="1")
    words = int(ngram)  # words per term
    with st.spinner("Counting terms (once per corpus and setting)…"):
        counts = data.term_counts(digest, words, False, papers)
    term_mask = mask_without("year")
    rising_terms = data.in_background(
        trends.rising_terms,
        counts,
        trends.period_mask(axes, from_years, term_mask),
        trends.period_mask(axes, to_years, term_mask),
        within=(
            trend_data.period_counts(digest, words, tuple(from_years), counts, axes),
            trend_data.period_counts(digest, words, tuple(to_years), counts, axes),
        ),
    )

mark("settings")
# --------------------------------------------------------------------- which venues each year holds
if several_years and mixed_venues:
    st.markdown("**Which venues each year holds** (papers)")
    # As wide as its columns, not the page: a few numbers spread over 1,000 px read as a sparse table.
    st.dataframe(
        grid.replace(0, np.nan).reset_index(),
        hide_index=True,
        width="content",
        row_height=components.ROW_PX,
        placeholder=components.MISSING,
        column_config={
            "venue": st.column_config.TextColumn("Venue", width=140),
            **{y: st.column_config.NumberColumn(y, format="localized", width=80) for y in grid.columns},
        },
    )

# --------------------------------------------------------------------- topic share over time
if several_years and has_topics:
    st.header("Topic share over time")
    line_mask = mask_without("year", "topic", *(("venue",) if per_venue else ()))
    shares = trends.topic_shares(axes, by, line_mask, view.topic_names, method=method)
    changes = trends.topic_changes(axes, from_years, to_years, line_mask, view.topic_names, method=method)
    rising = changes[changes["change"] == "rising"].head(SHOWN_TOPICS)["topic"].tolist()
    falling = changes[changes["change"] == "falling"].tail(SHOWN_TOPICS)["topic"].tolist()
    shown = list(dict.fromkeys([*view.filters.topic, *rising, *falling]))
    if rising or falling:
        lines_title = (
            f"The {len(rising)} fastest-rising and {len(falling)} fastest-falling topics, "
            f"{period_names[0]} → {period_names[1]}"
        )
    else:  # nothing changed clearly: the largest topics, not the least flat ones
        largest = shares[shares["topic"] != OUTLIER_TOPIC].groupby("topic")["papers"].sum()
        shown = list(dict.fromkeys([*view.filters.topic, *largest.nlargest(SHOWN_TOPICS).index.tolist()]))
        lines_title = (
            f"No topic rose or fell clearly, {period_names[0]} → {period_names[1]}: the largest topics"
        )
    within = method == "venues" and mixed_venues
    if within:
        lines_title += " (shares within venues)"
    with st.spinner("Finding each topic's terms per year (once per corpus)…"):
        year_terms = trend_data.topic_year_terms(digest, k, papers)
    clickable(
        trend_charts.topic_lines(
            shares,
            topics=shown,
            terms=year_terms,
            value=scale,
            by_venue=per_venue,
            within_venues=within,
            title=lines_title,
        ),
        "topic_lines",
    )
    how = {
        True: "Shares within venues: each topic's share in each venue, standardised to the venue mix of all "
        "these papers (a venue × year model of its counts), so a year that holds other venues does not "
        "move a topic by itself; the hover gives the pooled share too. ",
        False: "Pooled shares: all of a year's papers together, so a year that holds other venues (see the "
        "grid) moves every topic's share. "
        if mixed_venues
        else "",
    }[within]
    st.caption(
        how + f"A topic rose or fell when its share moved by more than {trends.CLEAR_Z:g} standard errors "
        "(a two-proportion z over the papers of each period); the fastest are ranked by weighted log-odds "
        f"of its papers in the later period against the earlier one. Shares over fewer than "
        f"{trends.MIN_PAPERS} papers are not drawn. Hover a point for its papers and the topic's terms "
        "that year (one topic model; c-TF-IDF of its papers that year)."
    )
    if within:
        lone = [
            (year, str(grid.index[grid[year] > 0][0])) for year in grid.columns if (grid[year] > 0).sum() == 1
        ]
        if lone:
            named = ", ".join(f"{year} ({venue})" for year, venue in lone)
            st.caption(
                escape_markdown(
                    f"One venue only in {named}: there the share within venues (hollow points) assumes the "
                    "other venues changed as that one did."
                )
            )
        unlinked = sorted(int(y) for y in shares.loc[shares["share"].isna(), "year"].unique())
        if unlinked:
            st.caption(
                f"{', '.join(map(str, unlinked))}: no venue links these years to the others, so they "
                "have no share within venues."
            )
        if len(changes) and (changes["within_change"] == "not compared").all():
            st.caption(
                "No venue has papers in both periods, so they cannot be compared within venues; "
                "choose Pooled (above) to compare them anyway."
            )
    mix_items = trends.venue_mix_items(changes) if mixed_venues else []
    if mix_items:
        st.warning(
            f"For {len(mix_items)} topics the pooled share and the share within venues disagree: the "
            "pooled change comes from which venues the periods hold.\n"
            + "\n".join(f"- {escape_markdown(item)}" for item in mix_items[:SHOWN_MIX])
            + (f"\n- and {len(mix_items) - SHOWN_MIX} more (venue_mix_only in the topics' CSV below)"
               if len(mix_items) > SHOWN_MIX else ""),
            icon=":material/warning:",
        )  # fmt: skip
    left, right = st.columns(2)
    with left:
        share_columns = ["group", "year", "venue", "topic", "label", "papers", "group_papers", "share",
                         "pooled_share", "compared_papers"]  # fmt: skip
        csv_download(shares[share_columns], "topic_shares", "the topic shares")
    with right:
        csv_download(changes, "topic_changes", "rising and falling topics")
elif has_topics:
    st.caption(f"Topic share over time needs papers from two years or more (these are all from {years[0]}).")

mark("topic shares")
# --------------------------------------------------------------------- rising and falling terms
if several_years:
    st.header(f"Rising and falling terms, {period_names[0]} → {period_names[1]}")
    settings, note = st.columns([1, 2], vertical_alignment="bottom")
    with settings:
        sync_widget(keys.TRENDS_NGRAM, ngram)
        st.segmented_control(
            "Terms",
            list(NGRAMS),
            format_func=lambda n: NGRAMS[n],
            key=keys.TRENDS_NGRAM,
            on_change=_on_setting,
            args=(keys.TRENDS_NGRAM, keys.URL_TRENDS_NGRAM, "1"),
        )
    with note:
        st.caption(
            "Scored with the Terms page's weighted log-odds with an informative prior, so a rare word does "
            "not top the list by chance. A click searches the term in the two periods' papers."
        )
    term_table = rising_terms.result()
    if term_table.empty:
        st.caption("No terms to compare in these papers.")
    else:
        # Stacked below 1280 px: side by side at 1024 px, a topic's long label left its bars too little
        # room and cut the axis title.
        left, right = st.container(key=keys.TRENDS_STACK_CHANGES).columns(2)
        with left:
            fig = trend_charts.change_bars(term_table, name="term", title="Terms", period_names=period_names)
            fig.layout.meta = {"click_keys": ("year",)}
            key = f"{keys.TRENDS_CHART_PREFIX}.terms"

            components.chart(
                fig,
                view,
                name="trends_terms",
                key=key,
                on_select=partial(_on_term, key, (*from_years, *to_years)),
                selection_mode="points",
            )
        with right:
            if has_topics:
                topic_table = (
                    trends.topic_changes(
                        axes,
                        from_years,
                        to_years,
                        mask_without("year", "topic"),
                        view.topic_names,
                        method=method,
                    )
                    if per_venue
                    else changes  # the topic lines' mask: the same table
                )
                picked_topics = pd.concat([topic_table.head(8), topic_table.tail(8)]).drop_duplicates("topic")
                clickable(
                    trend_charts.change_bars(
                        picked_topics, name="label", key="topic", title="Topics", period_names=period_names
                    ),
                    "topic_changes",
                )
        csv_download(term_table, f"terms_{ngram}", "rising and falling terms")

mark("terms")


# The sections below the terms are drawn only while their expanders are open: drawn with every switch to
# the page, out of sight below the fold, their charts and grids were most of what the browser did to
# show the page. Each label says what it holds; its downloads come with it.


def venue_section() -> None:
    """Each topic's share per venue (a heatmap) and each venue's most distinctive topics."""
    heat_mask = mask_without("venue", "topic", *(("year",) if per_venue else ()))
    heat_by = "venue,year" if per_venue else "venue"
    venue_shares = trends.topic_shares(axes, heat_by, heat_mask, view.topic_names)
    order = [t for t in view.topic_order if t in set(venue_shares["topic"])]
    clickable(
        trend_charts.share_heatmap(
            venue_shares,
            topics=order,
            by_year=per_venue,
            title="Topic share per venue and year" if per_venue else "Topic share per venue",
        ),
        "venue_heatmap",
    )
    distinctive = trends.distinctive_topics(axes, mask_without("venue", "topic"), view.topic_names)
    st.markdown("**Each venue's most distinctive topics**")
    widths = {"venue": 120, "label": 380, "papers": 80, "share": 120, "score": 80}  # px, as configured
    columns = {
        "venue": st.column_config.TextColumn("Venue", width=widths["venue"]),
        "label": st.column_config.TextColumn("Topic", width=widths["label"]),
        "papers": st.column_config.NumberColumn("Papers", width=widths["papers"]),
        "share": st.column_config.NumberColumn("Share of the venue", format="percent", width=widths["share"]),
        "score": st.column_config.NumberColumn("Score", format="%.1f", width=widths["score"]),
    }
    within = components.PAGE_WIDTH_PX - components.EXPANDER_INSET_PX
    # One line a row: a topic's name cut at a word with "…", not at the cell's edge (at 1024 px).
    room = tables.fit_widths(widths, within)["label"]
    components.show_table(
        distinctive.drop(columns="topic").assign(
            label=[fit_width(str(label), room - tables.CELL_PADDING_PX) for label in distinctive["label"]]
        ),
        columns,
        within=within,
    )
    st.caption("Score: weighted log-odds of the topic in the venue against the other venues.")
    left, right = st.columns(2)
    with left:
        csv_download(venue_shares, "venue_topics", "the topic shares per venue")
    with right:
        csv_download(distinctive, "venue_distinctive", "the distinctive topics")


def code_section() -> None:
    """The share of papers that release code, per year (and venue)."""
    release = trends.code_release(axes, by, mask_without("year", *(("venue",) if per_venue else ())))
    clickable(trend_charts.code_release_lines(release, by=by), "code_release")
    if mixed_venues:
        st.caption(
            "All venues together: a year that holds other venues (see the grid above) moves this share too; "
            "Per venue (above) draws each venue apart."
        )
    if "live_share" not in release.columns:
        st.caption("Live repositories appear here once the repositories have been checked (`check-code`).")
    csv_download(release, "code_release", "the code release shares")


def decision_section() -> None:
    """Acceptance per topic, per research area and per year."""
    st.caption(
        "Accepted: oral, spotlight, poster or accept, as a share of the papers with a known decision "
        "(reject and withdrawn count as decided, unknown does not)."
    )
    left, right = st.container(key=keys.TRENDS_STACK_DECISIONS).columns(2)
    by_topic = trends.acceptance(axes, "topic", mask_without("topic"), view.topic_names)
    by_topic = by_topic[by_topic["topic"] != OUTLIER_TOPIC]
    with left:
        if has_topics and len(by_topic):
            clickable(
                trend_charts.acceptance_bars(by_topic, key="topic", title="Acceptance per topic"),
                "accept_topic",
            )
            csv_download(by_topic, "acceptance_topic", "acceptance per topic")
    with right:
        by_area = trends.acceptance(axes, "area", mask_without("area"))
        if len(by_area):
            clickable(
                trend_charts.acceptance_bars(by_area, key="area", title="Acceptance per research area"),
                "accept_area",
            )
            csv_download(by_area, "acceptance_area", "acceptance per area")
    by_year = trends.acceptance(axes, "year", mask_without("year"))
    if len(by_year) >= 2:
        clickable(trend_charts.acceptance_line(by_year), "accept_year")
        csv_download(by_year, "acceptance_year", "acceptance per year")


def papers_section(positions: np.ndarray) -> None:
    """The first `PAPERS_LISTED` of the papers at ``positions``, as a table."""
    # Only the listed rows and columns are read: no copy of the filtered table (all its text).
    listed = papers.iloc[positions[:PAPERS_LISTED]]
    table = pd.DataFrame(
        {
            "title": listed["title"].astype(str),
            "venue": listed.get("venue", ""),
            "year": listed.get("year", pd.NA),
            "topic": listed["topic"].map(lambda t: view.topic_names.get(int(t), str(t)))
            if has_topics
            else "",
            "code": listed["code_status"].astype(str).str.replace("_", " "),
        }
    )
    components.show_table(
        table,
        {
            "title": st.column_config.TextColumn("Title", width=380),
            "venue": st.column_config.TextColumn("Venue", width=80),
            "year": st.column_config.NumberColumn("Year", format="%d", width=60),
            "topic": st.column_config.TextColumn("Topic", width=220),
            "code": st.column_config.TextColumn("Code", width=100),
        },
        visible=10,
        within=components.PAGE_WIDTH_PX - components.EXPANDER_INSET_PX,
    )


# --------------------------------------------------------------------- topic by venue
if several_venues and has_topics:
    box = components.lazy_section(
        f"Topic by venue ({len(venues)} venues): each topic's share and each venue's most distinctive topics",
        keys.TRENDS_VENUES_OPEN,
        ":material/grid_on:",
    )
    if box.open:
        with box:
            venue_section()
elif has_topics:
    st.caption(f"Topic by venue needs two venues or more (these papers are all from {venues[0]}).")

mark("venues")
# --------------------------------------------------------------------- code release over time
if several_years:
    box = components.lazy_section(
        f"Code release over time ({years[0]}–{years[-1]})", keys.TRENDS_CODE_OPEN, ":material/code:"
    )
    if box.open:
        with box:
            code_section()

mark("code release")
# --------------------------------------------------------------------- decisions
if trends.has_decisions(axes, mask_without("topic", "area", "year")):
    box = components.lazy_section(
        "Decisions: acceptance per topic, research area and year",
        keys.TRENDS_DECISIONS_OPEN,
        ":material/gavel:",
    )
    if box.open:
        with box:
            decision_section()

mark("decisions")
# --------------------------------------------------------------------- the papers behind a click
st.header("The papers")
chosen = [name for name in ("year", "venue", "topic", "area") if getattr(view.filters, name)]
positions = np.flatnonzero(view.mask.to_numpy(dtype=bool))
n_listed = min(len(positions), PAPERS_LISTED)
st.caption(
    escape_markdown(
        f"{len(positions):,} papers ({view.describe()})"
        + ("" if chosen else " · click a chart to narrow them down")
    )
)
if len(positions):
    box = components.lazy_section(
        f"List the first {n_listed} of these {len(positions):,} papers"
        if len(positions) > n_listed
        else f"List these {len(positions):,} papers",
        keys.TRENDS_PAPERS_OPEN,
        ":material/list:",
    )
    if box.open:
        with box:
            papers_section(positions)
if st.button("Open these papers on the Papers page", key=keys.TRENDS_OPEN_PAPERS, icon=":material/article:"):
    components.go_to_papers()

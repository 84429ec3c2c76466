"""Reviews: scores per decision, where acceptance fell, borderline and split papers, per topic and area.

Shown where the corpus has review scores (Paper Copilot's rating/confidence, OpenReview official
reviews). Each chart is drawn under every filter but the ones its clicks set, as on Trends: a score bin
sets ``rating``, a tier's or the confidence chart's points set ``id``, a topic or area bar sets
``topic``/``area``; the papers they name are listed at the bottom with their scores.
"""

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.analytics import reviews
from dashboard.figures import reviews as review_charts
from dashboard.schema import DECISION_TIERS, OUTLIER_TOPIC
from dashboard.ui import components, keys, sidebar
from dashboard.ui.context import page_context
from dashboard.ui.markup import escape_markdown
from dashboard.ui.url import update_filters

PAPERS_LISTED = 200
SHOWN = 10  # borderline papers each way, split decisions

view = page_context()
components.page_header("Reviews", view, "Review scores and decisions")
papers = view.papers
if not reviews.has_scores(papers):
    st.info(
        "This corpus carries no review scores: load files with reviewers' ratings (Paper Copilot's "
        "“rating” and “confidence”, or OpenReview notes fetched with their replies).",
        icon=":material/reviews:",
    )
    st.stop()
if components.empty_state(view, keys.REVIEWS_CLEAR):
    st.stop()


def _on_pick(chart_key: str, click_keys: Sequence[str]) -> None:
    """A click on a bar or a point: set the filter it names to the values clicked."""
    state = st.session_state.get(chart_key)
    points = state["selection"]["points"] if state else []
    values: dict[str, list[Any]] = {}
    for point in points:
        data = point.get("customdata")
        if isinstance(data, list) and data:
            for key, value in zip(click_keys, data, strict=False):
                values.setdefault(key, []).append(value)
    if not values:
        return

    def changed(f: Any) -> Any:
        changes: dict[str, Any] = {}
        for key, picked in values.items():
            if key == "rating":
                low, high = str(picked[0]).split("-")
                changes["rating"] = (float(low), float(high))
            elif key == "topic":
                changes["topic"] = tuple(int(v) for v in picked)
            else:
                changes[key] = tuple(str(v) for v in picked)
        return replace(f, **changes)

    update_filters(changed)


def clickable(fig: Any, name: str, alt: str = "") -> None:
    """Draw ``fig``; a click sets the filters named in its ``meta["click_keys"]``."""
    key = f"{keys.REVIEWS_CHART_PREFIX}.{name}"
    components.chart(
        fig,
        view,
        name=f"reviews_{name}",
        key=key,
        alt=alt,
        on_select=partial(_on_pick, key, tuple(fig.layout.meta["click_keys"])),
        selection_mode=("points", "lasso") if "id" in fig.layout.meta["click_keys"] else "points",
    )


def papers_table(table: pd.DataFrame, name: str) -> None:
    """Papers with their scores; ticking one opens it on the Papers page."""
    shown = pd.DataFrame(
        {
            "title": table["title"],
            "decision": table["decision"],
            "scores": table["scores"] if "scores" in table else table["ratings"].map(reviews.score_text),
            "rating_mean": table["rating_mean"],
            "rating_sd": table["rating_sd"],
        }
    )
    key = f"{keys.REVIEWS_TABLE_PREFIX}.{name}.{view.filters.slug()}"
    event = st.dataframe(
        shown,
        key=key,
        on_select="rerun",
        selection_mode="single-row",
        hide_index=True,
        width="stretch",
        height=components.table_height(len(shown), visible=10),
        placeholder=components.MISSING,
        column_config={
            "title": st.column_config.TextColumn("Title", width=300),
            "decision": st.column_config.TextColumn("Decision", width=80),
            "scores": st.column_config.TextColumn("Scores", width=100, help="In review order"),
            "rating_mean": st.column_config.NumberColumn("Mean", format="%.2f", width=50),
            "rating_sd": st.column_config.NumberColumn(
                "SD", format="%.2f", width=45, help="Spread of the scores"
            ),
        },
    )
    rows = event.selection.rows if event is not None else []
    if rows:
        components.go_to_papers({keys.URL_PAPER: str(table["id"].iloc[int(rows[0])])})


# --------------------------------------------------------------------- headline figures
in_view = view.mask.to_numpy(dtype=bool)
rated = reviews.rated_papers(papers, in_view)
pairs = reviews.review_pairs(papers, in_view)
row = st.container(horizontal=True, gap="small")
row.metric("Rated papers", f"{len(rated):,}", help=f"{int(in_view.sum()):,} papers in view",
           width=components.metric_px(f"{len(rated):,}"))  # fmt: skip
row.metric("Reviews", f"{int(papers['n_reviews'].to_numpy()[in_view].sum()):,}", width=components.METRIC_PX)
if len(rated):
    row.metric("Mean score", f"{rated['rating_mean'].mean():.2f}", help="Mean of each paper's mean score",
               width=components.METRIC_PX)  # fmt: skip
if not len(rated):
    st.caption("None of these papers has a review score: loosen the filters (the score filters too).")
    st.stop()
warning = reviews.mixed_scales(papers, in_view)
if warning:
    st.warning(escape_markdown(warning), icon=":material/warning:")
    st.dataframe(
        reviews.scales(papers, in_view),
        hide_index=True,
        column_config={
            "scale": "Venue and year (or stated scale)",
            "stated": "Stated scale",
            "papers": "Rated papers",
            "lowest": "Lowest score",
            "highest": "Highest score",
        },
    )

# --------------------------------------------------------------------- per decision
tiers_in_view = [t for t in DECISION_TIERS if t in set(rated["tier"])]
if len(tiers_in_view) > 1 or tiers_in_view != ["unknown"]:
    st.header("Scores per decision")
    by_tier = reviews.rated_papers(papers, view.array_without("id"))
    names = {t: sidebar.decision_label(t) for t in DECISION_TIERS}
    clickable(review_charts.tier_strips(by_tier, tiers_in_view, names), "tiers")
    st.caption("Each point is a paper's mean score (click or lasso points to list them below).")

    bins_mask = view.array_without("rating")
    bins = reviews.score_bins(papers, bins_mask)
    cut = reviews.acceptance_cut(papers, bins_mask)
    if bins["decided"].sum():
        clickable(review_charts.acceptance_bins(bins, cut), "bins")
        if cut is not None:
            st.caption(
                f"Dashed line: accepted and rejected papers cross at a mean score of {cut:g} (the cut that "
                "misplaces fewest decided papers). Click a bar to list its papers."
            )
        if warning:
            st.caption(":material/warning: These bins pool the scales named above.")

    st.header("Borderline papers")
    accepted_low, rejected_high = reviews.borderline(papers, in_view, SHOWN)
    if not len(accepted_low) and not len(rejected_high):
        st.caption("No accepted paper scored below the cut and no rejected one above it.")
    else:
        st.markdown(f"**Accepted with a mean below {cut:g}**" if cut is not None else "**Accepted, low**")
        if len(accepted_low):
            papers_table(accepted_low, "accepted_low")
        else:
            st.caption("None.")
        st.markdown(
            f"**Not accepted with a mean of {cut:g} or more**" if cut is not None else "**Rejected, high**"
        )
        if len(rejected_high):
            papers_table(rejected_high, "rejected_high")
        else:
            st.caption("None.")

st.header("Split decisions")
split = reviews.split_decisions(papers, in_view, SHOWN)
if len(split):
    st.caption("The papers whose reviewers disagreed most: highest standard deviation of the scores first.")
    papers_table(split, "split")
else:
    st.caption("No paper in view has two scores or more.")

# --------------------------------------------------------------------- per topic and area
st.header("Per topic and research area")
several_years = papers["year"].to_numpy()[in_view & reviews.rated_mask(papers)]
years = sorted({int(y) for y in several_years if not pd.isna(y)})
# Below 1280 px the pair goes one under the other (`markup.STYLE`): half of 1024 px cut the labels.
left, right = st.container(key=keys.REVIEWS_STACK).columns(2)
group_columns = {
    "group": st.column_config.TextColumn("Group", width=180),
    "rated": st.column_config.NumberColumn("n", width=50, help="Rated papers"),
    "rating_mean": st.column_config.NumberColumn("Mean score", format="%.2f", width=80),
    "accept_share": st.column_config.NumberColumn("Accepted", format="percent", width=80),
}


def group_section(table: pd.DataFrame, key: str, title: str) -> None:
    """The bars of a grouping, then its figures as a table: mean score, accepted share, n."""
    clickable(review_charts.group_bars(table, key=key, title=title), f"{key}s")
    # Drawn only once opened (as the Overview's names): a grid in a closed expander still costs a run.
    every = st.expander(
        f"Mean score, accepted share and n per {key}",
        key=f"{keys.REVIEWS_CHART_PREFIX}.{key}.figures",
        on_change="rerun",
    )
    if not every.open:
        return
    with every:
        components.show_table(
            table[table["rated"] > 0].sort_values("rating_mean", ascending=False),
            group_columns,
            visible=8,
            within=components.HALF_WIDTH_PX - components.EXPANDER_INSET_PX,
        )


if view.analysis is not None:
    by_topic = reviews.group_scores(papers, "topic", view.array_without("topic"), labels=view.topic_names)
    by_topic = by_topic[by_topic["key"] != OUTLIER_TOPIC]
    with left:
        if len(by_topic):
            group_section(by_topic, "topic", "Mean score per topic")
by_area = reviews.group_scores(papers, "area", view.array_without("area"))
with right:
    if len(by_area):
        group_section(by_area, "area", "Mean score per research area")
if len(years) >= 2:
    by = "topic" if view.analysis is not None else "area"
    per_year = reviews.group_scores(papers, by, in_view, labels=view.topic_names, per_year=True)
    per_year = per_year[per_year["rated"] > 0]
    # Each cell: the mean score, the share accepted (where decided) and the rated papers behind them.
    cells = per_year.assign(
        cell=[
            f"{mean:.2f}" + (f" · {share:.0%} accepted" if share == share else "") + f" · n={int(rated)}"
            for mean, share, rated in zip(
                per_year["rating_mean"], per_year["accept_share"], per_year["rated"], strict=True
            )
        ]
    )
    table = cells.pivot(index="group", columns="year", values="cell").fillna("")
    table.columns = [str(c) for c in table.columns]
    st.markdown(f"**Mean score, share accepted and rated papers per {by} and year**")
    st.dataframe(table.reset_index(), hide_index=True, column_config={"group": by.capitalize()})

# --------------------------------------------------------------------- confidence
st.header("Confidence against score")
if len(pairs):
    clickable(
        review_charts.confidence_scatter(reviews.rated_papers(papers, view.array_without("id"))), "confidence"
    )
    r = reviews.correlation(pairs)
    st.caption(
        f"Over {len(pairs):,} reviews, "
        + (
            f"score and confidence correlate at r = {r:.2f} (Pearson)."
            if r is not None
            else "no correlation."
        )
    )
else:
    st.caption("These papers' sources give no confidences beside the scores.")

# --------------------------------------------------------------------- the papers behind a click
st.header("The papers")
listed = rated.head(PAPERS_LISTED)
st.caption(
    escape_markdown(
        f"{len(rated):,} rated papers ({view.describe()})"
        + (f"; the first {PAPERS_LISTED} are listed" if len(rated) > PAPERS_LISTED else "")
        + ". Tick one to open it."
    )
)
papers_table(listed, "papers")
if st.button("Open these papers on the Papers page", key=keys.REVIEWS_OPEN_PAPERS, icon=":material/article:"):
    components.go_to_papers()
if view.filters.id and st.button("Forget the picked papers", key=f"{keys.REVIEWS_OPEN_PAPERS}.forget"):
    update_filters(lambda f: replace(f, id=()))
    st.rerun()

"""Plotly figures of the Trends page: free functions from `dashboard.trends` tables to a `go.Figure`.

Every clickable element (a point, a cell, a bar) carries what it stands for in ``customdata``: its
first entries are the values of the filters a click sets, in the order of the figure's
``meta["click_keys"]`` (e.g. ``["topic", "year"]``), so the page turns a click into filters without
knowing the chart. Corpus text is escaped (`charts.safe_label`).

    >>> import pandas as pd
    >>> table = pd.DataFrame({"group": ["2021", "2022"], "year": [2021, 2022], "venue": ["", ""],
    ...                       "papers": [10, 10], "released": [2, 5], "share": [0.2, 0.5]})
    >>> code_release_lines(table, by="year").layout.meta["click_keys"]
    ('year',)
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts import ACCENT, MUTED, PALETTE, safe_label, wrapped_label

RISING = "#2f9e44"
FALLING = "#e8590c"
LIVE = "#7048e8"
SUBPLOT_COLUMNS = 3


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, height: int, keys: Sequence[str]) -> None:
    fig.update_layout(
        title={"text": html.escape(title), "x": 0, "xanchor": "left"},
        margin={"l": 10, "r": 10, "t": 60, "b": 40},
        height=height,
        clickmode="event+select",
        dragmode=False,
        meta={"click_keys": tuple(keys)},
        hoverlabel={"align": "left"},
    )
    if x_title:
        fig.update_xaxes(title_text=x_title)
    if y_title:
        fig.update_yaxes(title_text=y_title)


def _year_axis(fig: go.Figure, years: Sequence[int]) -> None:
    # Years are categories of a time line: whole numbers only, every year named.
    fig.update_xaxes(tickmode="array", tickvals=list(years), ticktext=[str(y) for y in years])


def topic_lines(
    shares: pd.DataFrame,
    *,
    topics: Sequence[int],
    terms: Mapping[tuple[int, int], Sequence[str]] | None = None,
    value: str = "share",
    by_venue: bool = False,
    title: str = "Topic share per year",
) -> go.Figure:
    """One line per topic in ``topics`` over the years, from `trends.topic_shares` (by year or venue,year).

    ``value`` is ``share`` (of the group's papers) or ``papers``; the hover names the topic's
    year-specific terms (``terms[(topic, year)]``). ``by_venue`` draws one panel per venue. A click on
    a point sets topic and year (and venue, per venue).
    """
    terms = terms or {}
    years = sorted(int(y) for y in shares["year"].dropna().unique())
    venues = sorted(str(v) for v in shares["venue"].unique()) if by_venue else [""]
    n_cols = min(SUBPLOT_COLUMNS, len(venues))
    n_rows = int(np.ceil(len(venues) / max(n_cols, 1)))
    fig = make_subplots(
        rows=n_rows,
        cols=max(n_cols, 1),
        shared_yaxes=True,
        subplot_titles=[safe_label(v, 30) for v in venues] if by_venue else None,
        horizontal_spacing=0.04,
        vertical_spacing=0.12 if n_rows > 1 else 0.1,
    )
    colour = {int(t): PALETTE[i % len(PALETTE)] for i, t in enumerate(topics)}
    for v_index, venue in enumerate(venues):
        row, col = v_index // max(n_cols, 1) + 1, v_index % max(n_cols, 1) + 1
        panel = shares[shares["venue"].astype(str) == venue] if by_venue else shares
        for topic in topics:
            line = panel[panel["topic"] == topic].sort_values("year")
            if line.empty:
                continue
            label = safe_label(line["label"].iloc[0], 40)
            hover_terms = [
                wrapped_label(", ".join(terms.get((int(topic), int(y)), [])) or "–", width=50, max_lines=2)
                for y in line["year"]
            ]
            fig.add_trace(
                go.Scatter(
                    x=line["year"].astype(int).to_numpy(),
                    y=line[value].to_numpy(),
                    mode="lines+markers",
                    name=label,
                    legendgroup=str(topic),
                    showlegend=v_index == 0,
                    line={"color": colour[int(topic)], "width": 2},
                    marker={"size": 8},
                    customdata=np.column_stack(
                        [
                            line["topic"].astype(int).to_numpy(),
                            line["year"].astype(int).to_numpy(),
                            line["venue"].astype(str).to_numpy(),
                            line["papers"].astype(int).to_numpy(),
                            hover_terms,
                        ]
                    ).tolist(),
                    hovertemplate=(
                        f"<b>{label}</b><br>%{{x}}"
                        + (" · %{customdata[2]}" if by_venue else "")
                        + ": %{y:"
                        + (".1%" if value == "share" else ",")
                        + "}<br>%{customdata[3]:,} papers<br>terms that year: %{customdata[4]}"
                        + "<extra>click for the papers</extra>"
                    ),
                ),
                row=row,
                col=col,
            )
    _year_axis(fig, years)
    if value == "share":
        fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    else:
        fig.update_yaxes(rangemode="tozero")
    keys = ("topic", "year", "venue") if by_venue else ("topic", "year")
    height = 420 if n_rows == 1 else 260 * n_rows + 120
    _layout(fig, title, "", "Share of the papers" if value == "share" else "Papers", height, keys)
    fig.update_layout(
        showlegend=True, legend={"orientation": "h", "y": -0.12, "yanchor": "top", "font": {"size": 11}}
    )
    fig.update_layout(height=height + 22 * int(np.ceil(len(topics) / 3)))
    return fig


def change_bars(
    table: pd.DataFrame,
    *,
    name: str,
    title: str,
    key: str | None = None,
    period_names: tuple[str, str] = ("before", "after"),
) -> go.Figure:
    """Diverging bars of the score of `trends.rising_terms` / `topic_changes` (rising right, falling left).

    ``name`` is the column naming a bar (``term`` or ``label``); ``key`` the filter a click sets (``topic``)
    or None (a term sets no year/venue/topic: the page's click sets the search and the years). The hover
    gives both shares and counts, so a rare term is seen as rare.
    """
    table = table.sort_values("score", ascending=True)
    count_from = "from_papers"
    before, after = period_names
    hover = [
        f"{safe_label(n)}<br>{before}: {fs:.2%} ({int(cf):,} papers)"
        f"<br>{after}: {ts:.2%} ({int(ct):,} papers)"
        f"<br>score (log-odds z): {s:+.1f}"
        for n, fs, ts, cf, ct, s in zip(
            table[name], table["from_share"], table["to_share"], table[count_from], table["to_papers"],
            table["score"], strict=True,
        )
    ]  # fmt: skip
    click_value = table[key].to_numpy() if key else table[name].to_numpy()
    fig = go.Figure(
        go.Bar(
            x=table["score"].to_numpy(),
            y=[safe_label(n, 40) for n in table[name]],
            orientation="h",
            marker_color=[RISING if s > 0 else FALLING for s in table["score"]],
            customdata=np.column_stack([click_value, hover]).tolist(),
            hovertemplate="%{customdata[1]}<extra>click for the papers</extra>",
        )
    )
    fig.update_yaxes(
        automargin=True, categoryorder="array", categoryarray=[safe_label(n, 40) for n in table[name]]
    )
    fig.add_vline(x=0, line_color=MUTED, line_width=1)
    height = int(max(260, min(1200, 22 * len(table) + 120)))
    _layout(fig, title, f"Falling ← score → rising ({before} → {after})", "", height, (key or name,))
    fig.update_layout(showlegend=False, bargap=0.25)
    return fig


def share_heatmap(
    shares: pd.DataFrame,
    *,
    topics: Sequence[int],
    by_year: bool = False,
    title: str = "Topic share per venue",
) -> go.Figure:
    """Heatmap of topic share (rows: ``topics``) per venue or venue and year (columns), from `topic_shares`.

    Plotly heatmaps send no selection events to Streamlit, so every cell also has an invisible marker
    that takes the hover and the click; a click sets venue and topic (and year, per venue and year).
    """
    groups = shares.drop_duplicates("group")[["group", "year", "venue"]]
    groups = groups.sort_values(["venue", "year"]) if by_year else groups.sort_values("venue")
    names = [safe_label(g, 24) for g in groups["group"]]
    wide = shares.pivot_table(index="topic", columns="group", values="share", aggfunc="sum").reindex(
        index=list(topics), columns=list(groups["group"])
    )
    counts = shares.pivot_table(index="topic", columns="group", values="papers", aggfunc="sum").reindex(
        index=list(topics), columns=list(groups["group"])
    )
    label_of = dict(zip(shares["topic"], shares["label"], strict=False))
    rows = [safe_label(f"{t}: {label_of.get(t, t)}" if t >= 0 else label_of.get(t, t), 40) for t in topics]
    z = wide.fillna(0).to_numpy()
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=names,
            y=rows,
            colorscale="Blues",
            zmin=0,
            hoverinfo="skip",
            colorbar={"title": {"text": "share"}, "tickformat": ".0%", "thickness": 12},
        )
    )
    xs, ys, data = [], [], []
    for i, topic in enumerate(topics):
        for j, (_, group) in enumerate(groups.iterrows()):
            xs.append(names[j])
            ys.append(rows[i])
            year = "" if pd.isna(group["year"]) else int(group["year"])
            data.append(
                [int(topic), str(group["venue"]), year, int(np.nan_to_num(counts.iat[i, j])), z[i, j]]
            )
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers",
            marker={"size": 18, "opacity": 0, "symbol": "square"},
            customdata=data,
            hovertemplate="%{y}<br>%{x}: %{customdata[4]:.1%} (%{customdata[3]:,} papers)"
            "<extra>click for the papers</extra>",
            showlegend=False,
        )
    )
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(automargin=True, tickangle=-45 if by_year else 0, side="bottom")
    keys = ("topic", "venue", "year") if by_year else ("topic", "venue")
    _layout(fig, title, "", "", int(max(320, min(1600, 22 * len(topics) + 170))), keys)
    fig.update_layout(showlegend=False)
    return fig


def code_release_lines(
    table: pd.DataFrame, *, by: str, title: str = "Papers with released code"
) -> go.Figure:
    """Share of papers with released code per year: one line for all venues, or one per venue.

    From `trends.code_release` (by ``year`` or ``venue,year``); with ``live_share`` a dashed line of live
    repositories too. A click sets the year (and venue, per venue).
    """
    per_venue = by == "venue,year"
    years = sorted(int(y) for y in table["year"].dropna().unique())
    fig = go.Figure()
    venues = sorted(str(v) for v in table["venue"].unique()) if per_venue else [""]
    for i, venue in enumerate(venues):
        line = (table[table["venue"].astype(str) == venue] if per_venue else table).sort_values("year")
        name = safe_label(venue, 30) if per_venue else "All venues"
        colour = PALETTE[i % len(PALETTE)] if per_venue else ACCENT
        measures = [("share", "released", "released code", "solid")]
        if "live_share" in line.columns:
            measures.append(("live_share", "live", "live repository", "dash"))
        for column, count, what, dash in measures:
            fig.add_trace(
                go.Scatter(
                    x=line["year"].astype(int).to_numpy(),
                    y=line[column].to_numpy(),
                    mode="lines+markers",
                    name=name if dash == "solid" else f"{name} (live)",
                    line={"color": colour if dash == "solid" else LIVE, "dash": dash, "width": 2},
                    marker={"size": 8},
                    customdata=np.column_stack(
                        [
                            line["year"].astype(int).to_numpy(),
                            line["venue"].astype(str).to_numpy(),
                            line[count].astype(int).to_numpy(),
                            line["papers"].astype(int).to_numpy(),
                        ]
                    ).tolist(),
                    hovertemplate=f"<b>{name}</b> %{{x}}<br>{what}: %{{y:.1%}}"
                    " (%{customdata[2]:,} of %{customdata[3]:,} papers)<extra>click for the papers</extra>",
                )
            )
    _year_axis(fig, years)
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    keys = ("year", "venue") if per_venue else ("year",)
    _layout(fig, title, "", "Share of the papers", 380, keys)
    fig.update_layout(showlegend=per_venue or "live_share" in table.columns)
    return fig


def acceptance_bars(table: pd.DataFrame, *, key: str, title: str, limit: int = 40) -> go.Figure:
    """Acceptance share per topic or area (from `trends.acceptance`), highest first; a click sets ``key``."""
    table = table.sort_values(["share", "decided"], ascending=[False, False]).head(limit)
    fig = go.Figure(
        go.Bar(
            x=table["share"].to_numpy(),
            y=[safe_label(label, 40) for label in table["label"]],
            orientation="h",
            marker_color=ACCENT,
            text=[f"{s:.0%} of {d:,}" for s, d in zip(table["share"], table["decided"], strict=True)],
            textposition="outside",
            cliponaxis=False,
            customdata=np.column_stack(
                [table[key].to_numpy(), table["accepted"].to_numpy(), table["decided"].to_numpy()]
            ).tolist(),
            hovertemplate="%{y}<br>accepted: %{customdata[1]:,} of %{customdata[2]:,} decided"
            "<extra>click for the papers</extra>",
        )
    )
    right = max(0.1, float(table["share"].max()) / 0.7) if len(table) else 1.0
    fig.update_xaxes(range=[0, min(right, 1.45)], tickformat=".0%")
    fig.update_yaxes(autorange="reversed", automargin=True)
    _layout(fig, title, "Accepted share of decided papers", "", int(max(260, 24 * len(table) + 110)), (key,))
    fig.update_layout(showlegend=False, bargap=0.3)
    return fig


def acceptance_line(table: pd.DataFrame, *, title: str = "Acceptance share per year") -> go.Figure:
    """Acceptance share per year (from `trends.acceptance` with key ``year``); a click sets the year."""
    table = table.sort_values("year")
    fig = go.Figure(
        go.Scatter(
            x=table["year"].astype(int).to_numpy(),
            y=table["share"].to_numpy(),
            mode="lines+markers",
            line={"color": ACCENT, "width": 2},
            marker={"size": 9},
            customdata=np.column_stack(
                [
                    table["year"].astype(int).to_numpy(),
                    table["accepted"].to_numpy(),
                    table["decided"].to_numpy(),
                ]
            ).tolist(),
            hovertemplate="%{x}: %{y:.1%}<br>%{customdata[1]:,} of %{customdata[2]:,} decided papers"
            "<extra>click for the papers</extra>",
        )
    )
    _year_axis(fig, [int(y) for y in table["year"]])
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    _layout(fig, title, "", "Accepted share", 340, ("year",))
    fig.update_layout(showlegend=False)
    return fig

"""Plotly figures of the Trends page: free functions from `dashboard.analytics.trends` tables to a
`go.Figure`.

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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.analytics.trends import MIN_PAPERS
from dashboard.figures import colours
from dashboard.figures.charts import ACCENT, LEGEND_BELOW, MUTED, PALETTE, figure, safe_label, wrapped_label

RISING = colours.LIGHT.rising  # the dark theme's are swapped in by `colours.recolour`
FALLING = colours.LIGHT.falling
LIVE = colours.LIGHT.live
SUBPLOT_COLUMNS = 3


def _figure(data: list[dict[str, Any]], *, keys: Sequence[str], **layout: Any) -> go.Figure:
    """`charts.figure` with the Trends layout: clicks select, a drag does not zoom, the filter keys a
    click sets in ``meta`` (see the module's docstring), hover boxes left-aligned."""
    return figure(
        data,
        margin_top=60,
        clickmode="event+select",
        dragmode=False,
        meta={"click_keys": tuple(keys)},
        hoverlabel={"align": "left"},
        **layout,
    )


def _year_axis(years: Sequence[int]) -> dict[str, Any]:
    # Years are categories of a time line: whole numbers only, every year named.
    return {"tickmode": "array", "tickvals": list(years), "ticktext": [str(y) for y in years]}


def _panels(n: int, columns: int, gap_x: float = 0.04, gap_y: float = 0.14) -> list[tuple[list, list]]:
    """(x domain, y domain) of ``n`` panels in rows of ``columns``, left to right, top to bottom."""
    n_cols = max(1, min(columns, n))
    n_rows = int(np.ceil(n / n_cols))
    width = (1 - gap_x * (n_cols - 1)) / n_cols
    height = (1 - gap_y * (n_rows - 1)) / n_rows
    domains = []
    for i in range(n):
        row, col = divmod(i, n_cols)
        left, top = col * (width + gap_x), 1 - row * (height + gap_y)
        x_domain = [round(max(0.0, left), 6), round(min(1.0, left + width), 6)]
        domains.append((x_domain, [round(max(0.0, top - height), 6), round(min(1.0, top), 6)]))
    return domains


def topic_lines(
    shares: pd.DataFrame,
    *,
    topics: Sequence[int],
    terms: Mapping[tuple[int, int], Sequence[str]] | None = None,
    value: str = "share",
    by_venue: bool = False,
    within_venues: bool = False,
    title: str = "Topic share per year",
) -> go.Figure:
    """One line per topic in ``topics`` over the years, from `trends.topic_shares` (by year or venue,year).

    ``value`` is ``share`` (of the group's papers) or ``papers``; the hover names the topic's papers of
    the group's (its n), and its year-specific terms (``terms[(topic, year)]``). ``within_venues``:
    the shares are standardised over venues and the hover gives the pooled share too; a year of one
    venue (the ``venues`` column) among years of several is a hollow point, its share resting on that
    venue's change alone. A share over
    fewer than `trends.MIN_PAPERS` papers (or none: a year no venue links to the others) is not drawn.
    ``by_venue`` draws one panel per venue. A click on a point sets topic and year (and venue, per
    venue).
    """
    # Traces as plain dicts and the panels' axes laid out here, validated once by go.Figure: adding
    # dozens of traces to a make_subplots grid one by one validates each twice, seconds at 27k papers.
    terms = terms or {}
    years = sorted(int(y) for y in shares["year"].dropna().unique())
    wanted = shares[shares["topic"].isin(list(topics))].sort_values(["venue", "topic", "year"])
    venues = sorted(str(v) for v in wanted["venue"].unique()) if by_venue else [""]
    domains = _panels(len(venues), SUBPLOT_COLUMNS)
    colour = {int(t): PALETTE[i % len(PALETTE)] for i, t in enumerate(topics)}
    order = {int(t): i for i, t in enumerate(topics)}
    fmt = ".1%" if value == "share" else ","
    layout: dict[str, Any] = {"annotations": []}
    traces: list[dict[str, Any]] = []
    legend_done: set[int] = set()
    groups = wanted.groupby(["venue", "topic"] if by_venue else "topic", sort=False)
    panel_of = {venue: i for i, venue in enumerate(venues)}
    for key, line in sorted(groups, key=lambda item: order[int(item[0][1] if by_venue else item[0])]):
        venue, topic = (str(key[0]), int(key[1])) if by_venue else ("", int(key))
        panel = panel_of[venue]
        label = safe_label(line["label"].iloc[0], 40)
        hover_terms = [
            wrapped_label(", ".join(terms.get((topic, int(y)), [])) or "–", width=50, max_lines=2)
            for y in line["year"]
        ]
        axis = "" if panel == 0 else str(panel + 1)
        group_papers = line["group_papers"] if "group_papers" in line else line["papers"]
        pooled = line["pooled_share"] if "pooled_share" in line else line["share"]
        shown = (group_papers >= MIN_PAPERS) & line[value].notna()
        held = line["venues"] if "venues" in line else pd.Series(1, index=line.index)
        lone = within_venues and value == "share" and int(wanted.get("venues", held).max()) > 1
        hollow = [bool(lone and n == 1) for n in held]
        traces.append(
            {
                "type": "scatter",
                "x": line["year"].astype(int).tolist(),
                "y": [float(y) if ok else None for y, ok in zip(line[value], shown, strict=True)],
                "xaxis": "x" + axis,
                "yaxis": "y" + axis,
                "mode": "lines+markers",
                "name": label,
                "legendgroup": str(topic),
                "showlegend": topic not in legend_done,
                "line": {"color": colour[topic], "width": 2},
                "marker": {
                    "size": 8,
                    "symbol": ["circle-open" if h else "circle" for h in hollow],
                    "line": {"width": 2, "color": colour[topic]},
                },
                "customdata": [
                    [
                        topic,
                        int(y),
                        venue,
                        int(n),
                        h,
                        int(total),
                        float(p),
                        "; one venue only" if lone_year else "",
                    ]
                    for y, n, h, total, p, lone_year in zip(
                        line["year"], line["papers"], hover_terms, group_papers, pooled, hollow, strict=True
                    )
                ],
                "hovertemplate": f"<b>{label}</b><br>%{{x}}"
                + (" · %{customdata[2]}" if by_venue else "")
                + f": %{{y:{fmt}}}"
                + (
                    " within venues (pooled: %{customdata[6]:.1%})"
                    if within_venues and value == "share"
                    else ""
                )
                + "<br>%{customdata[3]:,} papers of %{customdata[5]:,}%{customdata[7]}"
                + "<br>terms that year: %{customdata[4]}<extra>click for the papers</extra>",
            }
        )
        legend_done.add(topic)
    for panel, (venue, (x_domain, y_domain)) in enumerate(zip(venues, domains, strict=True)):
        axis = "" if panel == 0 else str(panel + 1)
        in_panel = wanted.loc[wanted["venue"].astype(str) == venue, "year"]
        ticks = sorted({int(y) for y in in_panel}) if by_venue and len(in_panel) else years
        layout["xaxis" + axis] = {
            "domain": x_domain,
            "anchor": "y" + axis,
            "tickmode": "array",
            "tickvals": ticks,
            "ticktext": [str(y) for y in ticks],
        }
        layout["yaxis" + axis] = {
            "domain": y_domain,
            "anchor": "x" + axis,
            "rangemode": "tozero",
            "tickformat": ".0%" if value == "share" else "",
            **({} if panel == 0 else {"matches": "y"}),
        }
        if by_venue:
            layout["annotations"].append(
                {
                    "text": safe_label(venue, 30),
                    "x": sum(x_domain) / 2,
                    "y": y_domain[1],
                    "xref": "paper",
                    "yref": "paper",
                    "xanchor": "center",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "font": {"size": 14},
                }
            )
    y_title = "Share of the papers" if value == "share" else "Papers"
    for panel in range(0, len(venues), max(1, min(SUBPLOT_COLUMNS, len(venues)))):
        layout["yaxis" + ("" if panel == 0 else str(panel + 1))]["title"] = {"text": y_title}
    n_rows = int(np.ceil(len(venues) / max(1, min(SUBPLOT_COLUMNS, len(venues)))))
    height = (420 if n_rows == 1 else 260 * n_rows + 120) + 22 * int(np.ceil(len(topics) / 3))
    keys = ("topic", "year", "venue") if by_venue else ("topic", "year")
    return _figure(
        traces,
        title=title,
        height=height,
        keys=keys,
        **layout,
        showlegend=True,
        legend={**LEGEND_BELOW, "font": {"size": 11}},
    )


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
    gives both shares and counts (of how many papers, with ``from_total`` and ``to_total``), so a rare
    term is seen as rare; a bar whose period has fewer than `trends.MIN_PAPERS` papers is grey.
    """
    table = table.sort_values("score", ascending=True)
    before, after = period_names
    totals = [
        (table[column].astype(int).tolist() if column in table else [None] * len(table))
        for column in ("from_total", "to_total")
    ]

    def _of(total: int | None) -> str:
        return "" if total is None else f" of {total:,}"

    hover = [
        f"{safe_label(n)}<br>{before}: {fs:.2%} ({int(cf):,} papers{_of(nf)})"
        f"<br>{after}: {ts:.2%} ({int(ct):,} papers{_of(nt)})"
        f"<br>score (log-odds z): {s:+.1f}"
        for n, fs, ts, cf, ct, s, nf, nt in zip(
            table[name], table["from_share"], table["to_share"], table["from_papers"], table["to_papers"],
            table["score"], *totals, strict=True,
        )
    ]  # fmt: skip
    few = [min(nf or MIN_PAPERS, nt or MIN_PAPERS) < MIN_PAPERS for nf, nt in zip(*totals, strict=True)]
    click_value = table[key].to_numpy() if key else table[name].to_numpy()
    labels = [safe_label(n, 40) for n in table[name]]
    bars = {
        "type": "bar",
        "x": table["score"].to_numpy(),
        "y": labels,
        "orientation": "h",
        "marker": {
            "color": [
                MUTED if f else RISING if s > 0 else FALLING for s, f in zip(table["score"], few, strict=True)
            ]
        },
        "customdata": np.column_stack([click_value, hover]).tolist(),
        "hovertemplate": "%{customdata[1]}<extra>click for the papers</extra>",
    }
    zero = {"type": "line", "x0": 0, "x1": 0, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain",
            "line": {"color": MUTED, "width": 1}}  # fmt: skip
    return _figure(
        [bars],
        title=title,
        height=int(max(260, min(1200, 22 * len(table) + 120))),
        keys=(key or name,),
        x_title="← falling · score · rising →",
        yaxis={"automargin": True, "categoryorder": "array", "categoryarray": labels},
        shapes=[zero],
        showlegend=False,
        bargap=0.25,
    )


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
    cells = shares.set_index(["topic", "group"])
    index = pd.MultiIndex.from_product([list(topics), list(groups["group"])])
    z = cells["share"].reindex(index).fillna(0).to_numpy().reshape(len(topics), len(groups))
    papers = cells["papers"].reindex(index).fillna(0).astype(int).to_numpy()
    if "group_papers" in shares:  # a share over fewer than MIN_PAPERS papers is left blank
        of = shares.drop_duplicates("group").set_index("group")["group_papers"].reindex(groups["group"])
        of_papers = np.tile(of.fillna(0).astype(int).to_numpy(), len(topics))
    else:
        of_papers = np.full(len(topics) * len(groups), MIN_PAPERS)
    z = np.where(of_papers.reshape(z.shape) < MIN_PAPERS, np.nan, z)
    label_of = dict(zip(shares["topic"], shares["label"], strict=False))
    rows = [safe_label(label_of.get(t, t), 40) for t in topics]
    n_groups = len(groups)
    years = ["" if pd.isna(y) else int(y) for y in groups["year"]] * len(topics)
    venues = [str(v) for v in groups["venue"]] * len(topics)
    topic_of = np.repeat(np.asarray(topics, dtype=int), n_groups).tolist()
    shown_share = [None if np.isnan(v) else float(v) for v in z.ravel()]
    # the hover's share as text: plotly would show a blank cell's as "NaN%"
    hover_share = [f"fewer than {MIN_PAPERS} papers" if v is None else f"{v:.1%}" for v in shown_share]
    columns = (topic_of, venues, years, papers.tolist(), shown_share, of_papers.tolist(), hover_share)
    customdata = [list(cell) for cell in zip(*columns, strict=True)]
    traces = [
        {
            "type": "heatmap",
            "z": [[None if np.isnan(v) else float(v) for v in row] for row in z],
            "x": names,
            "y": rows,
            "colorscale": "Blues",
            "zmin": 0,
            "hoverinfo": "skip",
            "colorbar": {"title": {"text": "share"}, "tickformat": ".0%", "thickness": 12},
        },
        {
            "type": "scatter",
            "x": names * len(topics),
            "y": np.repeat(np.asarray(rows, dtype=object), n_groups).tolist(),
            "mode": "markers",
            "marker": {"size": 18, "opacity": 0, "symbol": "square"},
            "customdata": customdata,
            "hovertemplate": "%{y}<br>%{x}: %{customdata[6]}"
            " (%{customdata[3]:,} papers of %{customdata[5]:,})<extra>click for the papers</extra>",
            "showlegend": False,
        },
    ]
    return _figure(
        traces,
        title=title,
        height=int(max(320, min(1600, 22 * len(topics) + 170))),
        keys=("topic", "venue", "year") if by_year else ("topic", "venue"),
        xaxis={"automargin": True, "tickangle": -45 if by_year else 0, "side": "bottom"},
        yaxis={"autorange": "reversed", "automargin": True},
        showlegend=False,
    )


def code_release_lines(
    table: pd.DataFrame, *, by: str, title: str = "Papers with released code"
) -> go.Figure:
    """Share of papers with released code per year: one line for all venues, or one per venue.

    From `trends.code_release` (by ``year`` or ``venue,year``); with ``live_share`` a dashed line of live
    repositories too. A share over fewer than `trends.MIN_PAPERS` papers is not drawn. A click sets the
    year (and venue, per venue).
    """
    per_venue = by == "venue,year"
    years = sorted(int(y) for y in table["year"].dropna().unique())
    traces = []
    venues = sorted(str(v) for v in table["venue"].unique()) if per_venue else [""]
    for i, venue in enumerate(venues):
        line = (table[table["venue"].astype(str) == venue] if per_venue else table).sort_values("year")
        name = safe_label(venue, 30) if per_venue else "All venues"
        colour = PALETTE[i % len(PALETTE)] if per_venue else ACCENT
        measures = [("share", "released", "released code", "solid")]
        if "live_share" in line.columns:
            measures.append(("live_share", "live", "live repository", "dash"))
        for column, count, what, dash in measures:
            traces.append(
                {
                    "type": "scatter",
                    "x": line["year"].astype(int).to_numpy(),
                    "y": [
                        float(v) if n >= MIN_PAPERS else None
                        for v, n in zip(line[column], line["papers"], strict=True)
                    ],
                    "mode": "lines+markers",
                    "name": name if dash == "solid" else f"{name} (live)",
                    # Per venue the live line keeps its venue's colour; alone it gets its own.
                    "line": {
                        "color": colour if dash == "solid" or per_venue else LIVE,
                        "dash": dash,
                        "width": 2,
                    },
                    "marker": {"size": 8, "symbol": "circle" if dash == "solid" else "circle-open"},
                    "customdata": np.column_stack(
                        [
                            line["year"].astype(int).to_numpy(),
                            line["venue"].astype(str).to_numpy(),
                            line[count].astype(int).to_numpy(),
                            line["papers"].astype(int).to_numpy(),
                        ]
                    ).tolist(),
                    "hovertemplate": f"<b>{name}</b> %{{x}}<br>{what}: %{{y:.1%}}"
                    " (%{customdata[2]:,} of %{customdata[3]:,} papers)<extra>click for the papers</extra>",
                }
            )
    return _figure(
        traces,
        title=title,
        height=380,
        keys=("year", "venue") if per_venue else ("year",),
        y_title="Share of the papers",
        xaxis=_year_axis(years),
        yaxis={"tickformat": ".0%", "rangemode": "tozero"},
        showlegend=per_venue or "live_share" in table.columns,
    )


def acceptance_bars(table: pd.DataFrame, *, key: str, title: str, limit: int = 40) -> go.Figure:
    """Acceptance share per topic or area (from `trends.acceptance`), highest first; a click sets ``key``.

    A bar over fewer than `trends.MIN_PAPERS` decided papers is grey.
    """
    table = table.sort_values(["share", "decided"], ascending=[False, False]).head(limit)
    bars = {
        "type": "bar",
        "x": table["share"].to_numpy(),
        "y": [safe_label(label, 40) for label in table["label"]],
        "orientation": "h",
        "marker": {"color": [MUTED if d < MIN_PAPERS else ACCENT for d in table["decided"]]},
        "text": [f"{s:.0%} of {d:,}" for s, d in zip(table["share"], table["decided"], strict=True)],
        "textposition": "outside",
        "cliponaxis": False,
        "customdata": np.column_stack(
            [table[key].to_numpy(), table["accepted"].to_numpy(), table["decided"].to_numpy()]
        ).tolist(),
        "hovertemplate": "%{y}<br>accepted: %{customdata[1]:,} of %{customdata[2]:,} decided"
        "<extra>click for the papers</extra>",
    }
    right = max(0.1, float(table["share"].max()) / 0.7) if len(table) else 1.0
    return _figure(
        [bars],
        title=title,
        height=int(max(260, 24 * len(table) + 110)),
        keys=(key,),
        x_title="Accepted share of decided papers",
        xaxis={"range": [0, min(right, 1.45)], "tickformat": ".0%"},
        yaxis={"autorange": "reversed", "automargin": True},
        showlegend=False,
        bargap=0.3,
    )


def acceptance_line(table: pd.DataFrame, *, title: str = "Acceptance share per year") -> go.Figure:
    """Acceptance share per year (from `trends.acceptance` with key ``year``); a click sets the year.

    A year with fewer than `trends.MIN_PAPERS` decided papers is not drawn.
    """
    table = table.sort_values("year")
    line = {
        "type": "scatter",
        "x": table["year"].astype(int).to_numpy(),
        "y": [
            float(v) if d >= MIN_PAPERS else None
            for v, d in zip(table["share"], table["decided"], strict=True)
        ],
        "mode": "lines+markers",
        "line": {"color": ACCENT, "width": 2},
        "marker": {"size": 9},
        "customdata": np.column_stack(
            [
                table["year"].astype(int).to_numpy(),
                table["accepted"].to_numpy(),
                table["decided"].to_numpy(),
            ]
        ).tolist(),
        "hovertemplate": "%{x}: %{y:.1%}<br>%{customdata[1]:,} of %{customdata[2]:,} decided papers"
        "<extra>click for the papers</extra>",
    }
    return _figure(
        [line],
        title=title,
        height=340,
        keys=("year",),
        y_title="Accepted share",
        xaxis=_year_axis([int(y) for y in table["year"]]),
        yaxis={"tickformat": ".0%", "rangemode": "tozero"},
        showlegend=False,
    )

"""Plotly figures of the Reviews page: free functions from `dashboard.analytics.reviews` tables to a
`go.Figure`.

As on the Trends page, every clickable element carries the filter values a click sets first in its
``customdata``, in the order of the figure's ``meta["click_keys"]``: a score bin sets ``rating``, a tier
``decision``, a topic or area bar ``topic``/``area``, a paper's point ``id`` (so the page lists it).
Corpus text is escaped (`charts.safe_label`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.analytics.reviews import score_text
from dashboard.figures.charts import ACCENT, MUTED, figure, safe_label

MAX_POINTS = 1_500  # points drawn per tier (a seeded sample beyond: the box still counts them all)


def _figure(data: list[dict[str, Any]], *, keys: Sequence[str], **layout: Any) -> go.Figure:
    return figure(
        data,
        margin_top=60,
        clickmode="event+select",
        dragmode=False,
        meta={"click_keys": tuple(keys)},
        hoverlabel={"align": "left"},
        **layout,
    )


def tier_strips(rated: pd.DataFrame, tiers: Sequence[str], names: dict[str, str] | None = None) -> go.Figure:
    """Mean score per paper, one box and strip per decision tier (``tiers`` order) with its n; a click on a
    point (a paper) sets ``id``. ``rated`` is `reviews.rated_papers`."""
    names = names or {}
    data: list[dict[str, Any]] = []
    ticks = []
    rng = np.random.default_rng(0)
    for i, tier in enumerate(tiers):
        rows = rated[rated["tier"] == tier]
        if not len(rows):
            continue
        ticks.append((i, f"{names.get(tier, tier)}<br>n = {len(rows):,}"))
        data.append(
            {
                "type": "box",
                "y": rows["rating_mean"].to_numpy(),
                "x0": i,
                "name": names.get(tier, tier),
                "boxpoints": False,
                "width": 0.5,
                "line": {"color": MUTED},
                "fillcolor": "rgba(0,0,0,0)",
                "hoverinfo": "skip",
            }
        )
        shown = rows if len(rows) <= MAX_POINTS else rows.sample(MAX_POINTS, random_state=0)
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": i + rng.uniform(-0.3, 0.3, len(shown)),
                "y": shown["rating_mean"].to_numpy(),
                "marker": {"color": ACCENT, "size": 6, "opacity": 0.55},
                "customdata": np.column_stack(
                    [
                        shown["id"].to_numpy(),
                        [safe_label(t, 70) for t in shown["title"]],
                        [score_text(r) for r in shown["ratings"]],
                    ]
                ).tolist(),
                "hovertemplate": "%{customdata[1]}<br>mean %{y:.2f} · scores %{customdata[2]}"
                "<extra>click to list it</extra>",
            }
        )
    return _figure(
        data,
        keys=("id",),
        title="Mean score per decision",
        height=420,
        y_title="Mean review score",
        xaxis={"tickmode": "array", "tickvals": [t for t, _ in ticks], "ticktext": [n for _, n in ticks]},
        showlegend=False,
    )


def acceptance_bins(bins: pd.DataFrame, cut: float | None) -> go.Figure:
    """Accepted share of decided papers per bin of mean score, with the counts and the crossing line; a
    click on a bar sets ``rating`` to that bin."""
    labels = [f"{low:g}–{high:g}" for low, high in zip(bins["low"], bins["high"], strict=True)]
    centres = ((bins["low"] + bins["high"]) / 2).to_numpy()
    width = float(bins["high"].iloc[0] - bins["low"].iloc[0]) if len(bins) else 1.0
    bars = {
        "type": "bar",
        "x": centres,
        "y": bins["share"].fillna(0).to_numpy(),
        "width": width * 0.9,
        "marker": {"color": ACCENT},
        "text": [f"{a:,}/{d:,}" if d else "" for a, d in zip(bins["accepted"], bins["decided"], strict=True)],
        "textposition": "outside",
        "cliponaxis": False,
        "customdata": np.column_stack(
            [bins["rating"].to_numpy(), labels, bins["accepted"], bins["decided"], bins["papers"]]
        ).tolist(),
        "hovertemplate": "mean score %{customdata[1]}: %{y:.0%} accepted<br>%{customdata[2]} of "
        "%{customdata[3]} decided papers (%{customdata[4]} rated)<extra>click for the papers</extra>",
    }
    shapes, annotations = [], []
    if cut is not None:
        shapes.append(
            {
                "type": "line",
                "x0": cut,
                "x1": cut,
                "y0": 0,
                "y1": 1,
                "yref": "paper",
                "line": {"dash": "dash"},
            }
        )
        annotations.append(
            {
                "x": cut,
                "y": 1,
                "yref": "paper",
                "text": f"cut {cut:g}",
                "showarrow": False,
                "yanchor": "bottom",
            }
        )
    return _figure(
        [bars],
        keys=("rating",),
        title="Accepted share per mean score (accepted/decided on each bar)",
        height=380,
        x_title="Mean review score",
        y_title="Accepted share",
        yaxis={"tickformat": ".0%", "range": [0, 1.15]},
        shapes=shapes,
        annotations=annotations,
        bargap=0.1,
    )


def group_bars(table: pd.DataFrame, *, key: str, title: str, limit: int = 30) -> go.Figure:
    """Mean score per group (`reviews.group_scores`), highest first, with n on the bar and the accepted
    share in the hover; a click sets ``key`` (``topic`` or ``area``)."""
    table = (
        table[table["rated"] > 0].sort_values(["rating_mean", "rated"], ascending=[False, False]).head(limit)
    )
    text = [f"{m:.2f} ({n:,})" for m, n in zip(table["rating_mean"], table["rated"], strict=True)]
    shares = ["–" if np.isnan(v) else f"{v:.0%}" for v in table["accept_share"]]
    bars = {
        "type": "bar",
        "orientation": "h",
        "x": table["rating_mean"].to_numpy(),
        "y": [safe_label(g, 40) for g in table["group"]],
        "marker": {"color": ACCENT},
        "text": text,
        "textposition": "outside",
        "cliponaxis": False,
        "customdata": np.column_stack([table["key"].to_numpy(), table["rated"], shares]).tolist(),
        "hovertemplate": "%{y}<br>mean score %{x:.2f} over %{customdata[1]} rated papers<br>accepted: "
        "%{customdata[2]} of the decided<extra>click for the papers</extra>",
    }
    high = float(table["rating_mean"].max()) if len(table) else 1.0
    return _figure(
        [bars],
        keys=(key,),
        title=title,
        height=int(max(260, 24 * len(table) + 110)),
        x_title="Mean review score",
        xaxis={"range": [0, high * 1.5]},
        yaxis={"autorange": "reversed", "automargin": True},
        bargap=0.3,
    )


def confidence_scatter(rated: pd.DataFrame) -> go.Figure:
    """Each rated paper's mean confidence against its mean score; a click or lasso on points sets ``id``."""
    rows = rated[~rated["confidence_mean"].isna()]
    if len(rows) > MAX_POINTS * 4:
        rows = rows.sample(MAX_POINTS * 4, random_state=0)
    points = {
        "type": "scatter",
        "mode": "markers",
        "x": rows["rating_mean"].to_numpy(),
        "y": rows["confidence_mean"].to_numpy(),
        "marker": {"color": ACCENT, "size": 7, "opacity": 0.5},
        "customdata": np.column_stack(
            [
                rows["id"].to_numpy(),
                [safe_label(t, 70) for t in rows["title"]],
                [score_text(r) for r in rows["ratings"]],
            ]
        ).tolist(),
        "hovertemplate": "%{customdata[1]}<br>mean score %{x:.2f}, confidence %{y:.2f}<br>scores "
        "%{customdata[2]}<extra>click to list it</extra>",
    }
    fig = _figure(
        [points],
        keys=("id",),
        title="Reviewers' confidence against score (one point per paper)",
        height=380,
        x_title="Mean review score",
        y_title="Mean confidence",
    )
    fig.layout.dragmode = "lasso"
    return fig

"""Plotly figures for the dashboard: free functions from plain tables to a titled `go.Figure`.

Every figure has a title and labelled axes. Text that comes from the corpus (titles, topic labels,
terms) is HTML-escaped once (`_escape`) before it reaches Plotly, whose labels understand a little
HTML, so a hostile title shows literally; invisible and bidi characters are removed first
(`dashboard.screen.visible`), so a right-to-left override cannot reorder a label. This module
knows nothing of Streamlit: pages pass its figures to `components.chart`.

    >>> fig = top_counts(pd.Series({"ImageNet": 7, "QM9": 2}), title="Datasets", x_title="Papers")
    >>> fig.layout.title.text
    'Datasets'
"""

from __future__ import annotations

import html
import io
import re
import textwrap
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.figures import colours
from dashboard.schema import CODE_STATUSES, OUTLIER_LABEL, OUTLIER_TOPIC
from dashboard.screen import visible

# The light theme's chart colours (`dashboard.figures.colours`); a chart shown or saved in the dark theme
# gets the dark ones (`colours.recolour`). Topic colours serve both themes (3:1 on each background).
ACCENT = colours.LIGHT.accent
MUTED = colours.LIGHT.muted
OUTLIER_COLOUR = colours.LIGHT.outlier
PALETTE: tuple[str, ...] = colours.TOPIC_PALETTE
# A selected bar differs from the others by more than its colour: its label starts with this.
SELECTED_MARK = "✓ "
THEME_BACKGROUNDS = ("#ffffff", "#0f1117")  # .streamlit/config.toml, [theme.light] and [theme.dark]
MAX_LABEL_CHARS = 48
# A horizontal legend under a chart, placed from the bottom of the whole figure ("container"): Plotly
# keeps room for it under the axis labels. Placed at a share of the plot's height below the axis
# (y=-0.12), it stayed where it was when a wider window took a row off the legend, over the years.
LEGEND_BELOW: dict[str, Any] = {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"}
BAR_HEIGHT_PX = 24


def _escape(text: str) -> str:
    # Plotly reads `<`, `>` and `&` entities in labels but not `&quot;`: quotes stay as they are (a
    # quote cannot start a tag), or `"` would show as `&quot;`.
    return html.escape(visible(text), quote=False)


def safe_label(text: object, max_chars: int = MAX_LABEL_CHARS) -> str:
    """Corpus text made safe and short for a Plotly label: escaped, cut with an ellipsis.

    >>> safe_label("<b>bold</b> claim")
    '&lt;b&gt;bold&lt;/b&gt; claim'
    """
    value = " ".join(visible(text).split())
    if len(value) > max_chars:
        value = value[: max_chars - 1].rstrip() + "…"
    return _escape(value)


def wrapped_label(text: object, width: int = 60, max_lines: int = 3) -> str:
    """Escaped text broken into ``<br>``-joined lines, for hover boxes."""
    lines = textwrap.wrap(" ".join(visible(text).split()), width=width) or [""]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1] + "…"
    return "<br>".join(_escape(line) for line in lines)


# A bar's label on the category axis: up to AXIS_LINES lines of AXIS_LINE_CHARS, broken between a topic
# label's terms (" · ") or between words. Cut to one line of 30 characters, a topic's label showed two
# of its terms even at 1920 px; two lines show twice as much in the same width at every window size
# (the axis cannot know the window's width: Plotly sizes it in the browser).
AXIS_LINE_CHARS = 34
AXIS_LINES = 2
LINE_PX = 10  # a second line of an axis label makes its bar's row this much taller


def axis_label(text: object, line_chars: int = AXIS_LINE_CHARS, lines: int = AXIS_LINES) -> str:
    """Corpus text as a bar's axis label: escaped, on up to ``lines`` lines joined by ``<br>``, each
    at most ``line_chars`` long, broken between words (after a topic label's " · " where the next
    term would not fit whole), the last cut with an ellipsis.

    >>> axis_label("reinforcement learning · policy optimization · offline reward models")
    'reinforcement learning ·<br>policy optimization · offline…'
    """
    value = " ".join(visible(text).split())
    if len(value) <= line_chars:
        return _escape(value)
    tokens: list[str] = []
    for word in value.split(" "):
        if word == "·" and tokens:
            tokens[-1] += " ·"
        else:
            tokens.extend(textwrap.wrap(word, line_chars) or [word])
    out: list[str] = []
    for n, token in enumerate(tokens):
        term = token  # the token and the rest of its term (up to the next " ·"), to keep a term whole
        for later in tokens[n + 1 :]:
            if term.endswith("·"):
                break
            term += " " + later
        if (
            not out
            or len(out[-1]) + 1 + len(token) > line_chars
            or (
                out[-1].endswith("·")
                and len(out[-1]) + 1 + len(term) > line_chars
                and len(term) <= line_chars
            )
        ):
            out.append(token)
        else:
            out[-1] += " " + token
    if len(out) > lines:
        words, last = " ".join(out[lines - 1 :]).split(" "), ""
        for word in words:  # whole words, as many as fit before the ellipsis
            if len(last) + len(word) + 1 > line_chars - 1:
                break
            last = f"{last} {word}".strip()
        out = [*out[: lines - 1], (last or words[0][: line_chars - 1]).rstrip(" ·") + "…"]
    return "<br>".join(_escape(line) for line in out)


def _label_lines(labels: Sequence[str]) -> int:
    return max((label.count("<br>") + 1 for label in labels), default=1)


def _bar_height(n_bars: int, lines: int = 1) -> int:
    row = BAR_HEIGHT_PX + LINE_PX * (max(1, lines) - 1)
    return int(max(220, min(2000, row * n_bars + 110)))


def _whole_number_ticks(values: pd.Series) -> dict[str, Any]:
    # Counts are whole numbers: a small range would otherwise get ticks at 0.5, 1.5...
    if len(values) and pd.api.types.is_integer_dtype(values) and values.max() <= 10:
        return {"dtick": 1}
    return {}


# A bar chart's categories, largest on top, with room for their labels.
BARS_DOWN: dict[str, Any] = {"autorange": "reversed", "automargin": True}


def figure(
    data: Sequence[Mapping[str, Any]],
    *,
    title: str,
    x_title: str | None = None,
    y_title: str | None = None,
    height: int | None = None,
    xaxis: Mapping[str, Any] | None = None,
    yaxis: Mapping[str, Any] | None = None,
    margin_top: int = 50,
    subtitle: str = "",
    validate: bool = True,
    **layout: Any,
) -> go.Figure:
    """The figure of ``data`` (traces as dicts) in the house layout, validated once.

    Title (and ``subtitle``, a smaller second line) left-aligned and escaped, narrow margins, no legend
    unless ``layout`` asks for one; an axis title when one is given (``""`` included). Every chart
    is made in this one `go.Figure` call: each ``update_layout``, ``update_xaxes`` or ``add_vline``
    validates the figure again, and at a million papers those were a tenth of a page's run.
    ``validate=False`` skips Plotly's check of every value (Plotly's own ``_validate`` switch) for a
    figure whose shape the tests check validated: the paper map's 10,000 points, where the check was
    25-35 ms of each Topics run at a million papers. The JSON is the same either way, up to key order.
    """
    x_axis = {**({} if x_title is None else {"title": {"text": x_title}}), **(xaxis or {})}
    y_axis = {**({} if y_title is None else {"title": {"text": y_title}}), **(yaxis or {})}
    return go.Figure(
        data=list(data),
        _validate=validate,
        layout={
            "title": {
                "text": _escape(title),
                "x": 0,
                "xanchor": "left",
                **({"subtitle": {"text": _escape(subtitle)}} if subtitle else {}),
            },
            "margin": {"l": 10, "r": 10, "t": margin_top, "b": 40},
            "showlegend": False,
            **({"height": height} if height is not None else {}),
            **({"xaxis": x_axis} if x_axis else {}),
            **({"yaxis": y_axis} if y_axis else {}),
            **layout,
        },
    )


def _bars_down(bars: Mapping[str, Any], *, n_bars: int, **layout: Any) -> go.Figure:
    """`figure` of horizontal bars, the first on top, as tall as `_bar_height` of ``n_bars`` (rows of
    two lines where a label has two)."""
    height = _bar_height(n_bars, _label_lines(list(bars.get("y", []))))
    return figure([bars], height=height, yaxis=BARS_DOWN, **layout)


def top_counts(
    counts: pd.Series,
    *,
    title: str,
    x_title: str = "Papers",
    y_title: str = "",
    limit: int = 20,
) -> go.Figure:
    """Horizontal bars of the largest counts (a Series: label -> count), largest on top."""
    top = counts[counts > 0].sort_values(ascending=False).head(limit)
    bars = {
        "type": "bar",
        "x": top.to_numpy(),
        "y": [safe_label(label) for label in top.index],
        "orientation": "h",
        "marker": {"color": ACCENT},
        "hovertemplate": "%{y}: %{x}<extra></extra>",
    }
    return _bars_down(
        bars,
        n_bars=len(top),
        title=title,
        x_title=x_title,
        y_title=y_title,
        xaxis=_whole_number_ticks(top),
        bargap=0.3,
    )


def choice_bars(
    counts: pd.Series,
    *,
    title: str,
    selected: Collection[object] = (),
    names: Mapping[object, str] | None = None,
    limit: int = 15,
    keep_order: bool = False,
    x_title: str = "Papers",
) -> go.Figure:
    """Bars of papers per value that filter when clicked: each bar's value is its ``customdata``.

    ``counts`` maps value -> papers, largest drawn on top (``keep_order``: in the given order). Chosen
    values are drawn in the accent colour, the others muted; a chosen value beyond ``limit`` still
    gets its bar, so it can be clicked away. ``names`` relabels values (e.g. ``unknown``).
    """
    shown = counts[counts > 0]
    if not keep_order:
        shown = shown.sort_values(ascending=False, kind="stable")
    chosen = set(selected)
    top = shown.head(limit)
    in_top = set(top.index)  # once: a set per value made the bars of tens of thousands of authors slow
    extra = shown[[v in chosen and v not in in_top for v in shown.index]] if chosen else shown.iloc[:0]
    table = pd.concat([top, extra])
    colours = [ACCENT if (not chosen or v in chosen) else MUTED for v in table.index]
    labels = [
        (SELECTED_MARK if v in chosen else "") + axis_label((names or {}).get(v, v)) for v in table.index
    ]
    bars = {
        "type": "bar",
        "x": table.to_numpy(),
        "y": labels,
        "orientation": "h",
        "marker": {"color": colours},
        "customdata": [str(v) for v in table.index],
        "hovertemplate": "%{y}<br>%{x} papers<extra>click to filter</extra>",
    }
    return _bars_down(
        bars,
        n_bars=len(table),
        title=title,
        x_title=x_title,
        y_title="",
        xaxis=_whole_number_ticks(table),
        clickmode="event+select",
        dragmode=False,
        bargap=0.3,
    )


def topic_sizes(
    topics: pd.DataFrame,
    counts: pd.Series,
    *,
    selected: Collection[int] = (),
    title: str = "Papers per topic",
) -> go.Figure:
    """Bars of papers per topic, one per row of ``topics`` (columns ``topic``, ``label``).

    ``counts`` maps topic number -> papers (e.g. under every filter but the topic filter), so a user
    sees what a click on a bar would add. Selected topics are drawn in the accent colour; each bar
    carries its topic number as ``customdata`` for click-to-filter.
    """
    table = topics[["topic", "label"]].copy()
    table["count"] = table["topic"].map(counts).fillna(0).astype(int)
    table = table.sort_values(["count", "topic"], ascending=[False, True])
    chosen = set(selected)
    # Topics no paper of the view falls in are left out (a box on the map left 25 bars of zero),
    # unless chosen: a chosen topic stays where a click can remove it.
    table = table[(table["count"] > 0) | table["topic"].isin(chosen)]
    colours = [ACCENT if (not chosen or t in chosen) else MUTED for t in table["topic"]]
    bars = {
        "type": "bar",
        "x": table["count"].to_numpy(),
        "y": [
            (SELECTED_MARK if t in chosen else "") + _topic_axis_label(t, label)
            for t, label in zip(table["topic"], table["label"], strict=True)
        ],
        "orientation": "h",
        "marker": {"color": colours},
        "customdata": table["topic"].to_numpy(),
        "hovertext": [
            _topic_axis_label(t, label, 80) for t, label in zip(table["topic"], table["label"], strict=True)
        ],
        "hovertemplate": "%{hovertext}<br>%{x} papers<extra>click to filter</extra>",
    }
    return _bars_down(
        bars,
        n_bars=len(table),
        title=title,
        x_title="Papers",
        y_title="",
        xaxis=_whole_number_ticks(table["count"]),
        clickmode="event+select",
        dragmode=False,
        bargap=0.3,
    )


def _topic_axis_label(topic: int, label: object, chars: int | None = None) -> str:
    """A topic bar's label: two lines (`axis_label`), or one of ``chars`` (the hover box's whole label)."""
    if topic == OUTLIER_TOPIC:
        return OUTLIER_LABEL
    return f"{topic}: {safe_label(label, chars) if chars else axis_label(label)}"


def release_rate(
    groups: pd.DataFrame,
    *,
    title: str,
    group_title: str,
    min_papers: int = 1,
    limit: int = 30,
) -> go.Figure:
    """Share of papers with released code per group; ``groups`` has ``group``, ``released``, ``papers``.

    Groups with fewer than ``min_papers`` papers are left out (a rate of 1 of 1 says little), and so
    are all but the ``limit`` highest rates (the title then says how many are shown); bars
    are labelled with the group size so a small group is not mistaken for a strong one. The label
    sits right of its bar, and the axis leaves room for it, so it is never shrunk or cut off when
    the chart has half a page (the Overview at 1280 px).
    """
    table = groups[groups["papers"] >= min_papers].copy()
    table["rate"] = np.where(table["papers"] > 0, table["released"] / table["papers"].clip(lower=1), 0.0)
    if len(table) > limit:  # the lowest rates are left out: the title says so (53 topics, 30 bars)
        # Of the groups the page counts: the outliers' bar is no topic ("53 topics" above, not 54).
        counted = int((table["group"].astype(str) != OUTLIER_LABEL).sum())
        title = f"{title} — the {limit} highest of {counted:,}"
    table = table.sort_values(["rate", "papers"], ascending=[False, False]).head(limit)
    text = [f"{rate:.0%} of {papers:,}" for rate, papers in zip(table["rate"], table["papers"], strict=True)]
    hover = [
        f"{released:,} of {papers:,} papers"
        for released, papers in zip(table["released"], table["papers"], strict=True)
    ]
    bars = {
        "type": "bar",
        "x": table["rate"].to_numpy(),
        "y": [axis_label(g) for g in table["group"]],
        "orientation": "h",
        "marker": {"color": ACCENT},
        "text": text,
        "textposition": "outside",
        "cliponaxis": False,
        "customdata": hover,
        "hovertemplate": "%{y}<br>%{text}: %{customdata}<extra></extra>",
    }
    # The longest bar takes 60% of the width at most; the ticks stop at 100%.
    right = max(0.1, float(table["rate"].max()) / 0.6) if len(table) else 1.0
    ticks = [t for t in (0, 0.25, 0.5, 0.75, 1.0) if t <= right] if right > 0.5 else None
    return _bars_down(
        bars,
        n_bars=len(table),
        title=title,
        x_title="Papers with released code",
        y_title=group_title,
        xaxis={"range": [0, right], "tickformat": ".0%", **({"tickvals": ticks} if ticks else {})},
    )


MAP_POINTS = 10_000  # a browser draws more points slowly, and each needs a hover label made every run


def sample_rows(n_rows: int, max_points: int = MAP_POINTS, random_state: int = 0) -> np.ndarray:
    """Which of ``n_rows`` rows to use: all, or a seeded sample of ``max_points``, in order.

    The paper map draws these, and the Terms page's group comparison counts these. Pages sample row
    numbers before copying any rows (copying a million rows costs a second).
    """
    if n_rows <= max_points:
        return np.arange(n_rows)
    return np.sort(np.random.default_rng(random_state).choice(n_rows, size=max_points, replace=False))


def sample_in_order(mask: np.ndarray, order: np.ndarray, max_points: int = MAP_POINTS) -> np.ndarray:
    """The rows of ``mask`` (booleans over the papers) that come first in ``order`` (a seeded permutation
    of the papers), at most ``max_points`` of them, in row order.

    A uniform sample of the masked papers, like `sample_rows`, and a consistent one: a paper drawn for
    a filter is drawn for every narrower filter that keeps it, so a map's points stay where they were
    and what was worked out for them (hover texts) serves again.

    >>> sample_in_order(np.array([True, False, True, True]), np.array([3, 1, 0, 2]), max_points=2)
    array([0, 3])
    """
    # Read a growing head of ``order`` until it holds enough masked rows: a filter keeping most papers
    # reads a few times the points drawn, not all of a million (twice a run).
    picked: list[np.ndarray] = []
    wanted, start, step = max_points, 0, max(4_096, 2 * max_points)
    while wanted > 0 and start < len(order):
        part = order[start : start + step]
        hits = part[mask[part]][:wanted]
        picked.append(hits)
        wanted, start, step = wanted - len(hits), start + step, step * 2
    return np.sort(np.concatenate(picked)) if picked else order[:0]


# Greedy lines of at most 60 characters, broken at spaces or after a hyphen inside a word (a longer
# word is cut): what `wrapped_label` does with textwrap, several times faster over a map's titles.
_HOVER_LINE = re.compile(r"\S(?:.{0,59}(?:(?= |$)|(?<=\w-)(?=\w)))|\S{60}")


def _hover_titles(titles: pd.Series, max_lines: int = 3) -> list[str]:
    labels = []
    for title in titles:
        lines = _HOVER_LINE.findall(" ".join(visible(title).split())) or [""]
        if len(lines) > max_lines:
            lines = [*lines[: max_lines - 1], lines[max_lines - 1][:59] + "…"]
        labels.append("<br>".join(_escape(line) for line in lines))
    return labels


# What the map can colour its points by: column -> the name the page shows. Topic is the default.
MAP_COLOUR_FIELDS: dict[str, str] = {
    "topic": "Topic",
    "year": "Year",
    "venue": "Venue",
    "code_status": "Code status",
    "repo_state": "Repository state",
}
MAP_MAX_CATEGORIES = len(PALETTE)  # beyond: the largest keep a colour, the rest are "Other"
OTHER_LABEL = "Other"
HIT_OUTLINE = "#111111"


def _authors_line(authors: object, limit: int = 3) -> str:
    if not _has(authors):
        return ""
    names = [str(a) for a in list(authors)]  # type: ignore[call-overload]
    shown = ", ".join(names[:limit]) + (" et al." if len(names) > limit else "")
    return safe_label(shown, 90)


def map_hover(group: pd.DataFrame) -> list[str]:
    """A map point's hover text: title (up to three lines), then authors and year, then the method
    names, escaped. `paper_map` uses a ``hover`` column instead where ``papers`` has one."""
    titles = _hover_titles(group["title"]) if "title" in group.columns else [""] * len(group)
    authors = group["authors"].tolist() if "authors" in group.columns else [()] * len(group)
    years = group["year"].tolist() if "year" in group.columns else [None] * len(group)
    methods = group["method_names"].tolist() if "method_names" in group.columns else [()] * len(group)
    hover = []
    for title_text, names, year, method in zip(titles, authors, years, methods, strict=True):
        byline = " · ".join(
            part for part in (_authors_line(names), "" if pd.isna(year) else str(int(year))) if part
        )
        hover.append(
            title_text
            + ("<br>" + byline if byline else "")
            + ("<br><i>" + safe_label(", ".join(method), 80) + "</i>" if _has(method) else "")
        )
    return hover


def _coordinate(values: pd.Series, scatter: str) -> np.ndarray:
    """Map coordinates as sent: 32-bit for WebGL (it draws in 32-bit floats; half the bytes), else as is."""
    return values.to_numpy(dtype=np.float32 if scatter == "scattergl" else None)


def colours_of_topics(papers: pd.DataFrame) -> dict[int, str]:
    """A colour per topic of a map's points (``x``, ``y``, ``topic``): no two neighbouring clusters
    (`papermap.cluster_neighbours`) share one, the largest clusters are coloured first, and every
    colour has 3:1 on both themes' backgrounds (`colours.TOPIC_PALETTE`). The outliers are grey.

    >>> points = pd.DataFrame({"x": [0.0, 0.1, 1.0, 1.1], "y": [0.0] * 4, "topic": [0, 0, 1, 1]})
    >>> colours_of_topics(points)
    {0: '#c02b6b', 1: '#179f28'}
    """
    from dashboard.analytics.papermap import cluster_neighbours

    topics = papers["topic"].to_numpy()
    sizes = pd.Series(topics[topics != OUTLIER_TOPIC]).value_counts()
    order = sorted(sizes.index.tolist(), key=lambda t: (-int(sizes[t]), int(t)))
    neighbours = cluster_neighbours(papers["x"].to_numpy(float), papers["y"].to_numpy(float), topics)
    return {int(t): c for t, c in colours.neighbour_colouring(order, neighbours, PALETTE).items()}


def _fallback_colours(topics: pd.Series) -> dict[int, str]:
    """The palette by topic number: for a topic a caller's colours do not name."""
    return {int(t): PALETTE[int(t) % len(PALETTE)] for t in pd.unique(topics) if t != OUTLIER_TOPIC}


def _colour_groups(
    shown: pd.DataFrame, colour: str, topic_colours: Mapping[int, str]
) -> list[tuple[str, str, np.ndarray]]:
    """(trace name, colour, row positions) per value of the ``colour`` field, in a stable order."""
    if colour == "topic" or colour not in shown.columns:
        topics = shown["topic"].to_numpy()
        order = sorted(set(topics.tolist()), key=lambda t: (t == OUTLIER_TOPIC, t))
        groups = []
        for topic in order:
            rows = np.flatnonzero(topics == topic)
            if topic == OUTLIER_TOPIC:
                groups.append((OUTLIER_LABEL, OUTLIER_COLOUR, rows))
            else:
                label = safe_label(shown["topic_label"].iloc[rows[0]], 40)
                groups.append((f"{topic}: {label}", topic_colours[int(topic)], rows))
        return groups
    values = shown[colour]
    if colour == "year":
        keys = values.astype("Int64").astype(str).replace("<NA>", "unknown")
    else:
        keys = values.fillna("").astype(str).str.replace("_", " ").replace("", "unknown")
    counts = keys.value_counts()
    if colour == "year":  # years in order (a legend reads as a timeline); others largest first
        order = sorted(counts.index, key=lambda k: (k == "unknown", k))
    else:
        order = sorted(counts.index, key=lambda k: (k == "unknown", -counts[k], k))
    kept = [k for k in order if k != "unknown"][: MAP_MAX_CATEGORIES - 1]
    key_array = keys.to_numpy()
    groups = [
        (safe_label(k, 40), PALETTE[i % len(PALETTE)], np.flatnonzero(key_array == k))
        for i, k in enumerate(kept)
    ]
    rest = np.flatnonzero(~np.isin(key_array, kept))
    if len(rest):
        name = "unknown" if set(key_array[rest]) == {"unknown"} else OTHER_LABEL
        groups.append((name, OUTLIER_COLOUR, rest))
    return groups


def label_position(x: np.ndarray, y: np.ndarray, cells: int = 12) -> tuple[float, float]:
    """Where a cluster's label goes: the median of its points in the densest cell of a grid over them.

    A topic a 2-D embedding splits in two (or spreads thin) is labelled on its main part, not in the
    empty middle; under 20 points, the median of all of them.

    >>> label_position(np.array([0.0, 1.0, 2.0]), np.array([0.0, 0.0, 3.0]))
    (1.0, 0.0)
    """
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if len(x) == 0:
        return 0.0, 0.0
    if len(x) < 20:
        return float(np.median(x)), float(np.median(y))
    span_x, span_y = np.ptp(x) or 1.0, np.ptp(y) or 1.0
    column = np.minimum(((x - x.min()) / span_x * cells).astype(int), cells - 1)
    row = np.minimum(((y - y.min()) / span_y * cells).astype(int), cells - 1)
    cell = row * cells + column
    densest = int(np.argmax(np.bincount(cell, minlength=cells * cells)))
    inside = cell == densest
    return float(np.median(x[inside])), float(np.median(y[inside]))


# The map's plot area at its narrowest (in a 1024 px window, 622 x 470 px inside the axes) and its
# labels' size there, measured in Chromium on the 27k map's 53 labels: bold 11 px text, 4.6-5.5 px a
# character (median 5.0), 20 px a line with its padding. A wider window only moves labels apart
# sideways, so spacing them for the narrowest keeps them apart at every width.
MAP_PLOT_PX = (620.0, 470.0)
MAP_HIT_RADIUS_PX = 6  # a search hit's radius on a small map, outline included (`paper_map`: 11 px across)
MIN_LABELLED_POINTS = 3  # a cluster with fewer points drawn gets no label (`paper_map`)...
LABEL_ALL_BELOW = 200  # ...unless the map draws fewer points than this (a small corpus: every cluster)
LABEL_CHAR_PX, LABEL_LINE_PX = 5.3, 20.0


def label_shifts(
    positions: Sequence[tuple[float, float]],
    texts: Sequence[str],
    extent: tuple[float, float, float, float],
    steps: int = 2,
    clear_of: Sequence[tuple[float, float]] = (),
) -> list[tuple[int, int] | None]:
    """How far (pixels: right, up) to move each map label so that none covers another; None: no room.

    ``positions`` are the labels' places in data units, ``extent`` the map's ``(x0, x1, y0, y1)``;
    labels earlier in the list keep their places first (the caller puts the largest clusters first).
    ``clear_of`` gives points (data units) every label's box must leave in sight: clusters of one or
    two points, whose label at its place hid the only point it named.
    A label that would cover one already placed takes the nearest free place within ``steps`` lines up
    or down and half a label or a whole label sideways, never out of the plot; with no free place near
    its cluster it is not drawn (None): the cluster is named on hover and in the list of topics. (It
    stayed where it was, and at 53 topics labels hid each other.)

    >>> label_shifts([(0.0, 0.0), (0.0, 0.0), (1.0, 1.0)], ["a topic", "another", "far"], (-1, 1, -1, 1))
    [(0, 0), (0, 20), (0, 0)]
    >>> label_shifts([(0.0, 0.0)], ["one paper"], (-1, 1, -1, 1), clear_of=[(0.0, 0.0)])
    [(0, 20)]
    """
    width_px, height_px = MAP_PLOT_PX
    x0, x1, y0, y1 = extent
    span_x, span_y = (x1 - x0) or 1.0, (y1 - y0) or 1.0
    placed: list[tuple[float, float, float]] = []  # centre x, centre y (pixels, up), half width
    shifts: list[tuple[int, int] | None] = []
    in_sight = [((kx - x0) / span_x * width_px, (ky - y0) / span_y * height_px) for kx, ky in clear_of]
    for (x, y), text in zip(positions, texts, strict=True):
        px, py = (x - x0) / span_x * width_px, (y - y0) / span_y * height_px
        half = (len(text) * LABEL_CHAR_PX + 4) / 2
        # how near a point in sight the label's centre may not come
        reach_x, reach_y = half + MAP_HIT_RADIUS_PX, LABEL_LINE_PX / 2 + MAP_HIT_RADIUS_PX
        sideways = [side * half for side in (0, 1, -1, 2, -2)]  # half a label, a whole label
        offsets = sorted(
            ((dx, line * LABEL_LINE_PX) for dx in sideways for line in range(-steps, steps + 1)),
            key=lambda offset: (offset[0] ** 2 + offset[1] ** 2, abs(offset[0]), -offset[1]),
        )
        chosen: tuple[float, float] | None = None
        for dx, dy in offsets:
            cx, cy = px + dx, py + dy
            if any(abs(cx - sx) < reach_x and abs(cy - sy) < reach_y for sx, sy in in_sight):
                continue
            if (dx or dy) and not (
                half <= cx <= width_px - half and LABEL_LINE_PX / 2 <= cy <= height_px - LABEL_LINE_PX / 2
            ):
                continue
            if all(abs(cx - ox) >= half + oh or abs(cy - oy) >= LABEL_LINE_PX for ox, oy, oh in placed):
                chosen = (dx, dy)
                break
        if chosen is None:
            shifts.append(None)
            continue
        placed.append((px + chosen[0], py + chosen[1], half))
        shifts.append((int(chosen[0]), int(chosen[1])))
    return shifts


def paper_map(
    papers: pd.DataFrame,
    *,
    background: pd.DataFrame | None = None,
    title: str = "Map of papers (similar papers lie close together)",
    max_points: int = MAP_POINTS,
    random_state: int = 0,
    n_papers: int | None = None,
    colour: str = "topic",
    highlight: bool = False,
    dragmode: str | None = None,
    validate: bool | None = None,
    point_data: str = "id",
    topic_colours: Mapping[int, str] | None = None,
) -> go.Figure:
    """Scatter of papers at (``x``, ``y``), one trace per value of ``colour`` (a `MAP_COLOUR_FIELDS`
    column; topic by default), topic labels at their clusters; hover shows title, authors, year, methods.

    Each point carries its paper's ``point_data`` column as ``customdata`` so a selection can filter
    the papers: the paper id by default; the dashboard's map sends the paper's row number instead
    (`dashboard.ui.components.paper_map`), a tenth of the bytes of 10,000 ids. Its hover text is the
    ``hover`` column where ``papers`` has one (a cache's), else `map_hover`. A WebGL map's coordinates
    are sent as 32-bit floats, the precision WebGL draws them at.
    ``background`` (e.g. the papers the filters leave out) is drawn first in pale grey, without ids
    or hover, so the map keeps its shape while filtering. ``highlight`` draws ``papers`` larger with a
    dark outline (search hits among the rest). Above ``max_points`` a seeded sample is drawn and the
    title says so; ``n_papers`` says how many papers a caller's own `sample_rows` of ``papers`` was
    drawn from (default: ``len(papers)``). Papers without coordinates (NaN) are not drawn.
    ``dragmode`` is what a drag does (Plotly's default: zoom). ``validate``: whether Plotly checks every
    value (`figure`); by default only a map drawn as SVG (fewer than 2,000 points) is checked, a WebGL
    map's traces are not (the same figure, 25-35 ms sooner at 1M; a test compares the two).
    ``topic_colours`` (topic -> colour) colours the clusters; by default `colours_of_topics` of the
    points drawn, so that no two neighbouring clusters share a colour. A caller that filters passes
    those of the whole map, so a topic keeps its colour whatever the filter. Cluster labels are drawn
    where they fit without covering one another, the largest clusters first (`label_shifts`).
    """
    shown = papers.iloc[sample_rows(len(papers), max_points, random_state)]
    n_papers = max(n_papers or 0, len(papers))
    if n_papers > len(shown):
        title = f"{title} — {len(shown):,} of {n_papers:,} papers sampled"
    # Traces as plain dicts made into the figure at once: added one by one, each was validated, then
    # copied and validated again by the figure.
    n_drawn = len(shown) + (0 if background is None else len(background))
    scatter = "scattergl" if n_drawn > 2_000 else "scatter"
    traces: list[dict[str, Any]] = []
    if background is not None and len(background):
        behind = background.iloc[sample_rows(len(background), max_points, random_state)]
        traces.append(
            {
                "type": scatter,
                "x": _coordinate(behind["x"], scatter),
                "y": _coordinate(behind["y"], scatter),
                "mode": "markers",
                "name": "Filtered out",
                "marker": {"color": OUTLIER_COLOUR, "size": 4, "opacity": 0.25},
                "hoverinfo": "skip",
            }
        )
    size = 7 if len(shown) < 2_000 else 4
    validate = scatter == "scatter" if validate is None else validate
    # Each group's points are taken from whole-sample arrays, not as a DataFrame per group: 50 topics'
    # traces took three times as long to make from DataFrames. Texts (hovers, ids) are object
    # arrays where Plotly checks the figure (it checks a list element by element) and lists where it
    # does not: orjson writes no object array, and one sent the whole figure down Plotly's slow JSON
    # path (every value visited in Python, each run).
    xs, ys = _coordinate(shown["x"], scatter), _coordinate(shown["y"], scatter)
    ids = shown[point_data].to_numpy()
    hover = shown["hover"].tolist() if "hover" in shown.columns else map_hover(shown)
    hovers = np.asarray(hover, dtype=object)
    if topic_colours is None:
        topic_colours = colours_of_topics(shown)
    topic_colours = {**_fallback_colours(shown["topic"]), **topic_colours}
    for name, marker_colour, rows in _colour_groups(shown, colour, topic_colours):
        marker: dict[str, Any] = {"color": marker_colour, "size": size, "opacity": 0.85}
        if highlight:
            marker.update(size=size + 4, opacity=1.0, line={"color": HIT_OUTLINE, "width": 1})
        traces.append(
            {
                "type": scatter,
                "x": xs[rows],
                "y": ys[rows],
                "mode": "markers",
                "name": name,
                "marker": marker,
                "customdata": _texts(ids[rows], validate),
                "hovertext": _texts(hovers[rows], validate),
                "hovertemplate": "%{hovertext}<extra>" + name + "</extra>",
            }
        )
    # Each cluster is named where it lies (its topic number and first terms) instead of a legend:
    # 25 legend entries did not fit beside the map and hid under the hover box. Coloured by another
    # field, the labels stay (dark) and the legend names the colours.
    topics = shown["topic"].to_numpy()
    xs, ys = shown["x"].to_numpy(float), shown["y"].to_numpy(float)
    labels = []
    # Largest clusters first: where two labels would cover each other, the smaller cluster's moves.
    sizes = pd.Series(topics).value_counts()
    # A cluster of a few points among many (a filter's stray hits) gets no label of its own: it would
    # float over the map with nothing under it. Its points still name it on hover.
    fewest = MIN_LABELLED_POINTS if len(shown) >= LABEL_ALL_BELOW else 1
    named = [topic for topic in sizes.index.tolist() if topic != OUTLIER_TOPIC and sizes[topic] >= fewest]
    places, texts = [], []
    for topic in named:
        rows = np.flatnonzero(topics == topic)
        places.append(label_position(xs[rows], ys[rows]))
        texts.append(map_label(topic, shown["topic_label"].iloc[rows[0]]))
    finite = np.isfinite(xs) & np.isfinite(ys)
    extent = (
        (float(xs[finite].min()), float(xs[finite].max()), float(ys[finite].min()), float(ys[finite].max()))
        if finite.any()
        else (0.0, 1.0, 0.0, 1.0)
    )
    plain = [html.unescape(text) for text in texts]  # the width a reader sees, not the escapes'
    # On a small map every cluster is named, and a label on its place hid the only point of a cluster
    # of one (a search on the seeds): every label leaves the points of clusters of one or two in sight.
    # (A label may cover some points of a larger cluster, its own most often, as on any map.)
    lone = finite & np.isin(topics, [t for t in named if sizes[t] < MIN_LABELLED_POINTS])
    few = list(zip(xs[lone].tolist(), ys[lone].tolist(), strict=True))
    shifts = label_shifts(places, plain, extent, clear_of=few)
    for topic, (x, y), text, shift in zip(named, places, texts, shifts, strict=True):
        if shift is None:  # no room near its cluster: named on hover and in the page's list instead
            continue
        xshift, yshift = shift
        # opaque, with black or white text, whichever reaches 4.5:1 on it (white reached 3.5:1 on 20
        # of the 30 topic colours)
        behind = topic_colours[int(topic)] if colour == "topic" else "#3c4043"
        labels.append(
            {
                "x": x, "y": y, "xshift": xshift, "yshift": yshift, "text": f"<b>{text}</b>",
                "showarrow": False, "font": {"color": colours.text_on(behind), "size": 11},
                "bgcolor": behind, "borderpad": 2,
            }
        )  # fmt: skip
    # All at once: add_annotation validates every annotation already there again (quadratic in labels).
    extra: dict[str, Any] = {} if dragmode is None else {"dragmode": dragmode}
    if colour != "topic":
        extra["showlegend"] = True
        extra["legend"] = {"title": {"text": MAP_COLOUR_FIELDS.get(colour, colour)}, "itemsizing": "constant"}
    bare = {"showticklabels": False, "zeroline": False}
    return figure(
        traces,
        title=title,
        x_title="Map dimension 1",
        y_title="Map dimension 2",
        height=560,
        xaxis=bare,
        yaxis=bare,
        annotations=labels,
        validate=validate,
        **extra,
    )


def _texts(values: np.ndarray, checked: bool) -> np.ndarray | list[Any]:
    """A trace's ``values`` as sent: Python objects (which orjson does not write) as a list unless Plotly
    checks the figure (it checks a list value by value); other arrays as they are."""
    return values.tolist() if values.dtype == object and not checked else values


def map_label(topic: int, label: object, terms: int = 2) -> str:
    """A cluster's name on the map: its number and first terms, escaped.

    >>> map_label(3, "graph · message · passing")
    '3 graph · message'
    """
    words = [w.strip() for w in str(label).split("·") if w.strip()][:terms]
    return safe_label(f"{topic} " + " · ".join(words), 36)


def _has(values: object) -> bool:
    return isinstance(values, list | tuple | np.ndarray) and len(values) > 0


def distinctive_terms(
    terms: pd.DataFrame,
    *,
    title: str,
    limit: int = 20,
) -> go.Figure:
    """Bars of the most distinctive terms by z-score (``term``, ``z``); positive = over-used here."""
    top = terms.sort_values("z", ascending=False).head(limit)
    bars = {
        "type": "bar",
        "x": top["z"].to_numpy(),
        "y": [safe_label(t) for t in top["term"]],
        "orientation": "h",
        "marker": {"color": [ACCENT if z > 0 else MUTED for z in top["z"]]},
        "hovertemplate": "%{y}: z = %{x:.1f}<extra></extra>",
    }
    return _bars_down(
        bars,
        n_bars=len(top),
        title=title,
        x_title="z-score (weighted log-odds vs the rest)",
        y_title="",
    )


def similarity_heatmap(
    matrix: pd.DataFrame,
    labels: Sequence[str],
    *,
    titles: Sequence[str] | None = None,
    title: str = "Pairwise similarity",
    subtitle: str = "",
) -> go.Figure:
    """Heatmap of a square similarity matrix; axes show short ``labels`` (A, B, C), the hover shows titles.

    ``subtitle`` is a second, smaller title line (both are plain text, escaped).
    """
    names = [safe_label(label, 30) for label in labels]
    full = [wrapped_label(t, width=50, max_lines=2) for t in (titles or labels)]
    values = matrix.to_numpy(dtype=float)
    heatmap = {
        "type": "heatmap",
        "z": values,
        "x": names,
        "y": names,
        "zmin": 0,
        "zmax": 1,
        "colorscale": SIMILARITY_SCALE,
        "customdata": [[f"{full[i]}<br>vs<br>{full[j]}" for j in range(len(full))] for i in range(len(full))],
        "hovertemplate": "%{customdata}<br>similarity %{z:.2f}<extra></extra>",
        "colorbar": {"title": {"text": "cosine"}, "thickness": 12},
    }
    # Each cell's number in black or white, whichever reads on that cell (4.5:1): Plotly's own heatmap
    # text picks #444 on mid blues (about 4:1). Annotations, so the figure keeps one (heatmap) trace.
    numbers = [
        {
            "x": names[j], "y": names[i], "text": f"{value:.2f}", "showarrow": False,
            "font": {"color": colours.text_on(cell_colour(value)), "size": 12},
        }
        for i, row in enumerate(values) for j, value in enumerate(row) if np.isfinite(value)
    ]  # fmt: skip
    return figure(
        [heatmap],
        title=title,
        subtitle=subtitle,
        x_title="Paper",
        y_title="Paper",
        height=150 + 60 * len(names),
        margin_top=70 if subtitle else 50,
        xaxis={"automargin": True},
        yaxis=BARS_DOWN,
        annotations=numbers,
    )


SIMILARITY_SCALE = "Blues"


def cell_colour(value: float, scale: str = SIMILARITY_SCALE) -> str:
    """The ``#rrggbb`` colour a heatmap with colour scale ``scale`` (0 to 1) paints ``value`` in."""
    from plotly.colors import sample_colorscale, unlabel_rgb

    rgb = unlabel_rgb(sample_colorscale(scale, [min(1.0, max(0.0, float(value)))])[0])
    return "#" + "".join(f"{round(channel):02x}" for channel in rgb)


def words_histogram(n_words: pd.Series, *, title: str = "Abstract length", bins: int = 30) -> go.Figure:
    """Histogram of words per abstract."""
    bars = {
        "type": "histogram",
        "x": n_words.to_numpy(),
        "nbinsx": bins,
        "marker": {"color": ACCENT},
        "hovertemplate": "%{x} words: %{y} papers<extra></extra>",
    }
    return figure([bars], title=title, x_title="Words in the abstract", y_title="Papers", height=300)


def code_status_bars(statuses: pd.Series, *, title: str = "Code status") -> go.Figure:
    """Bars of papers per code status (``statuses``: papers per status, e.g. a ``value_counts()``), in
    the schema's order."""
    counts = statuses.reindex(list(CODE_STATUSES), fill_value=0).astype(int)
    bars = {
        "type": "bar",
        "x": [s.replace("_", " ") for s in counts.index],
        "y": counts.to_numpy(),
        "marker": {"color": ACCENT},
        "text": [f"{n:,}" for n in counts.to_numpy()],
        "textposition": "outside",  # "auto" turned the count of a short bar on its side, inside it
        "cliponaxis": False,
        "hovertemplate": "%{x}: %{y} papers<extra></extra>",
    }
    return figure(
        [bars],
        title=title,
        x_title="Code status",
        y_title="Papers",
        height=320,
        yaxis={"range": [0, max(1, int(counts.max())) * 1.15]},
    )


# Characters the bundled word-cloud font (DroidSansMono) can draw: Latin, Greek, Cyrillic and symbols.
_CLOUD_DRAWABLE_BELOW = 0x0530


def cloud_drawable(term: str) -> bool:
    """Whether the word cloud's font can draw ``term`` (CJK and other scripts would show as boxes)."""
    return all(ord(c) < _CLOUD_DRAWABLE_BELOW for c in term)


CLOUD_SCALE = 2.5
# The cloud is laid out on a canvas 2.5 times smaller than its picture, and the picture (1000 px)
# is shown about 490 px wide (the Terms page's right column at 1280 px): a canvas font of 9 is
# 9 x 2.5 x 0.49 = 11 px on screen, the smallest a word is drawn in (the default, 4, gave 5 px).
CLOUD_MIN_FONT = 9
CLOUD_MAX_WORDS = 80
CLOUD_PNG_COLOURS = 64  # the word cloud's PNG is a palette image (`word_cloud_png`)


def cloud_layout(
    frequencies: Mapping[str, float], *, width: int = 1000, height: int = 440, random_state: int = 0
) -> list[tuple[str, float]]:
    """The words the cloud draws and their font size in the picture's pixels, largest first."""
    cloud = _cloud(frequencies, width=width, height=height, random_state=random_state)
    return [(str(word), float(size) * CLOUD_SCALE) for (word, _), size, *_ in cloud.layout_]


def _cloud(
    frequencies: Mapping[str, float], *, width: int, height: int, random_state: int, theme: str = "light"
) -> Any:
    from wordcloud import WordCloud  # imported here: building the cloud is the only use

    drawable = {t: float(w) for t, w in frequencies.items() if w > 0 and t.strip() and cloud_drawable(t)}
    if not drawable:
        raise ValueError("no drawable terms")
    palette = colours.word_cloud_palette(theme)  # words are text: 4.5:1 on the theme's background

    def colour(word: str, **_: object) -> str:
        return palette[sum(map(ord, word)) % len(palette)]

    # Laid out on a canvas 2.5 times smaller and drawn at that scale: a tenth of the time at full size,
    # which was most of a filter change on the Terms page. Words that would be smaller
    # than CLOUD_MIN_FONT are left out rather than drawn unreadably.
    return WordCloud(
        width=max(1, round(width / CLOUD_SCALE)),
        height=max(1, round(height / CLOUD_SCALE)),
        scale=CLOUD_SCALE,
        background_color=None,
        mode="RGBA",
        max_words=CLOUD_MAX_WORDS,
        min_font_size=CLOUD_MIN_FONT,
        prefer_horizontal=0.95,
        random_state=random_state,
        color_func=colour,
        collocations=False,
    ).generate_from_frequencies(drawable)


def word_cloud_png(
    frequencies: Mapping[str, float],
    *,
    width: int = 1000,
    height: int = 440,
    random_state: int = 0,
    theme: str = "light",
) -> bytes:
    """A word cloud of ``frequencies`` (term -> weight) as PNG bytes with a transparent background.

    Terms the font cannot draw are left out (see `cloud_drawable`), and so are words that would be
    too small to read (`CLOUD_MIN_FONT`); the words are in topic colours with 4.5:1 on ``theme``. Raises
    ValueError when no term is left to draw.
    """
    from PIL import Image

    cloud = _cloud(frequencies, width=width, height=height, random_state=random_state, theme=theme)
    buffer = io.BytesIO()
    # In CLOUD_PNG_COLOURS colours with alpha (the words' few colours and their smoothed edges): less than
    # half the bytes and the time of RGBA; compression level 1 takes a third of the time of level 6.
    image = cloud.to_image().quantize(colors=CLOUD_PNG_COLOURS, method=Image.Quantize.FASTOCTREE)
    # The quantizer averages alpha too (a word's inside came out 252-254): near-opaque entries are opaque.
    entries = image.getpalette("RGBA") or []
    entries[3::4] = [255 if alpha >= 248 else alpha for alpha in entries[3::4]]
    image.putpalette(entries, "RGBA")
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


# Repository states (`dashboard.repocheck`), from "the code is there" to "nobody knows yet".
REPO_STATE_COLOURS: dict[str, str] = colours.REPO_STATE_COLOURS["light"]


def repo_states(counts: pd.DataFrame, *, title: str, group_title: str = "", limit: int = 25) -> go.Figure:
    """Stacked bars of papers per repository state in each group (rows: groups, columns: states).

    The largest groups are kept (``limit``), largest on top; states keep `REPO_STATES` order.

        >>> fig = repo_states(pd.DataFrame({"live": [3], "empty": [1]}, index=["ICML"]), title="By venue")
        >>> [bar.name for bar in fig.data]
        ['live', 'empty']
    """
    from dashboard.schema import REPO_STATES

    top = counts.loc[counts.sum(axis=1).sort_values(ascending=False).index[:limit]]
    if len(counts) > limit:  # as `release_rate`: the title says that groups were left out
        title = f"{title} — the {limit} largest of {len(counts):,}"
    labels = [axis_label(label) for label in top.index]
    bars = [
        {
            "type": "bar",
            "x": top[state].to_numpy(),
            "y": labels,
            "orientation": "h",
            "name": state.replace("_", " "),
            "marker": {"color": REPO_STATE_COLOURS.get(state, MUTED)},
            "hovertemplate": f"%{{y}}: %{{x}} papers {html.escape(state.replace('_', ' '))}<extra></extra>",
        }
        for state in REPO_STATES
        if state in top.columns and top[state].sum()
    ]
    return figure(
        bars,
        title=title,
        x_title="Papers",
        y_title=group_title,
        height=_bar_height(len(top), _label_lines(labels)) + 40,
        yaxis=BARS_DOWN,
        barmode="stack",
        bargap=0.3,
        showlegend=True,
        legend={**LEGEND_BELOW, "x": 0},
    )

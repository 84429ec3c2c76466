"""Charts taken out of the app: the theme the user sees, a title that says what was filtered, PNG/SVG.

A saved chart must look like the one on screen (light or dark, same fonts) and say what it shows,
since it leaves the page that explained it. `themed` paints a figure in one of the app's themes (the
colours of ``.streamlit/config.toml``), `titled` adds the filter line under its title, and
`figure_image` renders PNG (at 2x, for slides) or SVG with kaleido, which drives the same headless
Chromium the browser tests use; nothing is fetched from the network.

>>> import plotly.graph_objects as go
>>> fig = themed(go.Figure(go.Bar(x=[1], y=[2])), "dark")
>>> fig.layout.paper_bgcolor
'#0f1117'
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.figures import colours as palette

ThemeName = Literal["light", "dark"]
ImageFormat = Literal["png", "svg"]
PNG_SCALE = 2  # slides want twice the pixels of the screen
# "Source Sans" first: the name of the font the app's pages load (a chart drawn in the app with its own
# theme, `dashboard.ui.components.chart`, has the pages' letters); the others where it is installed.
FONT_FAMILY = '"Source Sans", "Source Sans Pro", "Source Sans 3", "Helvetica Neue", Arial, sans-serif'


@dataclass(frozen=True)
class Theme:
    """The colours of one of the app's themes (``.streamlit/config.toml``)."""

    background: str
    secondary_background: str
    text: str
    grid: str
    muted_text: str


THEMES: dict[str, Theme] = {
    name: Theme(c.background, c.secondary_background, c.text, grid, muted)
    for (name, c), grid, muted in zip(
        palette.THEMES.items(), ("#e3e6ee", "#2c3242"), ("#4f5563", "#b4bac6"), strict=True
    )
}


def theme_name(value: object) -> ThemeName:
    """``"dark"`` for a dark theme, ``"light"`` for anything else (unknown, None)."""
    return "dark" if str(value).lower() == "dark" else "light"


def themed(fig: go.Figure, theme: str = "light") -> go.Figure:
    """A copy of ``fig`` painted in the app's ``theme`` (background, text, grid, font).

    The copy is checked value by value only if ``fig`` was (`charts.figure`): a WebGL map is not."""
    colours = THEMES[theme_name(theme)]
    painted = palette.recolour(go.Figure(fig, _validate=fig._validate), theme_name(theme))
    # An explicit template: Streamlit makes its own Plotly's default on import, so without this a
    # figure made in the app and the same figure made by the CLI would differ.
    painted.update_layout(
        template="plotly_dark" if theme_name(theme) == "dark" else "plotly_white",
        paper_bgcolor=colours.background,
        plot_bgcolor=colours.background,
        font={"color": colours.text, "family": FONT_FAMILY},
        title_font={"color": colours.text},
        legend={"font": {"color": colours.text}},
        hoverlabel={"font": {"family": FONT_FAMILY}},
    )
    painted.update_xaxes(gridcolor=colours.grid, zerolinecolor=colours.grid, color=colours.text)
    painted.update_yaxes(gridcolor=colours.grid, zerolinecolor=colours.grid, color=colours.text)
    return painted


def for_theme(fig: go.Figure, theme: str) -> go.Figure:
    """``fig`` with its chart colours picked for ``theme`` (`colours.recolour`): a copy in the dark
    theme, ``fig`` itself in the light one, whose colours it already has (copying a 10,000-point map
    cost 0.03 s of every run). The copy is checked value by value as ``fig`` was (`charts.figure`)."""
    theme = theme_name(theme)
    if theme == "light":
        return fig
    return palette.recolour(go.Figure(fig, _validate=fig._validate), theme)


def titled(fig: go.Figure, what: str) -> go.Figure:
    """A copy of ``fig`` whose title ends with a second line saying what was filtered (``what``).

    ``what`` is plain text from the user and the corpus: it is escaped here, once, and only ``&``, ``<``
    and ``>`` (Plotly's labels decode no ``&quot;``: an escaped quote would show as the entity).
    """
    named = go.Figure(fig)
    title = named.layout.title.text or ""
    line = f"<span style='font-size:0.8em'>{html.escape(what, quote=False)}</span>"
    named.update_layout(title={"text": f"{title}<br>{line}" if title else line})
    top = named.layout.margin.t if named.layout.margin.t is not None else 50
    named.update_layout(margin={"t": max(top, 80)})
    return named


def saved_figure(fig: go.Figure, *, what: str, theme: str) -> go.Figure:
    """The figure as it should leave the app: in the user's theme, titled with the filters."""
    return titled(themed(fig, theme), what)


def figure_image(fig: go.Figure, fmt: ImageFormat, *, width: int = 1000) -> bytes:
    """PNG (at `PNG_SCALE`) or SVG bytes of ``fig``, rendered by kaleido in headless Chromium.

    Raises RuntimeError with a plain message when no Chromium/Chrome is installed.
    """
    if fmt not in ("png", "svg"):
        raise ValueError(f"format must be png or svg, got {fmt!r}")
    height = int(fig.layout.height) if fig.layout.height else 500
    try:
        return fig.to_image(format=fmt, width=width, height=height, scale=PNG_SCALE if fmt == "png" else 1)
    except Exception as error:  # kaleido raises its own types when it finds no browser
        raise RuntimeError(
            f"the chart could not be drawn as {fmt.upper()}: kaleido needs Chromium or Chrome "
            f"installed ({type(error).__name__}: {error})"
        ) from error


# --------------------------------------------------------------------- text alternatives

TAG = re.compile(r"<[^>]+>")
TABLE_ROWS = 200  # "show the data" of a map lists this many of its points (an HTML table)


def plain(text: object) -> str:
    """Chart text without Plotly's HTML (``<br>``, ``<b>``) and entities: what a screen reader says."""
    return " ".join(html.unescape(TAG.sub(" ", str(text or ""))).split())


def _title(fig: go.Figure) -> str:
    return plain(fig.layout.title.text) or "Chart"


def _axis_title(axis: Any, default: str) -> str:
    return plain(axis.title.text) if axis is not None and axis.title.text else default


def _number(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    return f"{number:,.0f}" if number == int(number) else f"{number:,.2f}".rstrip("0").rstrip(".")


def _bar_pairs(trace: Any) -> list[tuple[str, float]]:
    horizontal = trace.orientation == "h"
    labels, values = (trace.y, trace.x) if horizontal else (trace.x, trace.y)
    if labels is None or values is None:
        return []
    return [(plain(label), float(value)) for label, value in zip(labels, values, strict=False)]


def describe(fig: go.Figure, *, top: int = 3) -> str:
    """A short text alternative for a chart: what it shows and its key numbers.

    >>> describe(go.Figure(go.Bar(x=[5, 2], y=["a", "b"], orientation="h"), layout={"title": "Papers"}))
    'Bar chart: Papers. 2 bars; largest a (5), b (2).'
    """
    title = _title(fig)
    traces = list(fig.data)
    if not traces:
        return f"{title}: empty chart."
    kinds = {trace.type for trace in traces}
    if kinds <= {"bar"}:
        pairs = [p for trace in traces for p in _bar_pairs(trace)]
        if len(traces) > 1:
            names = ", ".join(plain(t.name) for t in traces if t.name)
            return f"Bar chart: {title}. {len(traces)} series ({names}), {len(pairs)} bars in all."
        largest = sorted(pairs, key=lambda p: -p[1])[:top]
        shown = ", ".join(f"{label} ({_number(value)})" for label, value in largest)
        return f"Bar chart: {title}. {len(pairs)} bars; largest {shown}."
    if kinds <= {"histogram"}:
        values = np.asarray(traces[0].x if traces[0].x is not None else traces[0].y, dtype=float)
        if not len(values):
            return f"Histogram: {title}. No values."
        return (
            f"Histogram: {title}. {len(values):,} values from {_number(values.min())} to "
            f"{_number(values.max())}, median {_number(np.median(values))}."
        )
    if kinds <= {"heatmap"}:
        z = np.asarray(traces[0].z, dtype=float)
        return (
            f"Heatmap: {title}. {z.shape[0]} by {z.shape[1] if z.ndim > 1 else 1} cells, values from "
            f"{_number(np.nanmin(z))} to {_number(np.nanmax(z))}."
        )
    if kinds <= {"scatter", "scattergl"}:
        sizes = [
            (plain(t.name) or f"series {n + 1}", len(t.x) if t.x is not None else 0)
            for n, t in enumerate(traces)
        ]
        if all((t.mode or "").startswith("lines") for t in traces):
            return (
                f"Line chart: {title}. {len(traces)} lines: " + ", ".join(name for name, _ in sizes[:8]) + "."
            )
        total = sum(n for _, n in sizes)
        groups = ", ".join(f"{name} ({n:,})" for name, n in sorted(sizes, key=lambda p: -p[1])[:top])
        return f"Scatter plot: {title}. {total:,} points in {len(traces)} groups; largest {groups}."
    return f"Chart: {title}. {len(traces)} series."


def _decoration(trace: Any) -> bool:
    """A trace drawn without hover (the map's grey filtered-out papers, a tree's lines): no data."""
    return trace.hoverinfo == "skip"


def data_rows(fig: go.Figure) -> int:
    """How many rows `data_table` would have without its limit (bars, points; heatmap rows)."""
    total = 0
    for trace in fig.data:
        if _decoration(trace):
            continue
        values = trace.z if trace.type == "heatmap" else trace.x if trace.x is not None else trace.y
        total += len(values) if values is not None and trace.type != "histogram" else 0
        if trace.type == "histogram":
            total += int(trace.nbinsx or 30)
    return total


def data_table(
    fig: go.Figure, *, max_rows: int = TABLE_ROWS, ids: Callable[[Sequence[Any]], list[str]] | None = None
) -> pd.DataFrame:
    """The numbers a chart draws, as a table ("show the data"): one row per bar, point or cell.

    Series names go in a ``series`` column when there are several; a scatter keeps its first
    ``max_rows`` points, with an ``id`` column from their ``customdata`` (through ``ids`` where the
    points carry something else, such as row numbers). Traces drawn without hover (`_decoration`) are
    left out.
    """
    layout = fig.layout
    frames: list[pd.DataFrame] = []
    x_name, y_name = _axis_title(layout.xaxis, "x"), _axis_title(layout.yaxis, "y")
    listed = 0
    for n, trace in enumerate(fig.data):
        if listed >= max_rows:  # a map of 10,000 points in 50 series lists only its first rows anyway
            break
        if _decoration(trace):
            continue
        name = plain(trace.name) or f"series {n + 1}"
        if trace.type == "bar":
            horizontal = trace.orientation == "h"
            label_name = _axis_title(layout.yaxis if horizontal else layout.xaxis, "label") or "label"
            value_name = _axis_title(layout.xaxis if horizontal else layout.yaxis, "value") or "value"
            frame = pd.DataFrame(
                _bar_pairs(trace), columns=[label_name, value_name if value_name != label_name else "value"]
            )
        elif trace.type == "histogram":
            values = np.asarray(trace.x if trace.x is not None else trace.y, dtype=float)
            if not len(values):
                continue
            counts, edges = np.histogram(values, bins=int(trace.nbinsx or 30))
            frame = pd.DataFrame({"from": edges[:-1], "to": edges[1:], "count": counts})
        elif trace.type == "heatmap":
            z = np.asarray(trace.z)
            rows = [plain(v) for v in (trace.y if trace.y is not None else range(z.shape[0]))]
            columns = [plain(v) for v in (trace.x if trace.x is not None else range(z.shape[1]))]
            frame = pd.DataFrame(z, index=rows, columns=columns).reset_index(names="")
        elif trace.x is not None and trace.y is not None:
            wanted = max_rows - listed
            frame = pd.DataFrame(
                {x_name: list(trace.x[:wanted]), y_name if y_name != x_name else "y": list(trace.y[:wanted])}
            )
            points = trace.customdata
            if points is not None and len(points) == len(trace.x) and np.asarray(points).ndim == 1:
                named = ids(points[:wanted]) if ids is not None else [str(i) for i in points[:wanted]]
                frame.insert(0, "id", named)
        else:
            continue
        if len(fig.data) > 1:
            frame.insert(0, "series", name)
        frames.append(frame)
        listed += len(frame)
    if not frames:
        return pd.DataFrame()
    table = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return table.head(max_rows)

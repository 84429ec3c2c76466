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
from dataclasses import dataclass
from typing import Literal

import plotly.graph_objects as go

ThemeName = Literal["light", "dark"]
ImageFormat = Literal["png", "svg"]
PNG_SCALE = 2  # slides want twice the pixels of the screen
FONT_FAMILY = '"Source Sans Pro", "Source Sans 3", "Helvetica Neue", Arial, sans-serif'


@dataclass(frozen=True)
class Theme:
    """The colours of one of the app's themes (``.streamlit/config.toml``)."""

    background: str
    secondary_background: str
    text: str
    grid: str
    muted_text: str


THEMES: dict[str, Theme] = {
    "light": Theme("#ffffff", "#f3f5f9", "#1f2430", "#e3e6ee", "#4f5563"),
    "dark": Theme("#0f1117", "#1b1f2a", "#e6e9ef", "#2c3242", "#b4bac6"),
}


def theme_name(value: object) -> ThemeName:
    """``"dark"`` for a dark theme, ``"light"`` for anything else (unknown, None)."""
    return "dark" if str(value).lower() == "dark" else "light"


def themed(fig: go.Figure, theme: str = "light") -> go.Figure:
    """A copy of ``fig`` painted in the app's ``theme`` (background, text, grid, font)."""
    colours = THEMES[theme_name(theme)]
    painted = go.Figure(fig)
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

"""Start loading the chart library as a page opens, not when its first chart arrives.

Streamlit's browser code loads Plotly (one 4.7 MB module, ``static/js/PlotlyChart.<hash>.js``) only
when the first ``st.plotly_chart`` of a session is drawn. In a profile of the Overview that fetch
began after the sidebar's widgets and the page's metrics were drawn, and parsing it took most of the
time from there to the first chart. `preload_charts` sends, before anything else of a page, a short
script that imports that same module, so the browser fetches and parses it while the server still
reads and analyses the corpus. The module is the one Streamlit itself imports later (same URL, so one
instance); a Streamlit without such a file (another bundle layout) gets no script and loses nothing.

It is the only JavaScript the app sends (``st.html(..., unsafe_allow_javascript=True)``), built from a
file name read from Streamlit's own package, never from corpus or user input. Its element is hidden
by `dashboard.ui.markup.STYLE` (``#pd-preload``). Light on purpose: ``app.py`` calls it before a page
imports pandas and the analysis, so the first thing the browser gets is this.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import streamlit as st

CHUNK_PATTERN = re.compile(r"^PlotlyChart\.[A-Za-z0-9_-]+\.js$")
PRELOAD_ID = "pd-preload"


@functools.cache
def chart_chunk() -> str | None:
    """The file name of Streamlit's Plotly module in its static files, or None when there is none."""
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    try:
        names = sorted(path.name for path in folder.iterdir() if CHUNK_PATTERN.match(path.name))
    except OSError:
        return None
    return names[0] if len(names) == 1 else None


def preload_html(chunk: str) -> str:
    """A script that imports ``chunk`` from the folder of Streamlit's own entry module.

    The folder is read off the page (Streamlit's ``static/js/index.*.js`` script), so a server under a
    ``baseUrlPath`` works too; a failed import is dropped (Streamlit's own import then reports it).
    """
    if not CHUNK_PATTERN.match(chunk):
        raise ValueError(f"not a Plotly module name: {chunk!r}")
    return (
        f'<script id="{PRELOAD_ID}">(() => {{'
        ' const entry = document.querySelector(\'script[type="module"][src*="static/js/index"]\');'
        " if (!entry) return;"
        f' import(new URL("{chunk}", entry.src).href).catch(() => undefined);'
        " })();</script>"
    )


def preload_charts() -> None:
    """Send the preload script (nothing when this Streamlit has no separate Plotly module)."""
    chunk = chart_chunk()
    if chunk is not None:
        st.html(preload_html(chunk), unsafe_allow_javascript=True)

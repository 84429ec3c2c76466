"""The chart-library preload (`dashboard.ui.preload`): the module it names exists, and only such a name
ever reaches the script. The browser side (fetched on a page without charts, hidden) is in
tests/test_browser.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st

from dashboard.ui import preload


def test_the_chunk_is_a_file_of_streamlits_static_scripts() -> None:
    chunk = preload.chart_chunk()
    assert chunk is not None, "this Streamlit has no separate Plotly module: the preload does nothing"
    path = Path(st.__file__).parent / "static" / "static" / "js" / chunk
    assert path.is_file() and path.stat().st_size > 1_000_000  # Plotly itself, not a stub


def test_the_script_imports_exactly_that_module() -> None:
    html = preload.preload_html("PlotlyChart.D9Z0_fxz.js")
    assert html.startswith(f'<script id="{preload.PRELOAD_ID}">') and html.endswith("</script>")
    assert 'import(new URL("PlotlyChart.D9Z0_fxz.js", entry.src).href)' in html


@pytest.mark.parametrize(
    "name", ['x.js"); alert(1); ("', "PlotlyChart.a.js</script><script>", "../PlotlyChart.a.js", "Plotly.js"]
)
def test_no_other_name_reaches_the_script(name: str) -> None:
    with pytest.raises(ValueError, match="not a Plotly module name"):
        preload.preload_html(name)

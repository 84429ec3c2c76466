"""The HTML report of a view, and charts saved as PNG/SVG: content, escaping, size, CLI."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest
from conftest import SEEDS_DIR
from plotly.offline import get_plotlyjs
from support.report import HOSTILE, analysed, chart_blocks, report_rows, report_view  # noqa: F401

from dashboard import corpus
from dashboard.cli import main as cli
from dashboard.cli.report import report_of
from dashboard.figures import images as figures
from dashboard.filters import Filters
from dashboard.report.html import REPORT_ROWS, build_report, view_link, without_timestamp


@pytest.fixture(scope="module")
def seeds_report_parts() -> pd.DataFrame:
    return corpus.load(SEEDS_DIR).papers


def test_the_report_holds_exactly_the_filtered_papers_and_every_chart(
    seeds_report_parts: pd.DataFrame,
) -> None:
    report = report_of(seeds_report_parts, {"q": ["diffusion"]}, theme="light", base_url="http://h:1/")
    papers = corpus.load(SEEDS_DIR).papers
    expected = int(Filters(q="diffusion").mask(papers).sum())
    assert 0 < expected < len(papers)
    assert report_rows(report) == expected
    assert f"Papers ({expected:,})" in report
    assert f"{expected:,} of {len(papers):,}" in report
    blocks = chart_blocks(report)
    titles = [block["layout"]["title"]["text"] for block in blocks]
    assert any(t.startswith("Papers per topic") for t in titles)
    assert any(t.startswith("Map of papers") for t in titles)
    assert any(t.startswith("Most frequent terms") for t in titles)
    assert report.count(get_plotlyjs()[:400]) == 1  # Plotly's script once, not per chart
    assert 'href="http://h:1/?q=diffusion"' in report


def test_the_cli_writes_the_same_report_as_the_function(
    tmp_path: Path, seeds_report_parts: pd.DataFrame
) -> None:
    out = tmp_path / "view.html"
    status = cli.main([
        "report", str(SEEDS_DIR), "--filters", "q=graph&code=released", "--out", str(out),
        "--base-url", "http://h:1/",
    ])  # fmt: skip
    assert status == 0
    direct = report_of(
        seeds_report_parts, {"q": ["graph"], "code": ["released"]}, theme="light", base_url="http://h:1/"
    )
    assert without_timestamp(out.read_text(encoding="utf-8")) == without_timestamp(direct)


def test_the_cli_refuses_an_output_that_is_not_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["report", str(SEEDS_DIR), "--out", str(tmp_path / "view.pdf")]) == 2
    assert "--out must end in .html" in capsys.readouterr().err
    assert not (tmp_path / "view.pdf").exists()


def test_a_large_view_lists_the_first_rows_says_how_many_more_and_stays_under_10_mb() -> None:
    papers = analysed(27_179)
    report = build_report(report_view(papers))
    assert report_rows(report) == REPORT_ROWS
    assert f"and {27_179 - REPORT_ROWS:,} more papers" in report
    assert len(report.encode()) < 10_000_000
    assert "5,000 of them drawn (a seeded sample)" in report
    years = [
        b for b in chart_blocks(report) if b["layout"]["title"]["text"].startswith("Topic share per year")
    ]
    assert len(years) == 1 and len(years[0]["data"]) == 8


def test_corpus_text_is_escaped_and_only_http_links_are_links() -> None:
    papers = analysed(3, title=HOSTILE, url="javascript:window.__pwned=3")
    report = build_report(report_view(papers))
    assert "<script>window.__pwned" not in report
    assert "<img src=x" not in report
    assert 'href="javascript' not in report
    # A JSON block never holds a raw "<": no corpus text can end it early.
    for block in re.findall(r'class="chart-data"[^>]*>(.*?)</script>', report, re.S):
        assert "<" not in block
    assert len(chart_blocks(report)) >= 3  # and every block still parses


def test_view_link_carries_the_filters() -> None:
    assert view_link("http://h:1/papers?x=1#top", Filters(q="graph", year=(2024,))) == (
        "http://h:1/papers?q=graph&year=2024"
    )
    assert view_link("http://h:1/", Filters()) == "http://h:1/"


def test_a_dark_report_is_painted_dark() -> None:
    report = build_report(report_view(analysed(50)), theme="dark")
    assert "background: #0f1117" in report
    assert all(block["layout"]["paper_bgcolor"] == "#0f1117" for block in chart_blocks(report))


# ------------------------------------------------------------------------------ saved charts


def test_themed_paints_background_text_and_grid() -> None:
    fig = figures.themed(go.Figure(go.Bar(x=[1], y=[2])), "dark")
    assert fig.layout.paper_bgcolor == figures.THEMES["dark"].background
    assert fig.layout.font.color == figures.THEMES["dark"].text
    assert fig.layout.xaxis.gridcolor == figures.THEMES["dark"].grid
    light = figures.themed(go.Figure(), "not a theme")
    assert light.layout.paper_bgcolor == figures.THEMES["light"].background


def test_titled_adds_the_filter_line_escaped_once() -> None:
    fig = go.Figure(layout={"title": {"text": "Papers per topic"}})
    named = figures.titled(fig, 'search "a<b" · 3 of 9 papers')
    assert named.layout.title.text.startswith("Papers per topic<br>")
    # Escaped once, and quotes left alone: Plotly would show "&quot;" as it is.
    assert 'search "a&lt;b"' in named.layout.title.text and "a<b" not in named.layout.title.text
    assert fig.layout.title.text == "Papers per topic"  # the shown figure is left as it was


@pytest.mark.skipif(
    shutil.which("chromium") is None, reason="kaleido draws with Chromium (apt install chromium)"
)
def test_a_chart_saves_as_png_at_twice_the_size_and_as_svg() -> None:
    fig = figures.saved_figure(
        go.Figure(go.Bar(x=[1, 2], y=[3, 4]), layout={"height": 300}), what="all 2 papers", theme="light"
    )
    png = figures.figure_image(fig, "png", width=400)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (800, 600)
    svg = figures.figure_image(fig, "svg", width=400).decode()
    assert svg.startswith("<svg") and "all 2 papers" in svg


def test_the_repository_filter_counts_the_same_papers_as_the_app(seeds_report_parts: pd.DataFrame) -> None:
    # With no answers cached every linked repository is "not checked": the papers with a repository.
    report = report_of(seeds_report_parts, {"repo": ["not_checked"]}, theme="light", base_url="http://h:1/")
    with_repository = int(seeds_report_parts["github_repo"].ne("").sum())
    assert 0 < report_rows(report) <= with_repository
    assert report_rows(report) < len(seeds_report_parts)

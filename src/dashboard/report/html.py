"""A self-contained HTML report of one view: opens anywhere, offline, with no server.

The app's "Download report" and ``paper-dashboard report`` both call `build_report` with the same
`ReportView`, so the same corpus and filters give the same file (apart from the time stamp). The file
holds what corpus and filters it shows (with the link that reproduces the view), the headline
numbers, the charts as interactive Plotly figures, and the first `REPORT_ROWS` filtered papers.

Safety and size, by construction:

- Plotly's script is embedded once; each chart is a JSON block (``<`` written as ``\\u003c``, so no
  corpus text can close the block) drawn by one small loader, never a script per chart.
- Every corpus string is escaped with `html.escape` (chart labels by `dashboard.figures.charts`, which
  escapes once), and a link is made only from an http(s) URL.
- The map draws at most `REPORT_MAP_POINTS` papers (a seeded sample, said under the chart), which
  keeps the 27k corpus's report under 10 MB.

>>> REPORT_ROWS
1000
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.figures import charts
from dashboard.figures.images import THEMES, theme_name, themed
from dashboard.filters import Filters
from dashboard.schema import OUTLIER_TOPIC

REPORT_ROWS = 1_000
REPORT_MAP_POINTS = 5_000
REPORT_TERMS = 25


@dataclass(frozen=True)
class ReportView:
    """What a report shows: the analysed papers, the filters and which papers pass them.

    ``mask`` is one boolean per row of ``papers``; ``topic_names`` maps topic number to its label
    (empty when the corpus has no topics); ``term_counts`` is a `terms.TermCounts` of the corpus
    (None leaves the term chart out); ``view_url`` is the app's address the filters are added to.
    """

    papers: pd.DataFrame
    mask: np.ndarray
    filters: Filters
    topic_names: Mapping[int, str] = field(default_factory=dict)
    topics: pd.DataFrame | None = None
    term_counts: Any = None
    view_url: str = "http://localhost:8501/"

    @property
    def filtered(self) -> pd.DataFrame:
        """The papers that pass the filters, in corpus order."""
        return self.papers[self.mask]


@dataclass(frozen=True)
class Chart:
    """One chart of the report: its figure and one sentence a screen reader (or a reader) gets."""

    figure: go.Figure
    summary: str


def view_link(base_url: str, filters: Filters) -> str:
    """The link that reproduces the view: the app's address with the filters as its query."""
    base = base_url.split("?", 1)[0].split("#", 1)[0]
    query = urlencode(filters.to_query(), doseq=True)
    return f"{base}?{query}" if query else base


def corpus_line(papers: pd.DataFrame) -> str:
    """What the corpus is, from the table itself (so the app and the CLI say the same words)."""
    sources = sorted({str(s) for s in papers.get("source", pd.Series(dtype=str)).dropna()})
    venues = sorted({str(v) for v in papers.get("venue", pd.Series(dtype=str)).dropna() if str(v)})
    years = pd.to_numeric(papers.get("year", pd.Series(dtype="Int64")), errors="coerce").dropna()
    parts = [f"{len(papers):,} papers"]
    if venues:
        parts.append(
            ", ".join(venues[:8]) + (f" and {len(venues) - 8} more venues" if len(venues) > 8 else "")
        )
    if len(years):
        low, high = int(years.min()), int(years.max())
        parts.append(str(low) if low == high else f"{low}–{high}")
    if sources:
        shown = ", ".join(sources[:3]) + (f" (+{len(sources) - 3} more)" if len(sources) > 3 else "")
        parts.append(f"from {shown}")
    return " · ".join(parts)


def headline_numbers(view: ReportView) -> list[tuple[str, str]]:
    """(name, value) of the figures at the top of the report."""
    shown = view.filtered
    n = len(shown)
    released = int(shown["code_status"].eq("released").sum()) if "code_status" in shown else 0
    figures = [("Papers", f"{n:,} of {len(view.papers):,}")]
    if "topic" in shown:
        topics = shown.loc[shown["topic"] != OUTLIER_TOPIC, "topic"].nunique()
        figures.append(("Topics", f"{topics:,}"))
    figures.append(("Released code", f"{released / n:.0%} ({released:,})" if n else "–"))
    if "links" in shown:
        figures.append(("Links found", f"{int(shown['links'].map(len).sum()):,}"))
    if "venue" in shown:
        figures.append(("Venues", f"{shown['venue'].replace('', np.nan).nunique():,}"))
    return figures


def report_charts(view: ReportView) -> list[Chart]:
    """The report's charts for the filtered papers, each with a one-line summary."""
    shown = view.filtered
    found: list[Chart] = []
    if len(shown) == 0:
        return found
    if "topic" in shown and view.topics is not None:
        counts = shown["topic"].value_counts()
        found.append(
            Chart(
                charts.topic_sizes(view.topics, counts, title="Papers per topic"),
                _top_summary("Papers per topic", counts.rename(index=lambda t: view.topic_names.get(t, t))),
            )
        )
        rates = _release_by(shown, "topic", view.topic_names)
        if rates["released"].sum() > 0:
            found.append(
                Chart(
                    charts.release_rate(rates, title="Code released, per topic", group_title=""),
                    _rate_summary(rates),
                )
            )
    if view.term_counts is not None:
        frequent = view.term_counts.term_frequencies(view.mask, top=REPORT_TERMS)
        if len(frequent):
            series = pd.Series(frequent["count"].to_numpy(), index=frequent["term"])
            found.append(
                Chart(
                    charts.top_counts(series, title="Most frequent terms", x_title="Occurrences"),
                    _top_summary("Most frequent terms", series),
                )
            )
    if "code_status" in shown:
        statuses = shown["code_status"].value_counts()
        counted = statuses.rename(index=lambda status: str(status).replace("_", " "))
        found.append(Chart(charts.code_status_bars(statuses), _top_summary("Code status", counted)))
    trend = _topic_share_by_year(shown, view.topic_names)
    if trend is not None:
        found.append(trend)
    if {"x", "y", "topic"} <= set(shown.columns):
        background = view.papers[~view.mask]
        fig = charts.paper_map(
            shown,
            background=background if len(background) else None,
            max_points=REPORT_MAP_POINTS,
        )
        sampled = len(shown) > REPORT_MAP_POINTS
        found.append(
            Chart(
                fig,
                f"Map of {len(shown):,} papers by topic"
                + (f"; {REPORT_MAP_POINTS:,} of them drawn (a seeded sample)." if sampled else "."),
            )
        )
    return found


def _release_by(papers: pd.DataFrame, column: str, labels: Mapping[Any, str]) -> pd.DataFrame:
    released = papers["code_status"].eq("released")
    table = (
        pd.DataFrame({"group": papers[column], "released": released})
        .groupby("group", sort=False)["released"]
        .agg(released="sum", papers="size")
        .reset_index()
    )
    table["group"] = [labels.get(g, str(g)) for g in table["group"]]
    return table


def _topic_share_by_year(papers: pd.DataFrame, labels: Mapping[int, str]) -> Chart | None:
    """Lines of each large topic's share of the papers per year, when the view spans several years."""
    if "topic" not in papers or "year" not in papers:
        return None
    years = pd.to_numeric(papers["year"], errors="coerce")
    known = papers[years.notna()]
    if known.empty or years.nunique() < 2:
        return None
    table = pd.crosstab(years[years.notna()].astype(int), known["topic"], normalize="index")
    top = known["topic"].value_counts().index[:8]
    fig = go.Figure()
    for topic in top:
        fig.add_trace(
            go.Scatter(
                x=table.index.to_numpy(),
                y=table[topic].to_numpy(),
                mode="lines+markers",
                name=charts.safe_label(labels.get(int(topic), str(topic)), 40),
                hovertemplate="%{x}: %{y:.1%}<extra>%{fullData.name}</extra>",
            )
        )
    fig.update_layout(
        title={"text": "Topic share per year (the 8 largest topics)", "x": 0, "xanchor": "left"},
        xaxis_title="Year",
        yaxis_title="Share of the year's papers",
        yaxis_tickformat=".0%",
        height=420,
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
    )
    fig.update_xaxes(dtick=1)
    first, last = table.index.min(), table.index.max()
    change = (table.loc[last, top] - table.loc[first, top]).sort_values()
    grew = change.index[-1]
    summary = (
        f"Topic share per year, {first}–{last}; the largest rise is "
        f"{labels.get(int(grew), grew)} ({table.loc[first, grew]:.0%} to {table.loc[last, grew]:.0%})."
    )
    return Chart(fig, summary)


def _top_summary(what: str, counts: pd.Series, n: int = 3) -> str:
    top = counts[counts > 0].sort_values(ascending=False).head(n)
    if top.empty:
        return f"{what}: nothing to count."
    listed = "; ".join(f"{label}: {int(count):,}" for label, count in top.items())
    return f"{what}. Largest: {listed}."


def _rate_summary(rates: pd.DataFrame) -> str:
    released, total = int(rates["released"].sum()), int(rates["papers"].sum())
    best = rates.assign(rate=rates["released"] / rates["papers"].clip(lower=1)).sort_values(
        ["rate", "papers"], ascending=False
    )
    top = best.iloc[0]
    return (
        f"Code released per topic: {released:,} of {total:,} papers overall; highest "
        f"{top['group']} ({top['rate']:.0%} of {int(top['papers']):,})."
    )


# ------------------------------------------------------------------------------------ the file


def has_authors(papers: pd.DataFrame) -> bool:
    """Whether any paper of the table names its authors (a corpus without them gets no empty column)."""
    return "authors" in papers and bool(papers["authors"].map(_is_list).any())


def paper_table(papers: pd.DataFrame, limit: int = REPORT_ROWS) -> str:
    """The first ``limit`` papers as an escaped HTML table (title, authors, venue, year, code link)."""
    authors = has_authors(papers)
    widths = [("Title", 44), ("Authors", 22), ("Venue", 9), ("Year", 6), ("Code", 19)]
    if not authors:
        widths = [("Title", 62), ("Venue", 10), ("Year", 7), ("Code", 21)]
    columns = "".join(f'<col style="width:{w}%">' for _, w in widths)
    head = "".join(f'<th scope="col">{name}</th>' for name, _ in widths)
    return (
        f"<table><colgroup>{columns}</colgroup><thead><tr>{head}</tr></thead>\n<tbody>\n"
        f"{paper_rows(papers, limit, authors=authors)}\n</tbody></table>"
    )


def paper_rows(papers: pd.DataFrame, limit: int = REPORT_ROWS, *, authors: bool = True) -> str:
    """The table of papers as escaped HTML rows (title, authors, venue, year, code link)."""
    rows = []
    for paper in papers.head(limit).itertuples(index=False):
        record = paper._asdict()
        names = record.get("authors")
        listed = ", ".join(str(a) for a in names[:6]) if _is_list(names) else ""
        if _is_list(names) and len(names) > 6:
            listed += f" and {len(names) - 6} more"
        year = record.get("year")
        code = str(record.get("code_url") or "")
        cells = [
            html.escape(str(record.get("title", ""))),
            *([html.escape(listed)] if authors else []),
            html.escape(str(record.get("venue", "") or "")),
            "" if year is None or pd.isna(year) else html.escape(str(int(year))),
            _link(code),
        ]
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    return "\n".join(rows)


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple | np.ndarray) and len(value) > 0


def _link(url: str) -> str:
    """An anchor for an http(s) URL, the escaped text for anything else."""
    if url.lower().startswith(("https://", "http://")):
        safe = html.escape(url, quote=True)
        return f'<a href="{safe}" rel="noopener noreferrer">{safe}</a>'
    return html.escape(url)


def _figure_json(fig: go.Figure) -> str:
    """The figure as JSON that cannot end its ``<script type="application/json">`` block."""
    return fig.to_json().replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_LOADER = """
document.querySelectorAll("script.chart-data").forEach(function (block) {
  var spec = JSON.parse(block.textContent);
  var target = document.getElementById(block.dataset.target);
  Plotly.newPlot(target, spec.data, spec.layout, {displaylogo: false, responsive: true,
    modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d", "toggleSpikelines"]});
});
"""


def build_report(view: ReportView, *, theme: str = "light", generated_at: datetime | None = None) -> str:
    """The whole report as one HTML document (str): every chart, the table, Plotly embedded once."""
    from plotly.offline import get_plotlyjs

    name = theme_name(theme)
    colours = THEMES[name]
    when = (generated_at or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    shown = view.filtered
    link = view_link(view.view_url, view.filters)
    numbers = "".join(
        f'<div class="metric"><div class="name">{html.escape(name)}</div>'
        f'<div class="value">{html.escape(value)}</div></div>'
        for name, value in headline_numbers(view)
    )
    blocks = []
    for i, chart in enumerate(report_charts(view)):
        figure = themed(chart.figure, name)
        blocks.append(
            f'<figure><div id="chart-{i}" class="chart" role="img" aria-label="{html.escape(chart.summary)}">'
            f"</div><figcaption>{html.escape(chart.summary)}</figcaption>"
            f'<script type="application/json" class="chart-data" data-target="chart-{i}">'
            f"{_figure_json(figure)}</script></figure>"
        )
    rest = len(shown) - min(len(shown), REPORT_ROWS)
    more = f"<p>… and {rest:,} more papers (the first {REPORT_ROWS:,} are listed).</p>" if rest > 0 else ""
    described = view.filters.describe(view.topic_names)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="Paper Dashboard">
<title>Paper Dashboard report: {html.escape(described)}</title>
<style>
body {{ background: {colours.background}; color: {colours.text}; margin: 2rem auto; max-width: 1100px;
  font-family: "Source Sans Pro", "Source Sans 3", "Helvetica Neue", Arial, sans-serif; line-height: 1.45;
  padding: 0 1rem; }}
a {{ color: inherit; }}
.muted, figcaption {{ color: {colours.muted_text}; }}
.metrics {{ display: flex; flex-wrap: wrap; gap: 1rem 2.5rem; margin: 1rem 0 2rem; }}
.metric .name {{ color: {colours.muted_text}; font-size: 0.9rem; }}
.metric .value {{ font-size: 1.6rem; }}
figure {{ margin: 0 0 2rem; }}
table {{ border-collapse: collapse; width: 100%; font-size: 0.92rem; table-layout: fixed; }}
th, td {{ text-align: left; vertical-align: top; padding: 0.3rem 0.5rem;
  border-bottom: 1px solid {colours.grid}; overflow-wrap: anywhere; }}
th {{ background: {colours.secondary_background}; }}
</style>
</head>
<body>
<h1>Paper Dashboard report</h1>
<p><strong>Corpus:</strong> {html.escape(corpus_line(view.papers))}</p>
<p><strong>Filters:</strong> {html.escape(described)}</p>
<p><strong>View in the app:</strong> {_link(link)}</p>
<p class="muted">Made {html.escape(when)}. Charts are interactive (hover, zoom); the file needs no server.</p>
<div class="metrics">{numbers}</div>
<h2>Charts</h2>
{"".join(blocks) or "<p>No papers match these filters.</p>"}
<h2>Papers ({len(shown):,})</h2>
{paper_table(shown)}
{more}
<script>{get_plotlyjs()}</script>
<script>{_LOADER}</script>
</body>
</html>
"""


def without_timestamp(report: str) -> str:
    """The report with its time stamp blanked, to compare two reports of the same view."""
    import re

    return re.sub(r"Made \d{4}-\d\d-\d\d \d\d:\d\d UTC", "Made -", report)

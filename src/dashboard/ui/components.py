"""Pieces several pages share: the empty state, downloads, the paper card, safe text and tables."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import export
from dashboard.analytics import reviews
from dashboard.figures import charts, mapimage
from dashboard.figures import images as figures
from dashboard.filters import MAX_VALUES_PER_KEY, highlight_spans
from dashboard.schema import rows_of
from dashboard.search import lookup
from dashboard.ui import data, keys, navigation, tables
from dashboard.ui.markup import chips_html, escape_markdown, link_html, marked_html, safe_url, text_html
from dashboard.ui.sidebar import clear_filters
from dashboard.ui.url import setting, sync_widget, update_filters, write_query

if TYPE_CHECKING:
    from dashboard.ui.view import View

DOWNLOAD_FORMATS: dict[str, str] = {"CSV": "csv", "JSON": "json", "Excel": "xlsx", "Parquet": "parquet"}
# Below this many rows a file is made on every run (cheap, and tests can see it); above, on click.
# (A long table's CSV, with its abstracts, would cost a visible part of every rerun of the Papers page.)
EAGER_DOWNLOAD_ROWS = 250


def scope_line(view: View) -> str:
    """Which papers a page shows, in words: the page header's line, and a saved chart's subtitle."""
    shown, total = int(view.mask.sum()), len(view.papers)
    scope = (
        f"all {total:,} papers"
        if view.filters.is_empty
        else f"{shown:,} of {total:,} papers ({view.describe()})"
    )
    return f"{scope} · corpus: {view.source.label}"


METRIC_PX = 120  # a headline metric's width: five fit one line from 1024 px


def metric_px(value: str) -> int:
    """The width of a metric showing ``value``: METRIC_PX, or what its digits need at the metrics'
    36 px type ("1,000,000" was cut to "1,000…" in 120 px).

    >>> metric_px("57"), metric_px("1,000,000")
    (120, 154)
    """
    return max(METRIC_PX, 8 + sum(18 if c.isdigit() else 10 for c in value))


def page_header(title: str, view: View, what: str = "") -> None:
    """The page title and one line saying which papers it is about.

    On a page that counts papers (`navigation.PageSpec.counts`) the line ends in "Open these N papers":
    the Papers page with exactly these filters, so what a chart counted can be read and downloaded.
    """
    st.title(title)
    line = escape_markdown(f"{what}{' — ' if what else ''}{scope_line(view)}")
    n = int(view.mask.sum())
    if not navigation.counts_papers_here() or n == 0:
        st.caption(line)
        return
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    row.caption(line)
    if row.button(
        f"Open these {n:,} papers",
        key=keys.OPEN_PAPERS,
        icon=":material/article:",
        help="The Papers page with these filters: read, sort and download the papers this page counts.",
    ):
        go_to_papers()


# Plotly's toolbar stays hidden (its nine buttons were nine tab stops on every chart); the "Save"
# control beside each chart takes a chart away, and the map keeps the buttons selecting needs.
CHART_CONFIG: dict[str, Any] = {"displayModeBar": False}
MAP_CONFIG: dict[str, Any] = {
    "displaylogo": False,
    "modeBarButtons": [["select2d", "lasso2d", "zoom2d", "pan2d", "resetScale2d"]],
}


def chart(
    fig: Any,
    view: View,
    *,
    name: str,
    key: str | None = None,
    config: Mapping[str, Any] | None = None,
    alt: str = "",
    ids: Callable[[Sequence[Any]], list[str]] | None = None,
    own_theme: bool = False,
    **selection: Any,
) -> Any:
    """A Plotly chart in the user's theme's colours, with "Show the data" and "Save" under it.

    ``own_theme``: the figure comes painted in the theme (`figures.themed`) and the browser does not
    lay Streamlit's theme over it, which it does trace by trace (for the paper map, a good part of
    what the browser did to switch to Topics on a large corpus).

    ``alt`` is the chart's text alternative for a screen reader (default: `figures.describe`, what
    it shows and its largest values); "Show the data" lists the numbers it draws as a table, with the
    paper ids ``ids`` makes of the points' ``customdata`` (`figures.data_table`).
    ``name`` names the saved file (with the filters, like every download) and keys the controls;
    ``selection`` goes to `st.plotly_chart` (``on_select``, ``selection_mode``). Returns its event.
    """
    theme = figures.theme_name(st.context.theme.type)
    if own_theme:  # its title bold, as Streamlit's theme draws the other charts' titles
        shown = figures.themed(fig, theme).update_layout(title_font_weight=600)
    else:
        shown = figures.for_theme(fig, theme)
    event = st.plotly_chart(
        shown,
        key=key,
        config=dict(config or CHART_CONFIG),
        alt=alt or figures.describe(fig),
        theme=None if own_theme else "streamlit",
        **selection,
    )
    row = st.container(horizontal=True, horizontal_alignment="right")
    show_data(fig, row, name=name, ids=ids)
    save_chart(fig, view, name=name, row=row)
    return event


def show_data(
    fig: Any, row: Any, *, name: str, ids: Callable[[Sequence[Any]], list[str]] | None = None
) -> None:
    """The "Show the data" popover: the chart's numbers as a plain HTML table (`figures.data_table`).

    `st.table`, not `st.dataframe`: a real ``<table>`` a screen reader walks cell by cell (the grid
    draws on a canvas). A map lists its first `figures.TABLE_ROWS` points. The table is made and sent
    only while the popover is open (`lazy_popover`).
    """
    total = figures.data_rows(fig)
    if not total:
        return
    popover = lazy_popover(
        row,
        "Show the data",
        key=f"{keys.SHOW_DATA}.{name}",
        icon=":material/table:",
        help="The chart as a table",
    )
    if popover.open:
        with popover:
            table = figures.data_table(fig, ids=ids)
            more = f" The first {len(table):,} of {total:,} rows are listed." if total > len(table) else ""
            st.caption(escape_markdown(figures.describe(fig) + more))
            st.table(table, hide_index=True)


def save_chart(fig: Any, view: View, *, name: str, row: Any = None) -> None:
    """The "Save" popover of one chart: PNG (2x, for slides) and SVG, titled with what is filtered.

    The file is drawn only on click (kaleido starts a headless browser: seconds, not every rerun), and
    so is its themed, titled copy (two copies of a large figure cost a good part of a page's run); the
    buttons themselves only while the popover is open (`lazy_popover`).
    """
    row = row if row is not None else st.container(horizontal=True, horizontal_alignment="right")
    popover = lazy_popover(
        row, "Save chart", key=f"{keys.SAVE_CHART}.{name}", icon=":material/download:", help="PNG (2x) or SVG"
    )
    if not popover.open:
        return
    theme = figures.theme_name(st.context.theme.type)
    what = scope_line(view)
    with popover:
        for fmt in ("png", "svg"):
            st.download_button(
                "PNG (2x, for slides)" if fmt == "png" else "SVG (scalable)",
                data=partial(_chart_file, fig, what, theme, fmt),
                file_name=view.file_name(name, fmt),
                mime="image/png" if fmt == "png" else "image/svg+xml",
                on_click="ignore",
                key=f"{keys.SAVE_CHART}.{name}.{fmt}",
                width="stretch",
            )


def lazy_section(label: str, key: str, icon: str | None = None, *, expanded: bool = False) -> Any:
    """An expander whose content the page draws only while it is open (``.open``); opening it reruns.

    Below the fold, a page's charts and grids drawn with every switch to it were most of what the
    browser did to show the page: each label says what it holds, and its content waits to be asked for.
    """
    return st.expander(label, key=key, on_change="rerun", icon=icon, expanded=expanded)


def lazy_popover(row: Any, label: str, *, key: str, icon: str, help: str) -> Any:
    """A small popover under a chart whose content is made only while it is open.

    Opening it reruns the page (`on_change="rerun"`), and ``.open`` says whether to draw the content:
    every chart of every run made its data table and its two download buttons, unseen (at a million
    papers 3-7 ms a chart, a tenth of a page with six charts; and sent to the browser each time).
    """
    return row.popover(label, type="tertiary", icon=icon, help=help, key=key, on_change="rerun")


def _chart_file(fig: Any, what: str, theme: str, fmt: figures.ImageFormat) -> bytes:
    return figures.figure_image(figures.saved_figure(fig, what=what, theme=theme), fmt)


def report_button(view: View) -> None:
    """ "Download report": one self-contained HTML file of the current view (made on click)."""
    st.download_button(
        "Download report",
        data=partial(_report_file, view, figures.theme_name(st.context.theme.type), _app_url()),
        file_name=view.file_name("report", "html"),
        mime="text/html",
        icon=":material/summarize:",
        on_click="ignore",
        key=keys.REPORT,
        width="stretch",
        help="One HTML file with the headline numbers, the charts and the filtered papers; "
        "it opens offline in any browser.",
    )


def _app_url() -> str:
    try:
        return str(st.context.url or "") or "http://localhost:8501/"
    except Exception:  # no browser session (a bare script run)
        return "http://localhost:8501/"


def _report_file(view: View, theme: str, url: str) -> bytes:
    from dashboard.report.html import ReportView, build_report
    from dashboard.ui import data

    analysis = view.analysis
    report = ReportView(
        papers=view.papers,
        mask=view.mask.to_numpy(dtype=bool),
        filters=view.filters,
        topic_names=view.topic_names,
        topics=analysis.topics if analysis is not None else None,
        term_counts=data.term_counts(view.source.digest, 1, False, view.papers),
        view_url=url,
    )
    return build_report(report, theme=theme).encode("utf-8")


def empty_state(view: View, key: str, what: str = "papers") -> bool:
    """When no paper passes the filters: say why and offer to clear them. Returns True if empty."""
    if view.mask.any():
        return False
    st.info(
        escape_markdown(f"No {what} match the filters ({view.describe()}).")
        + " Loosen a filter in the sidebar, or clear them all.",
        icon=":material/filter_alt_off:",
    )
    st.button("Clear filters", key=key, on_click=clear_filters, icon=":material/filter_alt_off:")
    return True


def export_bytes(table: pd.DataFrame, fmt: str) -> bytes:
    """The file a download hands out: the shared exporter (CSV-injection guard on by default)."""
    return export.to_bytes(table, fmt)


def download(
    table: pd.DataFrame | Callable[[], pd.DataFrame],
    view: View,
    *,
    stem: str,
    key: str,
    what: str = "papers",
    n_rows: int | None = None,
) -> None:
    """A format picker and one download button for ``table``, named after the filters.

    ``table`` may be a function making it (with ``n_rows``): a long table is then made only on click.
    """
    # Picker and button each as wide as they are, side by side where they fit (two fifths of the page
    # clipped the picker's last format at 1024 px).
    row = st.container(horizontal=True, vertical_alignment="bottom", gap="medium")
    with row:
        label = st.segmented_control("File format", list(DOWNLOAD_FORMATS), default="CSV", key=key)
    fmt = DOWNLOAD_FORMATS.get(label or "CSV", "csv")
    make: Callable[[], pd.DataFrame] = partial(_same, table) if isinstance(table, pd.DataFrame) else table
    rows = len(table) if isinstance(table, pd.DataFrame) else int(n_rows or 0)
    data: bytes | Callable[[], bytes] = (
        export_bytes(make(), fmt) if rows <= EAGER_DOWNLOAD_ROWS else partial(_export, make, fmt)
    )
    with row:
        st.download_button(
            f"Download {rows:,} {what} as {label or 'CSV'}",
            data=data,
            file_name=view.file_name(stem, fmt),
            mime=export.MIME_TYPES.get(fmt),
            icon=":material/download:",
            on_click="ignore",
            key=key + ".button",
        )


def _same(table: pd.DataFrame) -> pd.DataFrame:
    return table


def _export(make: Callable[[], pd.DataFrame], fmt: str) -> bytes:
    """The file of the table ``make`` makes: run on click for a long table."""
    return export_bytes(make(), fmt)


def html(body: str) -> None:
    """Show HTML built in `dashboard.ui.markup` (corpus text inside it is already escaped)."""
    st.html(body)


def joined(values: Any, limit: int = 6) -> str:
    """A list cell as short text: ``a, b, c (+2)``."""
    if not isinstance(values, list | tuple) and not hasattr(values, "__len__"):
        return ""
    shown = [str(v) for v in islice(values, limit)]  # only those shown (a table joins 1,000 rows' lists)
    return ", ".join(shown) + (f" (+{len(values) - limit})" if len(values) > limit else "")


def safe_links(urls: pd.Series) -> pd.Series:
    """URLs for a LinkColumn: http(s) only, anything else blanked so it never becomes a link."""
    return urls.map(lambda u: safe_url(u) or None)


COMPARE_AT_MOST = 4


def go_to_papers(extra: Mapping[str, str | Sequence[str] | None] | None = None) -> None:
    """Open the Papers page with the filters in the URL (and ``extra`` keys), as a page link does."""
    navigation.switch_to("papers", extra)


def compare_button(ids: Sequence[str], *, key: str, label: str = "") -> None:
    """A button that opens Compare with these 2-4 papers (or one, to pick the others there).

    More than `COMPARE_AT_MOST` are not cut silently: the button is off and says why.
    """
    too_many = len(ids) > COMPARE_AT_MOST
    text = label or f"Compare the {len(ids)} ticked papers"
    if too_many:
        text = f"Compare takes {COMPARE_AT_MOST} papers at most: {len(ids):,} are ticked"
    if st.button(text, key=key, disabled=too_many or not ids, icon=":material/compare:"):
        navigation.switch_to("compare", {keys.URL_COMPARE: list(ids)})


def paper_link(paper_id: str) -> str:
    """The address of this paper on the Papers page, with the filters now in the URL."""
    query = navigation.query_to("papers", {keys.URL_PAPER: paper_id})
    # The card is on the Papers page, so the browser's address ends in /papers (no address under
    # AppTest: then the link is relative to the app).
    base = (st.context.url or "").split("?")[0].rstrip("/")
    if not base.endswith("/papers"):
        base += "/papers"
    return base + "?" + urlencode(query, doseq=True)


def open_paper(paper_id: str) -> None:
    """Callback: show this paper on the Papers page (kept in the URL)."""
    write_query({keys.URL_PAPER: paper_id})


def paper_button(label: str, paper_id: str, *, key: str, on_papers_page: bool) -> None:
    """A button (label: corpus text, escaped here) that opens a paper on the Papers page."""
    text = escape_markdown(_short(label, 110))
    if on_papers_page:
        st.button(text, key=key, on_click=open_paper, args=(paper_id,), type="tertiary")
    elif st.button(text, key=key, type="tertiary"):
        go_to_papers({keys.URL_PAPER: paper_id})


def paper_card(
    view: View,
    paper: pd.Series,
    *,
    similar: int = 5,
    key_prefix: str = keys.PAPERS_SIMILAR_PREFIX,
    on_papers_page: bool = True,
) -> None:
    """One paper: title, facts, abstract with search terms highlighted, links, most similar papers."""
    title = str(paper.get("title", ""))
    derived = (
        " <span class='pd-meta'>(title derived from the abstract)</span>"
        if paper.get("title_is_derived")
        else ""
    )
    html(f"<div class='pd-title'>{text_html(title)}{derived}</div>")
    authors = paper.get("authors")
    if _non_empty(authors):
        html("<div class='pd-meta'>" + text_html(joined(authors, limit=12)) + "</div>")
    # A row of buttons as wide as their labels (in columns, "Compare with…" was cut at 1024 px).
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        compare_button([str(paper["id"])], key=f"{keys.PAPERS_COMPARE}.{paper['id']}", label="Compare with…")
        popover = st.popover("Copy link", icon=":material/link:")
    with popover:
        st.caption("The link opens this paper with the same filters:")
        st.code(paper_link(str(paper["id"])), language=None, wrap_lines=True)
    venue, year = str(paper.get("venue") or ""), tables.year_text(paper.get("year"))
    # The file by its readable name, less the venue and year already said ("part 2 of 3").
    source = view.source_names.get(str(paper.get("source") or ""), "")
    said = " ".join(part for part in (venue, year) if part)
    facts = [venue, year, source.removeprefix(said).strip(" ·") if said else source]
    if "topic_label" in paper.index:
        facts.append("topic: " + view.topic_names.get(int(paper["topic"]), str(paper["topic_label"])))
    facts.append("code: " + str(paper.get("code_status", "")).replace("_", " "))
    html("<div class='pd-meta'>" + text_html(" · ".join(f for f in facts if f)) + "</div>")
    if _non_empty(paper.get("ratings")):
        html("<div class='pd-meta'>" + text_html(reviews.scores_line(paper)) + "</div>")
    text = str(paper.get("abstract_clean", ""))
    html(f"<div class='pd-abstract'>{marked_html(text, highlight_spans(text, view.filters.q))}</div>")
    chips = [
        ("Method names", paper.get("method_names")),
        ("Datasets", paper.get("datasets")),
        ("Areas", paper.get("areas")),
    ]
    for label, values in chips:
        if _non_empty(values):
            html(f"<div class='pd-meta'>{label}: {chips_html(list(values))}</div>")
    links = paper.get("links")
    if _non_empty(links):
        items = [
            link_html(link.get("url")) + " " + chips_html([str(link.get("kind", "")).replace("_", " ")])
            for link in links
            if isinstance(link, dict)
        ]
        html("<div class='pd-links'>Links: " + " ".join(items) + "</div>")
    url = safe_url(paper.get("url"))
    if url:
        html(f"<div class='pd-links'>{link_html(url, 'Paper page')}</div>")
    if similar and view.analysis is not None:
        similar_papers(
            view, str(paper["id"]), n=similar, key_prefix=key_prefix, on_papers_page=on_papers_page
        )


def similar_papers(
    view: View,
    paper_id: str,
    *,
    n: int = 5,
    key_prefix: str = keys.PAPERS_SIMILAR_PREFIX,
    on_papers_page: bool,
) -> None:
    """The papers closest to this one, each a button that opens it."""
    try:
        nearest = view.analysis.most_similar(paper_id, n=n)
    except (KeyError, ValueError, IndexError):
        return
    if nearest is None or len(nearest) == 0:
        return
    st.markdown(
        "**Most similar papers**",
        help="Cosine similarity of the abstracts' tf-idf word weights: 1 = the same words, 0 = none shared.",
    )
    for row in nearest.itertuples(index=False):
        paper_button(
            f"{float(row.similarity):.2f} · {row.title}",
            str(row.id),
            key=f"{key_prefix}.{paper_id}.{row.id}",
            on_papers_page=on_papers_page,
        )


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _non_empty(values: Any) -> bool:
    return values is not None and not isinstance(values, str | float) and len(values) > 0


def papers_table(table: pd.DataFrame, *, columns: Sequence[str]) -> pd.DataFrame:
    """Display columns for a table of papers: lists joined to text, links made safe."""
    shown = pd.DataFrame(index=table.index)
    for column in columns:
        if column not in table.columns:
            continue
        values = table[column]
        if column in ("method_names", "datasets", "areas", "authors", "keywords"):
            values = values.map(joined)
        elif column in ("code_url", "url", "pdf_url"):
            values = safe_links(values).fillna("")
        shown[column] = values
    return shown


def lookup_text(view: View) -> Any:
    """The text Compare's search reads (`dashboard.search.lookup.lookup_text`), made once per corpus."""
    return _lookup_text(view.source.digest, view.papers)


@st.cache_resource(
    show_spinner="Preparing the search by title, author and id (once per corpus)…", max_entries=4
)
def _lookup_text(digest: str, _papers: pd.DataFrame) -> Any:
    return lookup.lookup_text(_papers)


def positions_of(view: View, ids: Iterable[str]) -> dict[str, int]:
    """The row of each of these paper ids that the corpus has, in the order given.

    Looks them up in the analysis's id index (built once per corpus); `x in papers.set_index("id").index`
    builds a hash table of every id on each run (0.25 s at a million papers).
    """
    wanted = list(dict.fromkeys(str(i) for i in ids))
    if view.analysis is not None:
        positions = view.analysis.positions
        return {i: int(positions[i]) for i in wanted if i in positions}
    rows = np.flatnonzero(view.papers["id"].astype("str").isin(wanted).to_numpy())
    found = dict(zip(view.papers["id"].iloc[rows].astype("str"), rows.tolist(), strict=True))
    return {i: found[i] for i in wanted if i in found}


# --------------------------------------------------------------------- charts that filter when clicked


def picked(points: Sequence[dict[str, Any]], lookup: Sequence[Sequence[Any]]) -> list[Any]:
    """The values behind selected Plotly points: their ``customdata``, else ``lookup[curve][index]``."""
    values: list[Any] = []
    for point in points:
        value = point.get("customdata")
        if isinstance(value, list):
            value = value[0] if value else None
        if value is None:
            curve, index = point.get("curve_number", 0), point.get("point_index", point.get("point_number"))
            if index is not None and 0 <= curve < len(lookup) and 0 <= index < len(lookup[curve]):
                value = lookup[curve][index]
        if value is not None and value not in values:
            values.append(value)
    return values


def _on_topic_pick(chart_key: str, lookup: Sequence[Sequence[Any]]) -> None:
    state = st.session_state.get(chart_key)
    points = state["selection"]["points"] if state else []
    topics = [int(t) for t in picked(points, lookup)]
    if not topics:
        return
    # A click toggles: clicking a chosen topic removes it, another one adds it.
    update_filters(lambda f: replace(f, topic=tuple(sorted(set(f.topic) ^ set(topics)))))


def topic_bars(view: View, key: str, *, title: str = "Papers per topic (click a bar to filter)") -> None:
    """Papers per topic under every filter except the topic filter; a click adds or removes a topic."""
    if view.analysis is None:
        return
    others = view.mask_without("topic")
    counts = view.papers.loc[others.to_numpy(), "topic"].value_counts()
    topics = view.analysis.topics[["topic", "label"]]
    fig = charts.topic_sizes(topics, counts, selected=view.filters.topic, title=title)
    lookup = [list(fig.data[0].customdata)]
    chart(
        fig,
        view,
        name="topics",
        key=key,
        on_select=partial(_on_topic_pick, key, lookup),
        selection_mode="points",
    )


def _on_value_pick(chart_key: str, field: str, lookup: Sequence[Sequence[Any]]) -> None:
    state = st.session_state.get(chart_key)
    points = state["selection"]["points"] if state else []
    values = [str(v) for v in picked(points, lookup)]
    if not values:
        return

    # A click toggles, as on the topic bars: a chosen value is removed, another one added.
    def toggled(f: Any) -> Any:
        return replace(f, **{field: tuple(sorted(set(getattr(f, field)) ^ set(values)))})

    update_filters(toggled)


# The filter field -> the table column its chart counts (a list column unless noted in `_SINGLE`).
FILTER_COLUMNS: dict[str, str] = {
    "author": "authors",
    "institution": "affiliations",
    "country": "countries",
    "decision": "decision_tier",
}
_SINGLE = frozenset({"decision"})


def value_counts_without(view: View, field: str) -> pd.Series:
    """Papers per value of ``field``'s column under every filter except ``field`` itself.

    So a chart shows what a click would add, as the topic bars do. Empty when the column is absent.
    """
    codes = field_codes(view.source.digest, view.filters.model, field, view.papers)
    if codes is None:
        return pd.Series(dtype="int64")
    others = view.mask_without(field).to_numpy(dtype=bool)
    if field in _SINGLE:
        return tables.value_counts_in_view(codes, others)
    return tables.counts_in_view(codes, others)


def field_codes(digest: str, model: str, field: str, papers: pd.DataFrame) -> tables.Groups | None:
    """``field``'s column (`FILTER_COLUMNS`) as codes, made once per corpus; None when it is absent."""
    column = FILTER_COLUMNS[field]
    if column not in papers.columns:
        return None
    if field in _SINGLE:
        return data.groups(digest, model, column, papers)
    return data.list_items(digest, column, True, papers)


def filter_bars(
    view: View,
    key: str,
    field: str,
    counts: pd.Series,
    *,
    title: str,
    names: Mapping[Any, str] | None = None,
    keep_order: bool = False,
    limit: int = 15,
) -> None:
    """Bars of papers per value (`value_counts_without`); a click adds or removes that value's filter."""
    fig = charts.choice_bars(
        counts,
        title=title,
        selected=getattr(view.filters, field),
        names=names,
        keep_order=keep_order,
        limit=limit,
    )
    lookup = [list(fig.data[0].customdata)]
    chart(
        fig,
        view,
        name=field,
        key=key,
        on_select=partial(_on_value_pick, key, field, lookup),
        selection_mode="points",
    )


# --------------------------------------------------------------------- the papers table


def _on_row_pick(table_key: str, ids: Sequence[str]) -> None:
    rows = selected_rows(table_key, len(ids))
    if len(rows) == 1:  # one ticked row opens it; several are for Compare
        open_paper(ids[rows[0]])


def selected_rows(table_key: str, n_rows: int) -> list[int]:
    """The ticked rows of a dataframe drawn with ``key=table_key`` (its last run), in range."""
    state = st.session_state.get(table_key)
    rows = state["selection"]["rows"] if state else []
    return [int(r) for r in rows if 0 <= int(r) < n_rows]


ROW_PX = 35  # st.dataframe's own row height
# What a table shows for a missing value: Streamlit's own is the word "None", which reads as data.
MISSING = "—"
# Four lines: the grid wraps text only in rows taller than 4 rem (64 px), from 8 px down, 18 px a line.
# At 76 px the fifth line starts at the row's edge; at 68 px the top of a fourth showed, cut in half.
WRAPPED_ROW_PX = 76


def table_height(rows: int, visible: int = 14, row_px: int = ROW_PX) -> int:
    """Pixel height showing up to ``visible`` rows of a dataframe without empty space below."""
    return 38 + row_px * max(1, min(rows, visible))


PAGE_ROWS = 1_000  # st.dataframe sends every row it is given to the browser: more go a page at a time


def page_rows(n_rows: int, key: str, what: str = "papers", *, has_download: bool = True) -> slice:
    """Which rows to show: all of them when few, else one page of PAGE_ROWS, chosen above the table.

    ``has_download``: the page offers the whole table as a download (the caption says so only then).
    """
    if n_rows <= PAGE_ROWS:
        return slice(0, n_rows)
    pages = (n_rows - 1) // PAGE_ROWS + 1
    left, right = st.columns([1, 4], vertical_alignment="bottom")
    with left:
        page = st.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, value=1, key=key)
    start = (int(page) - 1) * PAGE_ROWS
    stop = min(start + PAGE_ROWS, n_rows)
    with right:
        st.caption(
            f"{what.capitalize()} {start + 1:,}–{stop:,} of {n_rows:,}, "
            f"{PAGE_ROWS:,} a page: filter or search to narrow them down"
            + ("; the download holds all of them." if has_download else ".")
        )
    return slice(start, stop)


def page_of(
    positions: np.ndarray, key: str, what: str = "papers", *, has_download: bool = True
) -> np.ndarray:
    """The ``positions`` (rows of a table) on the page shown: all when few, else one page (`page_rows`)."""
    return positions[page_rows(len(positions), key, what, has_download=has_download)]


# What a table has with the sidebar open: the main column at 1024 px (the narrowest window the app
# is laid out for), and half of it in st.columns(2) at 1280 px (below 1280 px pairs of columns in a
# `keys.STACK_NARROW_PREFIX` container go one under the other, see `markup.STYLE`). A wider window
# gives every column the same extra room (Streamlit grows every column of a stretched grid alike).
# The main column's grids measured 676 px wide at 1024 px in Chromium (820 at 1280, 1460 at 1920);
# less their border and a scrollbar as wide as a classic one (17 px), so a long table's grid does not
# scroll sideways where scrollbars take room.
PAGE_WIDTH_PX = 656
HALF_WIDTH_PX = 398
EXPANDER_INSET_PX = 34  # what an expander's padding and border take of its width (1 rem a side, 1 px)


def show_table(
    table: pd.DataFrame,
    columns: Mapping[str, Any],
    *,
    visible: int = 14,
    within: int = PAGE_WIDTH_PX,
    wrapped: bool = False,
) -> None:
    """A read-only table with these column configs, as tall as its rows up to ``visible`` of them.

    The widths are cut to fit ``within`` pixels (`tables.fit_widths`), so no column hides behind a
    sideways scroll at 1024 px; a wider window gives every column the same extra room. ``wrapped``:
    rows four lines tall, whose text wraps (lists of terms in half a page, cut after a few words).
    """
    shown = {name: config for name, config in columns.items() if name in table.columns}
    sized = {name: c["width"] for name, c in shown.items() if isinstance(c.get("width"), int)}
    fitted = tables.fit_widths(sized, within)
    row_px = WRAPPED_ROW_PX if wrapped else ROW_PX
    if wrapped:  # the grid wraps these itself and would break a long name mid-word: cut at a word
        table = fit_text_columns(
            table, {n: w for n, w in fitted.items() if _is_text(shown[n]) and n != "title"}
        )
        if "title" in fitted and "title" in table.columns:  # whole, but broken at a hyphen
            table = table.assign(
                title=[
                    break_at_hyphens(t, fitted["title"]) if isinstance(t, str) else t for t in table["title"]
                ]
            )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=table_height(len(table), visible, row_px=row_px),
        row_height=row_px,
        placeholder=MISSING,
        column_config={name: {**c, "width": fitted.get(name, c.get("width"))} for name, c in shown.items()},
    )


def _is_text(config: Mapping[str, Any]) -> bool:
    return bool((config.get("type_config") or {}).get("type") == "text")


def fit_text_columns(table: pd.DataFrame, widths: Mapping[str, int]) -> pd.DataFrame:
    """``table`` with the text of these columns cut to their cells (`tables.fit_cell`), at a word with
    "…": a word too long for its column is never broken inside, text past a row's last line never cut
    without a sign."""
    fitted = {
        name: [tables.fit_cell(v, width, WRAPPED_ROW_PX) if isinstance(v, str) else v for v in table[name]]
        for name, width in widths.items()
        if name in table.columns
    }
    return table.assign(**fitted) if fitted else table


def break_at_hyphens(text: str, width_px: int) -> str:
    """``text`` with a space after a hyphen in each word too wide for a grid cell ``width_px`` wide.

    The grid breaks a line only at a space, so a compound longer than the cell was broken mid-word
    ("Out-of-Distributio / n"). The space goes after the last hyphen whose piece fits a line, where the
    grid breaks and drops it; a word without a hyphen is left as it is (a title is not cut).

    >>> break_at_hyphens("Hand-Occlusion-and-Orientation-Aware Pose", 200)
    'Hand-Occlusion-and- Orientation-Aware Pose'
    >>> break_at_hyphens("Out-of-Distribution Detection", 300)
    'Out-of-Distribution Detection'
    """
    room = (width_px - tables.CELL_PADDING_PX) * 0.92  # as `tables.fit_cell`: the widths are averages
    pieces: list[str] = []
    for word in str(text).split(" "):
        while "-" in word[:-1] and tables.text_px(word) > room:
            hyphens = [at + 1 for at, char in enumerate(word[:-1]) if char == "-"]
            fitting = [at for at in hyphens if tables.text_px(word[:at]) <= room]
            cut = fitting[-1] if fitting else hyphens[0]
            pieces.append(word[:cut])
            word = word[cut:]
        pieces.append(word)
    return " ".join(pieces)


def selectable_papers(
    table: pd.DataFrame,
    view: View,
    *,
    key: str,
    height: int | None = None,
    extra: Mapping[str, Sequence[Any]] | None = None,
) -> list[str]:
    """The papers as a table; ticking one row opens that paper (id in URL). Returns the ticked ids.

    Titles, authors and topics wrap over four lines (a title cut at 30 characters told nothing).
    Several ticked rows open nothing: the page offers to compare them. ``extra`` adds columns after
    the title (``score``, ``match``: a ranked view's score and matched sentence), one value per row.
    """
    display = papers_table(table, columns=PAPER_COLUMNS)
    for position, (name, values) in enumerate((extra or {}).items(), start=1):
        display.insert(position, name, list(values))
    if "topic" in display.columns:
        display["topic"] = table["topic"].map(lambda t: view.topic_names.get(int(t), str(t)))
    if "code_status" in display.columns:
        display["code_status"] = display["code_status"].str.replace("_", " ")
    for column in ("areas", "authors"):
        if column in display.columns and not display[column].astype(bool).any():
            display = display.drop(columns=column)
    # Venue and year share one column ("NeurIPS 2023"), shown when either tells the papers apart.
    if any(c in view.papers.columns and view.papers[c].nunique(dropna=True) > 1 for c in ("venue", "year")):
        display["venue"] = tables.venue_year(table)
    # A corpus whose source counts citations can be sorted by them: the table shows them too.
    if "citations" in table.columns and "citations" in sortable_columns(view):
        display["citations"] = table["citations"].to_numpy()
    display = display[fitted_columns(display.columns)]
    config = paper_column_config(display.columns)
    # The title is broken after its hyphens first, so that its fitted lines break where the grid's do.
    title_px = int(config["title"]["width"])
    display["title"] = [break_at_hyphens(t, title_px) if isinstance(t, str) else t for t in display["title"]]
    # Text cut to the cell at the narrowest window (1024 px), at a word and with "…": the grid would
    # break a long word mid-word and cut the last line without a sign (the title's end too; the whole
    # title is in the paper's details and in the download).
    display = fit_text_columns(display, {c: int(config[c]["width"]) for c in FITTED_COLUMNS if c in display})
    # A new key for every filter state and order, so a stale row number never opens the wrong paper.
    table_key = f"{key}.{view.filters.slug()}"
    ids = tuple(str(i) for i in table["id"])
    st.dataframe(
        display,
        key=table_key,
        on_select=partial(_on_row_pick, table_key, ids),
        selection_mode="multi-row",
        hide_index=True,
        width="stretch",
        height=height or table_height(len(display), row_px=WRAPPED_ROW_PX),
        row_height=WRAPPED_ROW_PX,
        placeholder=MISSING,
        column_config=config,
    )
    return [ids[r] for r in selected_rows(table_key, len(ids))]


# Fitted by `fit_text_columns` (the title once `break_at_hyphens` has broken it, in `selectable_papers`).
FITTED_COLUMNS: tuple[str, ...] = ("title", "authors", "method_names", "topic", "areas", "match", "why")

# How a keyboard user opens a paper from the table (the grid draws on a canvas and says nothing).
TABLE_KEYBOARD_HINT = (
    "Keyboard: Tab into the table, move to a row with the arrow keys, then Shift+Space ticks it "
    "and opens the paper below (Shift+Space again unticks it)."
)


# A repository link shown as its path on the big hosts ("owner/repo"), whole elsewhere: the grid
# shows the regex's first group (a full "https://github.com/..." was cut after the owner).
REPO_DISPLAY = r"https?://(?:www\.)?(?:github\.com|gitlab\.com|huggingface\.co|bitbucket\.org)/(.+)"
CODE_LINK_TEXT = "repo ↗"  # the Papers table's Code links (`PAPER_COLUMN_CONFIG`)
PAPER_COLUMNS: tuple[str, ...] = (
    "title",
    "authors",
    "method_names",
    "topic",
    "areas",
    "code_url",
    "n_words",
)  # and "venue" (with the year) where the corpus has several
# What `selectable_papers` reads of its rows: pass only these (`rows_of`), not every column (taking 1,000
# rows of all 40 columns of a million-paper table was a visible part of every run).
SELECTABLE_COLUMNS: tuple[str, ...] = (*PAPER_COLUMNS, "id", "venue", "year", "citations")

# Pixel widths that fit a 1024 px window with the sidebar open (about 675 px for the grid, 36 of them
# for the tick boxes); a wider window gives every column the same number of extra pixels. The title
# takes what the other columns shown leave, never less than TITLE_WIDTH; a corpus with more columns
# than that leaves shows fewer (`fitted_columns`). Methods and areas get room for one long word a line
# ("EgoPressureFormer", "Representation"): a narrower column broke them mid-word.
GRID_WIDTH = 636
TITLE_WIDTH = 200
PAPER_COLUMN_CONFIG: dict[str, Any] = {
    "title": st.column_config.TextColumn("Title", width=TITLE_WIDTH),
    "authors": st.column_config.TextColumn("Authors", width=80),
    "method_names": st.column_config.TextColumn(
        "Methods", width=130, help="Names of the methods the abstract introduces, e.g. CoFrGeNets"
    ),
    "topic": st.column_config.TextColumn("Topic", width=90),
    "areas": st.column_config.TextColumn("Areas", width=110),
    "code_url": st.column_config.LinkColumn(
        "Code",
        # One short label: an "owner/repo" was cut mid-name at 60 px, with no sign that it was (the grid
        # clips a link's text); the repository's name is in the paper's details and on Links & code.
        display_text=CODE_LINK_TEXT,
        width=60,
        help="A link to the paper's own repository (empty: see the code status in the paper's details)",
    ),
    "code_status": st.column_config.TextColumn("Code status", width=100),
    "n_words": st.column_config.NumberColumn("Words", width=46, format="%d"),
    "venue": st.column_config.TextColumn("Venue", width=64),
    "citations": st.column_config.NumberColumn("Citations", width=62, format="%d"),
    "score": st.column_config.NumberColumn(
        "Score",
        width=45,
        format="%.2f",
        help="Relevance (BM25) of a search, cosine similarity, or fit to a reading list",
    ),
    "match": st.column_config.TextColumn(
        "Matched sentence", width=125, help="The sentence that matched (for the best 200 hits)"
    ),
    "why": st.column_config.TextColumn(
        "Why", width=125, help="Terms shared with the reading list, and the list's paper closest to it"
    ),
}


# The columns a paper table gives up, first to last, while those shown would not fit a 1024 px window
# with the sidebar open beside the title's least width (`GRID_WIDTH`, `TITLE_WIDTH`): a grid wider than
# its window cut its last columns (the Code column) at the edge. The least telling go first; what is
# left out is still in the download and in the paper's details.
GIVEN_UP_FIRST: tuple[str, ...] = (
    "n_words",
    "areas",
    "method_names",
    "citations",
    "venue",
    "code_url",
    "authors",
    "topic",
    "why",
    "match",
)


def _beside_title(shown: Iterable[str]) -> int:
    """The width (pixels) of the columns ``shown`` other than the title (`PAPER_COLUMN_CONFIG`)."""
    return sum(
        int(PAPER_COLUMN_CONFIG[c]["width"]) for c in set(shown) if c in PAPER_COLUMN_CONFIG and c != "title"
    )


def fitted_columns(shown: Iterable[str]) -> list[str]:
    """``shown`` less the columns `GIVEN_UP_FIRST` that must go for the rest to fit beside the title."""
    kept = list(shown)
    for column in GIVEN_UP_FIRST:
        if _beside_title(kept) <= GRID_WIDTH - TITLE_WIDTH:
            break
        if column in kept:
            kept.remove(column)
    return kept


def paper_column_config(shown: Iterable[str]) -> dict[str, Any]:
    """The column settings for the columns ``shown``: the title takes the width the others leave.

    The grid gives every column the same share of a wider window, so the title only gets more room
    if it asks for it.
    """
    width = max(TITLE_WIDTH, GRID_WIDTH - _beside_title(shown))
    return {**PAPER_COLUMN_CONFIG, "title": st.column_config.TextColumn("Title", width=width)}


# --------------------------------------------------------------------- the Papers table's order

SHOW_MORE_ROWS = 1_000  # st.dataframe sends every row it is given: more are added on request
FIRST_ROWS = 100  # rows the Papers table shows on arrival (ten in sight); "Show more" adds more


RELEVANCE = "relevance"  # the Papers table's order by score (search or "papers like"): sort= absent
CORPUS_ORDER = "corpus"  # sort=corpus: corpus order even when a search would rank


def sort_setting(view: View, ranked: bool = False) -> tuple[str, bool]:
    """The Papers table's order from the URL: ``sort=title`` (A to Z), ``sort=-title``; "" is corpus order.

    When the view is ``ranked`` (a search or "papers like" is set) no ``sort`` means `RELEVANCE` and
    ``sort=corpus`` means corpus order; otherwise both mean corpus order.
    """
    value = (st.query_params.get_all(keys.URL_SORT) or [""])[-1]
    if value in ("", RELEVANCE, CORPUS_ORDER):
        return (RELEVANCE if ranked and value != CORPUS_ORDER else ""), False
    column, descending = value.lstrip("-"), value.startswith("-")
    if column not in sortable_columns(view):
        return (RELEVANCE if ranked else ""), False
    return column, descending


def sortable_columns(view: View) -> list[str]:
    """The `tables.SORTS` columns this corpus has something in (no "Year" for a corpus without years)."""
    papers = view.papers

    def has(column: str) -> bool:
        if column not in papers.columns:
            return False
        if column == "topic":
            return view.analysis is not None
        if column == "citations":
            return bool(papers[column].notna().any())
        return True

    return [c for c in tables.SORTS if has(c)]


def describe_order(column: str, descending: bool) -> str:
    """The table's order in words: ``"in corpus order"``, ``"by title, A to Z"``.

    >>> describe_order("n_words", True)
    'by words in the abstract, most first'
    """
    if not column:
        return "in corpus order (as in the files)"
    if column == RELEVANCE:
        return "by relevance, best first"
    label = tables.SORTS[column][0].lower()
    if column in ("n_words", "citations"):
        return f"by {label}, {'most' if descending else 'fewest'} first"
    if column == "year":
        return f"by year, {'newest' if descending else 'oldest'} first"
    if column == "topic":
        return "by topic, as in the topic list" + (" (reversed)" if descending else "")
    return f"by {label}, {'Z to A' if descending else 'A to Z'}"


def _on_sort_change(ranked: bool) -> None:
    column = st.session_state.get(keys.PAPERS_SORT) or ""
    descending = st.session_state.get(keys.PAPERS_SORT_DESCENDING) == "desc"
    if column == RELEVANCE:
        value = None
    elif not column:
        value = CORPUS_ORDER if ranked else None
    else:
        value = ("-" if descending else "") + column
    write_query({keys.URL_SORT: value})


def sort_controls(view: View, ranked: bool = False, relevance_label: str = "Relevance") -> tuple[str, bool]:
    """ "Sort by" and its direction above the Papers table (kept in the URL); returns the order.

    A ``ranked`` view (search or "papers like") offers `RELEVANCE` first, its default.
    """
    column, descending = sort_setting(view, ranked)
    options = ([RELEVANCE] if ranked else []) + ["", *sortable_columns(view)]
    sync_widget(keys.PAPERS_SORT, column)
    sync_widget(keys.PAPERS_SORT_DESCENDING, "desc" if descending else "asc")
    left, right = st.columns([2, 3], vertical_alignment="bottom")

    def label(c: str) -> str:
        if c == RELEVANCE:
            return relevance_label
        return tables.SORTS[c][0] if c else "Corpus order"

    left.selectbox(
        "Sort by",
        options,
        key=keys.PAPERS_SORT,
        format_func=label,
        on_change=_on_sort_change,
        args=(ranked,),
        help="Sorts every filtered paper: the table, its caption and the download follow this order.",
    )
    if column and column != RELEVANCE:  # corpus order and relevance have no direction (a greyed-out
        right.segmented_control(  # control was text under 4.5:1)
            "Direction",
            ["asc", "desc"],
            key=keys.PAPERS_SORT_DESCENDING,
            format_func=lambda d: "Ascending" if d == "asc" else "Descending",
            on_change=_on_sort_change,
            args=(ranked,),
        )
    return column, descending


def ordered_rows(view: View, column: str, descending: bool, rows: np.ndarray | None = None) -> np.ndarray:
    """Positions of the filtered papers (or of ``rows``) in the order asked for (cached per order)."""
    given = rows is not None
    rows = np.flatnonzero(view.mask.to_numpy()) if rows is None else np.sort(np.asarray(rows, dtype=np.int64))
    if not column:
        return rows
    rank = {t: n for n, t in enumerate(view.topic_order)}
    key = repr(view.filters) + (f".{len(rows)}.{hash(rows.tobytes())}" if given else "")
    return _ordered(view.source.digest, key, column, descending, view.papers, rows, rank)


@st.cache_data(show_spinner="Sorting…", max_entries=32)
def _ordered(
    digest: str,
    filters_key: str,
    column: str,
    descending: bool,
    _papers: pd.DataFrame,
    _rows: np.ndarray,
    _rank: dict[int, int],
) -> np.ndarray:
    return tables.sort_rows(_papers, _rows, column, descending=descending, topic_rank=_rank)


def shown_rows(n_rows: int, key: str) -> int:
    """How many rows the table shows: `SHOW_MORE_ROWS`, and as many more per click on "Show more"."""
    return min(n_rows, int(st.session_state.get(key, SHOW_MORE_ROWS)))


def _show_more(key: str) -> None:
    st.session_state[key] = int(st.session_state.get(key, SHOW_MORE_ROWS)) + SHOW_MORE_ROWS


def show_more_button(n_shown: int, n_rows: int, key: str) -> None:
    """Under a long table: a button adding the next rows (the table keeps those shown)."""
    if n_shown >= n_rows:
        return
    more = min(SHOW_MORE_ROWS, n_rows - n_shown)
    st.button(
        f"Show {more:,} more ({n_shown:,} of {n_rows:,} shown)",
        key=key + ".button",
        on_click=_show_more,
        args=(key,),
        icon=":material/expand_more:",
    )


# --------------------------------------------------------------------- the paper map


def box_of(selection: Mapping[str, Any]) -> tuple[float, ...]:
    """The last box drawn on a Plotly chart as (x0, x1, y0, y1), or () when none was drawn.

    >>> box_of({"box": [{"x": [2.0, -1.0], "y": [0.5, 3.0]}]})
    (-1.0, 2.0, 0.5, 3.0)
    """
    boxes = [
        b for b in selection.get("box") or [] if len(b.get("x") or ()) == 2 and len(b.get("y") or ()) == 2
    ]
    if not boxes:
        return ()
    (x0, x1), (y0, y1) = boxes[-1]["x"], boxes[-1]["y"]
    return (min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1))


def _on_map_pick(chart_key: str, lookup: Sequence[Sequence[Any]], ids_of: PaperIds) -> None:
    state = st.session_state.get(chart_key)
    selection = state["selection"] if state else {}
    # A box is kept as its corners (box=x0,x1,y0,y1): thousands of papers in a short URL.
    box = box_of(selection)
    if box:
        update_filters(lambda f: replace(f, box=box, id=()))
        return
    ids = ids_of(picked(selection.get("points") or [], lookup))
    if not ids:
        return
    if len(ids) > MAX_VALUES_PER_KEY:
        st.session_state[keys.TOPICS_NOTICE] = (
            f"You picked {len(ids):,} papers; the filter keeps the first {MAX_VALUES_PER_KEY:,}. "
            "Draw a box (the default drag) to pick any number, or filter by topic."
        )
        ids = ids[:MAX_VALUES_PER_KEY]
    update_filters(lambda f: replace(f, id=tuple(ids), box=()))


@dataclass(frozen=True)
class PaperIds:
    """The paper ids of row numbers of a corpus (the map's points carry row numbers)."""

    column: pd.Series

    def __call__(self, rows: Sequence[Any]) -> list[str]:
        return self.column.iloc[np.asarray(rows, dtype=np.int64)].astype(str).tolist()


MAP_COLUMNS: tuple[str, ...] = (
    "title", "authors", "year", "method_names", "topic", "topic_label", "x", "y",
)  # fmt: skip


def map_colour_choices(view: View) -> list[str]:
    """The fields this corpus's map can be coloured by (`charts.MAP_COLOUR_FIELDS` it has), topic first."""
    return [c for c in charts.MAP_COLOUR_FIELDS if c == "topic" or c in view.papers.columns]


def map_colour(view: View) -> str:
    """The colour-by choice (a page widget, not a filter: it changes no paper set, so not in the URL)."""
    choices = map_colour_choices(view)
    current = st.session_state.get(keys.TOPICS_MAP_COLOUR, "topic")
    if current not in choices:
        current = "topic"
    return str(
        st.selectbox(
            "Colour the map by",
            choices,
            index=choices.index(current),
            format_func=lambda c: charts.MAP_COLOUR_FIELDS[c],
            key=keys.TOPICS_MAP_COLOUR,
            help="Topic labels stay at their clusters whatever the colours show.",
        )
    )


# Above this many points drawn (the filtered papers and the grey rest, each at most `charts.MAP_POINTS`)
# the Topics page shows the map as a picture drawn on the server (`mapimage`), and the interactive map
# on request. It is where `charts.paper_map` turns to WebGL: the chart's cost to a browser without a
# graphics card grows with the points up to there and stays high above, and the picture's is a small
# fraction of it at every size (`bench/map_picture.py`; docs/performance.md has the figures).
MAP_PICTURE_ABOVE = 2_000
MAP_VIEWS: dict[str, str] = {"picture": "Picture", "interactive": "Interactive"}


def map_points(view: View) -> int:
    """How many points the map of this view draws: the filtered papers and the grey rest, each sampled
    to at most `charts.MAP_POINTS` (as `paper_map` samples them)."""
    inside = int(view.mask.sum())
    return min(inside, charts.MAP_POINTS) + min(len(view.papers) - inside, charts.MAP_POINTS)


def map_view(view: View) -> str:
    """How the map is shown: ``"picture"`` or ``"interactive"``, as the URL's ``map`` says (the page's
    own setting, `map_view_control`), else a picture above `MAP_PICTURE_ABOVE` points drawn."""
    default = "picture" if map_points(view) > MAP_PICTURE_ABOVE else "interactive"
    return setting(keys.URL_MAP_VIEW, MAP_VIEWS, default=default)


def _on_map_view() -> None:
    write_query({keys.URL_MAP_VIEW: st.session_state.get(keys.TOPICS_MAP_VIEW)})


def map_view_control(shown: str) -> None:
    """The "Picture · Interactive" switch above the map, showing ``shown`` (`map_view`)."""
    sync_widget(keys.TOPICS_MAP_VIEW, shown)
    st.segmented_control(
        "Show the map as",
        list(MAP_VIEWS),
        format_func=MAP_VIEWS.__getitem__,
        key=keys.TOPICS_MAP_VIEW,
        required=True,
        on_change=_on_map_view,
        help="The interactive map lets you select points (a box or a lasso filters to them), zoom and "
        "hover over a paper to read its title; it is slower to draw. The picture shows the same map.",
    )


def paper_map(
    view: View,
    key: str,
    colour: str = "topic",
    topic_colours: Mapping[int, str] | None = None,
    *,
    picture: bool = False,
) -> None:
    """The 2-D map of the filtered papers; selecting points (click, box, lasso) filters to them.

    With a search (``q``) the hits are drawn large and outlined over the grey rest of the corpus.
    ``topic_colours``: the whole map's (`charts.colours_of_topics`), so a filter keeps each topic's.
    ``picture``: the same map as a PNG drawn on the server (`map_picture`), without selection.
    """
    # Sample row numbers first and copy only the sampled rows' map columns: taking every filtered row
    # cost a visible part of each filter change at a million papers, for the points drawn.
    mask = view.mask.to_numpy(dtype=bool)
    n_inside = int(mask.sum())
    order, ranks, hovers = data.map_sample_order(view.source.digest, view.papers)
    shown, behind = charts.sample_in_order(mask, order), charts.sample_in_order(~mask, order)
    if picture:
        map_picture(view, shown, behind, colour, topic_colours)
        map_region_picker(view)
        return
    columns = MAP_COLUMNS if colour in MAP_COLUMNS else (*MAP_COLUMNS, colour)
    # Each point carries its row number, not its paper id: a tenth of the bytes (10,000 ids were a
    # tenth of the map sent each run); a selection and "Show the data" look the ids up (`PaperIds`).
    fig = charts.paper_map(
        rows_of(view.papers, shown, columns).assign(
            hover=_hovers(view, shown, ranks, hovers), row=shown.astype(np.int32)
        ),
        background=rows_of(view.papers, behind, ("x", "y")) if len(behind) else None,
        n_papers=n_inside,
        colour=colour,
        highlight=bool(view.filters.q) and n_inside < len(mask),
        dragmode="select",  # a drag selects papers (zoom and lasso stay in the toolbar)
        point_data="row",
        topic_colours=topic_colours,
    )
    ids = PaperIds(view.papers["id"])
    # The grey background trace has no ids: selecting its points picks nothing.
    lookup = [trace.customdata if trace.customdata is not None else [] for trace in fig.data]
    chart(
        fig,
        view,
        name="map",
        key=f"{key}.{colour}",
        config=MAP_CONFIG,
        ids=ids,
        own_theme=True,
        on_select=partial(_on_map_pick, f"{key}.{colour}", lookup, ids),
        selection_mode=("points", "box", "lasso"),
    )
    map_region_picker(view)


def map_picture(
    view: View,
    shown: np.ndarray,
    behind: np.ndarray,
    colour: str = "topic",
    topic_colours: Mapping[int, str] | None = None,
) -> None:
    """The map of ``shown`` rows over the grey ``behind`` ones as a picture (`mapimage.map_png`), in
    the user's theme, with a caption that says what it shows and where selection is."""
    theme = figures.theme_name(st.context.theme.type)
    n_inside = int(view.mask.sum())
    # The rows drawn stand for the filters (and reading lists, "papers like"...) that chose them.
    rows = hashlib.blake2b(shown.tobytes() + b"|" + behind.tobytes(), digest_size=16).hexdigest()
    png = _map_png(
        view.source.digest,
        view.model_key,
        colour,
        theme,
        rows,
        bool(view.filters.q) and n_inside < len(view.papers),
        n_inside,
        view.papers,
        shown,
        behind,
        dict(topic_colours or {}),
    )
    drawn = f" ({len(shown):,} drawn)" if len(shown) < n_inside else ""
    what = f"A picture of the map of {n_inside:,} papers{drawn}"
    if colour != "topic":
        what += f", coloured by {charts.MAP_COLOUR_FIELDS.get(colour, colour).lower()}"
    # At its own width (`mapimage.WIDTH_PX`, less in a narrower window): its text is the map's size.
    box = st.container(width=mapimage.WIDTH_PX)
    box.image(
        png,
        width="stretch",
        # As it is: "auto" takes an RGB PNG for a photograph and encodes it anew as a JPEG on every run
        # (about 0.05 s a run at a million papers, and blurred letters).
        output_format="PNG",
        alt=f"{what}: each point a paper, each topic's cluster in its colour and named where its label fits.",
        caption=f"{what}. Choose Interactive above to select points (a box or a lasso filters to them), "
        "zoom, and read a paper's title on hover.",
    )
    # As the interactive map's "Save chart" (its PNG is this picture; the file is handed over on click).
    box.container(horizontal=True, horizontal_alignment="right").download_button(
        "Save picture",
        data=partial(bytes, png),
        file_name=view.file_name("map", "png"),
        mime="image/png",
        on_click="ignore",
        key=f"{keys.SAVE_CHART}.map.picture",
        icon=":material/download:",
        type="tertiary",
        help="The map as a PNG at twice its size on screen",
    )


@st.cache_data(show_spinner=False, max_entries=32)
def _map_png(
    digest: str,
    model: str,
    colour: str,
    theme: str,
    rows: str,
    highlight: bool,
    n_inside: int,
    _papers: pd.DataFrame,
    _shown: np.ndarray,
    _behind: np.ndarray,
    _topic_colours: dict[int, str],
) -> bytes:
    """The map's PNG, once per corpus, model, colouring, theme and set of
    rows drawn (``rows``, their digest): the figure `paper_map` would show, without hover texts."""
    columns = tuple(dict.fromkeys(("x", "y", "topic", "topic_label", colour)))
    fig = charts.paper_map(
        rows_of(_papers, _shown, columns).assign(hover="", row=_shown.astype(np.int32)),
        background=rows_of(_papers, _behind, ("x", "y")) if len(_behind) else None,
        n_papers=n_inside,
        colour=colour,
        highlight=highlight,
        point_data="row",
        topic_colours=_topic_colours or None,
        validate=False,
    )
    return mapimage.map_png(fig, theme)


def _hovers(view: View, rows: np.ndarray, ranks: np.ndarray, first: np.ndarray) -> list[str]:
    """The hover texts of these rows' map points: those of the papers first in the map's order are
    written once per corpus (`data.map_sample_order`), the others here (cached per set of rows)."""
    place = ranks[rows]
    known = place < len(first)
    texts = np.empty(len(rows), dtype=object)
    texts[known] = first[place[known]]
    if not known.all():
        texts[~known] = _map_hover(view.source.digest, rows[~known], view.papers)
    return texts.tolist()


@st.cache_data(show_spinner=False, max_entries=16)
def _map_hover(digest: str, rows: np.ndarray, _papers: pd.DataFrame) -> list[str]:
    """The hover texts of these rows' map points: the same for every number of topics and colouring,
    so a change of either reuses them (10,000 points: about 0.3 s to write)."""
    return charts.map_hover(rows_of(_papers, rows, MAP_COLUMNS))


def _on_region_pick(box: tuple[float, float, float, float]) -> None:
    update_filters(lambda f: replace(f, box=box, id=()))


def map_region_picker(view: View) -> None:
    """The keyboard's way to do what a drag on the map does: a region by two ranges, then "Select".

    Sliders (arrow keys) for the two map dimensions and a button that filters to the papers inside,
    as a box drawn with the mouse would (``box=`` in the URL).
    """
    bounds = data.map_bounds(view.source.digest, view.papers)
    if bounds is None:
        return
    low_x, high_x, low_y, high_y, placed = bounds
    with st.popover("Pick a region with the keyboard", icon=":material/keyboard:", type="tertiary"):
        st.caption("The same as a box drawn on the map: set both ranges with the arrow keys, then select.")
        x0, x1 = st.slider(
            "Map dimension 1", low_x, high_x, (low_x, high_x), step=0.1,
            key=f"{keys.MAP_REGION}.x",
        )  # fmt: skip
        y0, y1 = st.slider(
            "Map dimension 2", low_y, high_y, (low_y, high_y), step=0.1,
            key=f"{keys.MAP_REGION}.y",
        )  # fmt: skip
        in_view = view.array_without()
        if (x0, x1, y0, y1) == (low_x, high_x, low_y, high_y):
            inside = np.count_nonzero(in_view & placed)  # the whole map: every placed paper in view
        else:
            xs, ys = view.papers["x"].to_numpy(dtype=float), view.papers["y"].to_numpy(dtype=float)
            inside = np.count_nonzero((xs >= x0) & (xs <= x1) & (ys >= y0) & (ys <= y1) & in_view)
        st.button(
            f"Select these {inside:,} papers",
            key=f"{keys.MAP_REGION}.apply",
            on_click=_on_region_pick,
            args=((x0, x1, y0, y1),),
            disabled=not inside,
            icon=":material/select:",
        )


# --------------------------------------------------------------------- the number of topics

TOPIC_CHOICES: tuple[str, ...] = ("auto", *(str(k) for k in range(2, 41)))


def max_topics(n_papers: int) -> int:
    """The most topics a user may ask for: one per two papers, at most 40."""
    return max(2, min(40, n_papers // 2))


def topic_choices(n_papers: int) -> list[str]:
    """The number-of-topics choices for a corpus: auto, then 2 up to `max_topics`."""
    most = max_topics(n_papers)
    return [c for c in TOPIC_CHOICES if c == "auto" or int(c) <= most]


def _on_topics_number_change() -> None:
    choice = st.session_state.get(keys.N_TOPICS, "auto")
    # Topic numbers mean something else under another model, so a topic filter goes with the change.
    update_filters(lambda f: replace(f, k=None if choice == "auto" else int(choice), refit=False, topic=()))


def topic_space(view: View) -> str:
    """What the papers' topics were found by, for people ("the words of their titles and abstracts
    ..."): the registry's words for the space of the corpus's fitted model."""
    from dashboard.analytics import representations

    name = str(getattr(view.analysis.model, "representation_", representations.BASE_REPRESENTATION))
    return representations.get(name).grouped_by


def topics_number(view: View) -> None:
    """The number-of-topics setting (in the URL as ``k``): a cut of the fitted topics' tree (instant),
    a refit beyond the fitted number or when asked for (``refit``, `dashboard.ui.topic_tree`)."""
    choices = topic_choices(len(view.papers))
    current = "auto" if view.filters.k is None else str(view.filters.k)
    sync_widget(keys.N_TOPICS, current if current in choices else "auto")
    st.selectbox(
        "Number of topics",
        choices,
        key=keys.N_TOPICS,
        on_change=_on_topics_number_change,
        help="auto picks the number that gives the most coherent, stable topics for this corpus. "
        "Fewer topics merge the fitted ones along their tree (no refit: see the tree below the map); "
        "more than were fitted refits them. Changing it clears the topic filter.",
        format_func=lambda c: (
            c if c != "auto" or view.filters.k is not None else f"auto ({view.n_topics_found})"
        ),
    )

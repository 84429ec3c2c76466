"""``paper-dashboard report PATH... [--filters QUERY_STRING] --out FILE.html``: the app's report, offline.

    paper-dashboard report seeds/ --filters 'q=diffusion&code=released' --out diffusion.html

``--filters`` takes the app's URL query (the part after ``?``), so a view's link gives its report;
the topics are fitted as the app fits them (``k`` in the query sets their number), so the CLI and the
app's "Download report" give the same file for the same corpus and filters, apart from the time stamp.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from dashboard.cli.common import EXIT_SKIPPED, EXIT_USAGE, add_input_arguments, exit_status, load_inputs


def add_report_command(subparsers: Any) -> None:
    """Register ``report``: a self-contained HTML report of a corpus under some filters."""

    parser = subparsers.add_parser(
        "report",
        help="write a self-contained HTML report (charts and the filtered papers) of a view",
        description="Read a corpus, apply the app's URL filters, fit the topics as the app does, and write "
        "one HTML file with the headline numbers, interactive charts and the first 1,000 filtered papers; "
        "it opens offline in any browser.",
    )
    add_input_arguments(parser)
    parser.add_argument(
        "--filters",
        default="",
        metavar="QUERY_STRING",
        help="the app's URL query, e.g. 'q=graph&year=2024&k=12' (default: no filters)",
    )
    parser.add_argument(
        "--out", type=Path, required=True, metavar="FILE.html", help="where to write the report"
    )
    parser.add_argument("--theme", choices=("light", "dark"), default="light", help="colours (light)")
    parser.add_argument(
        "--base-url",
        default="http://localhost:8501/",
        metavar="URL",
        help="the app's address, for the link that reproduces the view (http://localhost:8501/)",
    )
    parser.set_defaults(run=run_report)


def run_report(args: argparse.Namespace) -> int:
    """Load, analyse, filter, write the report; the exit status (0, 1 with skipped records, 2)."""
    from dashboard import export

    if args.out.suffix.lower() not in (".html", ".htm"):
        print(f"paper-dashboard: --out must end in .html, got {args.out.name!r}", file=sys.stderr)
        return EXIT_USAGE
    result = load_inputs(args.paths)
    if result.papers.empty:
        print("paper-dashboard: no papers to report on", file=sys.stderr)
        return EXIT_SKIPPED
    query = parse_qs(args.filters.lstrip("?"), keep_blank_values=False)
    html = report_of(result.papers, query, theme=args.theme, base_url=args.base_url)
    try:
        export.write_file(args.out, html)
    except OSError as error:
        print(f"paper-dashboard: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {args.out} ({len(html.encode()) / 1e6:.1f} MB)", file=sys.stderr)
    return exit_status(result.report)


def report_of(papers: Any, query: dict[str, list[str]], *, theme: str, base_url: str) -> str:
    """The report of ``papers`` (as read) under the URL ``query``, analysed as the app analyses them."""
    from dashboard.analytics.terms import TermCounts
    from dashboard.filters import Filters, facet_counts
    from dashboard.repocheck.columns import default_cache, read_answers, with_repo_columns
    from dashboard.report.html import ReportView, build_report
    from dashboard.search.topicspace import fit_topics

    filters, notices = Filters.from_query(query)
    for notice in notices:
        print(f"paper-dashboard: filters: {notice}", file=sys.stderr)
    analysis = (
        fit_topics(papers, filters.k if filters.k is not None else "auto", store=True)
        if len(papers) >= 2
        else None
    )
    # Repository states from the cache (never the network), as the app's table has them, so `repo=`
    # filters the same papers here as there.
    answers, _ = read_answers(default_cache())
    table = with_repo_columns(analysis.papers if analysis is not None else papers, answers)
    facets = facet_counts(table)
    filters, restricted = filters.restrict({key: set(values.index) for key, values in facets.items()})
    for notice in restricted:
        print(f"paper-dashboard: filters: {notice}", file=sys.stderr)
    members = None
    if filters.list:  # reading lists live in the library, not in the table
        from dashboard.library.store import list_members

        members, list_notices = list_members(filters.list, table)
        for notice in list_notices:
            print(f"paper-dashboard: filters: {notice}", file=sys.stderr)
    view = ReportView(
        papers=table,
        mask=filters.mask(table, members=members).to_numpy(dtype=bool),
        filters=filters,
        topic_names=topic_names(analysis.topics) if analysis is not None else {},
        topics=analysis.topics if analysis is not None else None,
        term_counts=TermCounts.build(table, ngram=1, keep_stop_words=False),
        view_url=base_url,
    )
    return build_report(view, theme=theme)


def topic_names(topics: Any) -> dict[int, str]:
    """Topic number -> the label the app shows (``3: graph · node``; the outliers' label as it is)."""
    from dashboard.schema import OUTLIER_TOPIC

    return {
        int(t): label if int(t) == OUTLIER_TOPIC else f"{int(t)}: {label}"
        for t, label in zip(topics["topic"], topics["label"], strict=True)
    }

"""``paper-dashboard trends``: the Trends page's tables from the command line.

    paper-dashboard trends corpus/ --by venue,year --out shares.csv --terms terms.csv
    paper-dashboard trends /tmp/index-27k --from 2021 --to 2023          # a prebuilt index: no refit

Writes the topic-share table (``group, topic, label, papers, share``; a group's shares sum to 1,
outliers are topic -1) to --out (stdout as CSV without it) and, with --terms, the rising and falling
terms (``term, from_share, to_share, score``, then ``from_papers, to_papers``: the papers using it in
each period). The periods are --from and --to (one year each) or, by default, the first and the last
half of the span. A one-line summary (the fastest-rising topic and term) goes to stderr.

By year, shares compare like with like by default (``--shares venues``): a topic's share within each
venue, standardised to the corpus's venue mix (`trends.within_venue_shares`), so a year that holds other
venues moves no topic by itself; ``--shares pooled`` keeps all the year's papers together. The summary
says which, and names the topics whose pooled rise or fall comes only from the venue mix.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dashboard import export
from dashboard.analytics import trends
from dashboard.cli import common as cli

TERM_COLUMNS = ["term", "from_share", "to_share", "score", "from_papers", "to_papers"]
SHARE_COLUMNS = ["group", "topic", "label", "papers", "share"]


def add_trends_command(subparsers: Any) -> None:
    """``trends PATH... [--by year|venue|venue,year] [--out FILE] [--terms FILE]``."""

    parser = subparsers.add_parser(
        "trends",
        help="topic shares per year or venue, and the rising and falling terms",
        description="Find the topics of a corpus (or open a prebuilt index) and write each topic's share of "
        "the papers per year, venue or venue and year; with --terms, the terms whose share rose or fell "
        "most between two periods (weighted log-odds with an informative prior).",
    )
    cli.add_input_arguments(parser)
    parser.add_argument("--by", choices=trends.GROUPINGS, default="year", help="group the papers by (year)")
    parser.add_argument(
        "--out",
        type=cli.output_path,
        metavar="FILE",
        help="topic-share table (.csv .json .jsonl .parquet .xlsx)",
    )
    parser.add_argument("--terms", type=cli.output_path, metavar="FILE", help="rising and falling terms")
    parser.add_argument(
        "--shares",
        choices=tuple(trends.METHODS),
        default=trends.DEFAULT_METHOD,
        help="shares per year within venues, standardised to one venue mix (venues, the default), or "
        "all the year's papers together (pooled); with one venue they are the same",
    )
    parser.add_argument(
        "--from", dest="from_year", type=int, metavar="YEAR", help="the earlier year compared"
    )
    parser.add_argument("--to", dest="to_year", type=int, metavar="YEAR", help="the later year compared")
    parser.add_argument(
        "--ngram", type=int, choices=(1, 2), default=1, help="words (1) or two-word phrases (2)"
    )
    parser.add_argument(
        "--top", type=cli.positive_int, default=25, help="rising and as many falling terms (25)"
    )
    cli.add_topic_arguments(parser)
    parser.set_defaults(run=run_trends)


def _load(args: argparse.Namespace) -> tuple[Any, Any, int, Any] | None:
    """(analysis, term counts maker, exit status, source), from an index or from the files."""
    source, result = cli.open_inputs(args.paths)
    if result.papers.empty:
        print("paper-dashboard: no papers to find trends in", file=sys.stderr)
        return None
    analysis = source.analysis(result.papers, args.topics, taxonomy=args.taxonomy, random_state=args.seed)
    return (
        analysis,
        (lambda n: source.term_counts(analysis.papers, n, False)),
        cli.exit_status(result.report),
        source,
    )


def _periods(args: argparse.Namespace, years: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]] | str:
    if args.from_year is None and args.to_year is None:
        return trends.default_periods(years)
    if args.from_year is None or args.to_year is None:
        return "give both --from and --to (or neither: the first and the last half of the span)"
    missing = [y for y in (args.from_year, args.to_year) if y not in years]
    if missing:
        return f"no papers from {missing[0]} (the corpus has {', '.join(map(str, years)) or 'no years'})"
    if args.from_year == args.to_year:
        return "--from and --to must be two different years"
    low, high = sorted((args.from_year, args.to_year))
    return (low,), (high,)


def run_trends(args: argparse.Namespace) -> int:
    """Load (or open the index), write the tables, print the summary; the exit status."""

    loaded = _load(args)
    if loaded is None:
        return cli.EXIT_SKIPPED
    analysis, make_counts, status, _opened = loaded
    names = {
        int(t): str(label)
        for t, label in zip(analysis.topics["topic"], analysis.topics["label"], strict=True)
    }
    axes = trends.Axes.of(analysis.papers)
    shares = trends.topic_shares(axes, args.by, labels=names, method=args.shares)[SHARE_COLUMNS]
    if args.out is None:
        sys.stdout.write(export.to_bytes(shares, "csv").decode("utf-8-sig"))
    elif not _write(shares, args.out, "topic shares"):
        return cli.EXIT_USAGE
    years, _ = axes.span()
    periods = _periods(args, years)
    if isinstance(periods, str):
        print(f"paper-dashboard: {periods}", file=sys.stderr)
        return cli.EXIT_USAGE
    from_years, to_years = periods
    if not from_years:
        print("paper-dashboard: one year only: no rising or falling terms to compare", file=sys.stderr)
        if args.terms is not None:
            return cli.EXIT_USAGE
        return status
    changes = trends.topic_changes(axes, from_years, to_years, labels=names, method=args.shares)
    counts = make_counts(args.ngram)
    terms = trends.rising_terms(
        counts,
        trends.period_mask(axes, from_years),
        trends.period_mask(axes, to_years),
        top=args.top,
    )
    if args.terms is not None and not _write(terms[TERM_COLUMNS], args.terms, "terms"):
        return cli.EXIT_USAGE
    several_venues = len(trends.coverage(axes)) >= 2  # papers without a venue count as one
    print(
        _summary(changes, terms, from_years, to_years, args.shares if several_venues else ""), file=sys.stderr
    )
    note = trends.venue_mix_note(changes) if several_venues else ""
    if note:
        print(note, file=sys.stderr)
    return status


def _write(table: Any, out: Path, what: str) -> bool:
    try:
        export.write(table, out)
    except OSError as error:
        print(f"paper-dashboard: cannot write {out}: {error.strerror or error}", file=sys.stderr)
        return False
    print(f"wrote {len(table):,} rows of {what} to {out}", file=sys.stderr)
    return True


def _span(years: tuple[int, ...]) -> str:
    return str(years[0]) if len(years) == 1 else f"{years[0]}-{years[-1]}"


def _summary(
    changes: Any, terms: Any, from_years: tuple[int, ...], to_years: tuple[int, ...], method: str = ""
) -> str:
    """``fastest-rising topic (shares within venues): ... 3.1% -> 7.9%; term: ... 1.2% -> 4.0% of papers
    (2021-2022 -> 2023-2024)``; ``method`` ("" with one venue: both are the same) names the shares."""
    parts = []
    within = {"venues": " (shares within venues)", "pooled": " (pooled shares)"}.get(method, "")
    rose = changes[changes["change"] == "rising"] if len(changes) else changes
    if len(rose):
        top = rose.iloc[0]
        parts.append(
            f"fastest-rising topic{within}: {top['label']} {top['from_share']:.1%} -> {top['to_share']:.1%}"
        )
    elif len(changes):
        parts.append(f"no topic rose clearly{within}")
    if len(terms) and terms["score"].iloc[0] > 0:
        top = terms.iloc[0]
        parts.append(f"term: {top['term']} {top['from_share']:.1%} -> {top['to_share']:.1%} of papers")
    return "; ".join(parts or ["nothing rose"]) + f" ({_span(from_years)} -> {_span(to_years)})"

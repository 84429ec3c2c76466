"""``paper-dashboard reviews``: review scores per decision, topic, area, venue or year.

    paper-dashboard reviews papercopilot/iclr2017.json --by decision
    paper-dashboard reviews corpus/ --by topic --out scores-per-topic.csv

Writes one row per group (``group, papers, rated, reviews, rating_mean, rating_sd, confidence_mean,
accept_share``; `dashboard.analytics.reviews.group_scores`) to --out (stdout as CSV without it). ``--by
topic``
and ``--by area`` find the topics first (or read them from a prebuilt index). When the rated papers are on
more than one scale (`dashboard.analytics.reviews.mixed_scales`) stderr says so: pooled rows mix the
scales, and
``--by venue`` keeps them apart. A one-line summary (rated papers, the acceptance cut) goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dashboard import export
from dashboard.analytics import reviews
from dashboard.cli import common as cli


def add_reviews_command(subparsers: Any) -> None:
    """``reviews PATH... [--by decision|topic|area|venue|year] [--out FILE]``."""

    parser = subparsers.add_parser(
        "reviews",
        help="review scores per decision, topic, area, venue or year",
        description="Read the review scores of a corpus (Paper Copilot's rating and confidence, OpenReview "
        "official reviews) and write, per group, the papers, rated papers, reviews, mean score (the mean "
        "of each paper's mean), its spread, the mean confidence and the accepted share of decided papers.",
    )
    cli.add_input_arguments(parser)
    parser.add_argument(
        "--by", choices=reviews.GROUPINGS, default="decision", help="group the papers by (decision)"
    )
    parser.add_argument(
        "--out", type=cli.output_path, metavar="FILE", help="the table (.csv .json .jsonl .parquet .xlsx)"
    )
    cli.add_topic_arguments(parser)
    parser.set_defaults(run=run_reviews)


def _papers(args: argparse.Namespace) -> tuple[Any, dict[int, str], int] | None:
    """(papers, topic labels, exit status): topics only for ``--by topic|area``."""
    source, result = cli.open_inputs(args.paths)
    if result.papers.empty:
        print("paper-dashboard: no papers to read scores from", file=sys.stderr)
        return None
    if args.by not in ("topic", "area"):
        return result.papers, {}, cli.exit_status(result.report)
    analysis = source.analysis(result.papers, args.topics, taxonomy=args.taxonomy, random_state=args.seed)
    labels = {int(t): str(n) for t, n in zip(analysis.topics["topic"], analysis.topics["label"], strict=True)}
    return analysis.papers, labels, cli.exit_status(result.report)


def run_reviews(args: argparse.Namespace) -> int:
    """Load, write the table per group, say what mixes scales; the exit status."""

    loaded = _papers(args)
    if loaded is None:
        return cli.EXIT_SKIPPED
    papers, labels, status = loaded
    if not reviews.has_scores(papers):
        print("paper-dashboard: these papers carry no review scores (rating, confidence)", file=sys.stderr)
        return cli.EXIT_SKIPPED
    table = reviews.group_scores(papers, args.by, labels=labels)[reviews.GROUP_COLUMNS]
    if args.out is None:
        sys.stdout.write(export.to_bytes(table, "csv").decode("utf-8-sig"))
    else:
        try:
            export.write(table, args.out)
        except OSError as error:
            print(f"paper-dashboard: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
            return cli.EXIT_USAGE
        print(f"wrote {len(table):,} groups to {args.out}", file=sys.stderr)
    rated = int(reviews.rated_mask(papers).sum())
    warning = reviews.mixed_scales(papers)
    keys = reviews.scale_keys(papers)
    # With several scales the cut is found within each: a pooled cut would mix them.
    cuts = (
        {key: reviews.acceptance_cut(papers, keys == key) for key in dict.fromkeys(keys)} if warning else {}
    )
    cut = None if warning else reviews.acceptance_cut(papers)
    said = [f"{key} {value:g}" for key, value in cuts.items() if value is not None]
    print(
        f"{rated:,} of {len(papers):,} papers rated"
        + (f"; accepted and rejected cross at a mean score of {cut:g}" if cut is not None else "")
        + (f"; accepted and rejected cross at a mean score of {', '.join(said)}" if said else ""),
        file=sys.stderr,
    )
    if warning:
        print(f"warning: {warning}" + (" (see --by venue)" if args.by != "venue" else ""), file=sys.stderr)
    return status

"""``paper-dashboard analyze``: the paper table with topics, research areas and the map."""

from __future__ import annotations

import argparse
import sys

from dashboard.cli.common import (
    EXIT_SKIPPED,
    EXIT_USAGE,
    Subparsers,
    add_input_arguments,
    add_representation_argument,
    add_table_output_arguments,
    add_topic_arguments,
    exit_status,
    load_inputs,
    warn_without_encoder,
    write_table,
)


def add_analyze_command(subparsers: Subparsers) -> None:
    """``analyze PATH... --out FILE [--topics K|auto] [--taxonomy FILE]``: topics, areas, map."""
    parser = subparsers.add_parser(
        "analyze",
        help="find topics, research areas and map positions; write the table and print the topics",
        description="Read a corpus, find its topics and research areas and place every paper on a 2-D "
        "map; write the paper table with topic, topic_label, topic_weight, is_outlier, areas, x, y "
        "added to --out and print each topic's label, size and top terms.",
    )
    add_input_arguments(parser)
    add_table_output_arguments(parser)
    add_topic_arguments(parser)
    parser.add_argument("--method", choices=("kmeans", "nmf", "lda"), default="kmeans", help="topic method")
    add_representation_argument(parser)
    parser.set_defaults(run=run_analyze)


def run_analyze(args: argparse.Namespace) -> int:
    """Load, analyse, write the table, print the topics; the exit status."""
    from dashboard.analytics.areas import TaxonomyError, load_taxonomy
    from dashboard.search.topicspace import fit_topics  # scikit-learn loads only for this command

    try:
        taxonomy = load_taxonomy(args.taxonomy)
    except TaxonomyError as error:
        print(f"paper-dashboard: {error}", file=sys.stderr)
        return EXIT_USAGE
    result = load_inputs(args.paths)
    if result.papers.empty:
        print("paper-dashboard: no papers to analyse", file=sys.stderr)
        return EXIT_SKIPPED
    warn_without_encoder(args.representation)
    analysis = fit_topics(
        result.papers,
        args.topics,
        args.representation,
        store=True,  # the next run on the same papers reads their vectors from the disk cache
        method=args.method,
        taxonomy=taxonomy,
        random_state=args.seed,
    )
    if not write_table(analysis.papers, args.out, raw=args.raw):
        return EXIT_USAGE
    for topic in analysis.topics.itertuples(index=False):
        terms = ", ".join(term for term, _ in topic.top_terms[:8])
        print(f"{topic.topic:>3}  {topic.size:>6,}  {topic.label}" + (f"  [{terms}]" if terms else ""))
    return exit_status(result.report)

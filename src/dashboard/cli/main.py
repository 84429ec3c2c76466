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
import sys
from collections.abc import Callable, Sequence

from dashboard import __version__
from dashboard.cli.analyze import add_analyze_command
from dashboard.cli.common import EXIT_USAGE, Subparsers, add_force, refused_outputs
from dashboard.cli.digest import add_digest_command
from dashboard.cli.index import add_index_command
from dashboard.cli.library import add_library_command
from dashboard.cli.parse import add_parse_command, add_stats_command
from dashboard.cli.recommend import add_recommend_command
from dashboard.cli.repocheck import add_check_code_command
from dashboard.cli.report import add_report_command
from dashboard.cli.reviews import add_reviews_command
from dashboard.cli.search import add_search_command
from dashboard.cli.trends import add_trends_command

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
    add_digest_command,
    add_search_command,
    add_recommend_command,
]


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
    add_force(parser)
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

"""``paper-dashboard index --append NEW... --to INDEX`` and ``index --refit --to INDEX``: grow an index.

    paper-dashboard index --append new-papers.jsonl --to papers.index   # add papers, refit nothing
    paper-dashboard index --refit --to papers.index                     # fit the topics again

The work is `dashboard.index.append.append_index` and `dashboard.index.refitting.refit_index`; this module
adds their options to the ``index`` command and prints what they did.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dashboard.cli.common import EXIT_OK, EXIT_SKIPPED, EXIT_USAGE, exit_status, print_report

# An append refused because another one holds the index (`IndexBusyError`): try again later.
EXIT_BUSY = 3
DUPLICATES_LISTED = 20  # duplicates printed one per line; the rest are counted


def add_grow_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``index`` command's options for growing an index instead of building one."""
    group = parser.add_argument_group(
        "growing an index",
        "Add papers to a prebuilt index without refitting anything (--append PATH... --to DIR), or fit "
        "its topics again keeping a mapping from the old topic ids to the new ones (--refit --to DIR).",
    )
    group.add_argument(
        "--append",
        action="store_true",
        help="add the papers of PATH... to the index --to: topics from its fitted model, existing papers "
        "unchanged, papers already in it (same id or title) reported and not added",
    )
    group.add_argument(
        "--refit", action="store_true", help="fit the topics of the index --to again, over all its papers"
    )
    group.add_argument("--to", metavar="DIR", type=Path, default=None, help="the index to append to or refit")
    group.add_argument(
        "--wait",
        metavar="SECONDS",
        type=float,
        default=0.0,
        help="when another append or refit is changing the index, wait up to SECONDS for it (default: "
        "refuse at once, exit status 3)",
    )


def run_grow(args: argparse.Namespace, error: object) -> int:
    """Run ``--append`` or ``--refit``; ``error`` is the parser's error function (usage errors exit 2)."""
    from dashboard.index import IndexBuildError, IndexFormatError

    usage = error if callable(error) else None
    if args.append and args.refit:
        return _usage(usage, "--append and --refit are separate steps: run one, then the other")
    if args.to is None:
        return _usage(usage, f"{'--append' if args.append else '--refit'} needs --to DIR (the index)")
    if args.out is not None:
        return _usage(usage, "--out builds a new index; with --append or --refit the index is --to DIR")
    if args.append and not args.paths:
        return _usage(usage, "--append needs the files to add: index --append PATH... --to DIR")
    if args.refit and args.paths:
        return _usage(usage, "--refit reads no files: index --refit --to DIR")

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    try:
        if args.append:
            return _append(args, say)
        return _refit(args, say)
    except (IndexBuildError, IndexFormatError, OSError) as failed:
        return failure(failed, args.to)


def failure(error: Exception, target: object) -> int:
    """Say why an index command (build, append, refit) failed, on one line, and give its exit status:
    3 another append or refit holds the index; 1 the inputs could not make or grow it; 2 for the rest
    (an output that is not an index, a damaged index, a folder that cannot be written)."""
    from dashboard.index import IndexBuildError, IndexOutputError
    from dashboard.index.append import IndexBusyError

    if isinstance(error, OSError):
        print(f"paper-dashboard: cannot write {target}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"paper-dashboard: {error}", file=sys.stderr)
    if isinstance(error, IndexBusyError):
        return EXIT_BUSY
    if isinstance(error, IndexOutputError):
        return EXIT_USAGE
    return EXIT_SKIPPED if isinstance(error, IndexBuildError) else EXIT_USAGE


def _usage(error: object, message: str) -> int:
    if callable(error):
        error(message)  # exits with status 2
    print(f"paper-dashboard: {message}", file=sys.stderr)
    return EXIT_USAGE


def _append(args: argparse.Namespace, say: object) -> int:
    from dashboard.index.append import append_index, describe_refit

    result = append_index(args.paths, args.to, wait=args.wait, progress=say)  # type: ignore[arg-type]
    print_report(result.report, sys.stderr)
    for duplicate in result.duplicates[:DUPLICATES_LISTED]:
        place = "already in the index" if duplicate.where == "index" else "repeated in these files"
        print(
            f"{duplicate.source}: paper {duplicate.id!r} not added: {duplicate.reason} as "
            f"{duplicate.existing_id!r}, {place}",
            file=sys.stderr,
        )
    if len(result.duplicates) > DUPLICATES_LISTED:
        print(f"... and {len(result.duplicates) - DUPLICATES_LISTED:,} more not added", file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    manifest = result.manifest
    print(
        f"{result.added:,} papers added, {len(result.duplicates):,} already there: {manifest['papers']:,} "
        f"papers in {args.to} (version {len(manifest.get('versions', [])) or 1}), in {result.seconds:.1f} s"
    )
    print(describe_refit(result.refit))
    return exit_status(result.report) if result.added or not result.duplicates else EXIT_OK


def _refit(args: argparse.Namespace, say: object) -> int:
    from dashboard.index.refitting import describe_mapping, refit_index

    manifest = refit_index(args.to, wait=args.wait, progress=say)  # type: ignore[arg-type]
    print(describe_mapping(manifest["topic_mapping"][-1]))
    print(f"{manifest['papers']:,} papers, {manifest['topics']} topics refitted in {args.to}")
    return EXIT_OK

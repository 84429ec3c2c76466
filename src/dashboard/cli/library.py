"""``paper-dashboard library``: the reading lists from the command line.

    paper-dashboard library lists
    paper-dashboard library show "to read" [--corpus PATH...]
    paper-dashboard library export "to read" --format bibtex --out to-read.bib
    paper-dashboard library import refs.bib --list cited --corpus seeds/

``--library FILE`` (before or after the action) names the library file; otherwise
``PAPER_DASHBOARD_LIBRARY``, otherwise the default file in the user's data directory (see
`dashboard.library.store`). Exit status: 0 done, 1 done but some entries unmatched or skipped (import), 2 the
library cannot be used (a message says why) or a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from dashboard import export, screen
from dashboard.cli.common import load_inputs
from dashboard.library import store as library

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE = 0, 1, 2


def add_library_command(subparsers: Any) -> None:
    """Register ``library lists|show|export|import`` on the main parser."""
    parser = subparsers.add_parser(
        "library",
        help="the reading lists kept in the library: list, show, export (BibTeX, CSV, RIS, Markdown), import",
        description="Work with the library the app keeps (lists of papers with notes and tags).",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--library",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help=f"library file (default: ${library.ENV_LIBRARY}, else {library.default_path()})",
    )
    parser.add_argument("--library", metavar="FILE", default=None, help=argparse.SUPPRESS)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    lists = actions.add_parser("lists", parents=[common], help="every list with its size")
    lists.set_defaults(run=run_lists)

    show = actions.add_parser("show", parents=[common], help="the papers of one list")
    show.add_argument("name", metavar="NAME")
    show.add_argument(
        "--corpus", nargs="+", type=Path, metavar="PATH", help="say which papers this corpus lacks"
    )
    show.set_defaults(run=run_show)

    export = actions.add_parser(
        "export", parents=[common], help="write a list as BibTeX, CSV, RIS or Markdown"
    )
    export.add_argument("name", metavar="NAME")
    export.add_argument("--format", choices=tuple(library.EXPORT_FORMATS), default="bibtex")
    export.add_argument("--out", type=Path, metavar="FILE", help="file to write (default: stdout)")
    export.set_defaults(run=run_export)

    imports = actions.add_parser("import", parents=[common], help="add a BibTeX file's entries to a list")
    imports.add_argument("file", type=Path, metavar="FILE")
    imports.add_argument("--list", required=True, metavar="NAME", dest="list_name")
    imports.add_argument(
        "--corpus", nargs="+", type=Path, metavar="PATH", help="match the entries to this corpus by title"
    )
    imports.set_defaults(run=run_import)


def open_library(args: argparse.Namespace) -> library.Library | None:
    """The library the arguments name; None (with a message on stderr) when it cannot be used."""
    where = library.location_from(
        ["--library", args.library] if getattr(args, "library", None) else [], os.environ
    )
    if where.mode != "file" or where.path is None:
        print(f"paper-dashboard: the library is {where.label} ({where.origin}); name a file", file=sys.stderr)
        return None
    try:
        return library.Library.open(where.path)
    except library.LibraryError as error:
        print(f"paper-dashboard: {error}", file=sys.stderr)
        return None


def _lookup(paths: list[Path] | None) -> library.CorpusLookup | None:
    if not paths:
        return None

    return library.CorpusLookup(load_inputs(paths).papers)


def _say(text: str, **options: Any) -> None:
    """Print a line of library text to a terminal: without ESC, NUL, bidi overrides and the other
    characters that would move the cursor, recolour or reorder the screen (`dashboard.screen`)."""
    print(screen.visible(text).replace("\t", " ").replace("\n", " "), **options)


def run_lists(args: argparse.Namespace) -> int:
    """Print every list and its size."""
    lib = open_library(args)
    if lib is None:
        return EXIT_USAGE
    with lib:
        summaries = lib.lists()
    if not summaries:
        _say(f"no lists yet in {lib.where}")
    for summary in summaries:
        _say(f"{summary.size:>6,}  {summary.name}")
    return EXIT_OK


def run_show(args: argparse.Namespace) -> int:
    """Print one list: title, venue and year, tags, note; with --corpus, which papers it lacks."""
    lib = open_library(args)
    if lib is None:
        return EXIT_USAGE
    try:
        with lib:
            entries = lib.entries(args.name)
            known = lib.corpus_ids()
    except library.LibraryError as error:
        _say(f"paper-dashboard: {error}", file=sys.stderr)
        return EXIT_USAGE
    lookup = _lookup(args.corpus)
    found = library.resolve(entries, lookup, known)["found"] if lookup is not None else None
    for n, row in enumerate(entries.to_dict("records")):
        facts = " ".join(p for p in (str(row["venue"]), library.year_of(row["year"])) if p)
        mark = "x" if row["read"] else " "
        missing = found is not None and found.iat[n] == "missing"
        _say(
            f"[{mark}] {row['title']}"
            + (f"  ({facts})" if facts else "")
            + ("  [not in this corpus]" * missing)
        )
        if row["tags"]:
            _say("      tags: " + ", ".join(row["tags"]))
        if str(row["note"]).strip():
            _say("      note: " + " ".join(str(row["note"]).split()))
    return EXIT_OK


def run_export(args: argparse.Namespace) -> int:
    """Write one list in the chosen format to --out or stdout."""
    lib = open_library(args)
    if lib is None:
        return EXIT_USAGE
    try:
        with lib:
            text = library.export_list(lib.entries(args.name), args.format)
    except library.LibraryError as error:
        print(f"paper-dashboard: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.out is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        export.write_file(args.out, text)
    except OSError as error:
        print(f"paper-dashboard: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote list {args.name!r} to {args.out}", file=sys.stderr)
    return EXIT_OK


def run_import(args: argparse.Namespace) -> int:
    """Add a BibTeX file's entries to a list; report the unmatched ones (exit 1 when any)."""
    try:
        text = args.file.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as error:
        print(f"paper-dashboard: cannot read {args.file}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    lookup = _lookup(args.corpus)
    lib = open_library(args)
    if lib is None:
        return EXIT_USAGE
    try:
        with lib:
            result = library.import_bibtex(lib, text, args.list_name, lookup, source=str(args.file))
    except library.LibraryError as error:
        print(f"paper-dashboard: {error}", file=sys.stderr)
        return EXIT_USAGE
    for problem in result.problems:
        print(f"  skipped: {problem}", file=sys.stderr)
    for title in result.unmatched:
        print(f"  not in this corpus: {title}", file=sys.stderr)
    matched = f", {result.matched} matched to the corpus" if lookup is not None else ""
    print(f"added {result.added} papers to {args.list_name!r}{matched}; {len(result.unmatched)} unmatched")
    return EXIT_PARTIAL if result.unmatched or result.problems else EXIT_OK

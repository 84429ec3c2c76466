"""``paper-dashboard digest``: what is new in a corpus since the versions the library has seen.

    paper-dashboard digest dump-2024-06/ --library lists.sqlite                     # Markdown to stdout
    paper-dashboard digest /tmp/index-27k --library lists.sqlite --out new.html --mark-seen
    paper-dashboard digest dump/ --library lists.sqlite --since 2024-05-01 --out new.md

For each saved search of the library, the new papers that pass its filters; for each reading list, the
new papers among those that fit it best (the Papers page's "Recommended for" order), each with why.
A paper is new when no version marked seen had it, by id or by normalised title
(:mod:`dashboard.library.searches`); ``--since DATE`` compares with the versions marked seen on or
before that day only. Written offline as Markdown (``.md``, stdout by default) or one HTML page
(``.html``), for e-mail or a wiki; corpus text is escaped in both.

``--mark-seen`` marks this version seen once the digest is written, so the next digest lists only what
comes after it. Exit status: 0 done; 1 some input was skipped; 2 the library does not exist or cannot
be used, a bad date, or an output that cannot be written.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import Any

from dashboard import corpus, export
from dashboard.cli import common as cli
from dashboard.library import digest as digests
from dashboard.library import searches
from dashboard.library import store as library

FORMATS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}


def add_digest_command(subparsers: Any) -> None:
    """``digest PATH... --library FILE [--since DATE] [--out FILE.md|.html] [--top N] [--mark-seen]``."""
    parser = subparsers.add_parser(
        "digest",
        help="what is new since last time, per saved search and reading list (Markdown or HTML)",
        description="List the papers of a corpus (raw files or a prebuilt index) that no version seen "
        "by the library had: per saved search, and per reading list's recommendations.",
    )
    cli.add_input_arguments(parser)
    parser.add_argument("--library", type=Path, required=True, metavar="FILE", help="the library file")
    parser.add_argument(
        "--since",
        type=_date,
        metavar="DATE",
        help="compare with the versions marked seen on or before this day (YYYY-MM-DD); default: all",
    )
    parser.add_argument("--out", type=_digest_path, metavar="FILE", help="write here (.md or .html)")
    parser.add_argument(
        "--top", type=cli.positive_int, default=digests.TOP, help=f"papers per section ({digests.TOP})"
    )
    parser.add_argument(
        "--no-lists",
        action="store_true",
        help="saved searches only: no reading-list recommendations (no topic model is fitted for them)",
    )
    parser.add_argument("--mark-seen", action="store_true", help="then mark this version seen in the library")
    parser.set_defaults(run=run_digest)


def _date(text: str) -> dt.date:
    try:
        return searches.parse_date(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _digest_path(text: str) -> Path:
    if Path(text).suffix.lower() not in FORMATS:
        raise argparse.ArgumentTypeError(f"{text}: expected a .md or .html file")
    return Path(text)


def version_digest(paths: list[Path]) -> str:
    """The digest a version is kept under, as the app keys it: an index's manifest digest, else the
    digest of the raw files' contents."""
    from dashboard import index as paper_index

    if len(paths) == 1 and paper_index.is_index(paths[0]):
        try:
            return str(paper_index.read_manifest(paths[0])["digest"])
        except paper_index.IndexFormatError:
            pass  # opening it reports why; its files then say which version it is
    return corpus.digest_paths(paths)


def _say(text: str) -> None:
    print(f"paper-dashboard: {text}", file=sys.stderr)


def run_digest(args: argparse.Namespace) -> int:
    """Open the library and the corpus, find what is new, write it; the exit status."""
    from dashboard import index as paper_index
    from dashboard.cli.search import _Corpus  # raw files or one index, as search and recommend read them

    if not args.library.is_file():
        _say(f"no library at {args.library}")  # Library.open would make one: a typo must not
        return cli.EXIT_USAGE
    try:
        lib = library.Library.open(args.library)
    except library.LibraryError as error:
        _say(str(error))
        return cli.EXIT_USAGE
    with lib:
        paths = [Path(p) for p in args.paths]
        try:
            loaded = _Corpus(paths)
        except paper_index.IndexFormatError as error:
            _say(str(error))
            return cli.EXIT_SKIPPED
        digest = version_digest(paths)
        papers, recommender, lookup = loaded.papers, None, None
        try:
            if not args.no_lists and lib.list_names() and len(papers):
                analysis = loaded.analysis()
                papers = analysis.papers  # with the fitted topics: a saved search's topic filter applies
                recommender = digests.recommender(analysis, papers)
                lookup = library.CorpusLookup(papers, analysis.positions)
            result = digests.new_since(
                lib,
                digest,
                papers,
                label=", ".join(p.name or str(p) for p in paths),
                before=args.since,
                recommender=recommender,
                top=args.top,
                lookup=lookup,
            )
        except library.LibraryError as error:
            _say(str(error))
            return cli.EXIT_USAGE
        fmt = FORMATS[args.out.suffix.lower()] if args.out is not None else "md"
        text = digests.to_html(result, papers) if fmt == "html" else digests.to_markdown(result, papers)
        if args.out is None:
            sys.stdout.write(text)
        else:
            try:
                export.write_file(args.out, text)
            except OSError as error:
                _say(f"cannot write {args.out}: {error.strerror or error}")
                return cli.EXIT_USAGE
            print(f"wrote the digest ({result.n_new:,} new papers) to {args.out}", file=sys.stderr)
        if args.mark_seen:
            try:
                version = searches.mark_seen(lib, digest, loaded.papers, label=result.label)
            except library.LibraryError as error:
                _say(str(error))
                return cli.EXIT_USAGE
            print(f"marked this version seen ({version.date}) in {args.library}", file=sys.stderr)
    return int(loaded.status)

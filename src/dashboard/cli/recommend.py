"""``paper-dashboard recommend``: the papers that fit a reading list, from the command line.

    paper-dashboard recommend corpus/ --library ~/lists.sqlite --list "to read"            # CSV to stdout
    paper-dashboard recommend /tmp/index-27k --library lists.sqlite --list graphs --top 20 --out rec.csv

Writes ``rank, id, title, score``: the ``--top`` papers of the corpus (raw files or one prebuilt index)
that fit the list best, as the Papers page's "Recommended for" order ranks them
(:mod:`dashboard.search.recommend`); never the list's own papers. A list with fewer than three papers in this
corpus is ranked by likeness to them ("papers like these"), and stderr says so. The list's papers are
found in the corpus as the Library page finds them (by id, else by title).

Exit status: 0 done; 1 some input was skipped, or none of the list's papers is in this corpus (nothing
written); 2 the library file or the list does not exist, or the library cannot be opened.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from dashboard import export
from dashboard.cli import common as cli

# The search command's corpus loader (raw files or one index) and its rank, id, title, score table.
from dashboard.cli.search import _Corpus, _table
from dashboard.library import store as library

TOP = 50


def add_recommend_command(subparsers: Any) -> None:
    """``recommend PATH... --library FILE --list NAME [--top N] [--out FILE]``."""
    parser = subparsers.add_parser(
        "recommend",
        help="the papers that fit a reading list best",
        description="Rank every paper of a corpus (raw files or a prebuilt index) that is not in a "
        "reading list by how well it fits the list, and write the best: rank, id, title, score.",
    )
    cli.add_input_arguments(parser)
    parser.add_argument("--library", type=Path, required=True, metavar="FILE", help="the library file")
    parser.add_argument("--list", required=True, metavar="NAME", dest="list_name", help="the reading list")
    parser.add_argument("--top", type=cli.positive_int, default=TOP, help=f"papers to write ({TOP})")
    parser.add_argument("--out", type=cli.output_path, metavar="FILE", help="write here (.csv .json ...)")
    parser.set_defaults(run=run_recommend)


def _say(text: str) -> None:
    print(f"paper-dashboard: {text}", file=sys.stderr)


def _list_entries(path: Path, name: str) -> tuple[Any, dict[str, list[str]]] | str:
    """The list's entries and the library's known corpus ids, or why they cannot be read."""
    if not path.is_file():
        return f"no library at {path}"  # Library.open would create one: a typo must not
    try:
        with library.Library.open(path) as lib:
            names = lib.list_names()
            wanted = " ".join(name.split())
            if wanted not in names:
                known = ", ".join(f'"{n}"' for n in names) or "none"
                return f'{path}: no list "{name}" (lists: {known})'
            return lib.entries(wanted), lib.corpus_ids()
    except library.LibraryError as error:
        return str(error)


def run_recommend(args: argparse.Namespace) -> int:
    """Read the list, load (or open) the corpus, rank, write the table; the exit status."""
    from dashboard import index as paper_index
    from dashboard.search.recommend import dense_rows, recommend

    found = _list_entries(args.library, args.list_name)
    if isinstance(found, str):
        _say(found)
        return cli.EXIT_USAGE
    entries, known_ids = found
    try:
        loaded = _Corpus([Path(p) for p in args.paths])
    except paper_index.IndexFormatError as error:
        _say(str(error))
        return cli.EXIT_SKIPPED
    if not len(loaded.papers):
        _say("no papers to rank")
        return cli.EXIT_SKIPPED
    analysis = loaded.analysis()
    lookup = library.CorpusLookup(loaded.papers, analysis.positions)
    rows = library.resolve(entries, lookup, known_ids)["row"].to_numpy(dtype=np.int64)
    in_corpus = rows[rows >= 0]
    missing = int((rows < 0).sum())
    if missing:
        _say(f'{missing:,} of the {len(rows):,} papers of "{args.list_name}" are not in this corpus')
    if not len(in_corpus):
        _say(f'no paper of "{args.list_name}" is in this corpus: nothing to recommend')
        return cli.EXIT_SKIPPED
    ranked = recommend(analysis.model.tfidf_, dense_rows(analysis.model), in_corpus)
    if ranked.fallback:
        _say(
            f'"{args.list_name}" has {len(ranked.list_rows)} paper(s) in this corpus, fewer than 3: '
            "these are the papers most like them"
        )
    out = _table(loaded.papers, ranked.rows[: args.top], ranked.scores[: args.top])
    if args.out is None:
        sys.stdout.write(export.to_bytes(out, "csv").decode("utf-8-sig"))
    else:
        try:
            export.write(out, args.out)
        except OSError as error:
            _say(f"cannot write {args.out}: {error.strerror or error}")
            return cli.EXIT_USAGE
        print(f"wrote {len(out):,} rows to {args.out}", file=sys.stderr)
    return loaded.status

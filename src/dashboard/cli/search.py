"""``paper-dashboard search``: the ranked search and "papers like this" from the command line.

    paper-dashboard search corpus/ "gaussian process"                 # rank, id, title, score to stdout
    paper-dashboard search /tmp/index-27k "diffusion -video" --top 20 --out hits.csv
    paper-dashboard search corpus/ --like "A paragraph of my own about graph networks..."
    paper-dashboard search corpus/ "A paragraph of my own..." --like      # the same
    paper-dashboard search corpus/ --queries queries.txt --out hits.jsonl   # one query per line

The last argument is the query, unless ``--queries FILE`` gives one query per line (blank lines and
lines starting with ``#`` are skipped): then every argument is a path, the queries run in one process
and the output has a ``query`` column first. A search has the app's semantics and order
(:mod:`dashboard.search.ranking`: every word, "phrases", ``-exclusions``, BM25 with the title weighted up;
a typo, plural or any-word fallback is said on stderr). With ``--like`` each query is a text and the
papers most like it are listed by cosine similarity (:mod:`dashboard.search.like`, the app's default
space; ``--space`` picks another). Paths are raw files or one prebuilt index.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dashboard import export
from dashboard.cli import common as cli
from dashboard.search import like as similar
from dashboard.search import ranking
from dashboard.search.wordindex import WordIndex

COLUMNS = ["rank", "id", "title", "score"]


def add_search_command(subparsers: Any) -> None:
    """``search PATH... QUERY [--like] [--top N] [--out FILE] [--queries FILE]``."""

    parser = subparsers.add_parser(
        "search",
        help="ranked search (BM25) or papers like a text",
        description="Search a corpus (raw files or a prebuilt index) as the app does and write the "
        "best papers: rank, id, title, score.",
    )
    parser.add_argument(
        "arguments",
        metavar="PATH... QUERY",
        nargs="+",
        help="corpus files or folders, or one index, then the query (no query with --queries)",
    )
    parser.add_argument(
        "--like",
        nargs="?",
        const="",
        default=None,
        metavar="TEXT",
        help="the query is a text: list the papers like it (the text may follow --like)",
    )
    parser.add_argument("--top", type=cli.positive_int, default=10, help="papers per query (10)")
    parser.add_argument("--out", type=cli.output_path, metavar="FILE", help="write here (.csv .json ...)")
    parser.add_argument("--queries", type=Path, metavar="FILE", help="one query per line")
    parser.add_argument(
        "--space",
        choices=sorted(similar.SPACES),
        default=similar.DEFAULT_SPACE,
        help="vector space of --like",
    )
    parser.set_defaults(run=run_search)


def _queries(args: argparse.Namespace) -> tuple[list[Path], list[str]] | str:
    if args.like:  # --like "the text": every argument is a path
        return [Path(p) for p in args.arguments], [args.like]
    if args.queries is None:
        if len(args.arguments) < 2:
            return "give the corpus and then the query (or --queries FILE)"
        return [Path(p) for p in args.arguments[:-1]], [args.arguments[-1]]
    try:
        lines = args.queries.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        return f"cannot read {args.queries}: {getattr(error, 'strerror', None) or error}"
    queries = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not queries:
        return f"{args.queries}: no queries in it"
    return [Path(p) for p in args.arguments], queries


class _Corpus:
    """The papers, the word index and (on demand) the analysis, from an index or raw files."""

    def __init__(self, paths: list[Path]) -> None:
        from dashboard.filters import search_text

        self.source, result = cli.open_inputs(paths)
        self._analysis: Any = None
        self.papers = result.papers
        self.status = cli.exit_status(result.report)
        self.words: WordIndex | None = self.source.stored_word_index()
        if self.words is None and len(self.papers):
            self.words = WordIndex.build(search_text(self.papers))

    def analysis(self) -> Any:
        if self._analysis is None:  # an index's stored one; raw files are fitted only when --like needs it
            self._analysis = self.source.analysis(self.papers)
        return self._analysis


def _table(papers: pd.DataFrame, rows: np.ndarray, scores: np.ndarray) -> pd.DataFrame:
    titles = papers["title"].astype(str).to_numpy() if "title" in papers.columns else np.full(len(papers), "")
    return pd.DataFrame(
        {
            "rank": np.arange(1, len(rows) + 1),
            "id": papers["id"].astype(str).to_numpy()[rows],
            "title": titles[rows],
            "score": np.round(scores, 4),
        }
    )


def run_search(args: argparse.Namespace) -> int:
    """Load (or open the index), run every query, write the table; the exit status."""
    parsed = _queries(args)
    if isinstance(parsed, str):
        print(f"paper-dashboard: {parsed}", file=sys.stderr)
        return cli.EXIT_USAGE
    paths, queries = parsed
    loaded = _Corpus(paths)
    if loaded.words is None:
        print("paper-dashboard: no papers to search", file=sys.stderr)
        return cli.EXIT_SKIPPED
    space = similar.SPACES[args.space](loaded.analysis()) if args.like is not None else None
    tables = []
    for query in queries:
        if space is not None:
            pairs = similar.like_text(space, query, args.top)
            rows = np.array([r for r, _ in pairs], dtype=np.int64)
            scores = np.array([s for _, s in pairs], dtype=np.float64)
        else:
            result = ranking.search(loaded.words, query)
            for note in result.notes:
                print(f"{query}: {note}", file=sys.stderr)
            rows, scores = result.rows[: args.top], result.scores[: args.top]
        table = _table(loaded.papers, rows, scores)
        if args.queries is not None:
            table.insert(0, "query", query)
        tables.append(table)
    columns = (["query"] if args.queries is not None else []) + COLUMNS
    out = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=columns)
    if args.out is None:
        sys.stdout.write(export.to_bytes(out, "csv").decode("utf-8-sig"))
    else:
        try:
            export.write(out, args.out)
        except OSError as error:
            print(f"paper-dashboard: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
            return cli.EXIT_USAGE
        print(f"wrote {len(out):,} rows to {args.out}", file=sys.stderr)
    return loaded.status

"""``paper-dashboard parse`` (the paper table as a file) and ``stats`` (what is in a corpus, in a few lines).

paper-dashboard parse seeds/ --out papers.csv      # the paper table as .csv/.json/.jsonl/.parquet/.xlsx
paper-dashboard stats seeds/ other.jsonl.gz
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from dashboard.cli.common import (
    EXIT_USAGE,
    Subparsers,
    add_input_arguments,
    add_table_output_arguments,
    exit_status,
    load_inputs,
    write_table,
)
from dashboard.repocheck.columns import with_cached_answers


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


def run_parse(args: argparse.Namespace) -> int:
    """Load the inputs, write the table to --out (with the repository columns where the cache has
    answers, `dashboard.repocheck.columns.with_cached_answers`); the exit status."""
    result = load_inputs(args.paths)
    if not write_table(with_cached_answers(result.papers), args.out, raw=args.raw):
        return EXIT_USAGE
    return exit_status(result.report)


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

"""Benchmark the library store: adding many papers at once, opening (and reading) a large library.

    python bench/library.py                  # 1,000 papers added, a 10,000-entry library opened
    python bench/library.py --add 5000 --entries 50000 --repeat 5

Papers are synthetic but shaped like a corpus's (titles, 150-word abstracts, authors, venue, year,
url). Every figure is the best of --repeat runs on a fresh file in a temporary directory:

- "add N at once": `Library.add` of N new papers to a list (one transaction: papers, ids, entries);
- "open + read N entries": `Library.open` of an existing file, then `lists()`, `entries()` and
  `corpus_ids()`, which is what the Library page and the ``list`` filter read;
- "resolve N entries": `dashboard.library.store.resolve` against a corpus holding them (by id);
- "export N as BibTeX": `export_list(..., "bibtex")`.

Targets (issue 15): adding 1,000 papers < 1 s; opening a library of 10,000 entries < 0.5 s.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from dashboard.library import store as library
from dashboard.library.store import Library

WORDS = [
    *("graph", "neural", "network", "diffusion", "model", "learning", "robust", "transformer"),
    *("attention", "language", "vision", "policy", "reinforcement", "sparse", "kernel", "bayesian"),
    *("inference", "optimisation", "convex", "stochastic", "gradient"),
]


def synthetic_papers(n: int, seed: int = 0, start: int = 0) -> pd.DataFrame:
    """``n`` papers with every field the library keeps."""
    rng = random.Random(seed)
    return pd.DataFrame(
        {
            "id": [f"paper-{start + k}" for k in range(n)],
            "title": [" ".join(rng.choices(WORDS, k=8)).capitalize() + f" {start + k}" for k in range(n)],
            "abstract": [" ".join(rng.choices(WORDS, k=150)) for _ in range(n)],
            "authors": [
                [f"Author {rng.randrange(5000)}" for _ in range(rng.randint(1, 6))] for _ in range(n)
            ],
            "venue": [rng.choice(["ICML", "NeurIPS", "ICLR"]) for _ in range(n)],
            "year": pd.array([rng.choice([2022, 2023, 2024]) for _ in range(n)], dtype="Int64"),
            "url": [f"https://example.org/paper/{start + k}" for k in range(n)],
        }
    )


def best(repeat: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--add", type=int, default=1_000, help="papers added at once (1000)")
    parser.add_argument("--entries", type=int, default=10_000, help="entries in the library opened (10000)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-library-") as scratch:
        adds = synthetic_papers(args.add, seed=1)

        def add_once() -> float:
            path = Path(scratch) / f"add-{time.monotonic_ns()}.sqlite"
            with Library.open(path) as lib:
                lib.add("warm-up", adds.head(1))  # the file and schema exist already, as for a user
                start = time.perf_counter()
                added = lib.add("to read", adds)
                elapsed = time.perf_counter() - start
            assert added == len(adds)
            return elapsed

        add_seconds = best(args.repeat, add_once)

        big = Path(scratch) / "big.sqlite"
        corpus = synthetic_papers(args.entries, seed=2)
        with Library.open(big) as lib:
            chunk = 5_000
            for n, start in enumerate(range(0, len(corpus), chunk)):
                lib.add(f"list {n % 4}", corpus.iloc[start : start + chunk])
            for k in range(0, len(corpus), 10):  # some notes and tags, as a real library has
                paper = library.fingerprint(corpus["title"].iat[k], corpus["abstract"].iat[k])
                lib.set_note(paper, "worth a look")
                lib.tag([paper], "later")

        def open_once() -> float:
            start = time.perf_counter()
            with Library.open(big) as lib:
                lib.lists()
                entries = lib.entries()
                lib.corpus_ids()
            elapsed = time.perf_counter() - start
            assert len(entries) == args.entries
            return elapsed

        open_seconds = best(args.repeat, open_once)
        with Library.open(big) as lib:
            entries = lib.entries()
            known = lib.corpus_ids()
        lookup = library.CorpusLookup(corpus)

        def resolve_once() -> float:
            start = time.perf_counter()
            found = library.resolve(entries, lookup, known)
            elapsed = time.perf_counter() - start
            assert (found["row"] >= 0).all()
            return elapsed

        resolve_seconds = best(args.repeat, resolve_once)

        def export_once() -> float:
            start = time.perf_counter()
            library.export_list(entries, "bibtex")
            return time.perf_counter() - start

        export_seconds = best(args.repeat, export_once)
        size_mb = big.stat().st_size / 1e6

    rows = [
        (f"add {args.add:,} papers at once", add_seconds, "target < 1 s"),
        (f"open + read {args.entries:,} entries", open_seconds, f"target < 0.5 s; file {size_mb:.1f} MB"),
        (f"resolve {args.entries:,} entries", resolve_seconds, "by id, against a corpus holding them"),
        (f"export {args.entries:,} as BibTeX", export_seconds, "made on click in the app"),
    ]
    for what, seconds, note in rows:
        print(f"{what:<34} {seconds:7.3f} s   ({note})")


if __name__ == "__main__":
    main()

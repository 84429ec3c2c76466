"""Make large test corpora by resampling the 27k real abstracts: RESAMPLED DATA, for timing only.

    python bench/make_corpus.py                       # 100k and 1M papers under bench/data/
    python bench/make_corpus.py --papers 250000 --seed 1

Each paper is a real record of ../shared/corpora/multiconf-2021-2024 drawn with replacement (seeded),
with a new unique id (``<original id>~r<n>``) and a ``resampled_from`` field naming the original.
Every abstract therefore occurs about N / 27,179 times: the vocabulary is that of the 27k corpus (a
real corpus of a million abstracts has a larger one; the index caps its TF-IDF vocabulary at 30,000
terms either way) and the load report lists the repeated abstracts as warnings.

The papers are written as shards of 50,000 records (``resampled-NNN.jsonl.gz``) in a folder named
``resampled-<N>``, with a README.txt that says all this (the corpus reader passes a README over, with
a warning). bench/data/ is gitignored.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO.parent / "shared" / "corpora" / "multiconf-2021-2024" / "papers.jsonl.gz"
DATA = REPO / "bench" / "data"
SHARD = 50_000


def folder_for(n_papers: int) -> Path:
    """Where the resampled corpus of ``n_papers`` lives, e.g. ``bench/data/resampled-1000000``."""
    return DATA / f"resampled-{n_papers}"


def make(n_papers: int, seed: int, source: Path = SOURCE, shard: int = SHARD) -> Path:
    """Write the resampled corpus (skipped when it exists with the same settings); returns its folder."""
    target = folder_for(n_papers)
    note = {
        "resampled": True,
        "source": str(source.name),
        "source_folder": source.parent.name,
        "papers": n_papers,
        "seed": seed,
        "shard_size": shard,
        "made_by": "bench/make_corpus.py",
    }
    readme = target / "README.txt"
    if readme.exists() and json.loads(readme.read_text().split("\n", 2)[1]) == note:
        print(f"{target}: already made (resampled, seed {seed})")
        return target
    started = time.perf_counter()
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        records = [line for line in handle if line.strip()]
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(records), size=n_papers)
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("resampled-*.jsonl.gz"):
        old.unlink()
    for number, start in enumerate(range(0, n_papers, shard)):
        path = target / f"resampled-{number:03d}.jsonl.gz"
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=3) as out:
            for n in range(start, min(start + shard, n_papers)):
                record = json.loads(records[draws[n]])
                original = str(record.get("id", draws[n]))
                record["id"] = f"{original}~r{n}"
                record["resampled_from"] = original
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
    repeats = n_papers / len(records)
    readme.write_text(
        "RESAMPLED CORPUS for benchmarks (not real data)\n"
        + json.dumps(note)
        + f"\n\n{n_papers:,} records drawn with replacement (seed {seed}) from {len(records):,} real records"
        f" of {source}.\nEvery abstract repeats about {repeats:.0f} times. Made by bench/make_corpus.py.\n",
        encoding="utf-8",
    )
    seconds = time.perf_counter() - started
    print(f"{target}: {n_papers:,} RESAMPLED papers from {len(records):,} real ones in {seconds:.1f} s")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not SOURCE.exists():
        print(f"{SOURCE} is missing: the resampled corpora are made from it", file=sys.stderr)
        return 2
    print("Resampling the 27k real abstracts (with replacement): the output is RESAMPLED, for timing only.")
    for n_papers in args.papers:
        make(n_papers, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())

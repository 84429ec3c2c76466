"""Time every derived field of the paper table on a real corpus and print µs per abstract.

    python bench/enrich.py [PATH]    # default: ../shared/corpora/multiconf-2021-2024/papers.jsonl.gz

Each extractor is timed alone, then `add_derived_columns` end to end on the whole corpus. Times are
CPU seconds of this process (time.process_time), best of three runs, so other processes on a shared
machine count less; wall-clock seconds are printed for the end-to-end run too.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from dashboard.text.clean import clean_markup, count_words
from dashboard.text.enrich import add_derived_columns
from dashboard.text.extract import datasets, derived_title, method_names
from dashboard.text.links import code_release, extract_links

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
DEFAULT = CORPORA / "multiconf-2021-2024" / "papers.jsonl.gz"


def best_of(runs: int, work: Callable[[], object], clock: Callable[[], float] = time.process_time) -> float:
    timings = []
    for _ in range(runs):
        start = clock()
        work()
        timings.append(clock() - start)
    return min(timings)


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not path.exists():
        sys.exit(f"corpus not found: {path}")
    raw = pd.read_json(path, lines=True, compression="infer")
    raw["abstract"] = raw["abstract"].fillna("")
    raw["title"] = raw["title"].fillna("")
    abstracts = raw["abstract"].tolist()
    n = len(abstracts)
    clean = [clean_markup(text) for text in abstracts]
    links = [extract_links(text) for text in abstracts]
    names = [method_names(text, clean=c) for text, c in zip(abstracts, clean, strict=True)]
    steps: dict[str, Callable[[], object]] = {
        "clean_markup": lambda: [clean_markup(text) for text in abstracts],
        "count_words": lambda: [count_words(text) for text in clean],
        "extract_links": lambda: [extract_links(text) for text in abstracts],
        "code_release": lambda: [code_release(ls, c) for ls, c in zip(links, clean, strict=True)],
        "method_names": lambda: [method_names(t, clean=c) for t, c in zip(abstracts, clean, strict=True)],
        "datasets": lambda: [datasets(c) for c in clean],
        "derived_title (every row)": lambda: [derived_title(c, m) for c, m in zip(clean, names, strict=True)],
    }
    print(f"{n:,} abstracts from {path.name} ({sum(map(len, abstracts)) / n:,.0f} characters on average)")
    total = 0.0
    for name, work in steps.items():
        seconds = best_of(3, work)
        if not name.startswith("derived_title"):
            total += seconds
        print(f"  {name:28s} {seconds / n * 1e6:7.1f} µs/abstract  {seconds:6.2f} s")
    print(f"  {'sum of the above (no title)':28s} {total / n * 1e6:7.1f} µs/abstract  {total:6.2f} s")
    for label, frame in (("records with titles", raw), ("every title derived", raw.assign(title=""))):
        seconds = best_of(3, lambda frame=frame: add_derived_columns(frame))
        wall = best_of(3, lambda frame=frame: add_derived_columns(frame), time.perf_counter)
        print(
            f"add_derived_columns, {label}: {seconds:.2f} s CPU ({seconds / n * 1e6:.0f} µs/abstract), "
            f"{wall:.2f} s wall"
        )


if __name__ == "__main__":
    main()

"""Server-side time of the Papers page's ranked search and "papers like this", at 27k and 1M papers.

Measures what a search adds to a Papers page run: the filter's mask from the word index, the BM25
ranking of its hits (`dashboard.search.ranking.search`), and the matched sentence of the best 200 hits
(the table's "Matched sentence" column); and for "papers like", the nearest papers to a paper and to a pasted
abstract in the default space (`dashboard.search.like`). Each figure is the slowest of three runs (the
first run of a query also pays for reading the memory-mapped index pages).

    python bench/search_speed.py                       # 27k from the raw file, 1M from bench/data/index-1m
    python bench/search_speed.py --index /tmp/index-27k

Goals (issue 13): at most 0.2 s at 27k and 0.5 s at 1M, server-side.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from dashboard.search import like as similar
from dashboard.search import ranking

REPO = Path(__file__).resolve().parents[1]
BIG = REPO.parent / "shared" / "corpora" / "multiconf-2021-2024" / "papers.jsonl.gz"
INDEX_1M = REPO / "bench" / "data" / "index-1m"
QUERIES = [
    "diffusion",
    "gaussian process",
    "graph neural networks",
    "learning",
    "tranformer",
    "the model data",
]


def _slowest(run: object, tries: int = 3) -> float:
    times = []
    for _ in range(tries):
        started = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return max(times)


def measure(name: str, papers: object, words: object, analysis: object | None) -> None:
    """Print the search and like times for one corpus."""
    counts = "yes" if words.has_frequencies else "no (old index)"
    print(f"\n{name}: {len(papers):,} papers, term counts {counts}")
    for q in QUERIES:

        def run(q: str = q) -> int:
            result = ranking.search(words, q)
            texts = papers["abstract_clean"].iloc[result.rows[:200]].astype(str).tolist()
            for text in texts:
                ranking.matched_sentence(text, result.query)
            return len(result.rows)

        hits = len(ranking.search(words, q).rows)
        print(f"  search {q!r:28} {hits:>9,} hits  {_slowest(run):6.3f} s")
    if analysis is None:
        return
    started = time.perf_counter()
    space = similar.SPACES[similar.DEFAULT_SPACE](analysis)
    if isinstance(space, similar.LsaSpace):
        space.directions()
    print(f"  {space.label} space ready in {time.perf_counter() - started:.2f} s (once per corpus)")
    text = str(papers["abstract_clean"].iloc[0])
    print(f"  like a paper        {_slowest(lambda: similar.like_paper(space, 0, 100)):6.3f} s")
    print(f"  like a pasted text  {_slowest(lambda: similar.like_text(space, text, 100)):6.3f} s")


def main() -> None:
    """Measure at 27k (raw file or --index) and at 1M (the shared index, where built)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, help="a prebuilt index to measure instead of the 27k raw file")
    parser.add_argument("--no-like", action="store_true", help="skip papers-like (no topic fit at 27k)")
    args = parser.parse_args()
    from dashboard import index as paper_index

    if args.index is not None:
        opened = paper_index.open_index(args.index)
        measure(str(args.index), opened.papers, opened.words, None if args.no_like else opened.analysis)
    elif BIG.exists():
        from dashboard.corpus import load
        from dashboard.filters import search_text
        from dashboard.search.wordindex import WordIndex

        papers = load([BIG]).papers
        started = time.perf_counter()
        words = WordIndex.build(search_text(papers))
        print(f"27k: word index built in {time.perf_counter() - started:.1f} s (once per corpus)")
        fitted = None
        if not args.no_like:
            from dashboard.analytics.analysis import analyze

            fitted = analyze(papers)
        measure("27k (raw file)", papers, words, fitted)
    if INDEX_1M.exists():
        opened = paper_index.open_index(INDEX_1M)
        measure(
            "1M (bench/data/index-1m)", opened.papers, opened.words, None if args.no_like else opened.analysis
        )
    else:
        print(f"\n1M: {INDEX_1M} not built yet")


if __name__ == "__main__":
    main()

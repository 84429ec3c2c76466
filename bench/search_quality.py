"""How good is the search? Known-item search and "papers like this", against the standard baselines.

Prints, in one run:

- **Known-item search** on ICLR 2026 (1k) and the 27k multi-conference corpus: every paper's own title
  is the query, over an index built from the abstracts only (titles left out, so a title cannot find
  itself by its own words). MRR@10 and recall@10 (the paper is in the first 10) for
  - the app's ranked search (`dashboard.ranking.search`: every word must occur, as the filter asks,
    ranked by BM25; when no paper has every word, papers with some of them, ranked by BM25),
  - BM25 over any of the words (the ranking alone, no filter),
  - corpus order (the search before ranking: the filter's hits as the files list them),
  - scikit-learn TF-IDF cosine (``TfidfVectorizer(stop_words="english")``, the standard baseline).
- **Papers like this** on ICLR 1k: precision@10 that a paper's 10 nearest neighbours share its
  OpenReview ``primary_area``, for each vector space of `dashboard.similar.SPACES` from a paper and
  from its abstract pasted as text (the text box's path), for plain scikit-learn TF-IDF, and the
  chance level.

    python bench/search_quality.py            # everything
    python bench/search_quality.py --quick    # ICLR 1k only
    python bench/search_quality.py --sample 3000   # 3,000 seeded title queries at 27k (over all abstracts)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer

from dashboard import ranking, similar
from dashboard.analysis import analyze
from dashboard.corpus import load
from dashboard.wordindex import WordIndex

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
ICLR = CORPORA / "iclr2026-openreview-1k" / "papers.jsonl"
BIG = CORPORA / "multiconf-2021-2024" / "papers.jsonl.gz"
TOP = 10


def _reciprocal_rank(found: np.ndarray, target: int) -> float:
    hits = np.flatnonzero(np.asarray(found[:TOP]) == target)
    return 1.0 / (hits[0] + 1) if len(hits) else 0.0


def known_item(papers: pd.DataFrame, name: str, sample: int | None = None) -> list[dict[str, object]]:
    """MRR@10 and recall@10 of each method, titles as queries over the abstracts.

    ``sample``: that many queries (seeded), still over every abstract.
    """
    abstracts = papers["abstract_clean"].fillna("").astype(str).reset_index(drop=True)
    titles = papers["title"].fillna("").astype(str).reset_index(drop=True)
    usable = np.flatnonzero(
        (titles.str.strip() != "").to_numpy()
        & (abstracts.str.strip() != "").to_numpy()
        & ~papers.get("title_is_derived", pd.Series(False, index=papers.index)).fillna(False).to_numpy(bool)
    )
    if sample is not None and sample < len(usable):
        usable = np.sort(np.random.default_rng(0).choice(usable, sample, replace=False))
    started = time.perf_counter()
    index = WordIndex.build(abstracts, title_weight=1)  # abstracts only: no title line to weight
    build_seconds = time.perf_counter() - started

    def app(q: str) -> np.ndarray:
        return ranking.search(index, q).rows[:TOP]

    def any_word(q: str) -> np.ndarray:
        scores = ranking.bm25(index, ranking.query_words(q))
        top = np.argpartition(-scores, TOP)[:TOP]
        top = top[scores[top] > 0]
        return top[np.lexsort((top, -scores[top]))]

    def corpus_order(q: str) -> np.ndarray:
        return np.flatnonzero(index.mask(q))[:TOP]

    results = []
    for method, find in (
        ("app ranked search", app),
        ("BM25, any word", any_word),
        ("corpus order", corpus_order),
    ):
        started = time.perf_counter()
        reciprocal = [_reciprocal_rank(find(titles.iloc[row]), row) for row in usable]
        seconds = time.perf_counter() - started
        results.append(_row(name, method, reciprocal, seconds / len(usable)))
    started = time.perf_counter()
    vectorizer = TfidfVectorizer(stop_words="english")
    matrix = vectorizer.fit_transform(abstracts).astype(np.float32)
    queries = vectorizer.transform(titles.iloc[usable]).astype(np.float32)
    reciprocal = []
    for start in range(0, len(usable), 500):
        block = (queries[start : start + 500] @ matrix.T).toarray()
        for offset, scores in enumerate(block):
            top = np.argpartition(-scores, TOP)[:TOP]
            top = top[np.lexsort((top, -scores[top]))]
            top = top[scores[top] > 0]
            reciprocal.append(_reciprocal_rank(top, usable[start + offset]))
    seconds = time.perf_counter() - started
    results.append(_row(name, "scikit-learn TF-IDF cosine", reciprocal, seconds / len(usable)))
    print(f"  ({name}: {len(usable):,} queries, word index of the abstracts built in {build_seconds:.1f} s)")
    return results


def _row(corpus_name: str, method: str, reciprocal: list[float], seconds: float) -> dict[str, object]:
    values = np.asarray(reciprocal)
    return {
        "corpus": corpus_name,
        "method": method,
        "MRR@10": round(float(values.mean()), 3),
        "recall@10": round(float((values > 0).mean()), 3),
        "ms/query": round(seconds * 1000, 2),
    }


def like_precision(papers: pd.DataFrame) -> list[dict[str, object]]:
    """Precision@10 of shared primary_area among each paper's 10 nearest, per space and path."""
    areas = papers["primary_area"].fillna("").astype(str).to_numpy()
    labelled = areas != ""
    rows = np.flatnonzero(labelled)
    started = time.perf_counter()
    fitted = analyze(papers)
    print(f"  (ICLR 1k: analysis fitted in {time.perf_counter() - started:.1f} s)")
    results = []

    def precision(neighbours: list[list[int]]) -> float:
        return float(
            np.mean(
                [np.mean(areas[n] == areas[r]) if n else 0.0 for r, n in zip(rows, neighbours, strict=True)]
            )
        )

    for make in similar.SPACES.values():
        space = make(fitted)
        started = time.perf_counter()
        by_paper = [[i for i, _ in similar.like_paper(space, int(r), TOP, allowed=labelled)] for r in rows]
        paper_seconds = time.perf_counter() - started
        results.append(
            {
                "method": f"{space.label}, from the paper",
                "precision@10": round(precision(by_paper), 3),
                "ms/query": round(paper_seconds / len(rows) * 1000, 2),
            }
        )
        started = time.perf_counter()
        texts = papers["abstract_clean"].fillna("").astype(str).to_numpy()
        by_text = []
        for r in rows:  # the abstract pasted in the text box: the paper itself left out
            allowed = labelled.copy()
            allowed[r] = False
            by_text.append([i for i, _ in similar.like_text(space, str(texts[r]), TOP, allowed=allowed)])
        text_seconds = time.perf_counter() - started
        results.append(
            {
                "method": f"{space.label}, abstract pasted as text",
                "precision@10": round(precision(by_text), 3),
                "ms/query": round(text_seconds / len(rows) * 1000, 2),
            }
        )
    plain = TfidfVectorizer().fit_transform(papers["abstract"].fillna("").astype(str))
    space = similar.ArraySpace(plain)  # type: ignore[arg-type]
    by_plain = [[i for i, _ in similar.like_paper(space, int(r), TOP, allowed=labelled)] for r in rows]
    results.append(
        {
            "method": "scikit-learn TF-IDF (defaults, abstract)",
            "precision@10": round(precision(by_plain), 3),
            "ms/query": float("nan"),
        }
    )
    shares = pd.Series(areas[rows]).value_counts(normalize=True)
    results.append(
        {
            "method": "chance (same area at random)",
            "precision@10": round(float((shares**2).sum()), 3),
            "ms/query": float("nan"),
        }
    )
    return results


def main() -> None:
    """Run the benchmarks and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="ICLR 1k only")
    parser.add_argument(
        "--sample", type=int, default=None, metavar="N", help="at 27k, N seeded title queries (default: all)"
    )
    args = parser.parse_args()
    iclr = load([ICLR]).papers
    print("Known-item search: titles as queries over abstracts only")
    rows = known_item(iclr, "ICLR 1k")
    if not args.quick and BIG.exists():
        rows += known_item(load([BIG]).papers, "27k", args.sample)
    print(pd.DataFrame(rows).to_string(index=False))
    print()
    print("Papers like this: precision@10 of shared primary_area, ICLR 1k")
    print(pd.DataFrame(like_precision(iclr)).to_string(index=False))


if __name__ == "__main__":
    main()

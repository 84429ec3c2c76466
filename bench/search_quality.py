"""How good is the search? Known-item search and "papers like this", against the standard baselines.

Prints, in one run:

- **Known-item search** on ICLR 2026 (1k) and the 27k multi-conference corpus: every paper's own title
  is the query, over an index built from the abstracts only (titles left out, so a title cannot find
  itself by its own words). MRR@10 and recall@10 (the paper is in the first 10) for
  - the app's ranked search (`dashboard.search.ranking.search`: every word must occur, as the filter asks,
    ranked by BM25; when no paper has every word, papers with some of them, ranked by BM25),
  - BM25 over any of the words (the ranking alone, no filter),
  - corpus order (the search before ranking: the filter's hits as the files list them),
  - scikit-learn TF-IDF cosine (``TfidfVectorizer(stop_words="english")``, the standard baseline).
- **Papers like this, known item**: MRR@10 of finding a paper from a text of its own, for each space
  of `dashboard.search.like.SPACES` (the default marked), scikit-learn TF-IDF cosine and reciprocal-rank
  fusion (k = 60) of that TF-IDF with LSA:
  - ICLR 1k: 200 OpenReview TL;DRs (seeded sample of the papers that have one) as the texts;
  - 27k: a paraphrase set: 200 seeded abstracts, each cut into sentences, a seeded random half of
    them (at least one) kept and shuffled into a new order; the paper's own text is still indexed.
- **Papers like this** on ICLR 1k: precision@10 that a paper's 10 nearest neighbours share its
  OpenReview ``primary_area``, for each vector space of `dashboard.search.like.SPACES` from a paper and
  from its abstract pasted as text (the text box's path), for plain scikit-learn TF-IDF, and the
  chance level.

    python bench/search_quality.py            # everything
    python bench/search_quality.py --quick    # ICLR 1k only
    python bench/search_quality.py --sample 3000   # 3,000 seeded title queries at 27k (over all abstracts)
    python bench/search_quality.py --like-only     # only the "papers like this" tables (a few minutes)
    python bench/search_quality.py --semantic      # also the [semantic] MiniLM space, ICLR 1k only (slow)
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer

from dashboard.analytics.analysis import analyze, paper_texts
from dashboard.analytics.topics import TopicModel
from dashboard.corpus import load
from dashboard.search import like as similar
from dashboard.search import ranking
from dashboard.search.wordindex import WordIndex
from dashboard.text.tokens import scan

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
ICLR = CORPORA / "iclr2026-openreview-1k" / "papers.jsonl"
BIG = CORPORA / "multiconf-2021-2024" / "papers.jsonl.gz"
TOP = 10
LIKE_QUERIES = 200
SLOW_SPACES = {"minilm"}  # encodes every paper at about 10 a second per core: ICLR 1k only, on request


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


def like_precision(papers: pd.DataFrame, fitted: Any, names: list[str]) -> list[dict[str, object]]:
    """Precision@10 of shared primary_area among each paper's 10 nearest, per space and path."""
    areas = papers["primary_area"].fillna("").astype(str).to_numpy()
    labelled = areas != ""
    rows = np.flatnonzero(labelled)
    results = []

    def precision(neighbours: list[list[int]]) -> float:
        return float(
            np.mean(
                [np.mean(areas[n] == areas[r]) if n else 0.0 for r, n in zip(rows, neighbours, strict=True)]
            )
        )

    for name in names:
        space = similar.SPACES[name](fitted)
        started = time.perf_counter()
        by_paper = [[i for i, _ in similar.like_paper(space, int(r), TOP, allowed=labelled)] for r in rows]
        paper_seconds = time.perf_counter() - started
        results.append(
            {
                "method": f"{_space_name(name)}, from the paper",
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
                "method": f"{_space_name(name)}, abstract pasted as text",
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


def _space_name(name: str) -> str:
    default = " (default)" if name == similar.DEFAULT_SPACE else ""
    return f"{name}: {similar.LABELS.get(name, name)}{default}"


def _ranks(scores: np.ndarray) -> np.ndarray:
    order = np.lexsort((np.arange(len(scores)), -scores))
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    return ranks


def _top(scores: np.ndarray) -> np.ndarray:
    top = np.argpartition(-scores, TOP)[:TOP]
    top = top[scores[top] > 0]
    return top[np.lexsort((top, -scores[top]))]


def like_known_item(
    fitted: Any, query_sets: dict[str, list[tuple[int, str]]], names: list[str]
) -> list[dict[str, object]]:
    """MRR@10 of finding each query's own paper with `similar.like_text`, per space and query set,
    and with plain scikit-learn TF-IDF cosine (the baseline) and its reciprocal-rank fusion with LSA."""
    results: list[dict[str, object]] = []
    n_queries = sum(len(q) for q in query_sets.values())
    for name in names:
        started = time.perf_counter()
        space = similar.SPACES[name](fitted)
        space.paper_vectors()
        result: dict[str, object] = {
            "method": _space_name(name),
            "fit s": round(time.perf_counter() - started, 1),
        }
        started = time.perf_counter()
        for set_name, queries in query_sets.items():
            found = [np.array([r for r, _ in similar.like_text(space, text, TOP)]) for _, text in queries]
            result[f"MRR@10 {set_name}"] = _mrr(found, queries)
        result["ms/query"] = round((time.perf_counter() - started) / n_queries * 1000, 1)
        results.append(result)
    started = time.perf_counter()
    vectorizer = TfidfVectorizer(stop_words="english")  # the baseline as is
    matrix = vectorizer.fit_transform(paper_texts(fitted.papers))
    fit_seconds = round(time.perf_counter() - started, 1)
    lsa = similar.lsa_space(fitted)
    plain: dict[str, object] = {"method": "scikit-learn TF-IDF cosine", "fit s": fit_seconds}
    fused: dict[str, object] = {"method": "RRF(TF-IDF cosine, LSA), k=60", "fit s": fit_seconds}
    for set_name, queries in query_sets.items():
        by_plain, by_fused = [], []
        for _, text in queries:
            text = text[: similar.MAX_LIKE_TEXT]
            lexical = similar.similarities(matrix, vectorizer.transform([text]))
            by_plain.append(_top(lexical))
            semantic = similar.similarities(lsa.paper_vectors(), lsa.text_vector(text))
            by_fused.append(_top(1 / (60 + _ranks(lexical)) + 1 / (60 + _ranks(semantic))))
        plain[f"MRR@10 {set_name}"] = _mrr(by_plain, queries)
        fused[f"MRR@10 {set_name}"] = _mrr(by_fused, queries)
    return [*results, plain, fused]


def _mrr(found: list[np.ndarray], queries: list[tuple[int, str]]) -> float:
    return round(
        float(np.mean([_reciprocal_rank(f, row) for f, (row, _) in zip(found, queries, strict=True)])), 3
    )


def tldr_queries(papers: pd.DataFrame) -> list[tuple[int, str]]:
    """200 seeded (row, TL;DR) pairs of the papers that have a TL;DR."""
    tldr = papers["tldr"].fillna("").astype(str).reset_index(drop=True)
    rows = np.flatnonzero((tldr.str.strip() != "").to_numpy())
    chosen = np.sort(np.random.default_rng(0).choice(rows, min(LIKE_QUERIES, len(rows)), replace=False))
    return [(int(r), tldr.iloc[r]) for r in chosen]


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def paraphrase_queries(papers: pd.DataFrame) -> dict[str, list[tuple[int, str]]]:
    """Three seeded query sets on the same 200 abstracts (of 200+ characters), each as (row, text):

    - ``first sentence``: the abstract's first sentence (often the field's generic opening);
    - ``half``: a random half of its sentences (at least one), shuffled into a new order;
    - ``half, half the words``: that half with a random half of its words left out, in order.
    """
    abstracts = papers["abstract_clean"].fillna("").astype(str).reset_index(drop=True)
    rng = np.random.default_rng(0)
    rows = np.flatnonzero((abstracts.str.len() >= 200).to_numpy())
    sets: dict[str, list[tuple[int, str]]] = {"first sentence": [], "half": [], "half, half the words": []}
    for row in np.sort(rng.choice(rows, min(LIKE_QUERIES, len(rows)), replace=False)):
        sentences = _sentences(abstracts.iloc[row])
        picked = rng.permutation(len(sentences))[: max(1, len(sentences) // 2)]
        half = " ".join(sentences[i] for i in picked)
        words = half.split()
        kept = np.sort(rng.permutation(len(words))[: max(1, len(words) // 2)])
        sets["first sentence"].append((int(row), sentences[0]))
        sets["half"].append((int(row), half))
        sets["half, half the words"].append((int(row), " ".join(words[i] for i in kept)))
    return sets


def light_analysis(papers: pd.DataFrame) -> Any:
    """What the spaces read of an `Analysis` (TF-IDF, terms, LSA, papers), without the topic clustering."""
    model = TopicModel()
    scanned = [scan(t) for t in paper_texts(papers)]
    model.tfidf_ = model._fit_tfidf(scanned)
    model.lsa_ = model._fit_lsa(model.tfidf_)
    return SimpleNamespace(model=model, papers=papers)


def like_tables(semantic: bool, big: bool) -> None:
    """Print the "papers like this" tables: known item on ICLR 1k and 27k, precision@10 on ICLR 1k."""
    names = [n for n in similar.SPACES if semantic or n not in SLOW_SPACES]
    iclr = load([ICLR]).papers.reset_index(drop=True)
    started = time.perf_counter()
    fitted = analyze(iclr)
    print(f"  (ICLR 1k: analysis fitted in {time.perf_counter() - started:.1f} s)")
    print(
        f"Papers like this, known item: ICLR 1k, {LIKE_QUERIES} TL;DRs as texts"
        f" (default: {similar.DEFAULT_SPACE})"
    )
    print(pd.DataFrame(like_known_item(fitted, {"TL;DR": tldr_queries(iclr)}, names)).to_string(index=False))
    print()
    print("Papers like this: precision@10 of shared primary_area, ICLR 1k")
    print(pd.DataFrame(like_precision(iclr, fitted, names)).to_string(index=False))
    if big and BIG.exists():
        papers = load([BIG]).papers.reset_index(drop=True)
        started = time.perf_counter()
        light = light_analysis(papers)
        print()
        print(f"  (27k: TF-IDF and LSA fitted in {time.perf_counter() - started:.1f} s)")
        print(f"Papers like this, known item: 27k, paraphrase sets of {LIKE_QUERIES} seeded abstracts")
        fast = [n for n in names if n not in SLOW_SPACES]
        print(pd.DataFrame(like_known_item(light, paraphrase_queries(papers), fast)).to_string(index=False))


def main() -> None:
    """Run the benchmarks and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="ICLR 1k only")
    parser.add_argument(
        "--sample", type=int, default=None, metavar="N", help="at 27k, N seeded title queries (default: all)"
    )
    parser.add_argument("--like-only", action="store_true", help='only the "papers like this" tables')
    parser.add_argument("--semantic", action="store_true", help="also the [semantic] MiniLM space (ICLR 1k)")
    args = parser.parse_args()
    if args.like_only:
        like_tables(args.semantic, not args.quick)
        return
    iclr = load([ICLR]).papers
    print("Known-item search: titles as queries over abstracts only")
    rows = known_item(iclr, "ICLR 1k")
    if not args.quick and BIG.exists():
        rows += known_item(load([BIG]).papers, "27k", args.sample)
    print(pd.DataFrame(rows).to_string(index=False))
    print()
    like_tables(args.semantic, not args.quick)


if __name__ == "__main__":
    main()

"""Recommendations from a reading list: which ranking brings a list's held-out papers back best.

A held-out test on the 1,000 ICLR 2026 submissions (``primary_area`` as the truth). For each area with at
least ``MIN_AREA`` papers and each seed, a list is made of ``--list-size`` papers of the area drawn at
random (default 10: a reading list a person keeps); the rest of the area is held out. Every paper not in
the list is ranked, and the figures say how many of the top 50 are held-out papers of the area:
precision@50 (the headline), recall@50 and MRR (1 / rank of the first held-out paper). Each figure is
the mean over areas; the spread is the standard deviation of that mean over seeds.

Methods (``x`` rows are L2-normalised):

- ``svm (arxiv-sanity-lite)``: its method exactly: a TF-IDF of title and abstract built as its
  ``compute.py`` builds it (word 1-2 grams, ``token_pattern`` of letters and digits, English stop words,
  accents stripped, sublinear tf, ``min_df=5, max_df=0.1, max_features=20000``; it also appends the
  authors' names, which ICLR submissions under review do not have) and ``LinearSVC(class_weight=
  "balanced", C=0.01, tol=1e-6, max_iter=10000)`` of the list against every other paper, ranked by
  ``decision_function``, as its ``serve.py`` does;
- ``centroid``: cosine to the mean of the list's vectors, in arxiv-sanity-lite's TF-IDF, in the
  dashboard's own TF-IDF (`TopicModel.tfidf_`), its LSA (`TopicModel.lsa_`) and the ``[semantic]``
  MiniLM embedding when installed;
- ``svm`` on the dashboard's TF-IDF, on LSA, on ``[tfidf | lsa]``;
- ``like these``: the mean of each paper's cosines to the list's papers, and the max (nearest list paper);
- mixes: reciprocal-rank fusion of the SVM and a centroid, and a sum of z-scored scores.

    python bench/recommend.py                 # list of 10, 5 seeds
    python bench/recommend.py --list-size 3   # the smallest list that is not a fallback
    python bench/recommend.py --semantic      # with the [semantic] MiniLM embedding (encodes 1,000
                                              # abstracts first: minutes on two shared cores)
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.preprocessing import normalize
from sklearn.svm import LinearSVC

from dashboard.analytics.analysis import paper_texts
from dashboard.analytics.topics import TopicModel
from dashboard.corpus import load
from dashboard.search import semantic

REPO = Path(__file__).resolve().parents[1]
ICLR = REPO.parent / "shared" / "corpora" / "iclr2026-openreview-1k" / "papers.jsonl"
MIN_AREA = 15
TOP = 50
RRF_K = 60  # reciprocal-rank fusion's usual constant

Scorer = Callable[[np.ndarray], np.ndarray]  # list rows -> a score per paper (higher is better)


def sanity_lite_tfidf(texts: list[str]) -> sp.csr_matrix:
    """arxiv-sanity-lite's ``compute.py`` vectoriser, fitted on these texts."""
    vectorizer = TfidfVectorizer(
        input="content",
        encoding="utf-8",
        decode_error="replace",
        strip_accents="unicode",
        lowercase=True,
        analyzer="word",
        stop_words="english",
        token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b",
        ngram_range=(1, 2),
        max_features=20000,
        norm="l2",
        use_idf=True,
        smooth_idf=True,
        sublinear_tf=True,
        max_df=0.1,
        min_df=5,
    )
    return sp.csr_matrix(vectorizer.fit_transform(texts).astype(np.float32))


def svm(x: np.ndarray | sp.csr_matrix, c: float = 0.01) -> Scorer:
    """arxiv-sanity-lite's ``svm_rank``: the list against every other paper, by decision function."""

    def score(rows: np.ndarray) -> np.ndarray:
        y = np.zeros(x.shape[0], dtype=np.float32)
        y[rows] = 1.0
        clf = LinearSVC(class_weight="balanced", verbose=False, max_iter=10000, tol=1e-6, C=c)
        clf.fit(x, y)
        return np.asarray(clf.decision_function(x), dtype=np.float64)

    return score


def _dense(values: object) -> np.ndarray:
    return np.asarray(values.toarray() if sp.issparse(values) else values, dtype=np.float64).ravel()  # type: ignore[union-attr]


def centroid(x: np.ndarray | sp.csr_matrix) -> Scorer:
    """Cosine to the (normalised) mean of the list's rows."""

    def score(rows: np.ndarray) -> np.ndarray:
        mean = np.asarray(x[rows].mean(axis=0)).reshape(1, -1)
        return _dense(x @ normalize(mean).T)

    return score


def like_these(x: np.ndarray | sp.csr_matrix, how: str = "mean") -> Scorer:
    """Each paper's cosines to the list's papers: their mean, or the nearest one's."""

    def score(rows: np.ndarray) -> np.ndarray:
        sims = x @ x[rows].T
        sims = np.asarray(sims.toarray() if sp.issparse(sims) else sims, dtype=np.float64)
        return sims.max(axis=1) if how == "max" else sims.mean(axis=1)

    return score


def _ranks(scores: np.ndarray) -> np.ndarray:
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(scores), dtype=np.float64)
    ranks[order] = np.arange(1, len(scores) + 1)
    return ranks


def rrf(*scorers: Scorer) -> Scorer:
    """Reciprocal-rank fusion: sum of 1 / (60 + rank) over the scorers."""

    def score(rows: np.ndarray) -> np.ndarray:
        return sum((1.0 / (RRF_K + _ranks(s(rows))) for s in scorers), np.zeros(1))

    return score


def zsum(*scorers: Scorer) -> Scorer:
    """Sum of the scorers' z-scores (each on its own scale)."""

    def score(rows: np.ndarray) -> np.ndarray:
        total = np.zeros(1)
        for s in scorers:
            values = s(rows)
            total = total + (values - values.mean()) / (values.std() or 1.0)
        return total

    return score


def evaluate(score: Scorer, areas: np.ndarray, lists: list[tuple[int, str, np.ndarray]]) -> dict[str, object]:
    """Precision@50, recall@50 and MRR of one method over every (seed, area, list)."""
    per_seed: dict[int, list[tuple[float, float, float]]] = {}
    began = time.perf_counter()
    for seed, area, rows in lists:
        values = score(rows).astype(np.float64)
        values[rows] = -np.inf  # never the list's own papers
        order = np.argsort(-values, kind="stable")[: len(values) - len(rows)]
        relevant = areas[order] == area
        held_out = int((areas == area).sum()) - len(rows)
        hits = int(relevant[:TOP].sum())
        first = int(np.argmax(relevant)) + 1 if relevant.any() else 0
        per_seed.setdefault(seed, []).append((hits / TOP, hits / held_out, 1.0 / first if first else 0.0))
    seconds = time.perf_counter() - began
    means = np.array([np.mean(v, axis=0) for v in per_seed.values()])  # seeds x 3
    return {
        "p50": float(means[:, 0].mean()),
        "p50_sd": float(means[:, 0].std()),
        "r50": float(means[:, 1].mean()),
        "mrr": float(means[:, 2].mean()),
        "ms": 1000 * seconds / len(lists),
    }


def make_lists(areas: np.ndarray, size: int, seeds: int) -> list[tuple[int, str, np.ndarray]]:
    """(seed, area, list rows) for every area with at least `MIN_AREA` papers and every seed."""
    names, counts = np.unique(areas, return_counts=True)
    kept = [name for name, count in zip(names, counts, strict=True) if count >= MIN_AREA]
    lists = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        for area in kept:
            members = np.flatnonzero(areas == area)
            chosen = size if size >= 1 else max(1, round(size * len(members)))
            lists.append((seed, str(area), np.sort(rng.choice(members, chosen, replace=False))))
    return lists


def main() -> None:
    """Print every method's precision@50 (and recall@50, MRR, ms per list) on ICLR 1k."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list-size", type=float, default=10, help="papers per list (a share if < 1)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--semantic", action="store_true", help="add the [semantic] MiniLM embedding")
    args = parser.parse_args()

    papers = load([ICLR]).papers
    keep = papers["primary_area"].fillna("").astype(str).str.len().to_numpy() > 0
    papers = papers[keep].reset_index(drop=True)
    texts = paper_texts(papers)
    areas = papers["primary_area"].astype(str).to_numpy()
    size = int(args.list_size) if args.list_size >= 1 else args.list_size
    lists = make_lists(areas, size, args.seeds)
    n_areas = len({area for _, area, _ in lists})

    began = time.perf_counter()
    asl = sanity_lite_tfidf(texts)
    asl_seconds = time.perf_counter() - began
    began = time.perf_counter()
    # The LSA and TF-IDF do not depend on the number of topics: a fixed k skips the auto-k search.
    model = TopicModel(n_topics=20, random_state=0).fit(texts)
    model_seconds = time.perf_counter() - began
    tfidf, lsa = sp.csr_matrix(model.tfidf_), np.asarray(model.lsa_, dtype=np.float64)
    stacked = sp.csr_matrix(sp.hstack([tfidf * np.sqrt(0.5), sp.csr_matrix(lsa * np.sqrt(0.5))]))

    methods: dict[str, Scorer] = {
        "svm (arxiv-sanity-lite)": svm(asl),
        "centroid tfidf (arxiv-sanity-lite's)": centroid(asl),
        "centroid tfidf (dashboard)": centroid(tfidf),
        "centroid lsa": centroid(lsa),
        "svm tfidf (dashboard)": svm(tfidf),
        "svm lsa": svm(lsa),
        "svm [tfidf | lsa]": svm(stacked),
        "centroid [tfidf | lsa] (= below 3)": centroid(stacked),
        "like these tfidf: mean": like_these(tfidf),
        "like these tfidf: max": like_these(tfidf, "max"),
        "like these lsa: max": like_these(lsa, "max"),
        "rrf svm(asl) + centroid lsa": rrf(svm(asl), centroid(lsa)),
        "rrf svm tfidf + centroid lsa": rrf(svm(tfidf), centroid(lsa)),
        "rrf centroid tfidf + centroid lsa": rrf(centroid(tfidf), centroid(lsa)),
        "z svm tfidf + centroid lsa": zsum(svm(tfidf), centroid(lsa)),
        "z centroid tfidf + centroid lsa": zsum(centroid(tfidf), centroid(lsa)),
    }
    if importlib.util.find_spec("dashboard.search.recommend") is not None:
        methods["dashboard.search.recommend (the default)"] = lambda rows: _default_scores(tfidf, lsa, rows)
    embed_seconds = None
    if args.semantic and semantic.available():
        encoder = semantic.Encoder()
        encoder.encode(texts[:8])
        began = time.perf_counter()
        embedded = encoder.encode(texts).astype(np.float64)
        embed_seconds = time.perf_counter() - began
        methods["centroid minilm"] = centroid(embedded)
        methods["svm minilm"] = svm(embedded)
        methods["rrf svm(asl) + centroid minilm"] = rrf(svm(asl), centroid(embedded))
        methods["z centroid tfidf + centroid minilm"] = zsum(centroid(tfidf), centroid(embedded))
        # The vectors an index or a small corpus's topics now keep: the SVM and centroid on them mixed
        # with the TF-IDF, as the default mixes LSA in.
        with_minilm = sp.csr_matrix(sp.hstack([tfidf * np.sqrt(0.5), sp.csr_matrix(embedded * np.sqrt(0.5))]))
        methods["svm [tfidf | minilm]"] = svm(with_minilm)
        methods["z svm tfidf + centroid minilm"] = zsum(svm(tfidf), centroid(embedded))
        methods["rrf svm tfidf + centroid minilm"] = rrf(svm(tfidf), centroid(embedded))
        if "dashboard.search.recommend (the default)" in methods:
            methods["the default with minilm for lsa"] = lambda rows: _default_scores(tfidf, embedded, rows)

    label = f"{size} papers" if isinstance(size, int) else f"{size:.0%} of the area"
    print(
        f"ICLR 1k: {len(papers):,} papers, {n_areas} areas with >= {MIN_AREA} papers, list = {label}, "
        f"{args.seeds} seeds ({len(lists)} lists); fitting: arxiv-sanity-lite TF-IDF {asl_seconds:.1f} s, "
        f"topic model (TF-IDF + LSA) {model_seconds:.1f} s"
        + (f", MiniLM {embed_seconds:.0f} s" if embed_seconds is not None else "")
    )
    print(f"\n{'method':<40} {'P@50':>6} {'± seeds':>8} {'R@50':>6} {'MRR':>6} {'ms/list':>8}")
    for name, scorer in methods.items():
        row = evaluate(scorer, areas, lists)
        print(
            f"{name:<40} {row['p50']:>6.3f} {row['p50_sd']:>8.3f} {row['r50']:>6.3f} "
            f"{row['mrr']:>6.3f} {row['ms']:>8.1f}"
        )


def _default_scores(tfidf: sp.csr_matrix, lsa: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The app's own ranking (`dashboard.search.recommend.recommend`), as a score per paper."""
    from dashboard.search.recommend import recommend

    ranked = recommend(tfidf, lsa, rows)
    scores = np.full(tfidf.shape[0], -np.inf)
    scores[ranked.rows] = ranked.scores
    return scores


if __name__ == "__main__":
    main()

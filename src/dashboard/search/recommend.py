"""Recommended for a reading list: every paper not in the list, ranked by how well it fits the list.

The method is arxiv-sanity-lite's, in the dashboard's own space: a linear SVM
(``LinearSVC(class_weight="balanced", C=0.01)``) of the list's papers against every other paper, on
each paper's TF-IDF row and LSA vector side by side (``[sqrt(1 - w) * tfidf | sqrt(w) * lsa]``, the
rows the topic model already holds, raw files and prebuilt index alike), ranked by the decision
function. Chosen by ``bench/recommend.py`` (a held-out test on ICLR 1k: a list drawn from one
OpenReview ``primary_area``, precision@50 of bringing back the rest of the area): it does at least as
well as arxiv-sanity-lite's own SVM on its TF-IDF and as a TF-IDF centroid, at every list size tried.

Where the topics were found in the sentence embedding (a corpus up to 2,000 papers by default,
`dashboard.search.topicspace`), those vectors take the LSA's place (`dense_rows`). On ICLR 1k
(``bench/recommend.py --semantic``, 5 seeds) that lifted precision@50 from 0.287 to 0.296 and recall@50
from 0.437 to 0.456 for a list of 10, and from 0.254 to 0.265 and 0.321 to 0.342 for a list of 3. For a
list of 2 ("papers like these") precision@50 fell from 0.231 to 0.220 while the first right paper came
earlier (MRR 0.609 to 0.689); one space for both keeps "closest to" and the ranking in agreement.
An index that keeps embeddings beside LSA topics (``--semantic``) keeps the LSA here: its cost at a
million papers (384 dimensions against 40 in every click's scoring) was not measured.

A list of fewer than `MIN_LIST` papers is too small to fit a classifier to: the ranking falls back to
"papers like these", the mean cosine to the list's papers in the same space, and says so
(`Recommendations.fallback`).

`explain` says why a paper is recommended: the terms it shares with the list's papers (weighted by
both sides' TF-IDF) and the list's paper closest to it.

>>> import numpy as np, scipy.sparse as sp
>>> tfidf = sp.csr_matrix(np.eye(4))
>>> lsa = np.eye(4)
>>> ranked = recommend(tfidf, lsa, [0])
>>> ranked.fallback, 0 in ranked.rows.tolist(), len(ranked.rows)
(True, False, 3)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from dashboard.analytics import representations

MIN_LIST = 3  # fewer papers than this: "papers like these" instead of a classifier
LSA_WEIGHT = 0.5  # share of the LSA part in a stacked row's squared length (the rest is TF-IDF's)
SVM_C = 0.01  # arxiv-sanity-lite's default regularisation
# Above this many other papers, the classifier is fitted on a seeded sample of them (every list paper
# is kept); every paper is still scored. A sample this size changes the ranking little and keeps a
# click's cost flat from a few thousand papers to a million.
MAX_NEGATIVES = 10_000
FALLBACK_LABEL = "papers like these"
FITTED_LABEL = "fitted to the list"


@dataclass(frozen=True)
class Recommendations:
    """Every paper not in the list, best first: ``rows`` (corpus positions) and their ``scores``.

    ``list_rows`` are the list's papers found in the corpus (sorted); ``fallback`` is True when they
    were too few (< `MIN_LIST`) for a classifier and the order is "papers like these" (mean cosine).
    Scores are the SVM's decision values (higher fits better; they can be negative) or, in the
    fallback, cosines in 0..1.
    """

    rows: np.ndarray
    scores: np.ndarray
    list_rows: np.ndarray
    fallback: bool

    @property
    def method(self) -> str:
        """How the order was made, for people: `FITTED_LABEL` or `FALLBACK_LABEL`."""
        return FALLBACK_LABEL if self.fallback else FITTED_LABEL

    def score_of(self, n_papers: int) -> np.ndarray:
        """A score per corpus row (NaN for the list's own papers), e.g. to order a filtered table."""
        scores = np.full(n_papers, np.nan)
        scores[self.rows] = self.scores
        return scores


@dataclass(frozen=True)
class Reason:
    """Why one paper is recommended: terms it shares with the list, and the list's closest paper.

    ``closest`` is a corpus row of the list (-1 when the paper is like none of them).
    """

    terms: tuple[str, ...]
    closest: int
    similarity: float

    def text(self, closest_title: str = "") -> str:
        """One line for a table cell: ``shared: a, b, c · closest: <title>``."""
        parts = []
        if self.terms:
            parts.append("shared: " + ", ".join(self.terms))
        if self.closest >= 0 and closest_title.strip():
            parts.append("closest: " + " ".join(closest_title.split()))
        return " · ".join(parts)


def _checked_rows(rows: Iterable[int], n_papers: int) -> np.ndarray:
    chosen = np.unique(np.asarray(list(rows), dtype=np.int64))
    if len(chosen) and (chosen[0] < 0 or chosen[-1] >= n_papers):
        raise ValueError(f"list rows must be 0..{n_papers - 1}, got {chosen[0]}..{chosen[-1]}")
    return chosen


def dense_rows(model: Any) -> np.ndarray:
    """The dense vectors stacked beside a fitted model's TF-IDF rows: its papers' sentence embeddings
    where its topics were found in them (``semantic_``, in an embedding space), else its LSA (see the
    module docstring for the measurement)."""
    vectors = getattr(model, "semantic_", None)
    space = representations.REPRESENTATIONS.get(str(getattr(model, "representation_", "")))
    if vectors is not None and space is not None and space.external:
        return np.asarray(vectors)
    return np.asarray(model.lsa_)


def _dense(values: object) -> np.ndarray:
    array = values.toarray() if sp.issparse(values) else values  # type: ignore[attr-defined]
    return np.asarray(array, dtype=np.float64)


def _ordered(scores: np.ndarray, excluded: np.ndarray) -> np.ndarray:
    """Rows best first (ties: corpus order), the excluded rows left out."""
    keep = np.ones(len(scores), dtype=bool)
    keep[excluded] = False
    candidates = np.flatnonzero(keep)
    return candidates[np.lexsort((candidates, -scores[candidates]))]


def likeness(tfidf: sp.spmatrix, lsa: np.ndarray, rows: np.ndarray, weight: float = LSA_WEIGHT) -> np.ndarray:
    """papers x list: cosine of every paper with each list paper in the stacked space (a weighted sum
    of the TF-IDF and the LSA cosines)."""
    lexical = _dense(tfidf @ tfidf[rows].T)
    semantic = np.asarray(lsa, dtype=np.float64) @ np.asarray(lsa[rows], dtype=np.float64).T
    return (1.0 - weight) * lexical + weight * semantic


def _training_rows(n_papers: int, positives: np.ndarray, max_negatives: int, random_state: int) -> np.ndarray:
    others = np.setdiff1d(np.arange(n_papers), positives, assume_unique=True)
    if len(others) > max_negatives:
        others = np.sort(np.random.default_rng(random_state).choice(others, max_negatives, replace=False))
    return np.sort(np.concatenate([positives, others]))


def _svm_scores(
    tfidf: sp.csr_matrix,
    lsa: np.ndarray,
    positives: np.ndarray,
    *,
    weight: float,
    c: float,
    max_negatives: int,
    random_state: int,
) -> np.ndarray:
    from sklearn.svm import LinearSVC

    lexical_scale, semantic_scale = np.sqrt(1.0 - weight), np.sqrt(weight)
    train = _training_rows(tfidf.shape[0], positives, max_negatives, random_state)
    # Only the training rows are stacked: at a million papers the LSA part alone would be 40 M cells.
    stacked = sp.hstack(
        [
            tfidf[train] * lexical_scale,
            sp.csr_matrix(np.asarray(lsa[train], dtype=np.float64) * semantic_scale),
        ],
        format="csr",
    )
    labels = np.isin(train, positives).astype(np.int8)
    classifier = LinearSVC(class_weight="balanced", C=c, tol=1e-6, max_iter=10_000, random_state=random_state)
    classifier.fit(stacked, labels)
    coef = classifier.coef_.ravel()
    n_terms = tfidf.shape[1]
    lexical = _dense(tfidf @ (coef[:n_terms] * lexical_scale).reshape(-1, 1)).ravel()
    semantic = np.asarray(lsa, dtype=np.float64) @ (coef[n_terms:] * semantic_scale)
    return lexical + semantic + float(classifier.intercept_[0])


def recommend(
    tfidf: sp.spmatrix,
    lsa: np.ndarray,
    rows: Iterable[int],
    *,
    weight: float = LSA_WEIGHT,
    c: float = SVM_C,
    max_negatives: int = MAX_NEGATIVES,
    random_state: int = 0,
) -> Recommendations:
    """Every paper not in the list (corpus ``rows``), ranked by how well it fits the list.

    ``tfidf`` (papers x terms) and ``lsa`` (papers x dims) are the topic model's L2-normalised rows
    (`TopicModel.tfidf_`, ``lsa_``). With `MIN_LIST` list papers or more, a linear SVM of the list
    against the rest; below, "papers like these" (``fallback``). An empty list recommends nothing.
    The same input gives the same order (seeded; ties in corpus order).
    """
    matrix = sp.csr_matrix(tfidf)
    n_papers = matrix.shape[0]
    if np.asarray(lsa).shape[0] != n_papers:
        raise ValueError(f"tfidf has {n_papers:,} rows but lsa has {np.asarray(lsa).shape[0]:,}")
    positives = _checked_rows(rows, n_papers)
    empty = np.zeros(0, dtype=np.int64)
    if len(positives) == 0:
        return Recommendations(empty, np.zeros(0), positives, fallback=True)
    fallback = len(positives) < MIN_LIST or len(positives) == n_papers
    if fallback:
        scores = likeness(matrix, lsa, positives, weight).mean(axis=1)
    else:
        scores = _svm_scores(
            matrix, lsa, positives, weight=weight, c=c, max_negatives=max_negatives, random_state=random_state
        )
    order = _ordered(scores, positives)
    return Recommendations(order, scores[order], positives, fallback)


def _distinct_terms(candidates: Sequence[str], n: int) -> tuple[str, ...]:
    """The first ``n`` terms, skipping a word already inside a chosen phrase and a phrase made of
    chosen words (``graph`` after ``graph neural`` says nothing new)."""
    chosen: list[str] = []
    for term in candidates:
        words = set(term.split())
        if any(words <= set(other.split()) or set(other.split()) <= words for other in chosen):
            continue
        chosen.append(term)
        if len(chosen) == n:
            break
    return tuple(chosen)


def explain(
    tfidf: sp.spmatrix,
    lsa: np.ndarray,
    terms: Sequence[str],
    list_rows: np.ndarray,
    rows: Sequence[int] | np.ndarray,
    *,
    n_terms: int = 3,
    weight: float = LSA_WEIGHT,
) -> list[Reason]:
    """Why each of ``rows`` fits the list: the ``n_terms`` terms it shares with the list's papers (by
    the product of its TF-IDF weight and the list's summed weight) and the list's closest paper.

    Asked only for the rows on show: the cost grows with ``len(rows) x len(list_rows)``.
    """
    matrix = sp.csr_matrix(tfidf)
    wanted = np.asarray(list(rows), dtype=np.int64)
    members = np.asarray(list_rows, dtype=np.int64)
    if len(wanted) == 0:
        return []
    if len(members) == 0:
        return [Reason((), -1, 0.0) for _ in wanted]
    list_weight = np.asarray(matrix[members].sum(axis=0)).ravel()
    shared = sp.csr_matrix(matrix[wanted].multiply(list_weight.reshape(1, -1)))
    closeness = (1.0 - weight) * _dense(matrix[wanted] @ matrix[members].T) + weight * (
        np.asarray(lsa[wanted], dtype=np.float64) @ np.asarray(lsa[members], dtype=np.float64).T
    )
    reasons = []
    for i in range(len(wanted)):
        start, end = shared.indptr[i], shared.indptr[i + 1]
        values, columns = shared.data[start:end], shared.indices[start:end]
        order = np.lexsort((columns, -values))
        candidates = [str(terms[columns[j]]) for j in order if values[j] > 0][: 4 * n_terms]
        best = int(np.argmax(closeness[i]))
        similarity = float(closeness[i, best])
        reasons.append(
            Reason(
                _distinct_terms(candidates, n_terms), int(members[best]) if similarity > 0 else -1, similarity
            )
        )
    return reasons

"""A tree over the fitted topics, so any number of topics up to the fitted one is a cut, not a refit.

The fitted topics are the leaves. They are merged two at a time by Ward's criterion on their centroids
in the space the clustering saw (the model's embedding), each weighted by its number of papers: the
pair whose merge adds least to the k-means objective goes first, so every cut is the partition a
k-means with fewer centres would come close to, and cuts are nested by construction (the cut at ``k``
merges two groups of the cut at ``k + 1``). A group's label and top terms come from counts: the summed
TF-IDF mass of its leaves (outlier papers left out), scored by class-based TF-IDF as the fitted topics
are (`mass_scores`, `make_labels`), never from a refit.

This module needs NumPy only (no scikit-learn), so an app that opens a prebuilt index can cut it.

>>> tree = build_tree(np.array([0, 0, 1, 2]), np.eye(4, 3), np.array([[1, 0], [1, 0], [0.9, 0.1], [0, 1]]),
...                   3, np.array(["graph", "node", "image"]))
>>> tree.cut(2).tolist()
[0, 0, 1]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dashboard.schema import OUTLIER_TOPIC

LABEL_SEPARATOR = " · "
TOP_TERMS = 10


def _l1_rows(matrix: np.ndarray) -> np.ndarray:
    totals = matrix.sum(axis=1, keepdims=True)
    return np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0)


def mass_scores(mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class-based TF-IDF from each topic's summed term mass (topics x terms): ``(scores, shares)``.

    ``shares`` is each term's share of its mass per topic. `topics.class_tfidf` is this over the
    papers' TF-IDF rows; a tree cut sums its leaves' rows first.
    """
    mass = np.asarray(mass, dtype=np.float64)
    term_mass = mass.sum(axis=0)
    average_topic_mass = mass.sum() / max(mass.shape[0], 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        idf = np.log1p(np.where(term_mass > 0, average_topic_mass / term_mass, 0.0))
        shares = np.where(term_mass > 0, mass / term_mass, 0.0)
    return _l1_rows(mass) * idf, shares


def top_positive(values: np.ndarray, n: int) -> np.ndarray:
    """The indices of the ``n`` largest positive ``values``, largest first, ties in index order.

    The same as ``[i for i in np.argsort(-values, kind="stable")[:n] if values[i] > 0]`` without sorting
    the whole row (a partition first: a cut labels tens of topics over tens of thousands of terms).

    >>> top_positive(np.array([0.0, 2.0, 1.0, 2.0, -1.0]), 2).tolist()
    [1, 3]
    """
    positive = np.flatnonzero(values > 0)
    if len(positive) > n:
        nth_largest = np.partition(values[positive], len(positive) - n)[len(positive) - n]
        positive = positive[values[positive] >= nth_largest]
    return positive[np.argsort(-values[positive], kind="stable")][:n]


def _overlaps(term: str, chosen: Sequence[str]) -> bool:
    words = set(term.split())
    return any(words & set(other.split()) for other in chosen)


def make_labels(
    scores: np.ndarray,
    shares: np.ndarray,
    terms: np.ndarray,
    order: Sequence[int] | None = None,
    n_terms: int = 3,
) -> list[str]:
    """A readable label per topic: two or three distinctive, non-overlapping terms joined by " · ".

    A term scores by its weight in the topic times the square root of the share of its use that falls in
    this topic, so a term every topic uses ("language model" in an LLM-heavy corpus) rarely heads a label;
    a term already heading another label is penalised; terms sharing a word with a chosen one are skipped
    ("diffusion" after "diffusion model"). Labels are made unique.

    >>> terms = np.array(["graph", "graph neural", "molecule"])
    >>> make_labels(np.array([[3.0, 2.0, 1.0]]), np.ones((1, 3)), terms)
    ['graph · molecule']
    """
    order = list(range(scores.shape[0])) if order is None else list(order)
    used_heads: Counter[str] = Counter()
    labels: dict[int, str] = {}
    seen: set[str] = set()
    for topic in order:
        merit = scores[topic] * np.sqrt(shares[topic])
        candidates = [int(i) for i in top_positive(merit, 30)]
        penalised = sorted(candidates, key=lambda i: -merit[i] * 0.5 ** used_heads[str(terms[i])])
        chosen: list[str] = []
        best = 0.0
        for i in penalised:
            term = str(terms[i])
            if _overlaps(term, chosen):
                continue
            value = merit[i] * 0.5 ** used_heads[term]
            if chosen and len(chosen) >= 2 and value < 0.35 * best:
                break
            best = max(best, value)
            chosen.append(term)
            if len(chosen) == n_terms:
                break
        if chosen:
            used_heads[chosen[0]] += 1
        label = LABEL_SEPARATOR.join(chosen) or f"Topic {topic}"
        extra = iter(str(terms[i]) for i in penalised if str(terms[i]) not in chosen)
        while label in seen:
            label = label + LABEL_SEPARATOR + next(extra, str(topic))
        seen.add(label)
        labels[topic] = label
    return [labels[t] for t in range(scores.shape[0])]


def top_terms(scores: np.ndarray, terms: np.ndarray, n: int = TOP_TERMS) -> list[list[tuple[str, float]]]:
    """Per topic, its ``n`` best terms as (term, weight) pairs, the best weighing 1."""
    out = []
    for row in scores:
        best = top_positive(row, n).tolist()
        peak = float(row[best[0]]) if best else 1.0
        out.append([(str(terms[i]), round(float(row[i]) / peak, 4)) for i in best])
    return out


def ward_linkage(centroids: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Agglomerative merges of weighted points by Ward's criterion, as a SciPy linkage matrix.

    Row ``i`` is ``[a, b, height, members]``: nodes ``a`` and ``b`` (leaves are ``0..n-1``, the node made
    by row ``i`` is ``n + i``) merge at ``height = sqrt(2 * increase of the within-group sum of
    squares)``; ``members`` counts leaves. Heights never decrease (Ward is a reducible linkage), so the
    rows are in merge order. Ties go to the pair of lowest node numbers.
    """
    n = len(centroids)
    means = {i: np.asarray(centroids[i], dtype=np.float64) for i in range(n)}
    weight = {i: max(float(sizes[i]), 1e-9) for i in range(n)}
    leaves = dict.fromkeys(range(n), 1)
    rows = []
    for step in range(n - 1):
        alive = sorted(means)
        stacked = np.vstack([means[a] for a in alive])
        w = np.array([weight[a] for a in alive])
        distance = ((stacked[:, None, :] - stacked[None, :, :]) ** 2).sum(axis=2)
        cost = (w[:, None] * w[None, :]) / (w[:, None] + w[None, :]) * distance
        cost[np.tril_indices(len(alive))] = np.inf
        i, j = np.unravel_index(int(np.argmin(cost)), cost.shape)
        a, b = alive[i], alive[j]
        node = n + step
        total = weight[a] + weight[b]
        means[node] = (weight[a] * means[a] + weight[b] * means[b]) / total
        weight[node] = total
        leaves[node] = leaves[a] + leaves[b]
        rows.append([a, b, float(np.sqrt(2 * max(cost[i, j], 0.0))), leaves[node]])
        for gone in (a, b):
            del means[gone], weight[gone]
    linkage = np.asarray(rows, dtype=np.float64).reshape(-1, 4)
    # Rounding can make a later merge a hair lower than an earlier one: keep heights monotone.
    if len(linkage):
        linkage[:, 2] = np.maximum.accumulate(linkage[:, 2])
    return linkage


@dataclass(frozen=True)
class TopicCut:
    """The topics of a cut at ``k``: which group each fitted topic joins, and each group's description."""

    k: int
    group_of: np.ndarray  # per fitted topic (leaf), its group 0..k-1 (group 0 has the most papers)
    labels: list[str]
    top_terms: list[list[tuple[str, float]]]
    sizes: np.ndarray  # papers per group (outliers left out)

    def members(self, group: int) -> list[int]:
        """The fitted topics merged into ``group``."""
        return [int(t) for t in np.flatnonzero(self.group_of == group)]

    def paper_topics(self, fitted: np.ndarray) -> np.ndarray:
        """Every paper's topic under this cut, from its fitted topic (outliers stay -1)."""
        fitted = np.asarray(fitted)
        return np.where(fitted >= 0, self.group_of[np.clip(fitted, 0, None)], OUTLIER_TOPIC).astype(np.int64)


@dataclass(frozen=True)
class TopicTree:
    """The merge tree over ``n_leaves`` fitted topics and the counts that label any cut of it.

    ``linkage`` is SciPy's format (`ward_linkage`); ``mass`` is topics x terms (summed TF-IDF of each
    fitted topic's papers, outliers left out); ``sizes`` are papers per fitted topic; ``centroids``
    their mean vectors in the clustering's space; ``terms`` the vocabulary of ``mass``.
    """

    linkage: np.ndarray
    mass: np.ndarray
    sizes: np.ndarray
    centroids: np.ndarray
    terms: np.ndarray

    @property
    def n_leaves(self) -> int:
        """How many fitted topics the tree joins (the most topics a cut can give)."""
        return int(self.mass.shape[0])

    def cut(self, k: int) -> np.ndarray:
        """Per fitted topic, its group when the tree is cut into ``k`` groups (numbered by size, largest 0).

        Exactly ``min(k, n_leaves)`` groups (at least one); the first ``n_leaves - k`` merges are applied.
        """
        n = self.n_leaves
        k = int(np.clip(k, 1, max(n, 1)))
        parent = list(range(2 * n))

        def root(node: int) -> int:
            while parent[node] != node:
                parent[node] = parent[parent[node]]
                node = parent[node]
            return node

        for step in range(n - k):
            a, b = int(self.linkage[step, 0]), int(self.linkage[step, 1])
            parent[root(a)] = n + step
            parent[root(b)] = n + step
        roots = [root(leaf) for leaf in range(n)]
        size_of: dict[int, float] = {}
        for leaf, r in enumerate(roots):
            size_of[r] = size_of.get(r, 0.0) + float(self.sizes[leaf])
        distinct = sorted(size_of, key=lambda r: (-size_of[r], roots.index(r)))
        number = {r: i for i, r in enumerate(distinct)}
        return np.array([number[r] for r in roots], dtype=np.int64)

    def describe(self, k: int) -> TopicCut:
        """The cut at ``k`` with every group's label and top terms recomputed from the summed counts."""
        group_of = self.cut(k)
        n_groups = int(group_of.max()) + 1 if len(group_of) else 0
        merge = sp.csr_matrix(
            (np.ones(len(group_of)), (group_of, np.arange(len(group_of)))), shape=(n_groups, len(group_of))
        )
        mass = np.asarray(merge @ self.mass)
        sizes = np.asarray(merge @ self.sizes.astype(np.float64)).astype(np.int64)
        scores, shares = mass_scores(mass)
        order = list(np.argsort(-sizes, kind="stable"))
        labels = make_labels(scores, shares, self.terms, order)
        return TopicCut(n_groups, group_of, labels, top_terms(scores, self.terms), sizes)

    def node_labels(self) -> list[str]:
        """A label for every node (leaves, then one per merge), each from its own summed counts."""
        n = self.n_leaves
        members: list[list[int]] = [[leaf] for leaf in range(n)]
        for a, b in self.linkage[:, :2].astype(int):
            members.append(members[a] + members[b])
        merge = sp.csr_matrix(
            (
                np.ones(sum(len(m) for m in members)),
                (np.repeat(np.arange(len(members)), [len(m) for m in members]), np.concatenate(members)),
            ),
            shape=(len(members), n),
        )
        mass = np.asarray(merge @ self.mass)
        scores, shares = mass_scores(mass)
        return make_labels(scores, shares, self.terms, n_terms=2)


def build_tree(
    labels: np.ndarray,
    doc_terms: sp.spmatrix | np.ndarray,
    vectors: np.ndarray,
    n_topics: int,
    terms: np.ndarray,
) -> TopicTree:
    """The tree over ``n_topics`` fitted topics from every paper's topic (``labels``, -1 outlier), its
    TF-IDF row (``doc_terms``) and its vector in the clustering's space (``vectors``).

    One pass over the papers (two sparse products); the merges themselves cost nothing next to it.
    """
    labels = np.asarray(labels)
    keep = np.flatnonzero(labels >= 0)
    membership = sp.csr_matrix(
        (np.ones(len(keep), dtype=np.float64), (labels[keep], keep)), shape=(n_topics, len(labels))
    )
    mass = np.asarray((membership @ sp.csr_matrix(doc_terms)).todense(), dtype=np.float64)
    sizes = np.bincount(labels[keep], minlength=n_topics).astype(np.int64)
    sums = np.asarray(membership @ np.asarray(vectors, dtype=np.float32), dtype=np.float64)
    centroids = sums / np.maximum(sizes, 1)[:, None]
    return TopicTree(ward_linkage(centroids, sizes), mass, sizes, centroids, np.asarray(terms, dtype=object))

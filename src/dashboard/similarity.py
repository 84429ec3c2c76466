"""Similar papers, shared and distinctive terms of two abstracts, and the 2-D map of all papers.

>>> result = compare_terms("Graph neural networks for molecules.", "Graph transformers for proteins.")
>>> result.shared, result.only_a, result.only_b
(['graph'], ['graph neural', 'molecule'], ['graph transformer', 'transformer', 'protein'])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dashboard.tokens import ngrams_with_spans

SHARED = "shared"
DISTINCT = "distinct"


# -- similar papers ---------------------------------------------------------------------------------
def cosine_to(vectors: np.ndarray | sp.spmatrix, row: int) -> np.ndarray:
    """Cosine similarity of every row of ``vectors`` (L2-normalised rows) with row ``row``."""
    target = vectors[row]
    values = vectors @ target.T
    return np.asarray(values.todense() if sp.issparse(values) else values, dtype=np.float64).ravel()


def most_similar(vectors: np.ndarray | sp.spmatrix, row: int, n: int = 5) -> list[tuple[int, float]]:
    """The ``n`` rows most similar to ``row`` (itself excluded) as ``(row, cosine)``, best first.

    Ties are broken by row order, so the answer is stable.
    """
    similarity = cosine_to(vectors, row)
    similarity[row] = -np.inf
    n = max(0, min(n, len(similarity) - 1))
    if n == 0:
        return []
    candidates = (
        np.argpartition(-similarity, n - 1)[:n] if n < len(similarity) else np.arange(len(similarity))
    )
    ranked = sorted(candidates, key=lambda i: (-similarity[i], i))[:n]
    return [(int(i), float(similarity[i])) for i in ranked]


def similarity_matrix(vectors: np.ndarray | sp.spmatrix, rows: Sequence[int]) -> np.ndarray:
    """Pairwise cosine similarities of the given rows (a small square matrix, 1 on the diagonal)."""
    chosen = vectors[list(rows)]
    values = chosen @ chosen.T
    matrix = np.asarray(values.todense() if sp.issparse(values) else values, dtype=np.float64)
    norms = np.sqrt(np.clip(np.diag(matrix), 0, None))
    # Rows are L2-normalised already; an empty abstract has norm 0 and is similar to nothing, not even itself.
    np.fill_diagonal(matrix, np.where(norms > 0, 1.0, 0.0))
    return np.clip(matrix, 0.0, 1.0)


# -- comparing two abstracts --------------------------------------------------------------------------
@dataclass(frozen=True)
class TermComparison:
    """Shared and distinctive terms of two texts, with spans (start, end, "shared"|"distinct") to highlight.

    Spans never overlap and are in text order; a shared two-word phrase is one span.
    """

    shared: list[str]
    only_a: list[str]
    only_b: list[str]
    spans_a: list[tuple[int, int, str]]
    spans_b: list[tuple[int, int, str]]


def _ranked(counts: Counter[str], first_seen: dict[str, int], keep: set[str]) -> list[str]:
    return sorted(keep, key=lambda term: (-counts[term], first_seen[term], term))


def _spans(grams: list[tuple[str, int, int]], shared: set[str]) -> list[tuple[int, int, str]]:
    """Non-overlapping highlight spans: shared bigrams first, then single words shared or distinct."""
    taken: list[tuple[int, int, str]] = [(s, e, SHARED) for t, s, e in grams if " " in t and t in shared]
    taken.sort()
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in taken:  # overlapping shared phrases ("graph neural", "neural network") merge
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), kind)
        else:
            merged.append((start, end, kind))
    covered = merged[:]
    for term, start, end in grams:
        if " " in term or any(s <= start < e for s, e, _ in covered):
            continue
        merged.append((start, end, SHARED if term in shared else DISTINCT))
    return sorted(merged)


def compare_terms(text_a: str, text_b: str) -> TermComparison:
    """Terms (words and two-word phrases, stop words dropped) the two texts share, and those only one uses."""
    grams_a = ngrams_with_spans(text_a, (1, 2))
    grams_b = ngrams_with_spans(text_b, (1, 2))
    counts_a = Counter(t for t, _, _ in grams_a)
    counts_b = Counter(t for t, _, _ in grams_b)
    first_a = {t: s for t, s, _ in reversed(grams_a)}
    first_b = {t: s for t, s, _ in reversed(grams_b)}
    shared = set(counts_a) & set(counts_b)
    # A shared word inside a shared phrase says nothing new: list the phrase.
    in_shared_phrases = {word for term in shared if " " in term for word in term.split()}
    listed_shared = {t for t in shared if " " in t or t not in in_shared_phrases}
    total = counts_a + counts_b
    first = {**first_b, **first_a}
    return TermComparison(
        shared=_ranked(total, first, listed_shared),
        only_a=_ranked(counts_a, first_a, set(counts_a) - shared),
        only_b=_ranked(counts_b, first_b, set(counts_b) - shared),
        spans_a=_spans(grams_a, shared),
        spans_b=_spans(grams_b, shared),
    )


# -- the map ------------------------------------------------------------------------------------------
def _classical_mds(distances: np.ndarray) -> np.ndarray:
    """2-D classical (Torgerson) MDS of a small distance matrix, signs fixed so the result is stable."""
    n = distances.shape[0]
    if n == 1:
        return np.zeros((1, 2))
    centring = np.eye(n) - np.ones((n, n)) / n
    gram = -0.5 * centring @ (distances**2) @ centring
    values, vectors = np.linalg.eigh(gram)
    order = np.argsort(values)[::-1][:2]
    coords = vectors[:, order] * np.sqrt(np.clip(values[order], 0, None))
    if coords.shape[1] < 2:
        coords = np.hstack([coords, np.zeros((n, 2 - coords.shape[1]))])
    for axis in range(2):  # eigenvectors have no sign: make the largest coordinate positive
        if coords[np.argmax(np.abs(coords[:, axis])), axis] < 0:
            coords[:, axis] *= -1
    return coords


def _separate(places: np.ndarray, radius: np.ndarray, gap: float, rounds: int = 300) -> np.ndarray:
    """Push apart discs (centre ``places``, ``radius``) that overlap, keeping their layout otherwise."""
    places = places.copy()
    n = len(places)
    if n < 2:
        return places
    # A fixed, distinct direction for discs that sit exactly on top of each other.
    fallback = np.stack([np.cos(np.arange(n) * 2.399963), np.sin(np.arange(n) * 2.399963)], axis=1)
    for _ in range(rounds):
        delta = places[:, None, :] - places[None, :, :]
        distance = np.sqrt((delta**2).sum(-1))
        need = radius[:, None] + radius[None, :] + gap
        overlap = np.clip(need - distance, 0, None)
        np.fill_diagonal(overlap, 0)
        if overlap.max() < 1e-6:
            break
        direction = np.where(
            distance[..., None] > 1e-9,
            delta / np.maximum(distance, 1e-9)[..., None],
            fallback[:, None, :] - fallback[None, :, :],
        )
        places += (
            0.5 * (overlap[..., None] * direction).sum(axis=1) / np.maximum((overlap > 0).sum(1), 1)[:, None]
        )
    return places


def paper_map(embedding: np.ndarray, labels: np.ndarray, doc_topic: np.ndarray) -> np.ndarray:
    """2-D coordinates of every paper: one disc per topic, similar topics near each other, in linear time.

    Topics are placed by classical MDS of their centroids' cosine distances and then pushed apart until
    their discs (area proportional to size) do not overlap, so every topic is visibly its own region.
    Within its disc a paper's angle comes from a 2-D projection of where it lies in the topic (similar
    papers side by side) and its distance from the centre from how typical it is (core papers in the
    middle, fringe papers and outliers at the edge). Deterministic: no random initialisation.
    ``labels`` may hold -1 (outliers): they go to the edge of their nearest topic's disc.
    """
    from sklearn.preprocessing import normalize  # here: opening a prebuilt index needs no scikit-learn

    n_docs, n_topics = doc_topic.shape
    if n_docs == 0:
        return np.zeros((0, 2))
    hard = np.where(labels >= 0, labels, np.argmax(doc_topic, axis=1))
    centroids = normalize(np.vstack([embedding[hard == t].sum(axis=0) for t in range(n_topics)]))
    sizes = np.bincount(hard, minlength=n_topics)
    radius = np.sqrt(np.maximum(sizes, 1) / max(sizes.max(), 1))
    places = _classical_mds(np.sqrt(np.clip(2 - 2 * centroids @ centroids.T, 0, None)))
    # Pull far-out topics in (distance from the middle to the power 0.6) so a few remote topics do not
    # leave the rest crowded in a corner; the order of topics around the middle is kept.
    places -= places.mean(axis=0)
    reach = np.sqrt((places**2).sum(axis=1, keepdims=True))
    places = places * np.where(reach > 1e-12, np.maximum(reach, 1e-12) ** -0.4, 0.0)
    if n_topics > 1:
        # Scale so the discs cover about a third of the map, then push overlapping discs apart.
        extent = float((places.max(axis=0) - places.min(axis=0)).max())
        places *= np.sqrt(np.pi * (radius**2).sum() / 0.35) / max(extent, 1e-9)
        places = _separate(places, radius, gap=0.15 * radius.mean())
    coords = np.zeros((n_docs, 2))
    for topic in range(n_topics):
        members = np.flatnonzero(hard == topic)
        if len(members) == 0:
            continue
        vectors = embedding[members]
        residual = vectors - centroids[topic] * (vectors @ centroids[topic])[:, None]
        if len(members) > 2 and residual.shape[1] >= 2:
            _, _, axes = np.linalg.svd(residual, full_matrices=False)
            local = residual @ axes[:2].T
            for axis in range(2):  # fix the sign of each axis so the picture is stable
                if axes[axis][np.argmax(np.abs(axes[axis]))] < 0:
                    local[:, axis] *= -1
            angle = np.arctan2(local[:, 1], local[:, 0])
        else:
            angle = np.arange(len(members)) * 2.399963  # the golden angle spreads a handful evenly
        typical = vectors @ centroids[topic]
        typical = np.where(labels[members] < 0, -np.inf, typical)  # outliers on the rim
        rank = np.empty(len(members))
        rank[np.lexsort((members, -typical))] = np.arange(len(members))
        distance = radius[topic] * np.sqrt((rank + 0.5) / len(members))
        coords[members] = places[topic] + distance[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    return coords

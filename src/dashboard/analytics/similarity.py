"""Similar papers, shared and distinctive terms of two abstracts, and the 2-D map of all papers.

>>> result = compare_terms("Graph neural networks for molecules.", "Graph transformers for proteins.")
>>> result.shared, result.only_a, result.only_b
(['graph'], ['graph neural', 'molecule'], ['graph transformer', 'protein'])
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dashboard.text.tokens import ngrams_with_spans

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
# Words that say how an abstract argues, not what it is about, beyond `tokens.STOP_WORDS`: Compare listed
# "share certain" and "alleviate" among a paper's distinctive terms. A term with one of these words is
# never distinctive (nor shared): it is not what one paper is about.
COMPARE_STOP_WORDS: frozenset[str] = frozenset((
    "ability", "able", "accelerate", "contradict", "contradicts", "deteriorate", "deteriorates",
    "receive", "denote", "denotes", "treat", "treats", "underpin", "underpins", "understood",
    "accept", "account", "achievable", "act", "actual", "additional",
    "adequate", "advantageously", "aggregate", "alike", "alleviate", "alleviates", "alleviating", "amount",
    "appear", "appears", "appealing", "area", "arise", "arises", "assess", "assessed", "assessment",
    "associated", "attention_to", "attractive", "aware", "bottleneck", "broadly", "certain", "challenged",
    "change", "choice", "circumvent", "class", "common", "concern", "concrete", "condition", "confirm",
    "confirms", "crucially", "deep", "demand", "demanding", "depend", "depends", "desirable", "determine",
    "dubbed", "easy", "easily", "efficacious", "emphasize", "end", "enormous", "environment", "equally",
    "evaluation", "ever-growing", "exceed", "exceeds", "excel", "excels", "existence", "expand",
    "exploit", "exploits", "extent", "face", "faces", "family", "fast", "feature", "flexible", "form",
    "formal", "free", "full", "great", "ground", "guide", "guided", "handling", "harness", "heavily",
    "hinder", "hinders", "hope", "hypothesis", "impede", "implement", "implemented", "implementation",
    "implications", "incur", "incurs", "independent", "inspired", "instead", "interest", "kind", "large",
    "largely", "level", "likely", "line", "long", "low", "lower", "maximize", "measure", "minimal",
    "minimize", "mode", "moderate", "named", "natural", "naturally", "nature", "nearly", "necessary",
    "negligible", "notion", "observation", "obtains", "open", "open-source", "opportunity", "order",
    "outcome", "pave", "perspective", "point", "possibility", "predominantly", "premise", "prevalent",
    "primary", "promote", "prominent", "property", "question", "range", "rate", "reason", "recognize",
    "regime", "remedy", "rest", "rich", "robust", "role", "scope", "share", "shares", "sharing", "short",
    "side", "significance", "size", "small", "source", "space", "span", "stage", "step", "subsequently",
    "subject", "suboptimal", "surprisingly", "tackle", "tackles", "target", "termed", "theoretical",
    "theoretically", "thing", "time", "tool", "total", "toward", "trade-off", "true", "type", "uncover",
    "unexplored", "unknown", "unseen", "upper", "usage", "value", "variant", "view", "vital", "whereas",
    "wise", "world", "worse", "worst", "year",
))  # fmt: skip
# A word or phrase in more than this share of the corpus's papers says little about one of them.
COMMON_SHARE = 0.1
VERB_FORM = re.compile(r"(?:ed|ing|ate|ates|ly)$")  # verbs and adverbs, as they mostly end


@dataclass(frozen=True)
class TermComparison:
    """Shared and distinctive terms of two texts, with spans (start, end, "shared"|"distinct") to highlight.

    Spans never overlap and are in text order; a shared or distinctive two-word phrase is one span.
    """

    shared: list[str]
    only_a: list[str]
    only_b: list[str]
    spans_a: list[tuple[int, int, str]]
    spans_b: list[tuple[int, int, str]]


@dataclass(frozen=True)
class CorpusFrequencies:
    """How many of a corpus's papers use each term (words and two-word phrases): what makes a term
    informative (rare in the corpus) and a word pair a phrase (several papers use it)."""

    papers: Mapping[str, int]
    n_papers: int

    def informative(self, term: str) -> bool:
        """Whether ``term`` can say what a paper is about: a phrase the corpus knows (used by at least
        two papers, so not two words that happen to meet), no term most papers use, and no verb or
        adverb form (-ed, -ing, -ate, -ly) that only this paper uses: one abstract's "deteriorate",
        "contradicting" and "received" are how it argues; a subject ("reasoning", "embedding") is used
        by others too."""
        used = self.papers.get(term, 0)
        if " " in term and used < min(2, self.n_papers):
            return False
        if " " not in term and "-" not in term and used < 2 and VERB_FORM.search(term):
            return False
        return used <= max(2, COMMON_SHARE * self.n_papers)

    def weight(self, term: str) -> float:
        """Inverse document frequency (smoothed, as scikit-learn's): rarer terms weigh more."""
        return math.log((1 + self.n_papers) / (1 + self.papers.get(term, 0))) + 1.0


def _content(term: str) -> bool:
    return not any(word in COMPARE_STOP_WORDS for word in term.split())


def _ranked(
    counts: Counter[str], first_seen: dict[str, int], keep: set[str], corpus: CorpusFrequencies | None = None
) -> list[str]:
    def weight(term: str) -> float:
        return counts[term] * (corpus.weight(term) if corpus is not None else 1.0)

    return sorted(keep, key=lambda term: (-weight(term), first_seen[term], term))


def _phrase_first(terms: set[str]) -> set[str]:
    """``terms`` less the words already said by a phrase among them ("graph" beside "graph kernel")."""
    in_phrases = {word for term in terms if " " in term for word in term.split()}
    return {t for t in terms if " " in t or t not in in_phrases}


def _spans(
    grams: list[tuple[str, int, int]], shared: set[str], distinct: set[str]
) -> list[tuple[int, int, str]]:
    """Non-overlapping highlight spans, in this order of precedence: shared phrases (overlapping ones
    merge: "graph neural", "neural network"), shared words, distinctive phrases, distinctive words."""
    merged: list[tuple[int, int, str]] = []
    for start, end in sorted((s, e) for t, s, e in grams if " " in t and t in shared):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), SHARED)
        else:
            merged.append((start, end, SHARED))

    def free(start: int, end: int) -> bool:
        return not any(s < end and start < e for s, e, _ in merged)

    # a distinctive phrase's words, where a shared word keeps the phrase from being marked whole
    distinct_words = distinct | {word for term in distinct if " " in term for word in term.split()}
    steps = (
        (False, shared, SHARED),
        (True, distinct, DISTINCT),
        (False, distinct_words, DISTINCT),
    )
    for phrase, terms, kind in steps:
        for term, start, end in grams:
            if (" " in term) == phrase and term in terms and free(start, end):
                merged.append((start, end, kind))
    return sorted(merged)


def compare_terms(text_a: str, text_b: str, corpus: CorpusFrequencies | None = None) -> TermComparison:
    """Terms (words and two-word phrases) the two texts share, and those only one uses.

    Stop words and academic boilerplate (`COMPARE_STOP_WORDS`) are never terms. With ``corpus``
    (papers per term in the whole corpus), a word pair counts only as a phrase the corpus knows, a term
    most papers use is left out, and terms are ranked by occurrences times their rarity in the corpus
    (tf-idf), so a paper's distinctive terms are what it is about.
    """
    grams_a = [g for g in ngrams_with_spans(text_a, (1, 2)) if _content(g[0])]
    grams_b = [g for g in ngrams_with_spans(text_b, (1, 2)) if _content(g[0])]
    if corpus is not None:
        grams_a = [g for g in grams_a if corpus.informative(g[0])]
        grams_b = [g for g in grams_b if corpus.informative(g[0])]
    counts_a = Counter(t for t, _, _ in grams_a)
    counts_b = Counter(t for t, _, _ in grams_b)
    first_a = {t: s for t, s, _ in reversed(grams_a)}
    first_b = {t: s for t, s, _ in reversed(grams_b)}
    shared = set(counts_a) & set(counts_b)
    # A word inside a listed phrase says nothing new: list the phrase.
    listed_shared = _phrase_first(shared)
    only_a = _phrase_first(set(counts_a) - shared)
    only_b = _phrase_first(set(counts_b) - shared)
    total = counts_a + counts_b
    first = {**first_b, **first_a}
    return TermComparison(
        shared=_ranked(total, first, listed_shared, corpus),
        only_a=_ranked(counts_a, first_a, only_a, corpus),
        only_b=_ranked(counts_b, first_b, only_b, corpus),
        spans_a=_spans(grams_a, shared, only_a),
        spans_b=_spans(grams_b, shared, only_b),
    )


def corpus_frequencies(terms: Sequence[str], matrix: sp.spmatrix) -> CorpusFrequencies:
    """`CorpusFrequencies` of a papers x terms matrix (counts or tf-idf weights) and its vocabulary."""
    csc = sp.csc_matrix(matrix)
    used = np.diff(csc.indptr)
    return CorpusFrequencies(
        {str(t): int(n) for t, n in zip(terms, used, strict=True) if n}, int(matrix.shape[0])
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

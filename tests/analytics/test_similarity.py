"""Similarity: nearest papers, the pairwise matrix, shared/distinctive terms with spans, the 2-D map."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.preprocessing import normalize

from dashboard.analytics.similarity import (
    DISTINCT,
    SHARED,
    CorpusFrequencies,
    compare_terms,
    corpus_frequencies,
    most_similar,
    paper_map,
    similarity_matrix,
)

VECTORS = normalize(np.array([[1.0, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0.8, 0.2], [0, 0, 0]]))


def test_most_similar_excludes_itself_best_first() -> None:
    assert [row for row, _ in most_similar(VECTORS, 0, n=2)] == [1, 2]  # ties (0.0) in row order
    ranked = most_similar(sp.csr_matrix(VECTORS), 2, n=10)
    assert [row for row, _ in ranked][:1] == [3] and len(ranked) == 4
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)


def test_similarity_matrix() -> None:
    matrix = similarity_matrix(VECTORS, [0, 1, 2, 4])
    assert np.allclose(matrix, matrix.T)
    assert matrix.diagonal().tolist() == [1.0, 1.0, 1.0, 0.0]  # an empty abstract is like nothing
    assert matrix[0, 1] == pytest.approx(0.9 / np.hypot(0.9, 0.1))


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, (6, 4), elements=st.floats(0, 10)), st.integers(0, 5))
def test_a_paper_is_most_similar_to_itself(raw: np.ndarray, row: int) -> None:
    vectors = normalize(raw)
    matrix = similarity_matrix(vectors, range(6))
    assert matrix[row, row] >= matrix[row].max() - 1e-9
    assert all(s <= matrix[row, row] + 1e-9 for _, s in most_similar(vectors, row, n=5))


@pytest.mark.parametrize(
    ("a", "b", "shared", "only_a", "only_b"),
    [
        (
            "Graph neural networks for molecules.",
            "Graph transformers for proteins.",
            ["graph"],
            ["graph neural", "molecule"],
            ["graph transformer", "protein"],  # "transformer" is said by its phrase
        ),
        # a shared phrase is listed, not its words again
        (
            "Diffusion models for images.",
            "Image diffusion models.",
            ["diffusion model", "image"],
            [],
            ["image diffusion"],
        ),
        ("We propose a novel method.", "Our approach is new.", [], [], []),
    ],
)  # fmt: skip
def test_compare_terms(a: str, b: str, shared: list[str], only_a: list[str], only_b: list[str]) -> None:
    result = compare_terms(a, b)
    assert (result.shared, result.only_a, result.only_b) == (shared, only_a, only_b)


def test_spans_highlight_the_right_words() -> None:
    a = "Graph neural networks for molecule generation."
    result = compare_terms(a, "Graph neural networks for protein design and molecules.")
    assert [(a[s:e], kind) for s, e, kind in result.spans_a] == [
        ("Graph neural", SHARED),
        ("molecule", SHARED),
        ("generation", DISTINCT),
    ]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200), st.text(max_size=200))
def test_spans_are_ordered_disjoint_and_inside(a: str, b: str) -> None:
    result = compare_terms(a, b)
    assert not set(result.shared) & (set(result.only_a) | set(result.only_b))
    for text, spans in ((a, result.spans_a), (b, result.spans_b)):
        previous_end = 0
        for start, end, kind in spans:
            assert previous_end <= start < end <= len(text)
            assert kind in (SHARED, DISTINCT)
            previous_end = end


def blobs(per_topic: int = 40, topics: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = np.eye(topics, 8)
    embedding = normalize(
        np.repeat(centres, per_topic, axis=0) + 0.15 * rng.standard_normal((per_topic * topics, 8))
    )
    labels = np.repeat(np.arange(topics), per_topic)
    doc_topic = normalize(np.clip(embedding @ centres.T, 0, None) + 1e-9, norm="l1")
    return embedding, labels, doc_topic


def test_map_keeps_topics_apart() -> None:
    embedding, labels, doc_topic = blobs()
    coords = paper_map(embedding, labels, doc_topic)
    assert coords.shape == (len(labels), 2) and np.isfinite(coords).all()
    centres = np.array([coords[labels == t].mean(axis=0) for t in range(3)])
    spread = max(np.linalg.norm(coords[labels == t] - centres[t], axis=1).mean() for t in range(3))
    gap = min(np.linalg.norm(centres[i] - centres[j]) for i in range(3) for j in range(i + 1, 3))
    assert gap > 2 * spread


def test_map_is_deterministic_and_places_outliers() -> None:
    embedding, labels, doc_topic = blobs()
    labels = labels.copy()
    labels[:5] = -1
    first = paper_map(embedding, labels, doc_topic)
    assert np.array_equal(first, paper_map(embedding.copy(), labels.copy(), doc_topic.copy()))
    assert np.isfinite(first).all()


@pytest.mark.parametrize("n", [0, 1, 2])
def test_map_of_tiny_corpora(n: int) -> None:
    embedding = np.full((n, 3), 1 / np.sqrt(3))
    coords = paper_map(embedding, np.zeros(n, dtype=int), np.ones((n, 1)))
    assert coords.shape == (n, 2) and np.isfinite(coords).all()


def test_compare_leaves_out_boilerplate_and_word_pairs_no_other_paper_uses() -> None:
    # Issue 49: Compare listed "share certain" and "alleviate" as what set a paper apart.
    a = (
        "Graph kernels share certain properties with message passing. To alleviate oversmoothing we "
        "use spectral graph kernels on molecular graphs."
    )
    b = "Diffusion models generate protein structures with equivariant denoising."
    plain = compare_terms(a, b)
    assert not any(word in term for term in plain.only_a for word in ("share", "certain", "alleviate"))
    corpus = CorpusFrequencies(
        {
            "graph kernel": 4, "graph": 30, "kernel": 9, "message passing": 6, "message": 7, "passing": 6,
            "oversmoothing": 3, "spectral": 5, "spectral graph": 1, "molecular": 8, "molecular graph": 3,
            "property": 40, "graph kernels": 0,
        },
        n_papers=100,
    )  # fmt: skip
    informed = compare_terms(a, b, corpus)
    assert "spectral graph" not in informed.only_a  # one paper's word pair, not a phrase of the corpus
    assert "graph" not in informed.only_a  # in 30% of the papers: says little
    assert informed.only_a[:2] == ["graph kernel", "oversmoothing"]  # most used here, rarest there
    assert "message passing" in informed.only_a and "message" not in informed.only_a  # the phrase, once
    highlighted = {a[s:e].lower() for s, e, kind in informed.spans_a if kind == DISTINCT}
    assert "message passing" in highlighted and "certain" not in highlighted


def test_corpus_frequencies_count_the_papers_that_use_each_term() -> None:
    matrix = sp.csr_matrix(np.array([[0.5, 0.0, 0.2], [0.1, 0.0, 0.0], [0.3, 0.0, 0.9]]))
    found = corpus_frequencies(["graph", "unused", "graph kernel"], matrix)
    assert found.papers == {"graph": 3, "graph kernel": 2} and found.n_papers == 3


def test_verb_and_adverb_forms_only_this_paper_uses_are_not_distinctive() -> None:
    corpus = CorpusFrequencies({"reasoning": 5, "retrosynthesis": 1}, n_papers=50)
    found = compare_terms(
        "Retrosynthesis results deteriorating quantitatively; reasoning helps.", "Protein folding.", corpus
    )
    assert "retrosynthesis" in found.only_a and "reasoning" in found.only_a  # a rare noun, a shared subject
    assert "deteriorating" not in found.only_a and "quantitatively" not in found.only_a

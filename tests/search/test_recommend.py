"""The "Recommended for" ranking (`dashboard.search.recommend`): never the list's papers, the fallback below
three papers, the same order every time, and a why that names shared terms and a list paper."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.preprocessing import normalize

from dashboard.search.recommend import (
    FALLBACK_LABEL,
    FITTED_LABEL,
    MIN_LIST,
    Reason,
    dense_rows,
    explain,
    recommend,
)

GRAPHS = [
    "graph neural networks for molecule property prediction",
    "message passing graph networks on molecule graphs",
    "graph transformers for protein and molecule structure",
    "equivariant graph networks for molecule dynamics",
    "graph neural networks predict protein molecule binding",
    "scalable graph neural networks for large molecule graphs",
]
IMAGES = [
    "diffusion models for image generation",
    "image diffusion sampling with fewer steps",
    "latent diffusion for high resolution image synthesis",
    "guidance for image diffusion models",
    "video and image diffusion generation at scale",
    "consistency models distil image diffusion",
]
TEXTS = GRAPHS + IMAGES


@pytest.fixture(scope="module")
def space() -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """TF-IDF rows, LSA rows and terms of the toy corpus (graphs: rows 0-5, images: rows 6-11)."""
    vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), stop_words="english")
    tfidf = sp.csr_matrix(vectorizer.fit_transform(TEXTS))
    lsa = normalize(TruncatedSVD(4, random_state=0).fit_transform(tfidf))
    return tfidf, lsa, vectorizer.get_feature_names_out()


@pytest.mark.parametrize("list_rows", [[0], [0, 1], [0, 1, 2], [0, 1, 2, 3, 6], [11, 3, 3, 5]])
def test_every_other_paper_once_and_never_the_list(space, list_rows: list[int]) -> None:
    tfidf, lsa, _ = space
    ranked = recommend(tfidf, lsa, list_rows)
    assert not set(ranked.rows.tolist()) & set(list_rows)
    assert sorted(ranked.rows.tolist()) == sorted(set(range(len(TEXTS))) - set(list_rows))
    assert ranked.list_rows.tolist() == sorted(set(list_rows))
    assert np.all(np.diff(ranked.scores) <= 0)  # best first


@pytest.mark.parametrize(
    ("list_rows", "fallback", "label"),
    [([0], True, FALLBACK_LABEL), ([0, 1], True, FALLBACK_LABEL), ([0, 1, 2], False, FITTED_LABEL)],
)
def test_fewer_than_three_papers_fall_back_to_papers_like_these(space, list_rows, fallback, label) -> None:
    tfidf, lsa, _ = space
    ranked = recommend(tfidf, lsa, list_rows)
    assert MIN_LIST == 3
    assert (ranked.fallback, ranked.method) == (fallback, label)


@pytest.mark.parametrize("list_rows", [[0], [0, 1], [0, 1, 2], [6, 7, 8, 9]])
def test_the_lists_subject_comes_first(space, list_rows: list[int]) -> None:
    tfidf, lsa, _ = space
    ranked = recommend(tfidf, lsa, list_rows)
    same_subject = {r for r in range(len(TEXTS)) if (r < 6) == (list_rows[0] < 6)} - set(list_rows)
    assert set(ranked.rows[: len(same_subject)].tolist()) == same_subject


def test_the_same_list_gives_the_same_order(space) -> None:
    tfidf, lsa, _ = space
    first = recommend(tfidf, lsa, [0, 2, 4, 7])
    again = recommend(tfidf, lsa, [4, 2, 0, 7])
    assert first.rows.tolist() == again.rows.tolist()
    assert np.array_equal(first.scores, again.scores)


def test_a_sample_of_the_other_papers_still_scores_every_paper(space) -> None:
    tfidf, lsa, _ = space
    ranked = recommend(tfidf, lsa, [0, 1, 2], max_negatives=4)
    assert sorted(ranked.rows.tolist()) == list(range(3, len(TEXTS)))
    assert ranked.rows.tolist() == recommend(tfidf, lsa, [0, 1, 2], max_negatives=4).rows.tolist()


def test_an_empty_list_recommends_nothing(space) -> None:
    tfidf, lsa, _ = space
    ranked = recommend(tfidf, lsa, [])
    assert (len(ranked.rows), ranked.fallback) == (0, True)


@pytest.mark.parametrize("bad", [[-1], [len(TEXTS)]])
def test_a_row_outside_the_corpus_is_refused(space, bad: list[int]) -> None:
    tfidf, lsa, _ = space
    with pytest.raises(ValueError, match="list rows must be"):
        recommend(tfidf, lsa, bad)


def test_score_of_gives_nan_for_the_lists_papers(space) -> None:
    tfidf, lsa, _ = space
    scores = recommend(tfidf, lsa, [0, 1, 2]).score_of(len(TEXTS))
    assert np.isnan(scores[:3]).all() and np.isfinite(scores[3:]).all()


def test_why_names_terms_in_both_and_the_closest_list_paper(space) -> None:
    tfidf, lsa, terms = space
    (reason,) = explain(tfidf, lsa, terms, np.array([0, 6]), [1])  # message passing graph networks
    assert reason.closest == 0  # the graph paper, not the image one
    assert reason.terms
    for term in reason.terms:
        words = set(term.split())
        assert words <= set(TEXTS[1].split())
        assert words <= set(TEXTS[0].split()) or words <= set(TEXTS[6].split())
    assert reason.text("Graph neural networks").startswith("shared: ")
    assert reason.text("Graph neural networks").endswith("closest: Graph neural networks")


def test_why_does_not_repeat_a_word_inside_a_chosen_phrase(space) -> None:
    tfidf, lsa, terms = space
    reasons = explain(tfidf, lsa, terms, np.array([0, 1, 2]), list(range(3, 12)), n_terms=5)
    for reason in reasons:
        words = [set(t.split()) for t in reason.terms]
        assert not any(a < b or b < a for i, a in enumerate(words) for b in words[i + 1 :])


def test_a_paper_like_none_of_the_list_has_no_closest() -> None:
    tfidf = sp.csr_matrix(np.eye(3))
    (reason,) = explain(tfidf, np.eye(3), ["a", "b", "c"], np.array([0]), [2])
    assert reason == Reason((), -1, 0.0)
    assert reason.text("ignored") == ""


class _Fitted:
    """What `dense_rows` reads of a fitted model (`TopicModel` or an index's `StoredModel`)."""

    def __init__(self, representation: str, semantic: np.ndarray | None) -> None:
        self.representation_, self.semantic_ = representation, semantic
        self.lsa_ = np.ones((3, 40))


@pytest.mark.parametrize(
    ("representation", "has_vectors", "used"),
    [
        ("minilm", True, "semantic"),  # topics found in the embedding: its vectors
        ("lsa+minilm", True, "semantic"),
        ("lsa", True, "lsa"),  # an index built with --semantic beside LSA topics: the LSA
        ("lsa", False, "lsa"),
        ("minilm", False, "lsa"),  # nothing kept to read
    ],
)
def test_the_dense_rows_are_the_topics_embedding_where_they_were_found_in_it(
    representation: str, has_vectors: bool, used: str
) -> None:
    semantic = np.full((3, 384), 0.05) if has_vectors else None
    model = _Fitted(representation, semantic)
    np.testing.assert_array_equal(dense_rows(model), model.semantic_ if used == "semantic" else model.lsa_)
    assert dense_rows(model).shape[1] == (384 if used == "semantic" else 40)

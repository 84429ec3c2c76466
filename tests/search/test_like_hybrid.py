"""Papers like this, default space: a paper is found from a text of its own, rare names included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from dashboard import corpus
from dashboard.analytics import analysis
from dashboard.search import like as similar

REPO = Path(__file__).resolve().parents[2]

SUBJECTS = [
    ("graph neural networks", "molecules", "message passing"),
    ("diffusion models", "images", "denoising"),
    ("reinforcement learning", "robot arms", "policy gradients"),
    ("language models", "reasoning", "prompting"),
]
# One made-up name per paper: each occurs in one abstract only, so the topic model's TF-IDF (which
# drops words seen once) cannot see it, while it is what a reader would paste to find the paper.
NAMES = [f"Zor{chr(97 + i)}lex{chr(97 + (i * 7) % 26)}" for i in range(24)]


def _synthetic(tmp_path: Path) -> Any:
    abstracts = []
    for i, name in enumerate(NAMES):
        subject, data, tool = SUBJECTS[i % len(SUBJECTS)]
        abstracts.append(
            f"We present {name}, a method for {subject} on {data}. "
            f"Existing {subject} approaches for {data} rely on {tool} and scale poorly. "
            f"Experiments show that {subject} with {tool} improves results on {data} benchmarks."
        )
    path = tmp_path / "synthetic.txt"
    path.write_text("Synthetic papers\n\n" + "\n\n".join(abstracts) + "\n")
    return analysis.analyze(corpus.load([path]).papers)


def test_the_default_is_the_hybrid_and_is_named_without_building_it() -> None:
    assert similar.DEFAULT_SPACE == "hybrid"
    assert similar.DEFAULT_SPACE in similar.SPACES
    assert similar.LABELS[similar.DEFAULT_SPACE] == similar.HybridSpace.label


@pytest.mark.parametrize("row", [0, 5, 10, 17, 23])
def test_the_default_finds_a_paper_from_its_first_sentence_by_a_name_seen_once(
    tmp_path: Path, row: int
) -> None:
    fitted = _synthetic(tmp_path)
    space = similar.SPACES[similar.DEFAULT_SPACE](fitted)
    first = f"We present {NAMES[row]}, a method for {SUBJECTS[row % len(SUBJECTS)][0]}."
    assert similar.like_text(space, first, 3)[0][0] == row


@pytest.fixture(scope="module")
def seeds() -> Any:
    return analysis.analyze(corpus.load([REPO / "seeds"]).papers)


def test_the_default_finds_each_seed_paper_from_its_first_sentence(seeds: Any) -> None:
    space = similar.SPACES[similar.DEFAULT_SPACE](seeds)
    abstracts = seeds.papers["abstract_clean"].fillna("").astype(str)
    for row, abstract in enumerate(abstracts):
        first = abstract.split(". ")[0]
        assert similar.like_text(space, first, 1)[0][0] == row, (row, first)


def test_the_hybrid_score_is_the_weighted_sum_of_the_two_cosines(seeds: Any) -> None:
    space = similar.hybrid_space(seeds, weight=0.3)
    lsa = similar.lsa_space(seeds)
    lexical = space.lexical
    text = "contrastive representation learning with negative samples"
    expected = 0.3 * similar.similarities(lexical, similar._normalise(space.vectorizer.transform([text])))
    expected += 0.7 * similar.similarities(lsa.paper_vectors(), lsa.text_vector(text))
    assert np.allclose(similar.similarities(space.paper_vectors(), space.text_vector(text)), expected)
    row = space.paper_vectors()[1]
    assert sp.issparse(row) and np.isclose(np.sqrt(row.multiply(row).sum()), 1.0, atol=1e-5)
    # from a paper: its own row scores 1 and is left out; the rest come best first
    ranked = similar.like_paper(space, 1, 5)
    assert 1 not in [r for r, _ in ranked]
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)


def test_a_text_sharing_no_word_finds_nothing_and_empty_papers_do_not_break_the_space() -> None:
    papers = pd.DataFrame(
        {"title": ["", ""], "abstract_clean": ["the", "of"], "title_is_derived": [True, True]}
    )
    model = type("M", (), {})()
    model.tfidf_ = sp.csr_matrix((2, 1), dtype=np.float32)
    model.terms_ = np.array([""], dtype=object)
    model.idf_ = np.ones(1)
    model.lsa_ = np.zeros((2, 2))
    fitted = type("A", (), {"model": model, "papers": papers})()
    space = similar.hybrid_space(fitted)
    assert similar.like_text(space, "zzzz qqqq", 10) == []
    assert similar.like_paper(space, 0, 10) == []

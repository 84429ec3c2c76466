"""Tokens: the stop list, word normalisation, phrase-bounded n-grams, CJK bigrams, spans, the vectoriser."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.text.tokens import (
    BOILERPLATE,
    FUNCTION_WORDS,
    GENERIC_TERMS,
    STOP_WORDS,
    Analyzer,
    make_vectorizer,
    min_df_for,
    ngrams,
    ngrams_with_spans,
    normalise_word,
    scan,
    tokenize,
)


@pytest.mark.parametrize(
    ("word", "is_stop_word"),
    [
        # English function words
        ("the", True),
        ("which", True),
        # abstract boilerplate, as the issue lists it
        ("propose", True),
        ("method", True),
        ("approach", True),
        ("paper", True),
        ("show", True),
        ("result", True),
        ("novel", True),
        ("existing", True),
        ("state-of-the-art", True),
        ("demonstrate", True),
        ("achieve", True),
        ("performance", True),
        ("significantly", True),
        ("outperform", True),
        # generic ML words: not a term alone
        ("model", True),
        ("learning", True),
        ("data", True),
        # topical words stay
        ("diffusion", False),
        ("graph", False),
        ("transformer", False),
        ("reinforcement", False),
        ("large", False),  # "large language model"
        ("time", False),  # "time series"
        ("point", False),  # "point cloud"
        ("question", False),  # "question answering"
        ("process", False),  # "gaussian process"
        ("robot", False),
    ],
)
def test_stop_list(word: str, is_stop_word: bool) -> None:
    assert (word in STOP_WORDS) is is_stop_word


def test_stop_lists_are_lower_case_and_normalised() -> None:
    # A stop word must be written the way tokens are compared: lower case, singular.
    for word in FUNCTION_WORDS | BOILERPLATE | GENERIC_TERMS:
        assert word == word.lower()
    for word in GENERIC_TERMS:
        assert normalise_word(word) == word


@pytest.mark.parametrize(
    ("word", "normalised"),
    [
        ("Models", "model"),
        ("studies", "study"),
        ("policies", "policy"),
        ("LLMs", "llm"),
        ("processes", "process"),
        ("approaches", "approach"),
        ("biases", "bias"),
        ("analysis", "analysis"),
        ("series", "series"),
        ("physics", "physics"),
        ("Bayes", "bayes"),
        ("loss", "loss"),
        ("various", "various"),
        ("model's", "model"),
        ("vision-transformers", "vision-transformer"),
        ("matrices", "matrix"),
        ("gas", "gas"),
    ],
)
def test_normalise_word(word: str, normalised: str) -> None:
    assert normalise_word(word) == normalised


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We propose a novel method.", []),
        ("Graph Neural Networks", ["graph"]),
        ("LLMs and GANs", ["llm", "gan"]),
        ("Studies of policies", ["policy"]),
        # URLs, LaTeX commands, inline formulas, numbers and e-mail addresses are never terms
        ("See https://github.com/x/y and \\textbf{diffusion} in 2024 with 3D data", ["diffusion", "3d"]),
        ("$O(1/\\sqrt{n})$ bounds", ["bound"]),
        ("mail a.b@c.org about transformers", ["mail", "transformer"]),
        ("state-of-the-art results, 25× faster", []),
        ("", []),
    ],
)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "ngram_range", "expected"),
    [
        ("reinforcement learning", (1, 2), ["reinforcement", "reinforcement learning"]),
        ("large language models", (1, 3), ["large", "language", "large language", "language model",
                                            "large language model"]),
        # punctuation and stop words end a phrase: no n-gram across them
        ("graph. diffusion", (1, 2), ["graph", "diffusion"]),
        ("graph of diffusion", (1, 2), ["graph", "diffusion"]),
        ("graph (diffusion)", (2, 2), []),
        # an n-gram of generic words only says nothing
        ("neural network training", (2, 3), []),
        # without the stop list every word counts
        ("the graph", (1, 2), ["graph"]),
    ],
)  # fmt: skip
def test_ngrams(text: str, ngram_range: tuple[int, int], expected: list[str]) -> None:
    assert ngrams(text, ngram_range) == expected


def test_ngrams_without_stop_words_keep_everything() -> None:
    assert ngrams("the graph", (1, 2), stop_words=False) == ["the", "graph", "the graph"]


def test_cjk_is_character_bigrams_never_a_sentence() -> None:
    terms = tokenize("大型语言模型的推理能力")
    assert terms[:3] == ["大型", "型语", "语言"]
    assert all(len(t) == 2 for t in terms)
    # and the bigrams do not pile up into n-grams of n-grams
    assert all(" " not in t for t in ngrams("大型语言模型的推理能力", (1, 3)))


def test_cjk_mixed_with_latin() -> None:
    assert ngrams("扩散模型 diffusion models", (1, 2)) == [
        "扩散",
        "散模",
        "模型",
        "diffusion",
        "diffusion model",
    ]


def test_scan_marks_phrase_breaks() -> None:
    assert scan("Graph networks, see https://x.org.") == ["graph", "network", "", "see", ""]


@pytest.mark.parametrize(("n", "floor"), [(5, 1), (57, 2), (1_000, 2), (27_000, 5), (1_000_000, 200)])
def test_min_df_grows_with_corpus(n: int, floor: int) -> None:
    assert min_df_for(n) == floor


def test_vectoriser_uses_the_same_terms() -> None:
    vectorizer = make_vectorizer("count", ngram_range=(1, 2))
    vectorizer.fit(["Graph neural networks for molecules.", "Graph kernels."])
    assert sorted(vectorizer.get_feature_names_out()) == sorted(
        {"graph", "graph neural", "molecule", "kernel", "graph kernel"}
    )
    assert make_vectorizer().analyzer("graph kernels") == Analyzer()("graph kernels")


def test_analyzer_accepts_a_scanned_document() -> None:
    text = "Diffusion models for protein design."
    assert Analyzer((1, 2))(scan(text)) == Analyzer((1, 2))(text)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_tokenising_never_raises_and_spans_point_into_the_text(text: str) -> None:
    for stop_words in (True, False):
        plain = ngrams(text, (1, 3), stop_words=stop_words)
        spanned = ngrams_with_spans(text, (1, 3), stop_words=stop_words)
        assert sorted(plain) == sorted(term for term, _, _ in spanned)
        for term, start, end in spanned:
            assert 0 <= start < end <= len(text)
            assert term


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(["graph", "The", "diffusion", "models", ",", "大型语言", "of", "RL"]), max_size=30
    )
)
def test_no_stop_word_survives(words: list[str]) -> None:
    for term in tokenize(" ".join(words)):
        assert term not in STOP_WORDS


def test_abstract_boilerplate_measured_on_the_corpora_is_no_term() -> None:
    # "code" from "code is available" led the word cloud of every corpus (bench/boilerplate.py).
    text = "Our code is publicly available on GitHub. Due to the gap, we use a large language model."
    words = ngrams(text, (1, 1))
    assert not {"code", "publicly", "github", "due", "gap"} & set(words)
    assert "language" in words
    # Generic words still build the phrases that name a subject.
    assert "code generation" in ngrams("Code generation with LLMs.", (2, 2))
    assert "large language" in ngrams(text, (2, 2))

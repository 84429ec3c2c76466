"""Papers like this: the papers nearest to one paper or to a free text, in a swappable vector space.

A *vector space* (the `VectorSpace` protocol) is fitted on the corpus once and then answers two
questions: the vectors of the papers (L2-normalised rows, one per paper, dense or sparse) and the
vector of a free text (one row, normalised the same way). `nearest` does the rest: cosine top-k
among the allowed papers. Three spaces are built in:

- `TfidfSpace`: the topic model's TF-IDF rows (title + abstract, 1-2-word terms, sublinear tf, idf,
  stop words dropped); a text is vectorised with the same analyser, vocabulary and idf;
- `LsaSpace`: the model's LSA vectors (a truncated SVD of those rows); a text is folded in through
  ``V``, recovered once from the stored vectors as the unit-length columns of ``X^T L`` (exact when
  ``L = X V``; the rows of ``L`` are normalised, so it is a close approximation);
- `HybridSpace`: a weighted sum of a word-level TF-IDF cosine over every word of the corpus (the
  model's TF-IDF drops words seen once, which are what finds one paper from a text of its own) and
  the LSA cosine (which finds papers on the same subject in other words).

Which one the app uses is chosen by measurement (``bench/search_quality.py``: MRR@10 of finding a
paper from its OpenReview TL;DR and precision@10 that a paper's neighbours share its OpenReview
primary area, on ICLR 1k, and MRR@10 from half an abstract at 27k; see the README): `DEFAULT_SPACE`.

**Plugging in another space** (an embedding model): write a class with ``name``, ``label``,
``paper_vectors()`` and ``text_vector(text)`` as below, fitted once per corpus (for an index, store
its vectors there and read them memory-mapped), and register a factory in `SPACES`; the ``search
--like --space NAME`` CLI and the benchmarks take any name in `SPACES`, the Papers page takes
`DEFAULT_SPACE`. With the embedding model installed (a dependency), ``minilm`` (`embedding_space`) is
registered.

>>> import numpy as np
>>> space = ArraySpace(np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]]))
>>> [(row, round(score, 2)) for row, score in nearest(space.paper_vectors(), space.paper_vectors()[0], 2)]
[(0, 1.0), (1, 0.8)]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

import numpy as np
import scipy.sparse as sp

from dashboard.filters import MAX_LIKE_CHARS
from dashboard.text.tokens import Analyzer

MAX_LIKE_TEXT = MAX_LIKE_CHARS  # characters of a free text kept (URL key ``liketext``)
# Chosen by bench/search_quality.py (README): the hybrid finds a paper from a text of its own as well
# as plain TF-IDF does, and its neighbours share an area as often as LSA's do.
DEFAULT_SPACE = "hybrid"
# Share of the lexical cosine in the hybrid's score (the rest is LSA's), tuned on ICLR 1k TL;DRs.
LEXICAL_WEIGHT = 0.8

Vectors: TypeAlias = Any  # np.ndarray or sp.csr_matrix: rows are papers


class VectorSpace(Protocol):
    """A space papers and texts live in: fitted on one corpus, rows L2-normalised (cosine = dot)."""

    name: str
    label: str

    def paper_vectors(self) -> Vectors:
        """One normalised row per paper, in corpus order (zero rows: papers without text)."""
        ...

    def text_vector(self, text: str) -> Vectors:
        """One normalised row (1 x dims) for a free text; all zeros when it shares nothing."""
        ...


def _normalise(matrix: Vectors) -> Vectors:
    from sklearn.preprocessing import normalize

    return normalize(matrix)


@dataclass
class ArraySpace:
    """Precomputed paper vectors (e.g. an embedding stored in an index) with no text encoder."""

    vectors: np.ndarray
    name: str = "array"
    label: str = "precomputed vectors"

    def paper_vectors(self) -> Vectors:
        """The vectors as given (normalised by whoever made them)."""
        return self.vectors

    def text_vector(self, text: str) -> Vectors:
        """Not available for precomputed vectors without their model."""
        raise NotImplementedError(f"{self.label}: no text encoder")


@dataclass
class TfidfSpace:
    """The topic model's TF-IDF space: a text gets the same terms, sublinear tf and idf."""

    tfidf: sp.csr_matrix
    terms: np.ndarray
    idf: np.ndarray
    name: str = "tfidf"
    label: str = "TF-IDF"
    _columns: dict[str, int] | None = field(default=None, repr=False)

    def paper_vectors(self) -> Vectors:
        """The model's TF-IDF rows (already L2-normalised)."""
        return self.tfidf

    def counts(self, text: str) -> sp.csr_matrix:
        """1 x terms sublinear-tf x idf row of a text (not normalised)."""
        if self._columns is None:
            self._columns = {str(t): i for i, t in enumerate(self.terms)}
        columns = self._columns
        grams = Counter(g for g in Analyzer((1, 2), True)(text) if g in columns)
        if not grams:
            return sp.csr_matrix((1, len(self.terms)), dtype=np.float64)
        cols = np.array([columns[g] for g in grams], dtype=np.int64)
        values = (np.log(np.array(list(grams.values()), dtype=np.float64)) + 1.0) * np.asarray(self.idf)[cols]
        return sp.csr_matrix(
            (values, (np.zeros(len(cols), dtype=np.int64), cols)), shape=(1, len(self.terms))
        )

    def text_vector(self, text: str) -> Vectors:
        """The text's normalised TF-IDF row."""
        return _normalise(self.counts(text))


@dataclass
class LsaSpace:
    """The topic model's LSA space; a text is folded in through the SVD's term directions."""

    tfidf_space: TfidfSpace
    lsa: np.ndarray
    name: str = "lsa"
    label: str = "LSA"
    _directions: np.ndarray | None = field(default=None, repr=False)

    def paper_vectors(self) -> Vectors:
        """The model's LSA vectors (L2-normalised rows)."""
        return self.lsa

    def directions(self) -> np.ndarray:
        """terms x dims: the unit-length columns of ``X^T L`` (``V`` of the SVD ``X = U S V^T``)."""
        if self._directions is None:
            projection = np.asarray(self.tfidf_space.tfidf.T @ np.asarray(self.lsa, dtype=np.float64))
            norms = np.linalg.norm(projection, axis=0)
            self._directions = projection / np.where(norms > 0, norms, 1.0)
        return self._directions

    def text_vector(self, text: str) -> Vectors:
        """The text's TF-IDF row times ``V``, normalised."""
        row = self.tfidf_space.text_vector(text)
        return _normalise(np.asarray(row @ self.directions()))


@dataclass
class StackedVectors:
    """Rows of two spaces side by side (weighted so a row stays unit length), without copying the
    dense part into a sparse matrix: ``vectors @ column`` and ``vectors[row]`` as `nearest` needs."""

    lexical: sp.csr_matrix  # already scaled by sqrt(weight)
    dense: np.ndarray  # already scaled by sqrt(1 - weight)

    @property
    def shape(self) -> tuple[int, int]:
        """papers x (terms + dims)."""
        return (self.lexical.shape[0], self.lexical.shape[1] + self.dense.shape[1])

    def __getitem__(self, row: int) -> sp.csr_matrix:
        return sp.csr_matrix(sp.hstack([self.lexical[row], sp.csr_matrix(self.dense[row : row + 1])]))

    def __matmul__(self, column: Any) -> np.ndarray:
        split = self.lexical.shape[1]
        column = sp.csr_matrix(column)
        lexical = np.asarray((self.lexical @ column[:split]).toarray()).ravel()
        dense = self.dense @ np.asarray(column[split:].toarray()).ravel()
        return (lexical + dense).reshape(-1, 1)


@dataclass
class HybridSpace:
    """A weighted sum of two cosines: every word of the corpus (TF-IDF, no frequency floor, so a
    paper's rare names find it) and LSA (so its neighbours share a subject, not only words).

    Rows are ``[sqrt(w) * lexical, sqrt(1 - w) * lsa]``: a dot product of two rows is
    ``w * cos_lexical + (1 - w) * cos_lsa``, and `nearest` needs nothing new.
    """

    vectorizer: Any  # a fitted scikit-learn TfidfVectorizer over the papers' texts
    lexical: sp.csr_matrix  # its L2-normalised rows
    lsa_space: LsaSpace
    weight: float = LEXICAL_WEIGHT
    name: str = "hybrid"
    label: str = "TF-IDF + LSA"
    _vectors: StackedVectors | None = field(default=None, repr=False)

    def paper_vectors(self) -> Vectors:
        """The papers' stacked rows (unit length unless a part is empty)."""
        if self._vectors is None:
            lsa = np.asarray(self.lsa_space.paper_vectors(), dtype=np.float64)
            self._vectors = StackedVectors(
                sp.csr_matrix(self.lexical * np.sqrt(self.weight)), lsa * np.sqrt(1.0 - self.weight)
            )
        return self._vectors

    def text_vector(self, text: str) -> Vectors:
        """The text's stacked row; all zeros when it shares no word with the corpus."""
        lexical = _normalise(self.vectorizer.transform([text]))
        if lexical.nnz == 0:
            return sp.csr_matrix((1, self.paper_vectors().shape[1]), dtype=np.float64)
        lsa = np.asarray(self.lsa_space.text_vector(text), dtype=np.float64)
        return sp.csr_matrix(
            sp.hstack([lexical * np.sqrt(self.weight), sp.csr_matrix(lsa * np.sqrt(1.0 - self.weight))])
        )


def tfidf_space(analysis: Any) -> TfidfSpace:
    """The TF-IDF space of an `Analysis` (raw files' fitted model or an index's stored one)."""
    model = analysis.model
    idf = getattr(model, "idf_", None)
    if idf is None:
        vectorizer = getattr(model, "vectorizer_", None)
        idf = vectorizer.idf_ if vectorizer is not None else np.ones(len(model.terms_))
    return TfidfSpace(sp.csr_matrix(model.tfidf_), np.asarray(model.terms_, dtype=object), np.asarray(idf))


def lsa_space(analysis: Any) -> LsaSpace:
    """The LSA space of an `Analysis`."""
    return LsaSpace(tfidf_space(analysis), np.asarray(analysis.model.lsa_))


def lexical_vectorizer() -> Any:
    """The hybrid's word space: scikit-learn's English stop words, every other word kept, and a
    sublinear tf (a word said five times is not five times the evidence)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(stop_words="english", sublinear_tf=True, dtype=np.float32)


def hybrid_space(analysis: Any, weight: float = LEXICAL_WEIGHT) -> HybridSpace:
    """The hybrid space of an `Analysis`: a word-level TF-IDF fitted now on the papers' texts (title
    and abstract), mixed with the model's LSA."""
    from dashboard.analytics.analysis import paper_texts

    vectorizer = lexical_vectorizer()
    try:
        lexical = vectorizer.fit_transform(paper_texts(analysis.papers))
    except ValueError:  # no word survives (empty texts, or only stop words): no paper has a word
        vectorizer = lexical_vectorizer().set_params(stop_words=None).fit(["nothing"])
        lexical = sp.csr_matrix((len(analysis.papers), 1), dtype=np.float32)
    space = HybridSpace(vectorizer, sp.csr_matrix(lexical), lsa_space(analysis), weight)
    space.lsa_space.directions()  # now, with the fitting, not on the first text typed
    space.paper_vectors()
    return space


def embedding_space(analysis: Any) -> VectorSpace:
    """The sentence-embedding space (`dashboard.search.semantic`): the vectors the
    topics were found in (`dashboard.search.topicspace`) or an index built with ``--semantic`` holds,
    else every paper's text encoded now (about 10 papers per CPU-second), once per corpus for whoever
    keeps the space."""
    from dashboard.analytics.analysis import paper_texts
    from dashboard.search import semantic

    stored = getattr(analysis.model, "semantic_", None)
    if stored is not None:
        return semantic.EmbeddingSpace(np.asarray(stored))
    return semantic.EmbeddingSpace.of_texts(paper_texts(analysis.papers))


SPACES: dict[str, Callable[[Any], VectorSpace]] = {
    "tfidf": tfidf_space,
    "lsa": lsa_space,
    "hybrid": hybrid_space,
}


# Each space's name for people, known without building the space (which takes seconds at 1M papers).
LABELS: dict[str, str] = {"tfidf": TfidfSpace.label, "lsa": LsaSpace.label, "hybrid": HybridSpace.label}


def _register_semantic() -> None:
    from dashboard.search import semantic  # light: it imports onnxruntime only when a model is loaded

    if semantic.available():
        SPACES["minilm"] = embedding_space
        LABELS["minilm"] = semantic.EmbeddingSpace.label


_register_semantic()


def similarities(vectors: Vectors, query: Vectors) -> np.ndarray:
    """Cosine of every paper vector with the (normalised) query row."""
    query_row: Any = query.T if sp.issparse(query) else np.asarray(query, dtype=np.float64).reshape(-1, 1)
    values: Any = vectors @ query_row
    dense = values.toarray() if sp.issparse(values) else np.asarray(values)
    return np.asarray(dense, dtype=np.float64).ravel()


def nearest(
    vectors: Vectors,
    query: Vectors,
    n: int,
    *,
    allowed: np.ndarray | None = None,
    exclude: int | None = None,
) -> list[tuple[int, float]]:
    """The ``n`` rows most similar to ``query`` as ``(row, cosine)``, best first (ties: corpus order).

    Only ``allowed`` rows (a boolean array) are candidates; ``exclude`` (the query paper) never is,
    and nor is any row with a score of 0 or less (it shares nothing with the query).
    """
    scores = similarities(vectors, query)
    if allowed is not None:
        scores = np.where(np.asarray(allowed, dtype=bool), scores, -np.inf)
    if exclude is not None and 0 <= exclude < len(scores):
        scores[exclude] = -np.inf
    candidates = np.flatnonzero(scores > 1e-9)
    if n < len(candidates):
        part = np.argpartition(-scores[candidates], n - 1)[:n]
        candidates = candidates[part]
    order = np.lexsort((candidates, -scores[candidates]))[:n]
    return [(int(candidates[i]), float(scores[candidates[i]])) for i in order]


def like_paper(
    space: VectorSpace, row: int, n: int, allowed: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """The ``n`` papers most like paper ``row`` (itself excluded)."""
    vectors = space.paper_vectors()
    return nearest(vectors, vectors[row], n, allowed=allowed, exclude=row)


def like_text(
    space: VectorSpace, text: str, n: int, allowed: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """The ``n`` papers most like a free text (cut to `MAX_LIKE_TEXT` characters)."""
    return nearest(space.paper_vectors(), space.text_vector(text[:MAX_LIKE_TEXT]), n, allowed=allowed)

"""Topics a researcher recognises: a scikit-learn-style topic model over abstracts.

The default pipeline (``method="kmeans"``), each step measured on ICLR 2026 against OpenReview's
``primary_area`` (``bench/topic_quality.py``):

1. TF-IDF over the terms of :mod:`dashboard.text.tokens` (ML stop list, phrase-bounded bigrams, sublinear tf).
2. LSA: a truncated SVD of it, rows L2-normalised (synonyms and related terms meet). This is the default
   ``representation``; :mod:`dashboard.analytics.representations` registers the others (sentence
   embeddings the caller computes, alone or beside LSA), each with the guidance weight measured for it.
3. Guidance (optional, on by default): each paper's research-area keyword scores from the taxonomy
   (:mod:`dashboard.analytics.areas`) join the LSA vector as a second, smaller view, so topics lean towards
   areas a
   researcher knows. A paper no area rule fires on is not affected.
4. Neighbour smoothing: each paper's vector is blended with those of its nearest neighbours (a few steps
   of propagation over the k-nearest-neighbour graph): one abstract is short and noisy, its neighbours
   say what it is about.
5. Spherical k-means, started from Ward's tree over the papers rather than from random centres, so the
   topics are the corpus's and do not move with the seed; clusters too small to name are dissolved into
   the nearest other topic.
6. Each topic is described by class-based TF-IDF over the original TF-IDF (terms frequent in the topic
   and rare elsewhere); its label is two or three of those terms, distinctive and not overlapping.
7. A paper far from its topic compared to the topic's typical member is an outlier (topic -1).

``method="nmf"`` (NMF on the neighbour-smoothed TF-IDF) and ``method="lda"`` (LDA on counts) are the
alternatives. ``n_topics="auto"`` tries a range of k that fits the corpus size and keeps the k whose
clusters are most stable across seeds and whose top terms are most coherent (NPMI).

>>> model = TopicModel(n_topics=2).fit(["graph neural networks for molecules", "graph networks on molecules",
...                                     "diffusion models for images", "image diffusion sampling"])
>>> sorted(set(model.labels_.tolist()))
[0, 1]
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.cluster.hierarchy
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.decomposition import NMF, LatentDirichletAllocation
from sklearn.metrics import adjusted_mutual_info_score
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from dashboard.analytics.areas import Taxonomy, area_scores, load_taxonomy, spread
from dashboard.analytics.hierarchy import (
    LABEL_SEPARATOR as LABEL_SEPARATOR,  # re-exported: labels are joined by it
)
from dashboard.analytics.hierarchy import make_labels, mass_scores, top_terms
from dashboard.analytics.lsa import lsa_fit
from dashboard.analytics.representations import AUTO, BASE_REPRESENTATION, choose, spread_weight
from dashboard.analytics.representations import get as get_representation
from dashboard.schema import OUTLIER_LABEL, OUTLIER_TOPIC
from dashboard.text.tokens import CountedTexts, make_vectorizer, min_df_for, scan

METHODS: tuple[str, ...] = ("kmeans", "nmf", "lda")
MAX_TOPICS = 60  # more than this is not readable in a dashboard, whatever the corpus size
# The number of topics is a property of the corpus, not of the seed: the auto-k search runs with these
# seeds whatever ``random_state`` is, so five seeds choose the same k and their topics can match
# (issue 52's seed stability; with the seed in the search, runs chose different k). The sample Ward's
# tree is grown on above WARD_UP_TO papers is drawn with it too, for the same reason.
AUTO_K_SEED = 0
# Ward's tree, the k-means start, is grown on at most this many fitted papers: its distance matrix holds
# n^2 / 2 floats (100 MB here), and the k-means iterations then run on every fitted paper.
WARD_UP_TO = 5_000


def topic_range(n_documents: int) -> tuple[int, int]:
    """The range of topic counts ``n_topics="auto"`` considers for a corpus of this size.

    Grows like the square root of the corpus: a handful for 50 abstracts, 10-35 for 1,000, up to 60.

    >>> topic_range(57), topic_range(1000), topic_range(27000)
    ((3, 8), (11, 34), (25, 60))
    """
    if n_documents < 4:
        return (1, max(1, n_documents))
    root = np.sqrt(n_documents / 2)
    low = int(np.clip(round(0.5 * root), 2, 25))
    high = int(np.clip(round(1.5 * root), low + 1, MAX_TOPICS))
    return low, min(high, n_documents - 1)


def _candidate_ks(low: int, high: int, count: int = 6) -> list[int]:
    return sorted({int(round(k)) for k in np.linspace(low, high, count)})


def npmi_coherence(
    top_terms: Sequence[Sequence[str]], doc_terms: sp.spmatrix, vocabulary: dict[str, int]
) -> np.ndarray:
    """Mean NPMI of each topic's term pairs, from document co-occurrence in ``doc_terms`` (docs x terms).

    NPMI is 1 for terms that always occur together, 0 for independent ones, -1 for terms never seen
    together. Terms missing from ``vocabulary`` are skipped.
    """
    binary = sp.csc_matrix(doc_terms, dtype=np.float32)
    binary.data[:] = 1.0
    n_docs = binary.shape[0]
    scores = []
    for terms in top_terms:
        columns = [vocabulary[t] for t in terms if t in vocabulary]
        if len(columns) < 2 or n_docs == 0:
            scores.append(0.0)
            continue
        sub = binary[:, columns]
        together = (sub.T @ sub).toarray() / n_docs
        alone = np.diag(together)
        values = []
        for i, j in itertools.combinations(range(len(columns)), 2):
            p_ij = together[i, j]
            if p_ij <= 0:
                values.append(-1.0)
            elif p_ij >= 1:
                values.append(1.0)
            else:
                values.append(float(np.log(p_ij / (alone[i] * alone[j])) / -np.log(p_ij)))
        scores.append(float(np.mean(values)))
    return np.asarray(scores)


def class_tfidf(doc_terms: sp.spmatrix, labels: np.ndarray, n_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """Class-based TF-IDF (BERTopic's c-TF-IDF) of each topic, and each term's share of its mass per topic.

    Returns ``(scores, shares)``, both topics x terms; outlier papers (label < 0) are left out.
    """
    keep = labels >= 0
    membership = sp.csr_matrix(
        (np.ones(int(keep.sum()), dtype=np.float32), (labels[keep], np.flatnonzero(keep))),
        shape=(n_topics, doc_terms.shape[0]),
    )
    return mass_scores(np.asarray((membership @ doc_terms).todense(), dtype=np.float64))


def ward_centres(vectors: np.ndarray, k: int, max_rows: int = WARD_UP_TO) -> np.ndarray:
    """Starting centres for k-means: the means of the ``k`` groups of Ward's tree over ``vectors``.

    Above ``max_rows`` vectors the tree is grown on a sample drawn with `AUTO_K_SEED` (the same papers
    whatever the model's seed). Identical vectors can leave fewer than ``k`` groups: one centre each.

    >>> ward_centres(np.array([[0.0, 0], [0, 0.1], [5, 5], [5, 5.1]]), 2).round(2).tolist()
    [[5.0, 5.05], [0.0, 0.05]]
    """
    rows = np.arange(len(vectors))
    if len(rows) > max_rows:
        rows = np.sort(np.random.default_rng(AUTO_K_SEED).choice(rows, max_rows, replace=False))
    sample = np.asarray(vectors[rows], dtype=np.float64)
    groups = scipy.cluster.hierarchy.fcluster(scipy.cluster.hierarchy.ward(sample), k, criterion="maxclust")
    return np.vstack([sample[groups == g].mean(axis=0) for g in np.unique(groups)])


def neighbour_graph(vectors: np.ndarray, n_neighbors: int, chunk: int = 1024) -> sp.csr_matrix:
    """Row-normalised k-nearest-neighbour graph by cosine (rows of ``vectors`` must be L2-normalised).

    Computed in row blocks so memory stays at ``chunk x n``; weights are the (non-negative) similarities.
    """
    n = vectors.shape[0]
    k = min(n_neighbors, n - 1)
    if k < 1:
        return sp.csr_matrix((n, n), dtype=np.float32)
    rows, cols, vals = [], [], []
    for start in range(0, n, chunk):
        block = vectors[start : start + chunk] @ vectors.T
        block[np.arange(block.shape[0]), np.arange(start, start + block.shape[0])] = -np.inf
        nearest = np.argpartition(-block, k - 1, axis=1)[:, :k]
        rows.append(np.repeat(np.arange(start, start + block.shape[0]), k))
        cols.append(nearest.ravel())
        vals.append(np.clip(np.take_along_axis(block, nearest, axis=1).ravel(), 0, None))
    graph = sp.csr_matrix(
        (np.concatenate(vals).astype(np.float32), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    return normalize(graph, norm="l1")


def smooth(vectors: np.ndarray, graph: sp.csr_matrix, steps: int) -> np.ndarray:
    """Blend every vector with its neighbours' (``steps`` rounds of propagation), rows L2-normalised."""
    out = vectors
    for _ in range(steps):
        out = normalize(vectors + graph @ out)
    return out


def _threads_for(n_rows: int) -> threadpool_limits | contextlib.nullcontext[None]:
    """One thread for small inputs: starting OpenMP threads costs more than the work they share."""
    return threadpool_limits(limits=1) if n_rows <= 5_000 else contextlib.nullcontext()


@dataclass(frozen=True)
class _Clustering:
    labels: np.ndarray  # per paper, 0..k-1 (before outliers)
    doc_topic: np.ndarray | None  # papers x topics from the method itself (NMF/LDA), else None
    term_scores: np.ndarray | None  # topics x terms from the method itself (NMF/LDA), else None


class TopicModel:
    """Topics of a list of abstracts, scikit-learn style (``fit`` returns self; learned attributes end in _).

    Parameters are stored as given; see the module docstring for the pipeline.

    Learned: ``n_topics_``, ``labels_`` (topic per paper, -1 outlier), ``weights_`` (0..1), ``is_outlier_``,
    ``topic_labels_``, ``top_terms_`` (per topic, (term, weight) pairs, best = 1), ``topic_sizes_``,
    ``representative_docs_`` (per topic, paper indices, most typical first), ``doc_topic_`` (papers x
    topics, rows sum to 1), ``vectorizer_`` and ``terms_`` (its vocabulary), ``tfidf_`` (papers x terms,
    L2 rows), ``lsa_`` (papers x dims, L2 rows), ``lsa_projection_`` (terms x dims: the LSA axes, which
    project new TF-IDF rows; None below two dims), ``embedding_`` (what the clustering saw, L2 rows),
    ``area_scores_`` (papers x taxonomy areas, None without guidance), ``k_scores_`` (the auto-k table:
    k, stability, coherence, score; None when k was given), ``representation_`` (the space's name),
    ``vectors_`` (the papers in that space, L2 rows, before guidance and smoothing; the LSA rows
    themselves for ``"lsa"``), ``guidance_`` (the weight used: ``guidance`` times the space's own, and
    in a space guided by spread times `representations.spread_weight` of the corpus).

    ``guidance`` scales the representation's own measured weight: 1 is that weight, 0 turns it off.

    Above ``max_fit_documents`` papers the neighbour graph and the clustering are fitted on a seeded sample
    and the other papers join their nearest topic, so the cost stays linear in the corpus.

    ``random_state`` draws that sample and seeds NMF and LDA. Given its papers, the default k-means fit
    does not depend on it: the LSA is exact, k is searched with fixed seeds and k-means starts from
    Ward's tree, so topics stay put across seeds (issue 52).
    """

    # The papers' sentence embeddings where the topics were found in that space (set by `analyze`), so
    # "papers like this" reads them instead of encoding the corpus again.
    semantic_: np.ndarray | None = None

    def __init__(
        self,
        n_topics: int | str = "auto",
        method: str = "kmeans",
        random_state: int = 0,
        *,
        ngram_range: tuple[int, int] = (1, 2),
        min_df: int | float | None = None,
        max_df: float = 0.5,
        max_features: int | None = 30_000,
        n_components: int = 40,
        n_neighbors: int = 10,
        smoothing_steps: int = 3,
        guidance: float = 1.0,
        taxonomy: Taxonomy | None = None,
        outlier_ratio: float = 0.6,
        max_fit_documents: int = 30_000,
        auto_k_runs: int = 5,
        representation: str = BASE_REPRESENTATION,
    ) -> None:
        self.n_topics = n_topics
        self.method = method
        self.random_state = random_state
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.smoothing_steps = smoothing_steps
        self.guidance = guidance
        self.taxonomy = taxonomy
        self.outlier_ratio = outlier_ratio
        self.max_fit_documents = max_fit_documents
        self.auto_k_runs = auto_k_runs
        self.representation = representation

    # -- the pipeline, step by step -------------------------------------------------------------------
    def fit(
        self,
        texts: Sequence[str] | None,
        y: object = None,
        *,
        vectors: np.ndarray | None = None,
        counts: CountedTexts | None = None,
        area_scores: np.ndarray | None = None,
    ) -> TopicModel:
        """Fit topics to ``texts`` (a list or Series of abstracts).

        ``vectors`` (one row per text) are the papers' embeddings for a representation that needs them
        (``representation="minilm"``); the default (LSA) computes its own.

        ``counts`` (the texts' 1-2-gram counts, `tokens.CountedTexts`) and ``area_scores`` (their
        `areas.area_scores` with this model's taxonomy) are what an earlier pass over the same texts
        counted (the index build's count map): given, the texts are not read (``texts`` may be None) and
        the model is the one the texts give. Not for ``method="lda"``, which counts the texts itself;
        `tokens.NoTermsLeft` when no term survives (the texts' own path then keeps stop words).
        """
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        name = self.representation
        if name == AUTO:  # the product's rule (`representations.choose`): by size, where vectors are given
            n_texts = counts.counts.shape[0] if counts is not None else len(texts or [])
            name = choose(AUTO, n_texts, can_encode=vectors is not None)
        space = get_representation(name)
        if space.external and vectors is None:
            raise ValueError(
                f"the {space.name!r} representation clusters the caller's embeddings: "
                "pass fit(texts, vectors=...) with one row per text"
            )
        self.representation_ = space.name
        self.guidance_ = float(self.guidance or 0.0) * space.guidance
        if counts is not None and (self.method == "lda" or (self.guidance_ and area_scores is None)):
            raise ValueError("fit(counts=...) needs area_scores= (with guidance) and a method other than lda")
        if counts is None and texts is None:
            raise ValueError("fit needs the texts, or their counts")
        # Scanned once: TF-IDF, the area rules and LDA's counts all read the same terms.
        scanned = [scan(str(t)) for t in texts] if counts is None and texts is not None else None
        n_docs = counts.counts.shape[0] if counts is not None else len(scanned or [])
        self.tfidf_ = self._fit_tfidf(scanned, counts)
        self.lsa_ = self._fit_lsa(self.tfidf_)
        self.vectors_ = space.base(self.lsa_, vectors) if space.name != "lsa" else self.lsa_
        self.embedding_ = self._embed(scanned, self.vectors_, area_scores)
        # Duplicate abstracts are one point to a clustering: never ask for more topics than points.
        n_points = min(n_docs, len(np.unique(np.round(self.embedding_[self._fit_rows], 5), axis=0)))
        self.k_scores_ = self._auto_k_table(n_points) if self.n_topics == "auto" else None
        k = self._chosen_k(n_points)
        self._texts = scanned
        try:
            clustering = self._cluster(k)
        finally:
            del self._texts  # not a learned attribute: the model does not keep the corpus
        self._describe(clustering, k)
        return self

    def _fit_tfidf(self, texts: list[list[str]] | None, counts: CountedTexts | None = None) -> sp.csr_matrix:
        n_docs = counts.counts.shape[0] if counts is not None else len(texts or [])
        min_df = self.min_df if self.min_df is not None else min_df_for(n_docs)
        # A tiny corpus cannot drop terms used by half the papers: those may be all the terms it has.
        max_df = self.max_df if n_docs >= 20 else 1.0
        self.vectorizer_ = make_vectorizer(
            "tfidf",
            ngram_range=self.ngram_range,
            min_df=min_df,
            max_df=max_df,
            max_features=self.max_features,
        )
        try:
            if counts is None:
                matrix = self.vectorizer_.fit_transform(texts)
            else:
                matrix = counts.fit_tfidf(self.vectorizer_)
        except ValueError:  # no term survives (empty texts, or only stop words)
            if counts is not None:
                raise  # counts hold no stop words: the caller fits the texts
            self.vectorizer_ = make_vectorizer("tfidf", ngram_range=self.ngram_range, stop_words=False)
            try:
                matrix = self.vectorizer_.fit_transform(texts)
            except ValueError:
                matrix = sp.csr_matrix((n_docs, 1), dtype=np.float32)
                self.vectorizer_ = None
        self.terms_ = (
            self.vectorizer_.get_feature_names_out()
            if self.vectorizer_ is not None
            else np.array([""], dtype=object)
        )
        return sp.csr_matrix(matrix, dtype=np.float32)

    def _fit_lsa(self, tfidf: sp.csr_matrix) -> np.ndarray:
        n_docs, n_terms = tfidf.shape
        dims = min(self.n_components, n_docs - 1, n_terms - 1)
        self.lsa_projection_ = None
        if dims < 2:
            return normalize(np.asarray(tfidf.todense(), dtype=np.float32))
        # The axes are kept: the index projects the papers outside the fit sample with them (`lsa_fit`).
        coords, self.lsa_projection_ = lsa_fit(tfidf, dims, self.random_state)
        return normalize(coords)

    def _guide(self, texts: list[list[str]] | None, scores: np.ndarray | None = None) -> np.ndarray | None:
        self.area_scores_ = None
        if not self.guidance_:
            return None
        taxonomy = self.taxonomy or load_taxonomy()
        self.area_scores_ = scores if scores is not None else area_scores(texts or [], taxonomy)
        if get_representation(self.representation_).guidance_by_spread:
            self.guidance_ *= spread_weight(spread(self.area_scores_))
            if not self.guidance_:
                return None
        # Square root: two mentions of a strong phrase should not outweigh the text four to one.
        return self.guidance_ * normalize(np.sqrt(self.area_scores_))

    def _embed(
        self, texts: list[list[str]] | None, vectors: np.ndarray, scores: np.ndarray | None = None
    ) -> np.ndarray:
        guide = self._guide(texts, scores)
        base = (normalize(np.hstack([vectors, guide])) if guide is not None else vectors).astype(np.float32)
        self._fit_rows = self._sample_rows(len(vectors))
        self.neighbours_: sp.csr_matrix | None = None
        if self.smoothing_steps and self.n_neighbors:
            sub = base[self._fit_rows]
            graph = neighbour_graph(sub, self.n_neighbors)
            smoothed = base.copy()
            smoothed[self._fit_rows] = smooth(sub, graph, self.smoothing_steps)
            self.neighbours_ = graph
            return smoothed
        return base

    def _sample_rows(self, n_docs: int) -> np.ndarray:
        """The papers the clustering is fitted on: those with a known term (an empty text, such as a
        placeholder abstract left out by `analysis.paper_texts`, never pulls a topic towards it), all
        of them up to ``max_fit_documents``."""
        with_terms = np.flatnonzero(np.diff(self.tfidf_.indptr) > 0)
        rows = with_terms if len(with_terms) >= 2 else np.arange(n_docs)
        if len(rows) <= self.max_fit_documents:
            return rows
        rng = np.random.default_rng(self.random_state)
        return np.sort(rng.choice(rows, self.max_fit_documents, replace=False))

    def _chosen_k(self, n_points: int) -> int:
        if n_points == 0:
            return 0
        if self.n_topics == "auto":
            table = self.k_scores_
            return int(table[int(np.argmax([row["score"] for row in table]))]["k"]) if table else 1
        if isinstance(self.n_topics, str) or int(self.n_topics) < 1:
            raise ValueError(f"n_topics must be a positive integer or 'auto', got {self.n_topics!r}")
        return min(int(self.n_topics), n_points)

    def _auto_k_table(self, n_points: int) -> list[dict[str, float]]:
        """Score each candidate k by stability across seeds plus coherence of its top terms."""
        low, high = topic_range(n_points)
        if high <= 1:
            return [{"k": 1, "stability": 1.0, "coherence": 0.0, "score": 1.0}]
        rng = np.random.default_rng(AUTO_K_SEED)
        rows = self._fit_rows
        if len(rows) > 5_000:  # the criterion is stable on a sample, and the search stays fast
            rows = np.sort(rng.choice(rows, 5_000, replace=False))
        vectors = self.embedding_[rows]
        doc_terms = self.tfidf_[rows]
        vocabulary = {str(t): i for i, t in enumerate(self.terms_)}
        table = []
        for k in _candidate_ks(low, high):
            with _threads_for(len(rows)):
                runs = [
                    KMeans(k, n_init=1, random_state=AUTO_K_SEED + seed).fit_predict(vectors)
                    for seed in range(self.auto_k_runs)
                ]
            stability = float(
                np.mean([adjusted_mutual_info_score(a, b) for a, b in itertools.combinations(runs, 2)])
            )
            coherences = []
            for run in runs:
                scores, _ = class_tfidf(doc_terms, run, k)
                top = [[str(self.terms_[i]) for i in np.argsort(-row)[:10] if row[i] > 0] for row in scores]
                coherences.append(float(np.mean(npmi_coherence(top, doc_terms, vocabulary))))
            coherence = float(np.mean(coherences))
            table.append({"k": k, "stability": stability, "coherence": coherence})
        # The criterion is noisy from one k to the next; what matters is the region where it is high, so
        # each k is scored by the mean over itself and its neighbours in the grid.
        raw = np.array([row["stability"] + row["coherence"] for row in table])
        for i, row in enumerate(table):
            row["score"] = float(raw[max(0, i - 1) : i + 2].mean())
        return table

    def _cluster(self, k: int) -> _Clustering:
        n_docs = self.embedding_.shape[0]
        if k <= 1 or n_docs < 2:
            return _Clustering(np.zeros(n_docs, dtype=int), None, None)
        if self.method == "kmeans":
            return self._kmeans(k)
        if self.method == "nmf":
            return self._nmf(k)
        return self._lda(k)

    def _kmeans(self, k: int) -> _Clustering:
        fit_rows = self._fit_rows
        fitted = self.embedding_[fit_rows]
        # One start from Ward's tree rather than the best of random starts: Ward merges by the same
        # within-topic sum of squares k-means lowers, and its start is the papers', not the seed's, so
        # the topics stay put across seeds (issue 52) where random starts fell in different minima.
        centres = ward_centres(fitted, k)
        with _threads_for(len(fit_rows)):
            kmeans = KMeans(len(centres), init=centres, n_init=1, random_state=self.random_state).fit(fitted)
        centroids = normalize(kmeans.cluster_centers_)
        labels = np.argmax(self.embedding_ @ centroids.T, axis=1)
        labels[fit_rows] = kmeans.labels_
        labels = self._dissolve_small(labels, self.embedding_ @ centroids.T)
        return _Clustering(labels, None, None)

    def _min_topic_size(self, n_docs: int) -> int:
        return int(np.clip(n_docs // 200, 2, 10))

    def _dissolve_small(self, labels: np.ndarray, similarity: np.ndarray) -> np.ndarray:
        """Give the papers of topics too small to name to their next nearest topic."""
        labels = labels.copy()
        minimum = self._min_topic_size(len(labels))
        similarity = similarity.copy()
        while True:
            sizes = np.bincount(labels, minlength=similarity.shape[1])
            alive = sizes >= minimum
            small = np.flatnonzero((sizes > 0) & ~alive)
            if len(small) == 0 or not alive.any():
                return labels
            similarity[:, ~alive] = -np.inf
            moving = np.isin(labels, small)
            labels[moving] = np.argmax(similarity[moving], axis=1)

    def _nmf(self, k: int) -> _Clustering:
        tfidf = self.tfidf_
        matrix = tfidf
        if self.neighbours_ is not None and len(self._fit_rows) == tfidf.shape[0]:
            # One step only: every step multiplies the non-zeros of the matrix by about n_neighbors.
            matrix = sp.csr_matrix(normalize(tfidf + self.neighbours_ @ tfidf))
        nmf = NMF(k, init="nndsvda", random_state=self.random_state, max_iter=300)
        weights = nmf.fit_transform(matrix)
        # Scale so a topic's weight is comparable across topics whatever the norm of its term vector.
        weights = weights * np.linalg.norm(nmf.components_, axis=1)
        doc_topic = normalize(weights + 1e-12, norm="l1")
        labels = self._dissolve_small(np.argmax(doc_topic, axis=1), doc_topic)
        return _Clustering(labels, doc_topic, nmf.components_)

    def _lda(self, k: int) -> _Clustering:
        # LDA models word counts, not TF-IDF: count the same vocabulary the TF-IDF kept.
        # Single words only: on abstracts LDA's topics are clearer without the sparse bigram counts.
        counter = make_vectorizer("count", ngram_range=(1, 1))
        if self.vectorizer_ is not None:
            unigrams = [t for t in self.vectorizer_.vocabulary_ if " " not in t]
            counter.set_params(vocabulary=unigrams or None)
        matrix = counter.fit_transform(self._texts)
        lda = LatentDirichletAllocation(
            k,
            random_state=self.random_state,
            learning_method="online" if matrix.shape[0] > 5_000 else "batch",
            max_iter=50,
        )
        doc_topic = lda.fit_transform(matrix)
        labels = self._dissolve_small(np.argmax(doc_topic, axis=1), doc_topic)
        return _Clustering(labels, doc_topic, lda.components_)

    def _describe(self, clustering: _Clustering, k: int) -> None:
        labels = clustering.labels.copy()
        # Number topics by size, largest first, so topic 0 is the biggest (ties: first paper first).
        present = [t for t in range(max(k, 1)) if (labels == t).any()]
        present.sort(key=lambda t: (-int((labels == t).sum()), int(np.argmax(labels == t))))
        renumber = {old: new for new, old in enumerate(present)}
        labels = np.array([renumber[t] for t in labels], dtype=int)
        n_topics = len(present)
        # How strongly a paper belongs, for every method alike: its own vector (unsmoothed) against its
        # topic's mean, in the representation's space (LSA by default): topics found in embeddings are
        # judged there, not by words they were not found with.
        own = self.vectors_
        text_centroids = normalize(np.vstack([own[labels == t].sum(axis=0) for t in range(n_topics)]))
        similarity = np.clip(own @ text_centroids.T, 0, None)
        strength = similarity[np.arange(len(labels)), labels].astype(float)
        if clustering.doc_topic is not None:
            doc_topic = normalize(clustering.doc_topic[:, present], norm="l1")
        else:
            doc_topic = normalize(similarity**2 + 1e-12, norm="l1")

        outlier = np.zeros(len(labels), dtype=bool)
        for t in range(n_topics):
            members = labels == t
            typical = float(np.median(strength[members]))
            outlier |= members & (strength < self.outlier_ratio * typical)
        outlier |= strength <= 0  # an abstract with no known term belongs nowhere
        # The sizes shown are of the papers a topic keeps once its outliers are set aside: number by
        # those (ties keep the order above), or a topic with more outliers could come first.
        by_size = np.argsort(-np.bincount(labels[~outlier], minlength=n_topics), kind="stable")
        rank = np.empty(n_topics, dtype=int)
        rank[by_size] = np.arange(n_topics)
        labels, doc_topic, present = rank[labels], doc_topic[:, by_size], [present[t] for t in by_size]

        scores, shares = class_tfidf(self.tfidf_, np.where(outlier, -1, labels), n_topics)
        if clustering.term_scores is not None and self.method == "nmf":
            scores = normalize(clustering.term_scores[present], norm="l1") * (scores > 0)
        sizes = np.bincount(labels[~outlier], minlength=n_topics)
        order = list(np.argsort(-sizes, kind="stable"))
        self.n_topics_ = n_topics
        self.topic_labels_ = make_labels(scores, shares, self.terms_, order)
        self.top_terms_ = top_terms(scores, self.terms_)
        self.labels_ = np.where(outlier, OUTLIER_TOPIC, labels)
        self.weights_ = np.round(np.clip(strength, 0, 1), 4)
        self.is_outlier_ = outlier
        self.topic_sizes_ = sizes
        self.doc_topic_ = doc_topic
        self.representative_docs_ = [
            [int(i) for i in sorted(np.flatnonzero(self.labels_ == t), key=lambda i: (-strength[i], i))[:10]]
            for t in range(n_topics)
        ]

    # -- using the fitted model ----------------------------------------------------------------------
    def topic_label(self, topic: int) -> str:
        """The label of a topic number (``"Outlier"`` for -1)."""
        return OUTLIER_LABEL if topic == OUTLIER_TOPIC else self.topic_labels_[topic]

    def paper_labels(self) -> list[str]:
        """The topic label of every fitted paper."""
        return [self.topic_label(int(t)) for t in self.labels_]

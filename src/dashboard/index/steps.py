"""The steps of building an index, as pure functions over one partition of papers at a time.

A build is two maps and a fit, so it scales linearly and can be handed to Dask or Spark unchanged:

1. **count** (map, one partition of the paper table at a time): every abstract is scanned once
   (:func:`dashboard.text.tokens.scan`) into the n-gram counts of the Terms page (1-3 words, abstract only),
   the counts of the topic text (title and abstract, 1-2 words, what the TF-IDF sees), the
   research-area keyword scores and the search words (:mod:`dashboard.search.wordindex`).
2. **fit** (once, on a seeded sample of at most ``fit_size`` papers): the topic model of
   :mod:`dashboard.analytics.topics`, exactly as :func:`dashboard.analytics.analysis.analyze` fits it. Up
   to ``fit_size``
   papers the sample is the whole corpus and the index holds exactly what ``analyze`` computes.
3. **assign** (map): each partition's TF-IDF rows, LSA vectors, embedding, topic, weight and outlier
   flag from the fitted model's parts (:class:`TopicTransform`): matrix products, no refitting.

Partitions meet only in small reductions: the vocabulary's document frequencies (a sum) and the
search words (a sorted union); the 2-D map needs the embeddings of all papers (tens of floats each).

>>> import pandas as pd
>>> part = pd.DataFrame({"title": ["Graph nets", ""], "title_is_derived": [False, True],
...                      "abstract_clean": ["Graph neural networks.", "Diffusion models."],
...                      "method_names": [[], []]})
>>> counts = count_partition(part, load_taxonomy())
>>> sorted(counts.vocabulary[i] for i in counts.abstract_counts[0].indices)
['graph', 'graph neural']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from dashboard.analytics.areas import Taxonomy, area_scores, load_taxonomy
from dashboard.analytics.topics import TopicModel
from dashboard.filters import search_text
from dashboard.search.wordindex import WordIndex
from dashboard.text.tokens import CountedTexts, ngrams_of_scan, scan

__all__ = [
    "PartitionCounts",
    "TopicTransform",
    "count_partition",
    "counted_sample",
    "load_taxonomy",
    "lsa_projection",
    "remap_columns",
    "select_vocabulary",
    "term_counts_min_df",
    "tfidf_rows",
]

TERM_NGRAMS: tuple[int, ...] = (1, 2, 3)


def term_counts_min_df(n_papers: int) -> int:
    """The document-frequency floor of the Terms page's counts (the rule of `terms.TermCounts.build`)."""
    return 2 if n_papers >= 5_000 else 1


# ------------------------------------------------------------------------------------ 1. count


@dataclass(frozen=True)
class PartitionCounts:
    """What the count step learns from one partition (rows in partition order).

    ``vocabulary`` is the partition's own (first-seen order); both count matrices index into it.
    """

    vocabulary: list[str]
    abstract_counts: sp.csr_matrix  # papers x vocabulary: 1-3-grams of the abstract (Terms page)
    topic_counts: sp.csr_matrix  # papers x vocabulary: 1-2-grams of title + abstract (TF-IDF input)
    area_scores: np.ndarray  # papers x areas (float32)
    words: WordIndex | None  # search words (None when counted apart: `count_partition(words=False)`)


def _topic_scan(title: str, title_is_derived: bool, abstract: str) -> tuple[list[str], list[str]]:
    """(scan of the title part, scan of the abstract): `analysis.paper_texts` joins them with ". "."""
    use_title = bool(title.strip()) and not title_is_derived
    return (scan(title) if use_title else []), scan(abstract)


def count_partition(papers: pd.DataFrame, taxonomy: Taxonomy, *, words: bool = True) -> PartitionCounts:
    """Map step 1: scan each paper once and count everything later steps need.

    ``papers`` needs ``title``, ``title_is_derived``, ``abstract_clean`` and ``method_names``. The
    search words have their own tokens (`filters.search_text`); ``words=False`` leaves them out, for a
    build that indexes them in another task while the topic model is fitted.
    """
    vocabulary: dict[str, int] = {}
    lookup = vocabulary.setdefault
    abstract_ids: list[int] = []
    abstract_ptr = [0]
    topic_ids: list[int] = []
    topic_ptr = [0]
    scans: list[list[str]] = []
    titles = papers["title"].fillna("").astype(str).tolist()
    derived = papers["title_is_derived"].fillna(False).astype(bool).tolist()
    abstracts = papers["abstract_clean"].fillna("").astype(str).tolist()
    if "has_abstract" in papers.columns:  # placeholder abstracts: no terms, no topic (as analysis does)
        keep = papers["has_abstract"].fillna(True).astype(bool).tolist()
        abstracts = [text if kept else "" for text, kept in zip(abstracts, keep, strict=True)]
        titles = [title if kept else "" for title, kept in zip(titles, keep, strict=True)]
    for title, is_derived, abstract in zip(titles, derived, abstracts, strict=True):
        title_terms, abstract_terms = _topic_scan(title, is_derived, abstract)
        grams = ngrams_of_scan(abstract_terms, (1, 3))
        ids = [lookup(gram, len(vocabulary)) for gram in grams]
        abstract_ids.extend(ids)
        abstract_ptr.append(len(abstract_ids))
        if title_terms and "$" in title:
            # A formula can run from the title into the abstract: scan the topic text as one, as
            # `analysis.paper_texts` gives it to the topic model.
            joined = scan(f"{title}. {abstract}")
            topic_ids.extend(lookup(gram, len(vocabulary)) for gram in ngrams_of_scan(joined, (1, 2)))
            scans.append(joined)
        else:
            # The topic text is "title. abstract": the full stop breaks phrases, so its n-grams are the
            # title's and the abstract's 1-2-grams, in that order.
            topic_ids.extend(lookup(gram, len(vocabulary)) for gram in ngrams_of_scan(title_terms, (1, 2)))
            topic_ids.extend(i for i, gram in zip(ids, grams, strict=True) if gram.count(" ") < 2)
            scans.append([*title_terms, "", *abstract_terms] if title_terms else abstract_terms)
        topic_ptr.append(len(topic_ids))
    shape = (len(abstracts), len(vocabulary))
    return PartitionCounts(
        vocabulary=list(vocabulary),
        abstract_counts=_counts(abstract_ids, abstract_ptr, shape),
        topic_counts=_counts_in_order(topic_ids, topic_ptr, shape),
        area_scores=area_scores(scans, taxonomy).astype(np.float32),
        words=WordIndex.build(search_text(papers)) if words else None,
    )


def _counts(ids: list[int], indptr: list[int], shape: tuple[int, int]) -> sp.csr_matrix:
    data = np.ones(len(ids), dtype=np.int32)
    matrix = sp.csr_matrix(
        (data, np.asarray(ids, dtype=np.int32), np.asarray(indptr, dtype=np.int64)), shape=shape
    )
    matrix.sum_duplicates()  # one entry per (paper, term), counts summed, columns sorted
    return matrix


def _counts_in_order(ids: list[int], indptr: list[int], shape: tuple[int, int]) -> sp.csr_matrix:
    """Like `_counts`, but each row's terms in the order they first appear in its text (what the topic
    fit needs to number terms as a vectoriser reading the texts would: `counted_sample`)."""
    n_rows, width = shape
    columns = np.asarray(ids, dtype=np.int64)
    lengths: np.ndarray = np.diff(np.asarray(indptr, dtype=np.int64))
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), lengths)
    keys, first, counts = np.unique(rows * max(width, 1) + columns, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")  # row by row (rows only grow), then by first appearance
    keys = keys[order]
    pointer = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // max(width, 1), minlength=n_rows), out=pointer[1:])
    return sp.csr_matrix(
        (counts[order].astype(np.int32), (keys % max(width, 1)).astype(np.int32), pointer), shape=shape
    )


def counted_sample(
    blocks: Sequence[tuple[pa.Array, sp.csr_matrix]],
) -> CountedTexts:
    """The topic-text counts of a sample as `tokens.CountedTexts`, from its rows in each partition.

    ``blocks`` are, partition after partition, the partition's vocabulary and its ``topic_counts`` rows
    of the sample (in row order, each row's terms in order of first appearance: `count_partition`).
    Terms are numbered by first appearance over the whole sample, as a vectoriser reading the sample's
    texts numbers them, and each row's entries are sorted by that number, as its count sorts them.
    """
    used_terms = []
    local_to_used = []
    offset = 0
    for vocabulary, rows in blocks:
        used = np.unique(rows.indices)
        lookup = np.full(len(vocabulary), -1, dtype=np.int64)
        lookup[used] = np.arange(offset, offset + len(used))
        local_to_used.append(lookup)
        used_terms.append(vocabulary.take(pa.array(used)).cast(pa.large_string()))
        offset += len(used)
    # One id per distinct term across the partitions (a dictionary: ids in order of first appearance).
    encoded = pc.dictionary_encode(pa.chunked_array(used_terms, type=pa.large_string()).combine_chunks())
    distinct = np.asarray(encoded.indices, dtype=np.int64)
    names = encoded.dictionary
    term = (
        np.concatenate(
            [distinct[lookup[rows.indices]] for lookup, (_, rows) in zip(local_to_used, blocks, strict=True)]
        )
        if blocks
        else np.zeros(0, dtype=np.int64)
    )
    data = np.concatenate([rows.data for _, rows in blocks]) if blocks else np.zeros(0, dtype=np.int32)
    lengths = np.concatenate([np.diff(rows.indptr) for _, rows in blocks]) if blocks else np.zeros(0)
    found, first = np.unique(term, return_index=True)
    by_appearance = found[np.argsort(first, kind="stable")]
    number = np.empty(len(names), dtype=np.int64)
    number[by_appearance] = np.arange(len(by_appearance))
    pointer = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=pointer[1:])
    counts = sp.csr_matrix(
        (data, number[term].astype(np.int32), pointer), shape=(len(lengths), len(by_appearance))
    )
    counts.sort_indices()
    return CountedTexts(counts, names.take(pa.array(by_appearance)).to_pylist())


# ------------------------------------------------------------------------------------ reductions


def select_vocabulary(terms: pa.Array, document_frequency: np.ndarray, min_df: int) -> pa.Array:
    """Terms used by at least ``min_df`` papers, sorted as scikit-learn's vectorisers sort them.

    Arrow sorts UTF-8 bytes, which is code point order: the order of Python's ``sorted``.
    """
    kept = terms.filter(pa.array(np.asarray(document_frequency) >= min_df))
    return kept.take(pc.sort_indices(kept)).cast(pa.large_string())


def remap_columns(matrix: sp.csr_matrix, mapping: np.ndarray, n_columns: int) -> sp.csr_matrix:
    """``matrix`` with column ``j`` moved to ``mapping[j]``; columns mapped to -1 are dropped."""
    matrix = sp.csr_matrix(matrix)
    target = mapping[matrix.indices]
    kept = target >= 0
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    indptr = np.zeros(matrix.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[kept], minlength=matrix.shape[0]), out=indptr[1:])
    out = sp.csr_matrix(
        (matrix.data[kept], target[kept].astype(np.int32), indptr), shape=(matrix.shape[0], n_columns)
    )
    out.sort_indices()
    return out


def column_mapping(local_terms: Sequence[str] | pa.Array, vocabulary: pa.Array | np.ndarray) -> np.ndarray:
    """For each local term, its column in ``vocabulary``, -1 when absent."""
    terms = (
        local_terms if isinstance(local_terms, pa.Array) else pa.array(list(local_terms), pa.large_string())
    )
    values = vocabulary if isinstance(vocabulary, pa.Array) else pa.array(list(vocabulary), pa.large_string())
    found = pc.index_in(terms.cast(pa.large_string()), value_set=values.cast(pa.large_string()))
    return np.asarray(found.fill_null(-1), dtype=np.int64)


# ------------------------------------------------------------------------------------ 3. assign


def tfidf_rows(counts: sp.csr_matrix, idf: np.ndarray) -> sp.csr_matrix:
    """TF-IDF as `tokens.make_vectorizer("tfidf")` computes it: sublinear tf, idf, rows L2-normalised."""
    matrix = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    matrix.data = np.log(matrix.data) + 1.0
    matrix = matrix @ sp.diags(np.asarray(idf, dtype=np.float64))
    return sp.csr_matrix(normalize(matrix), dtype=np.float32)


def lsa_projection(model: TopicModel) -> np.ndarray:
    """The terms x dims matrix that maps TF-IDF rows to the model's LSA directions: the axes its fit kept
    (`dashboard.analytics.lsa.lsa_fit`; none below two dimensions)."""
    if getattr(model, "lsa_projection_", None) is None:
        raise ValueError("too few papers or terms for an LSA projection")
    return np.asarray(model.lsa_projection_, dtype=np.float64)


@dataclass(frozen=True)
class TopicTransform:
    """What assigning new papers to a fitted model's topics needs, as plain arrays.

    ``projection`` (terms x dims) maps TF-IDF rows to LSA directions; ``centroids`` (topics x dims of
    the embedding) pick each paper's topic; ``text_centroids`` (topics x LSA dims) and ``typical``
    (per topic, the median membership strength of its fitted papers) decide outliers, as the model does.
    """

    idf: np.ndarray
    projection: np.ndarray
    guidance: float
    centroids: np.ndarray
    text_centroids: np.ndarray
    typical: np.ndarray
    outlier_ratio: float

    @classmethod
    def from_model(cls, model: TopicModel) -> TopicTransform:
        """Read the parts of a fitted (k-means) `TopicModel`; checks the projection reproduces its LSA."""
        if getattr(model, "representation_", "lsa") != "lsa":  # new papers are placed by the LSA projection
            raise ValueError(f"an index assigns new papers in LSA, not {model.representation_!r}")
        projection = lsa_projection(model)
        agreement = np.einsum("ij,ij->i", normalize(np.asarray(model.tfidf_ @ projection)), model.lsa_)
        if len(agreement) and float(np.min(agreement)) < 0.99:
            raise RuntimeError(
                "the topic model's LSA step could not be reproduced (cosine "
                f"{float(np.min(agreement)):.3f}): dashboard.index.steps.lsa_projection no longer matches "
                "dashboard.analytics.topics.TopicModel._fit_lsa"
            )
        n_topics = model.n_topics_
        assigned = model.labels_.copy()
        centroids = _unit_means(model.embedding_, assigned, n_topics)
        # Outliers (-1) keep the topic nearest to them, as the model saw them before marking them.
        outliers = assigned < 0
        if outliers.any():
            assigned[outliers] = np.argmax(model.embedding_[outliers] @ centroids.T, axis=1)
        text_centroids = _unit_means(model.lsa_, assigned, n_topics)
        strength = np.einsum("ij,ij->i", model.lsa_, text_centroids[assigned])
        typical = np.array([_median(strength[assigned == t]) for t in range(n_topics)])
        vectorizer = model.vectorizer_
        idf = vectorizer.idf_ if vectorizer is not None else np.ones(model.tfidf_.shape[1])
        return cls(
            idf=np.asarray(idf, dtype=np.float64),
            projection=np.asarray(projection, dtype=np.float64),
            guidance=float(getattr(model, "guidance_", model.guidance) or 0.0),
            centroids=centroids,
            text_centroids=text_centroids,
            typical=typical,
            outlier_ratio=float(model.outlier_ratio),
        )

    def assign(self, tfidf: sp.csr_matrix, scores: np.ndarray) -> dict[str, np.ndarray]:
        """Map step 3: LSA, embedding, topic, weight, outlier flag and topic mix of each new paper.

        ``tfidf`` are the papers' TF-IDF rows over the model's vocabulary, ``scores`` their area scores.
        """
        lsa = normalize(np.asarray(tfidf @ self.projection)).astype(np.float32)
        embedding = lsa
        if self.guidance:
            guide = self.guidance * normalize(np.sqrt(np.asarray(scores, dtype=np.float64)))
            embedding = normalize(np.hstack([lsa, guide])).astype(np.float32)
        topic = np.argmax(embedding @ self.centroids.T, axis=1)
        similarity = np.clip(lsa @ self.text_centroids.T, 0, None)
        strength = similarity[np.arange(len(topic)), topic]
        outlier = (strength < self.outlier_ratio * self.typical[topic]) | (strength <= 0)
        return {
            "lsa": lsa,
            "embedding": embedding,
            "topic": np.where(outlier, -1, topic).astype(np.int64),
            "hard_topic": topic.astype(np.int64),
            "topic_weight": np.round(np.clip(strength, 0, 1), 4).astype(np.float64),
            "is_outlier": outlier,
            "doc_topic": normalize(similarity**2 + 1e-12, norm="l1"),
        }


def _median(values: np.ndarray) -> float:
    return float(np.median(values)) if len(values) else 0.0


def _unit_means(vectors: np.ndarray, labels: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the L2-normalised sum of its members' vectors (zeros for an empty group)."""
    members = sp.csr_matrix(
        (np.ones(int((labels >= 0).sum())), (labels[labels >= 0], np.flatnonzero(labels >= 0))),
        shape=(n_groups, len(labels)),
    )
    return normalize(np.asarray(members @ vectors, dtype=np.float64))

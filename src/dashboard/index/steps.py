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
>>> sorted(counts.vocabulary[int(i)].as_py() for i in counts.abstract_counts[0].indices)
['graph', 'graph neural', 'graph neural network']
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
from dashboard.analytics.representations import get as get_representation
from dashboard.analytics.topics import TopicModel
from dashboard.filters import search_text
from dashboard.search.wordindex import WordIndex
from dashboard.text.batch import ScannedBatch, Vocabulary, ngram_table, scan_many
from dashboard.text.tokens import CountedTexts

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

    ``vocabulary`` is the partition's own (in no particular order: later steps find terms by their
    text); both count matrices index into it.
    """

    vocabulary: pa.Array  # large_string
    abstract_counts: sp.csr_matrix  # papers x vocabulary: 1-3-grams of the abstract (Terms page)
    topic_counts: sp.csr_matrix  # papers x vocabulary: 1-2-grams of title + abstract (TF-IDF input)
    area_scores: np.ndarray  # papers x areas (float32)
    words: WordIndex | None  # search words (None when counted apart: `count_partition(words=False)`)


def count_partition(papers: pd.DataFrame, taxonomy: Taxonomy, *, words: bool = True) -> PartitionCounts:
    """Map step 1: scan each paper once and count everything later steps need.

    ``papers`` needs ``title``, ``title_is_derived``, ``abstract_clean`` and ``method_names``. The
    search words have their own tokens (`filters.search_text`); ``words=False`` leaves them out, for a
    build that indexes them in another task while the topic model is fitted.

    The texts are scanned and cut into n-grams all at once (:mod:`dashboard.text.batch`); the counts are
    those of `tokens.scan` and `tokens.ngrams_of_scan` text by text.
    """
    titles = papers["title"].fillna("").astype(str).tolist()
    derived = papers["title_is_derived"].fillna(False).astype(bool).tolist()
    abstracts = papers["abstract_clean"].fillna("").astype(str).tolist()
    if "has_abstract" in papers.columns:  # placeholder abstracts: no terms, no topic (as analysis does)
        keep = papers["has_abstract"].fillna(True).astype(bool).tolist()
        abstracts = [text if kept else "" for text, kept in zip(abstracts, keep, strict=True)]
        titles = [title if kept else "" for title, kept in zip(titles, keep, strict=True)]
    n = len(abstracts)
    shared = Vocabulary()  # term ids (and each distinct piece's terms) are shared by every block
    blocks = [
        _count_block(titles[start : start + _COUNTED_AT_ONCE], derived[start : start + _COUNTED_AT_ONCE],
                     abstracts[start : start + _COUNTED_AT_ONCE], shared, taxonomy)
        for start in range(0, n, _COUNTED_AT_ONCE)
    ]  # fmt: skip
    # One vocabulary for the partition: each block's n-grams numbered by a dictionary over all of them.
    encoded = pc.dictionary_encode(
        pa.chunked_array([block.vocabulary for block in blocks], type=pa.large_string()).combine_chunks()
    )
    numbers = np.asarray(encoded.indices, dtype=np.int32)
    shape = (n, len(encoded.dictionary))
    columns: dict[str, list[np.ndarray]] = {"abstract": [], "topic": []}
    lengths: dict[str, list[np.ndarray]] = {"abstract": [], "topic": []}
    offset = 0
    for block in blocks:
        mapping = numbers[offset : offset + len(block.vocabulary)]
        offset += len(block.vocabulary)
        for name, (block_columns, pointer) in (("abstract", block.abstract), ("topic", block.topic)):
            columns[name].append(mapping[block_columns])
            lengths[name].append(np.diff(pointer))

    def joined(name: str) -> tuple[np.ndarray, np.ndarray]:
        pointer = np.zeros(n + 1, dtype=np.int64)
        if n:
            np.cumsum(np.concatenate(lengths[name]), out=pointer[1:])
        return (np.concatenate(columns[name]) if blocks else np.zeros(0, np.int32)), pointer

    return PartitionCounts(
        vocabulary=encoded.dictionary,
        abstract_counts=_counts(*joined("abstract"), shape),
        topic_counts=_counts_in_order(*joined("topic"), shape),
        area_scores=(
            np.vstack([block.area_scores for block in blocks])
            if blocks
            else np.zeros((0, len(taxonomy.areas)), dtype=np.float32)
        ),
        words=WordIndex.build(search_text(papers)) if words else None,
    )


# Papers counted at once: the arrays of a block's n-grams take about 40 MB per thousand papers.
_COUNTED_AT_ONCE = 5_000


@dataclass(frozen=True)
class _Block:
    """What `_count_block` counts in a block of papers: its own vocabulary, and for the abstracts'
    1-3-grams and the topic texts' 1-2-grams the columns (into that vocabulary) of every occurrence,
    paper by paper, with CSR row pointers."""

    vocabulary: pa.Array
    abstract: tuple[np.ndarray, np.ndarray]
    topic: tuple[np.ndarray, np.ndarray]
    area_scores: np.ndarray


def _count_block(
    titles: list[str], derived: list[bool], abstracts: list[str], shared: Vocabulary, taxonomy: Taxonomy
) -> _Block:
    n = len(abstracts)
    abstract_scan = scan_many(abstracts, shared)
    # The topic text is "title. abstract" (`analysis.paper_texts`); a derived title is not used.
    title_scan = scan_many(
        [
            title if title.strip() and not is_derived else ""
            for title, is_derived in zip(titles, derived, strict=True)
        ],
        shared,
    )
    has_title = title_scan.lengths() > 0
    # A formula can run from the title into the abstract: such a topic text is scanned as one.
    joined_rows = np.array([i for i in np.flatnonzero(has_title) if "$" in titles[i]], dtype=np.int64)
    joined_scan = scan_many([f"{titles[i]}. {abstracts[i]}" for i in joined_rows], shared)
    apart = np.ones(n, dtype=bool)
    apart[joined_rows] = False
    # Each paper's topic text as one stream: its title, a break, its abstract, a break (the full stop
    # between them breaks phrases), or the joined scan and a break.
    separate = np.flatnonzero(apart)
    topic_ids, topic_starts = _per_text(
        n,
        [
            (title_scan, separate, separate),
            (abstract_scan, separate, separate),
            (joined_scan, joined_rows, np.arange(len(joined_rows))),
        ],
    )
    grams = ngram_table(np.concatenate([abstract_scan.ids, topic_ids]), shared.terms, 3)
    in_abstract = grams.position < len(abstract_scan.ids)
    n_pairs = len(grams.codes[0]) + len(grams.codes[1])  # columns of 1- and 2-word terms come first
    in_topic = ~in_abstract & (grams.column < n_pairs)
    # Only the n-grams counted somewhere make the vocabulary (a title's triples are not).
    used, column = np.unique(
        np.concatenate([grams.column[in_abstract], grams.column[in_topic]]), return_inverse=True
    )
    column = column.reshape(-1).astype(np.int32)
    n_abstract = int(in_abstract.sum())
    abstract_rows = np.searchsorted(abstract_scan.starts, grams.position[in_abstract], side="right") - 1
    topic_rows = (
        np.searchsorted(topic_starts, grams.position[in_topic] - len(abstract_scan.ids), side="right") - 1
    )
    return _Block(
        vocabulary=grams.vocabulary().take(pa.array(used)),
        abstract=(column[:n_abstract], _pointer(abstract_rows, n)),
        topic=(column[n_abstract:], _pointer(topic_rows, n)),
        area_scores=area_scores(
            _area_texts(topic_ids, topic_starts, grams.terms, apart & ~has_title), taxonomy
        ),
    )


def _pointer(rows: np.ndarray, n_rows: int) -> np.ndarray:
    """CSR row pointers of entries listed row by row (``rows`` never goes down)."""
    pointer = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=pointer[1:])
    return pointer


def _per_text(
    n_texts: int, parts: Sequence[tuple[ScannedBatch, np.ndarray, np.ndarray]]
) -> tuple[np.ndarray, np.ndarray]:
    """One stream of term ids where text ``i`` is, in order, each part's text for ``i`` with its break.

    ``parts`` are (batch, rows, texts): the batch's text ``texts[j]`` goes into text ``rows[j]`` of the
    result.
    """
    sizes = np.zeros(n_texts, dtype=np.int64)
    pieces = []
    for batch, rows, texts in parts:
        segment, first = np.diff(batch.starts)[texts], batch.starts[texts]
        np.add.at(sizes, rows, segment)
        pieces.append((batch.ids, rows, first, segment))
    starts = np.zeros(n_texts + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    out = np.zeros(int(starts[-1]), dtype=np.int64)
    cursor = starts[:-1].copy()
    for ids, rows, first, segment in pieces:
        owner = np.repeat(np.arange(len(rows)), segment)
        offset = np.arange(int(segment.sum())) - np.repeat(np.cumsum(segment) - segment, segment)
        out[cursor[rows][owner] + offset] = ids[first[owner] + offset]
        cursor[rows] += segment
    return out, starts


def _area_texts(
    topic_ids: np.ndarray, topic_starts: np.ndarray, terms: pa.Array, untitled: np.ndarray
) -> pa.ListArray:
    """Each paper's scanned topic text for the area rules, as `tokens.scan` gives it: the title's terms,
    an empty term, the abstract's; the abstract's alone for an ``untitled`` paper (whose stream starts
    with its empty title's break); without the closing break."""
    keep = np.ones(len(topic_ids), dtype=bool)
    keep[topic_starts[1:] - 1] = False
    keep[topic_starts[:-1][untitled]] = False
    # Every paper's stream holds at least its closing break, so no slice of reduceat is empty.
    lengths = (
        np.add.reduceat(keep.astype(np.int64), topic_starts[:-1]) if len(untitled) else np.zeros(0, np.int64)
    )
    offsets = np.zeros(len(untitled) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return pa.LargeListArray.from_arrays(pa.array(offsets), terms.take(pa.array(topic_ids[keep])))


def _counts(ids: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    data = np.ones(len(ids), dtype=np.int32)
    matrix = sp.csr_matrix(
        (data, np.asarray(ids, dtype=np.int32), np.asarray(indptr, dtype=np.int64)), shape=shape
    )
    matrix.sum_duplicates()  # one entry per (paper, term), counts summed, columns sorted
    return matrix


def _counts_in_order(ids: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
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
    ``space`` is the model's representation (`dashboard.analytics.representations`): in one that needs
    embeddings, `assign` takes the new papers' ``vectors`` too.
    """

    idf: np.ndarray
    projection: np.ndarray
    guidance: float
    centroids: np.ndarray
    text_centroids: np.ndarray
    typical: np.ndarray
    outlier_ratio: float
    space: str = "lsa"

    @classmethod
    def from_model(cls, model: TopicModel) -> TopicTransform:
        """Read the parts of a fitted (k-means) `TopicModel`; checks the projection reproduces its LSA."""
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
            space=str(getattr(model, "representation_", "lsa")),
        )

    def assign(
        self, tfidf: sp.csr_matrix, scores: np.ndarray, vectors: np.ndarray | None = None
    ) -> dict[str, np.ndarray]:
        """Map step 3: LSA, embedding, topic, weight, outlier flag and topic mix of each new paper.

        ``tfidf`` are the papers' TF-IDF rows over the model's vocabulary, ``scores`` their area scores,
        ``vectors`` their sentence embeddings (required in a space that clusters them).
        """
        lsa = normalize(np.asarray(tfidf @ self.projection)).astype(np.float32)
        embedding = get_representation(self.space).base(lsa, vectors) if self.space != "lsa" else lsa
        if self.guidance:
            guide = self.guidance * normalize(np.sqrt(np.asarray(scores, dtype=np.float64)))
            embedding = normalize(np.hstack([embedding, guide])).astype(np.float32)
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

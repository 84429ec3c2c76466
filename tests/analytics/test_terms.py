"""Terms: frequencies over subsets, weighted log-odds (Monroe et al. 2008) on corpora whose answer is known,
distinctive terms of every group, keyword in context."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dashboard.analytics import terms
from dashboard.analytics.terms import (
    TermCounts,
    keyword_in_context,
    log_odds_z,
    term_pattern,
    texts_at,
    texts_where,
)

CORPUS = [
    "Graph neural networks on graphs. Graph kernels.",  # 0
    "Graph transformers for molecules.",  # 1
    "Diffusion models generate images.",  # 2
    "Image diffusion with guidance.",  # 3
    "Kernels for images and graphs.",  # 4
]
GRAPH_PAPERS = np.array([True, True, False, False, False])


def test_log_odds_by_hand() -> None:
    # in: 10 x graph, 0 x image; out: the reverse; prior 1 each (Monroe et al. eq. 16, 19, 20)
    z = log_odds_z(np.array([10, 0]), np.array([0, 10]), np.array([1.0, 1.0]))
    delta = math.log(11 / 1) - math.log(1 / 11)
    assert z[0] == pytest.approx(delta / math.sqrt(1 / 11 + 1 / 1))
    assert z[1] == pytest.approx(-z[0])


@pytest.mark.parametrize(
    ("inside", "outside", "signs"),
    [
        ([10, 10, 10], [10, 10, 10], [0, 0, 0]),  # same use: nothing distinctive
        ([30, 5, 10], [5, 30, 10], [1, -1, 0]),  # mirrored
        ([100, 0, 0], [50, 25, 25], [1, -1, -1]),  # only graph inside
    ],
)
def test_log_odds_signs(inside: list[int], outside: list[int], signs: list[int]) -> None:
    z = log_odds_z(np.array(inside), np.array(outside), np.full(3, 10.0))
    assert np.sign(np.round(z, 6)).tolist() == signs


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 50), min_size=3, max_size=3),
    st.lists(st.integers(0, 50), min_size=3, max_size=3),
)
def test_log_odds_is_antisymmetric(inside: list[int], outside: list[int]) -> None:
    prior = np.array([1.0, 2.0, 3.0])
    forward = log_odds_z(np.array(inside), np.array(outside), prior)
    assert np.allclose(forward, -log_odds_z(np.array(outside), np.array(inside), prior))


def test_term_frequencies_of_a_subset() -> None:
    counts = TermCounts.build(CORPUS)
    frame = counts.term_frequencies(GRAPH_PAPERS)
    assert frame.iloc[0].to_dict() == {"term": "graph", "count": 4, "doc_freq": 2}
    assert set(frame["term"]) == {"graph", "kernel", "transformer", "molecule"}
    everything = counts.term_frequencies()
    assert everything.set_index("term").loc["image", "count"] == 3
    assert counts.word_cloud(GRAPH_PAPERS, top=2) == {"graph": 4, "kernel": 1}


def test_a_mask_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError, match="one per paper"):
        TermCounts.build(CORPUS).term_frequencies(np.array([True]))


@pytest.mark.parametrize(
    ("ngram", "keep_stop_words", "expected_top"),
    [
        (1, False, "graph"),
        (1, True, "graph"),
        (2, False, "graph neural"),
        (3, False, "graph neural network"),
        (2, True, "for image"),  # the "for" that the stop list drops
    ],
)
def test_ngram_sizes_and_stop_words(ngram: int, keep_stop_words: bool, expected_top: str) -> None:
    counts = TermCounts.build(CORPUS, ngram=ngram, keep_stop_words=keep_stop_words)
    assert expected_top in set(counts.term_frequencies()["term"])
    assert all(len(term.split()) == ngram for term in counts.terms)


def test_keep_stop_words() -> None:
    assert "the" not in TermCounts.build(["the graph"]).terms
    assert "the" in TermCounts.build(["the graph"], keep_stop_words=True).terms


def test_build_reads_the_paper_table() -> None:
    table = pd.DataFrame({"abstract_clean": ["graph kernels", None], "abstract": ["x", "y"]})
    assert TermCounts.build(table).term_frequencies()["term"].tolist() == ["graph", "kernel"]


def test_distinctive_terms_of_a_subset() -> None:
    table = TermCounts.build(CORPUS).distinctive_terms(GRAPH_PAPERS)
    over = table[table["z"] > 0]
    assert over.iloc[0]["term"] == "graph"
    assert {"image", "diffusion"} <= set(table.loc[table["z"] < 0, "term"])
    assert over.iloc[0][["count_in", "count_out"]].tolist() == [4, 1]
    assert table["z"].is_monotonic_decreasing


def test_distinctive_terms_need_a_rest() -> None:
    assert TermCounts.build(CORPUS).distinctive_terms(np.ones(5, dtype=bool)).empty


def test_group_distinctive_terms() -> None:
    groups = pd.Series(["graphs", "graphs", "images", "images", ["graphs", "images"]])
    table = TermCounts.build(CORPUS).group_distinctive_terms(groups, top=1)
    assert table.set_index("group")["term"].to_dict() == {"graphs": "graph", "images": "image"}
    assert (table["z"] > 0).all()


@pytest.mark.parametrize(
    "groups",
    [["a"] * 5, ["a", "", None, float("nan"), "a"], [[], [], [], [], []]],
)
def test_fewer_than_two_groups_give_nothing(groups: list[object]) -> None:
    assert TermCounts.build(CORPUS).group_distinctive_terms(groups).empty


def test_groups_only_count_masked_papers() -> None:
    groups = ["x", "x", "y", "y", "z"]
    table = TermCounts.build(CORPUS).group_distinctive_terms(groups, mask=np.array([1, 1, 1, 1, 0], bool))
    assert set(table["group"]) == {"x", "y"}


@pytest.mark.parametrize(
    ("term", "text", "found"),
    [
        ("graph neural network", "Graph-Neural Networks rock", "Graph-Neural Networks"),
        ("study", "two studies", "studies"),
        ("model", "A MODEL.", "MODEL"),
        ("graph", "paragraphs", None),  # whole words only
        ("扩散", "基于扩散模型", "扩散"),  # no word boundaries in CJK
        ("  ", "anything", None),
    ],
)
def test_term_pattern(term: str, text: str, found: str | None) -> None:
    match = term_pattern(term).search(text)
    assert (match.group() if match else None) == found


def test_keyword_in_context() -> None:
    texts = pd.Series(["One graph here and another Graph there.", "No match.", 42], index=["a", "b", "c"])
    lines = keyword_in_context(texts, "graph", width=8)
    assert lines.to_dict("records") == [
        {"id": "a", "left": "One", "match": "graph", "right": "here an…"},
        {"id": "a", "left": "…another", "match": "Graph", "right": "there."},
    ]
    assert len(keyword_in_context(texts, "graph", limit=1)) == 1
    assert keyword_in_context(texts, "absent").columns.tolist() == ["id", "left", "match", "right"]


# Words of the terms below in several cases and forms, and with letters that Unicode case-folds to
# ASCII ones (long s, Kelvin sign, dotted and dotless i), joined by separators or glued together.
KWIC_WORDS = ["studies", "Study", "STUDY", "stud", "gyms", "Gym", "skies", "Sky", "ſky", "ſtudies",
              "Kelvin", "graph", "Graph", "neural", "NEURAL", "IMAGES", "image", "İmage", "ımage",
              "é", "x"]  # fmt: skip
KWIC_TEXT = st.lists(
    st.tuples(st.sampled_from(KWIC_WORDS), st.sampled_from([" ", " ", "-", ", ", "\n", ""]))
).map(lambda parts: "".join(word + gap for word, gap in parts))


@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(KWIC_TEXT, max_size=8),
    term=st.sampled_from(["image", "Gym", "study", "graph neural", "sky", "k", "s-g"]),
)
@example(texts=["Two studies, one STUDY.", "no match here"], term="study")
@example(texts=["ſky and İmage", "Graph-Neural nets"], term="graph neural")
def test_keyword_in_context_skips_only_abstracts_that_cannot_match(texts: list[str], term: str) -> None:
    # ASCII abstracts without the term's first letters are passed over unscanned: never one with a line.
    pairs = list(enumerate(texts))
    fast = keyword_in_context(pairs, term, width=10)
    with mock.patch.object(terms, "_literal_start", lambda _term: ""):  # every abstract scanned
        scanned = keyword_in_context(pairs, term, width=10)
    pd.testing.assert_frame_equal(fast, scanned)


def _straightforward_frequencies(counts: TermCounts, mask: np.ndarray) -> pd.DataFrame:
    dense = counts.counts.toarray()[mask]
    frame = pd.DataFrame(
        {"term": counts.terms.astype(str), "count": dense.sum(0), "doc_freq": (dense > 0).sum(0)}
    )
    frame = frame[frame["count"] > 0].sort_values(["count", "term"], ascending=[False, True])
    return frame.reset_index(drop=True).astype({"term": "str", "count": "int64", "doc_freq": "int64"})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=len(CORPUS), max_size=len(CORPUS)), st.integers(1, 8))
def test_fast_frequencies_equal_the_straightforward_ones(keep: list[bool], top: int) -> None:
    # Below half the papers the kept rows are summed, above it the totals less the rest: both exact.
    counts = TermCounts.build(CORPUS + ["graph graph kernel", "image image image"])
    mask = np.array(keep + [True, False])
    expected = _straightforward_frequencies(counts, mask)
    pd.testing.assert_frame_equal(counts.term_frequencies(mask), expected)
    pd.testing.assert_frame_equal(counts.term_frequencies(mask, top=top), expected.head(top))
    without = counts.term_frequencies(mask, top=top, doc_freq=False)
    pd.testing.assert_frame_equal(without, expected.head(top).drop(columns="doc_freq"))


def test_occurrences_leave_the_papers_out_until_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(terms, "PRODUCT_SHARE", 1.0)  # rows copied, never the product with every row
    counts = TermCounts.build(CORPUS)
    exact = TermCounts.build(CORPUS).subset_counts(GRAPH_PAPERS)
    asked: list[bool] = []
    original = TermCounts._sum_rows
    monkeypatch.setattr(
        TermCounts,
        "_sum_rows",
        lambda self, rows, papers=True: asked.append(papers) or original(self, rows, papers=papers),
    )
    _ = counts._totals  # the corpus totals, counted once with both
    asked.clear()
    assert np.array_equal(counts.occurrences(GRAPH_PAPERS), exact[0])
    assert np.array_equal(counts.occurrences(~GRAPH_PAPERS), counts._totals[0] - exact[0])
    assert asked == [False, False]
    assert counts.occurrences(GRAPH_PAPERS) is counts.occurrences(GRAPH_PAPERS.copy())  # remembered
    both = counts.subset_counts(GRAPH_PAPERS)  # the papers are counted now, once
    assert asked == [False, False, True]
    assert np.array_equal(both[0], exact[0]) and np.array_equal(both[1], exact[1])
    assert counts.occurrences(GRAPH_PAPERS) is both[0] and asked == [False, False, True]


def test_distinctive_and_group_terms_equal_the_straightforward_ones() -> None:
    counts = TermCounts.build(CORPUS)
    dense = counts.counts.toarray().astype(float)
    inside = GRAPH_PAPERS
    prior = 1_000.0 * dense.sum(0) / dense.sum() + 0.01
    z = log_odds_z(dense[inside].sum(0), dense[~inside].sum(0), prior)
    table = counts.distinctive_terms(inside, top=100, under=100)
    expected_over = sorted((-z[i], counts.terms[i]) for i in range(len(z)) if z[i] > 0)
    expected_under = sorted((z[i], counts.terms[i]) for i in range(len(z)) if z[i] < 0)[::-1]
    assert table["term"].tolist() == [t for _, t in expected_over] + [t for _, t in expected_under]
    groups = pd.Series([["g", "h"], "g", "i", ["i", "i"], None])
    by_group = counts.group_distinctive_terms(groups, top=100)
    members = {"g": [0, 1], "h": [0], "i": [2, 3]}
    kept = dense.sum(0)  # every masked paper, grouped or not, is "the others" of a group
    for name, rows in members.items():
        inside_counts = dense[rows].sum(0)
        z = log_odds_z(inside_counts, kept - inside_counts, 1_000.0 * kept / kept.sum() + 0.01)
        best = sorted((-z[i], counts.terms[i]) for i in range(len(z)) if z[i] > 0 and inside_counts[i] > 0)
        rows_of = by_group[by_group["group"] == name]
        assert rows_of["term"].tolist() == [t for _, t in best]
        assert rows_of["count_in"].tolist() == [
            int(inside_counts[counts.terms.tolist().index(t)]) for _, t in best
        ]


def test_texts_at_reads_the_masked_rows_in_order() -> None:
    column = pd.Series([f"text {i}" for i in range(1_000)])
    mask = np.arange(1_000) % 3 == 0
    assert list(texts_at(column, mask, chunk=7)) == [(i, f"text {i}") for i in range(0, 1_000, 3)]


class _RecordingColumn:
    """A column's ``len`` and ``iloc`` reads (all `texts_at` uses), recording the rows read."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.read: list[int] = []
        self.iloc = self

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, rows: np.ndarray) -> pd.Series:
        self.read.extend(rows.tolist())
        return pd.Series([self.texts[i] for i in rows])


@pytest.mark.parametrize("kept", [[], [0], [9], [0, 1, 2, 9], list(range(10)), [3, 4, 7]])
def test_texts_where_gives_every_row_and_reads_only_the_masked_ones(kept: list[int]) -> None:
    texts = [f"text {i}" for i in range(10)]
    mask = np.isin(np.arange(10), kept)
    expected = [text if i in kept else None for i, text in enumerate(texts)]
    assert list(texts_where(pd.Series(texts), mask)) == expected
    column = _RecordingColumn(texts)
    assert list(texts_where(column, mask)) == expected  # type: ignore[arg-type]
    assert column.read == kept


def test_keyword_in_context_stops_at_the_limit() -> None:
    # A reader that raises after the first texts proves the scan stops once the limit is reached.
    def texts() -> Iterator[tuple[int, str]]:
        yield 0, "graph and graph"
        yield 1, "one graph"
        raise AssertionError("read past the limit")

    lines = keyword_in_context(texts(), "graph", limit=3)
    assert lines["id"].tolist() == [0, 0, 1]


@pytest.mark.parametrize("groups", [["g", "g", "h", "h", "i"], ["g", "g", "h", None, "h"]])
def test_single_valued_groups_equal_the_straightforward_ones(groups: list[str | None]) -> None:
    # Every paper in one group: the others' counts come from the group sums (no second read).
    counts = TermCounts.build(CORPUS)
    dense = counts.counts.toarray().astype(float)
    kept = dense.sum(0)
    by_group = counts.group_distinctive_terms(pd.Series(groups, dtype=object), top=100)
    for name in sorted({g for g in groups if g}):
        inside_counts = dense[[i for i, g in enumerate(groups) if g == name]].sum(0)
        z = log_odds_z(inside_counts, kept - inside_counts, 1_000.0 * kept / kept.sum() + 0.01)
        best = sorted((-z[i], counts.terms[i]) for i in range(len(z)) if z[i] > 0 and inside_counts[i] > 0)
        assert by_group.loc[by_group["group"] == name, "term"].tolist() == [t for _, t in best]


def test_subset_counts_are_remembered_for_the_last_masks(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = TermCounts.build(CORPUS)
    first = counts.subset_counts(GRAPH_PAPERS)
    calls: list[int] = []
    original = TermCounts._sum_rows
    monkeypatch.setattr(
        TermCounts,
        "_sum_rows",
        lambda self, rows, **kw: calls.append(len(rows)) or original(self, rows, **kw),
    )
    again = counts.subset_counts(GRAPH_PAPERS.copy())  # an equal mask, another array
    assert calls == [] and again[0] is first[0] and again[1] is first[1]
    assert not first[0].flags.writeable  # shared between callers: nobody may change it
    for i in range(terms.RECENT_SUBSETS):  # newer masks push the oldest out
        counts.subset_counts(np.arange(len(CORPUS)) == i % len(CORPUS) if i else ~GRAPH_PAPERS)
    counts.subset_counts(GRAPH_PAPERS)
    assert calls and np.array_equal(counts.subset_counts(GRAPH_PAPERS)[0], first[0])


def test_subset_counts_within_a_known_subset_read_only_the_rows_it_leaves_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a filter inside a period: the period's counts less the one paper of it the filter leaves out
    period = np.array([True, True, True, True, False])
    inside = np.array([True, False, True, True, False])
    exact = TermCounts.build(CORPUS).subset_counts(inside)
    counts = TermCounts.build(CORPUS)
    known = terms.Subset(period, *TermCounts.build(CORPUS).subset_counts(period))
    rows_read: list[list[int]] = []
    original = TermCounts._sum_rows
    monkeypatch.setattr(
        TermCounts,
        "_sum_rows",
        lambda self, rows, **kw: rows_read.append(list(rows)) or original(self, rows, **kw),
    )
    got = counts.subset_counts(inside, within=known)
    assert rows_read == [[1]]
    assert np.array_equal(got[0], exact[0]) and np.array_equal(got[1], exact[1])
    # a small filter is still counted directly; a mask outside the known papers is refused
    direct = TermCounts.build(CORPUS).subset_counts(GRAPH_PAPERS)[0]
    assert np.array_equal(counts.subset_counts(GRAPH_PAPERS, within=known)[0], direct)
    assert rows_read[-1] == [0, 1]
    with pytest.raises(ValueError, match="within"):
        counts.subset_counts(np.array([False, False, False, True, True]), within=known)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("share", [0.05, 0.2, 0.6, 1.0])
def test_sums_over_rows_copied_a_chunk_at_a_time_are_the_sums_of_the_rows(
    share: float, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(terms, "SUM_CHUNK", 7)  # 400 papers: many chunks, the last one short
    monkeypatch.setattr(terms, "SUM_THREADS", threads)
    summed_in: list[str] = []
    sum_chunks = TermCounts._sum_chunks

    def recorded(self: TermCounts, rows: np.ndarray, starts: Any, *, papers: bool = True) -> Any:
        summed_in.append(threading.current_thread().name)
        return sum_chunks(self, rows, starts, papers=papers)

    monkeypatch.setattr(TermCounts, "_sum_chunks", recorded)
    rng = np.random.default_rng(4)
    dense = rng.poisson(0.4, size=(400, 60)).astype(np.int32)
    vocabulary = np.array([f"t{i:02d}" for i in range(60)], dtype=object)
    counts = TermCounts(vocabulary, sp.csr_matrix(dense), 1, False)
    rows = np.sort(rng.choice(400, size=int(share * 400), replace=False))
    occurrences, papers = counts._sum_rows(rows)
    assert occurrences.tolist() == dense[rows].sum(axis=0).tolist()
    assert papers.tolist() == (dense[rows] > 0).sum(axis=0).tolist()
    assert counts.counts.toarray().tolist() == dense.tolist()  # the counts themselves are untouched
    # one chunk or one thread: summed where asked; more: shared among that many pool threads
    many = threads > 1 and len(rows) > terms.SUM_CHUNK
    assert len(summed_in) == (threads if many else 1)
    assert all(name.startswith("term-sums") for name in summed_in) == many
    alone, none = counts._sum_rows(rows, papers=False)  # the occurrences without the papers
    assert alone.tolist() == occurrences.tolist() and none is None


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("share", [0.0, 0.35, 0.5, 0.9, 1.0])
def test_large_subsets_are_one_product_with_every_row_and_equal_the_row_sums(
    share: float, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Above PRODUCT_SHARE of the corpus on either side, a subset's occurrences come from the product of
    # every row with its 0/1 vector, in SUM_THREADS ranges of papers: the same numbers as its rows' sums.
    monkeypatch.setattr(terms, "SUM_THREADS", threads)
    rng = np.random.default_rng(7)
    dense = rng.poisson(0.4, size=(401, 60)).astype(np.int32)
    vocabulary = np.array([f"t{i:02d}" for i in range(60)], dtype=object)
    counts = TermCounts(vocabulary, sp.csr_matrix(dense), 1, False)
    inside = np.zeros(401, dtype=bool)
    inside[rng.choice(401, size=int(share * 401), replace=False)] = True
    products: list[str] = []
    range_product = TermCounts._range_product

    def recorded(self: TermCounts, weights: np.ndarray, bounds: tuple[int, int]) -> np.ndarray:
        products.append(threading.current_thread().name)
        return range_product(self, weights, bounds)

    monkeypatch.setattr(TermCounts, "_range_product", recorded)
    occurrences = counts.occurrences(inside)
    assert occurrences.tolist() == dense[inside].sum(axis=0).tolist()
    fewest = min(inside.sum(), (~inside).sum())
    assert bool(products) == (fewest > terms.PRODUCT_SHARE * 401)
    if products:  # every paper read once, in `threads` contiguous ranges
        assert len(products) == threads
        assert all(name.startswith("term-sums") for name in products) == (threads > 1)
    assert counts.counts.toarray().tolist() == dense.tolist()
    # the papers using each term are still counted from the rows (the product has no 0/1 counts)
    products.clear()
    _, papers = counts.subset_counts(inside)
    assert papers.tolist() == (dense[inside] > 0).sum(axis=0).tolist() and products == []


def test_a_range_of_rows_is_read_in_place_not_copied() -> None:
    # scipy copies a view of less than half of an array given to its constructor (0.4 s for half of a
    # million papers' rows): the range's transposed matrix must share the corpus's arrays.
    rng = np.random.default_rng(3)
    dense = rng.poisson(0.5, size=(100, 30)).astype(np.int32)
    matrix = sp.csr_matrix(dense)
    view = terms._columns_of_rows(matrix, 60, 70)  # a tenth of the rows
    assert np.shares_memory(view.data, matrix.data) and np.shares_memory(view.indices, matrix.indices)
    assert view.shape == (30, 10)
    assert view.toarray().tolist() == dense[60:70].T.tolist()
    assert (view @ np.ones(10, dtype=np.int32)).tolist() == dense[60:70].sum(axis=0).tolist()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no processor affinity on this system")
def test_a_process_pinned_to_one_processor_sums_in_one_thread() -> None:
    # os.cpu_count() counts the machine; a process pinned to one of its processors would share its term
    # sums among threads that only take turns on it.
    probe = (
        "from dashboard.system import cores; from dashboard.analytics import terms; "
        "print(cores.usable_cores(), terms.SUM_THREADS)"
    )
    one = min(os.sched_getaffinity(0))

    def run(pinned: bool) -> list[int]:
        done = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            preexec_fn=(lambda: os.sched_setaffinity(0, {one})) if pinned else None,
        )
        return [int(n) for n in done.stdout.split()]

    assert run(pinned=True) == [1, 1]
    usable = len(os.sched_getaffinity(0))
    assert run(pinned=False) == [usable, min(4, usable)]


def _planted_corpus() -> tuple[list[str], np.ndarray]:
    # 60 abstracts that all use the generic words (time, space, large, process) often; 12 of them also
    # use the planted words (quantum, qubit, entanglement), a few times each.
    rng = np.random.default_rng(0)
    filler = ["graph", "protein", "vision", "speech", "robot", "kernel", "market", "audio"]
    texts, planted = [], np.zeros(60, dtype=bool)
    for n in range(60):
        words = ["time", "space", "large", "process"] * 4 + list(rng.choice(filler, 6))
        if n % 5 == 0:
            words += ["quantum", "qubit", "entanglement"] * 2
            planted[n] = True
        texts.append(" ".join(rng.permutation(words)) + ".")
    return texts, planted


def test_the_clouds_keywords_of_a_planted_subset_are_the_planted_words() -> None:
    # Issue 49: the 27k corpus's cloud showed time, space, large, process. The distinctive words of
    # a subset are those it uses and the rest does not, however common the others are.
    texts, planted = _planted_corpus()
    counts = TermCounts.build(texts)
    frequent = counts.term_frequencies(planted)["term"].head(4).tolist()
    assert set(frequent) == {"time", "space", "large", "process"}  # what frequency shows
    found = counts.keywords(planted)
    assert set(found["term"].head(3)) == {"quantum", "qubit", "entanglement"}
    assert not {"time", "space", "large", "process"} & set(found["term"])
    assert (found["weight"] > 0).all() and found["weight"].is_monotonic_decreasing


def test_with_no_filter_the_clouds_keywords_are_each_topics_distinctive_words() -> None:
    # Four topics, each with words of its own, all with the same generic words: with no filter the
    # cloud shows each topic's own words.
    rng = np.random.default_rng(1)
    own = [["quantum", "qubit"], ["protein", "folding"], ["market", "auction"], ["speech", "audio"]]
    texts, topics = [], []
    for n in range(80):
        topic = n % 4
        words = ["time", "space", "large", "process"] * 3 + own[topic] * 3
        texts.append(" ".join(rng.permutation(words)) + ".")
        topics.append(topic)
    counts = TermCounts.build(texts)
    found = counts.keywords(None, groups=pd.Series(topics), per_group=2)
    assert set(found["term"]) == {word for words in own for word in words}
    assert counts.keywords(None).empty  # no filter and no groups: nothing to set apart
    assert counts.keywords(np.ones(80, dtype=bool)).empty


@pytest.mark.parametrize("keep", ["start", "end"])
@given(text=st.text(min_size=0, max_size=200), width=st.floats(min_value=20, max_value=400))
@settings(max_examples=200, deadline=None)
def test_fit_width_never_overflows_and_marks_a_cut(text: str, width: float, keep: str) -> None:
    fitted = terms.fit_width(text, width, keep=keep)
    assert terms.text_width_px(fitted) <= width
    if fitted != " ".join(text.split()):
        assert fitted.endswith("…") if keep == "start" else fitted.startswith("…")


def test_fit_width_cuts_at_words_keeping_the_side_next_to_the_term() -> None:
    before = "…coast and on a controlled advection–"  # the seeds' row that spilled at 36 characters
    assert terms.text_width_px(before) > 170
    fitted = terms.fit_width(before, 170, keep="end")
    assert fitted.startswith("…") and fitted.endswith("controlled advection–")
    after = terms.fit_width("models is often computationally prohibitive for long", 170)
    assert after.startswith("models is often") and after.endswith("…")

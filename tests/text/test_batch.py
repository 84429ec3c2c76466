"""Scanning and n-grams of many texts at once (`dashboard.text.batch`) give exactly what the per-text
functions give (`tokens.scan`, `tokens.ngrams_of_scan`), text by text and in the same order; the index
build's count step, which uses them, counts the same whatever block size it works in."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.analytics.areas import area_scores, load_taxonomy
from dashboard.index import steps
from dashboard.text import batch
from dashboard.text.tokens import ngrams_of_scan, scan

# What the scanner treats specially: punctuation, URLs with trailing punctuation, e-mail addresses,
# formulas and LaTeX commands, hyphens and dashes, possessives and plurals, CJK runs (character
# bigrams), digits ("3D"), generic words alone and in phrases, empty and blank texts.
TEXTS = [
    "Graph neural networks, see https://x.org/a.b.",
    "Large language models (LLMs) follow instructions; the model's studies.",
    "Write to a.b@c.org or visit www.site.com now",
    "Bounds of $O(n \\log n)$ for \\emph{sparse} learning - a study – and more — tests",
    "3D point clouds and 2d images: state-of-the-art self-supervised learning",
    "图神经网络 的 研究 graph 学习",
    "",
    "   ",
    "model learning data",  # generic words only: no single word, no phrase of them alone
    "Reinforcement learning agents explore sparse reward environments in reinforcement learning.",
]


def _words_of(scanned: batch.ScannedBatch, i: int) -> list[str]:
    return [scanned.terms[j] for j in scanned.text_ids(i)]


def test_scan_many_is_scan_text_by_text() -> None:
    scanned = batch.scan_many(TEXTS)
    assert len(scanned.starts) == len(TEXTS) + 1
    for i, text in enumerate(TEXTS):
        assert _words_of(scanned, i) == scan(text), text
    # every text is closed by a break: no phrase runs into the next text
    assert np.all(scanned.ids[scanned.starts[1:] - 1] == batch.BREAK)


def test_a_shared_vocabulary_numbers_terms_alike_across_batches() -> None:
    shared = batch.Vocabulary()
    first = batch.scan_many(["graph networks"], shared)
    second = batch.scan_many(["networks of graphs"], shared)
    assert first.text_ids(0).tolist() == [second.text_ids(0)[2], second.text_ids(0)[0]]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_ngram_table_is_ngrams_of_scan_in_order(n: int) -> None:
    scanned = batch.scan_many(TEXTS)
    grams = batch.ngram_table(scanned.ids, scanned.terms, n)
    vocabulary = grams.vocabulary().to_pylist()
    assert len(set(vocabulary)) == len(vocabulary)
    text_of = np.searchsorted(scanned.starts, grams.position, side="right") - 1
    assert np.all(np.diff(text_of) >= 0)  # text by text
    for i, text in enumerate(TEXTS):
        got = [vocabulary[c] for c in grams.column[text_of == i]]
        assert got == ngrams_of_scan(scan(text), (1, n)), text


def test_ngram_table_refuses_longer_ngrams() -> None:
    scanned = batch.scan_many(["a b c d"])
    with pytest.raises(ValueError, match="1 to 3"):
        batch.ngram_table(scanned.ids, scanned.terms, 4)


def _papers(n: int) -> pd.DataFrame:
    rows = []
    for i in range(n):
        text = TEXTS[i % len(TEXTS)]
        title = ["A study of $x", "Graph nets", "", "Sparse rewards"][i % 4]
        rows.append(
            {
                "title": title or text[:20],
                "title_is_derived": not title,
                "abstract_clean": f"{text} {TEXTS[(i * 3) % len(TEXTS)]}",
                "has_abstract": i % 7 != 3,
                "method_names": [],
            }
        )
    return pd.DataFrame(rows)


def _by_term(counts: steps.PartitionCounts, which: str) -> list[list[tuple[str, int]]]:
    matrix = getattr(counts, which)
    vocabulary = counts.vocabulary.to_pylist()
    return [
        [(vocabulary[j], int(x)) for j, x in zip(matrix.indices[a:b], matrix.data[a:b], strict=True)]
        for a, b in zip(matrix.indptr[:-1], matrix.indptr[1:], strict=True)
    ]


def test_count_partition_is_the_per_text_count_in_any_block_size(monkeypatch: pytest.MonkeyPatch) -> None:
    papers = _papers(47)
    taxonomy = load_taxonomy()
    whole = steps.count_partition(papers, taxonomy, words=False)
    monkeypatch.setattr(steps, "_COUNTED_AT_ONCE", 6)  # 8 blocks, the last one short
    blocks = steps.count_partition(papers, taxonomy, words=False)
    assert sorted(whole.vocabulary.to_pylist()) == sorted(blocks.vocabulary.to_pylist())
    assert [sorted(row) for row in _by_term(whole, "abstract_counts")] == [
        sorted(row) for row in _by_term(blocks, "abstract_counts")
    ]
    assert _by_term(whole, "topic_counts") == _by_term(blocks, "topic_counts")  # first appearance order
    assert np.array_equal(whole.area_scores, blocks.area_scores)
    # ...and both are what the texts give one at a time
    for i, paper in papers.iterrows():
        abstract = paper.abstract_clean if paper.has_abstract else ""
        title = paper.title if paper.has_abstract and not paper.title_is_derived else ""
        grams = ngrams_of_scan(scan(abstract), (1, 3))
        assert sorted(whole_row := _by_term(whole, "abstract_counts")[i]) == sorted(
            (g, grams.count(g)) for g in set(grams)
        ), whole_row
        topic_text = f"{title}. {abstract}" if title else abstract
        topic_scan = scan(topic_text)
        topic_grams = ngrams_of_scan(topic_scan, (1, 2))
        first_seen = list(dict.fromkeys(topic_grams))
        assert _by_term(whole, "topic_counts")[i] == [(g, topic_grams.count(g)) for g in first_seen]
        expected = area_scores([topic_scan], taxonomy)[0]
        assert np.array_equal(whole.area_scores[i], expected)


def test_count_partition_of_no_papers() -> None:
    empty = _papers(0).reindex(
        columns=["title", "title_is_derived", "abstract_clean", "has_abstract", "method_names"]
    )
    counts = steps.count_partition(empty, load_taxonomy(), words=False)
    assert counts.abstract_counts.shape[0] == 0 and counts.area_scores.shape[0] == 0

"""The build fits the topic model on what the count map counted: the same model as from the texts.

Issue 53: each abstract is tokenised once. The count map's topic-text counts (`steps.count_partition`)
and area scores stand in for the texts, so `TopicModel.fit(counts=..., area_scores=...)` must give the
TF-IDF the texts give to the bit (same vocabulary, same order of each row's entries, same floats) and
so the same topics.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from dashboard import index
from dashboard.analytics.analysis import paper_texts
from dashboard.analytics.areas import area_scores, load_taxonomy
from dashboard.analytics.topics import TopicModel
from dashboard.index import steps
from dashboard.text.tokens import NoTermsLeft, make_vectorizer, scan

TOPICS = [
    "graph neural networks for molecule property prediction and drug discovery",
    "diffusion models generate images with classifier-free guidance",
    "reinforcement learning agents explore sparse reward environments",
    "large language models follow instructions after preference tuning",
    "contextual bandits with regret bounds under adversarial rewards",
    "federated learning protects client privacy with secure aggregation",
]


def _papers(n: int = 90) -> pd.DataFrame:
    """Made-up papers with what the texts' path treats specially: derived titles, placeholder
    abstracts, a formula running from the title into the abstract, CJK, URLs and repeated terms."""
    rows = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        other = TOPICS[(i * 7 + 3) % len(TOPICS)]
        title = f"On {topic.split()[0]} {topic.split()[1]} number {i % 5}"
        abstract = f"{topic}. We study {topic} and {other.split(' ', 3)[-1]} (see https://x.org/{i})."
        if i % 11 == 0:
            title = f"Bounds of $O(n {topic.split()[0]}"  # an open formula: it runs into the abstract
            abstract = f"with {topic} $ and more {other}"
        if i % 13 == 0:
            abstract += " 图神经网络 graph graph graph"
        rows.append(
            {
                "title": title,
                "title_is_derived": i % 9 == 0,
                "abstract_clean": abstract,
                "has_abstract": i % 17 != 5,
                "method_names": [],
            }
        )
    return pd.DataFrame(rows)


def _counted(papers: pd.DataFrame, cuts: list[int]):
    """The count map over partitions cut at ``cuts``, and the sample (every paper) as CountedTexts."""
    taxonomy = load_taxonomy()
    bounds = [0, *cuts, len(papers)]
    blocks, scores = [], []
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        counts = steps.count_partition(papers.iloc[start:stop].reset_index(drop=True), taxonomy)
        blocks.append((pa.array(counts.vocabulary, pa.large_string()), counts.topic_counts))
        scores.append(counts.area_scores)
    return steps.counted_sample(blocks), np.vstack(scores)


def _same_bits(a, b) -> bool:
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and np.array_equal(a.indptr, b.indptr)
        and np.array_equal(a.indices, b.indices)  # the order of each row's entries, too
        and np.array_equal(a.data.view(np.uint32), b.data.view(np.uint32))
    )


@pytest.mark.parametrize("cuts", [[], [37], [10, 11, 60]])
@pytest.mark.parametrize("max_features", [30_000, None, 25])
@pytest.mark.parametrize("min_df", [1, 2])
def test_tfidf_fitted_on_counts_is_the_texts_tfidf_to_the_bit(cuts, max_features, min_df):
    papers = _papers()
    texts = [scan(t) for t in paper_texts(papers)]
    counted, _ = _counted(papers, cuts)
    from_texts = make_vectorizer("tfidf", min_df=min_df, max_df=0.5, max_features=max_features)
    from_counts = make_vectorizer("tfidf", min_df=min_df, max_df=0.5, max_features=max_features)
    expected = from_texts.fit_transform(texts)
    got = counted.fit_tfidf(from_counts)
    assert _same_bits(got, expected)
    assert from_counts.vocabulary_ == from_texts.vocabulary_
    assert np.array_equal(from_counts.idf_, from_texts.idf_)
    # The vectoriser is fitted as if it had read the texts: it transforms new texts the same way.
    new = paper_texts(papers.iloc[:7])
    assert _same_bits(from_counts.transform(new), from_texts.transform(new))


def test_area_scores_of_the_count_map_are_the_texts_scores():
    papers = _papers()
    _, scores = _counted(papers, [40])
    expected = area_scores([scan(t) for t in paper_texts(papers)], load_taxonomy())
    assert scores.dtype == expected.dtype
    assert np.array_equal(scores, expected)


def test_topic_model_fitted_on_counts_is_the_model_of_the_texts():
    papers = _papers()
    counted, scores = _counted(papers, [30, 61])
    taxonomy = load_taxonomy()
    texts = paper_texts(papers)
    expected = TopicModel(n_topics=4, taxonomy=taxonomy).fit(texts)
    got = TopicModel(n_topics=4, taxonomy=taxonomy).fit(None, counts=counted, area_scores=scores)
    assert _same_bits(got.tfidf_, expected.tfidf_)
    assert np.array_equal(got.lsa_, expected.lsa_)
    assert np.array_equal(got.area_scores_, expected.area_scores_)
    assert np.array_equal(got.labels_, expected.labels_)
    assert got.topic_labels_ == expected.topic_labels_


def test_counts_without_area_scores_or_for_lda_are_refused():
    counted, scores = _counted(_papers(30), [])
    with pytest.raises(ValueError, match="area_scores"):
        TopicModel(n_topics=2).fit(None, counts=counted)
    with pytest.raises(ValueError, match="lda"):
        TopicModel(n_topics=2, method="lda").fit(None, counts=counted, area_scores=scores)
    with pytest.raises(ValueError, match="texts"):
        TopicModel(n_topics=2).fit(None)


def test_counts_of_stop_words_only_say_no_term_is_left():
    papers = pd.DataFrame(
        {
            "title": ["", ""],
            "title_is_derived": [False, False],
            "abstract_clean": ["We propose a novel method.", "This paper presents the results."],
            "method_names": [[], []],
        }
    )
    counted, scores = _counted(papers, [])
    with pytest.raises(NoTermsLeft):
        TopicModel(n_topics=2).fit(None, counts=counted, area_scores=scores)


def test_an_index_of_stop_words_only_is_still_built_from_its_texts(tmp_path: Path):
    folder = tmp_path / "stop"
    folder.mkdir()
    records = [
        {"id": f"p{i}", "title": "", "abstract": "We propose a novel method for this."} for i in range(3)
    ]
    (folder / "a.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    manifest = index.build_index([folder], tmp_path / "stop.index", workers=1)
    opened = index.open_index(tmp_path / "stop.index")
    assert manifest["papers"] == 3
    assert len(opened.papers) == 3


def test_the_index_does_not_depend_on_how_the_papers_are_partitioned(tmp_path: Path, seeds_dir: Path):
    one = index.build_index([seeds_dir], tmp_path / "one.index", workers=1)
    many = index.build_index([seeds_dir], tmp_path / "many.index", workers=1, partition_size=7)
    files = {name: facts["sha256"] for name, facts in one["files"].items()}
    differ = [name for name, facts in many["files"].items() if files.get(name) != facts["sha256"]]
    assert differ == []
    assert set(files) == set(many["files"])


@pytest.mark.parametrize(("partition_size", "pieces", "expected"), [(50, 3, [3, 3, 2]), (2, 2, [2, 2, 2, 2])])
def test_one_file_is_cut_into_a_partition_per_worker(tmp_path: Path, partition_size, pieces, expected):
    from dashboard.index.maps import read_partitions

    path = tmp_path / "a.jsonl"
    records = [{"id": f"p{i}", "title": f"Paper {i}", "abstract": f"Graph networks {i}."} for i in range(8)]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    _, tables = read_partitions(str(path), partition_size, pieces)
    assert [rows for _, rows in tables] == expected
    ids = [
        i
        for table, _ in tables
        for i in pa.ipc.open_file(pa.BufferReader(table)).read_all().column("id").to_pylist()
    ]
    assert ids == [f"p{i}" for i in range(8)]

"""analyze(): the paper table gains the schema's analysis columns; topics table; similarity queries."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dashboard.analytics.analysis import Analysis, analyze, paper_texts
from dashboard.corpus import load
from dashboard.schema import ANALYSIS_COLUMNS, OUTLIER_LABEL, OUTLIER_TOPIC


@pytest.fixture(scope="module")
def seeds(seeds_dir: Path) -> pd.DataFrame:
    return load([seeds_dir]).papers


@pytest.fixture(scope="module")
def result(seeds: pd.DataFrame) -> Analysis:
    return analyze(seeds)


def test_adds_the_analysis_columns(seeds: pd.DataFrame, result: Analysis) -> None:
    papers = result.papers
    assert list(papers.columns) == list(seeds.columns) + list(ANALYSIS_COLUMNS)
    assert papers["id"].tolist() == seeds["id"].tolist()
    assert str(papers["topic"].dtype) == "int64"
    assert papers["topic_weight"].between(0, 1).all()
    assert papers["is_outlier"].dtype == bool
    assert (papers["is_outlier"] == (papers["topic"] == OUTLIER_TOPIC)).all()
    assert papers["areas"].map(lambda a: isinstance(a, list)).all()
    assert papers[["x", "y"]].notna().all().all()
    assert "topic" not in seeds.columns  # the input table is not modified


def test_topic_labels_match_the_topics_table(result: Analysis) -> None:
    topics = result.topics
    assert list(topics.columns) == ["topic", "label", "size", "top_terms", "representative_ids"]
    names = dict(zip(topics["topic"], topics["label"], strict=True))
    for topic, label in zip(result.papers["topic"], result.papers["topic_label"], strict=True):
        assert names.get(topic, OUTLIER_LABEL) == label
    counts = result.papers["topic"].value_counts()
    assert all(counts.get(t, 0) == size for t, size in zip(topics["topic"], topics["size"], strict=True))
    ids = set(result.papers["id"])
    assert all(set(rep) <= ids for rep in topics["representative_ids"])
    assert all(isinstance(t, tuple) and len(t) == 2 for terms in topics["top_terms"] for t in terms)


def test_most_similar_and_matrix(result: Analysis) -> None:
    first = str(result.papers["id"].iloc[0])
    nearest = result.most_similar(first, n=5)
    assert list(nearest.columns) == ["id", "title", "similarity"]
    assert len(nearest) == 5 and first not in set(nearest["id"])
    assert nearest["similarity"].is_monotonic_decreasing
    picked = [first, *nearest["id"].head(2)]
    matrix = result.similarity_matrix(picked)
    assert matrix.index.tolist() == matrix.columns.tolist() == picked
    assert matrix.loc[first, nearest["id"].iloc[0]] == pytest.approx(nearest["similarity"].iloc[0], abs=1e-3)
    assert (matrix.to_numpy().diagonal() == 1).all()
    assert len(result.most_similar(first, n=3, space="lsa")) == 3


def test_deterministic(seeds: pd.DataFrame, result: Analysis) -> None:
    again = analyze(seeds)
    pd.testing.assert_frame_equal(again.papers, result.papers)


def test_fixed_number_of_topics_and_methods(seeds: pd.DataFrame) -> None:
    assert analyze(seeds, n_topics=3).model.n_topics_ == 3
    assert set(analyze(seeds, n_topics=3, method="nmf").papers["topic"]) <= {-1, 0, 1, 2}


def test_own_taxonomy(seeds: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "areas.toml"
    path.write_text(
        '[[area]]\nname = "Everything LLM"\nstrong = ["llm", "language model"]\n', encoding="utf-8"
    )
    areas = analyze(seeds, taxonomy=path).papers["areas"]
    assert {a for paper in areas for a in paper} == {"Everything LLM"}


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        # the table's own title and the cleaned abstract
        (pd.DataFrame({"title": ["T"], "title_is_derived": [False], "abstract_clean": ["A"]}), ["T. A"]),
        # a derived title repeats the abstract: left out
        (pd.DataFrame({"title": ["T"], "title_is_derived": [True], "abstract_clean": ["A"]}), ["A"]),
        # before the cleaner lands: the raw abstract
        (pd.DataFrame({"title": [""], "abstract": ["raw $x$"]}), ["raw $x$"]),
        (pd.DataFrame({"abstract": [None]}), [""]),
    ],
)
def test_paper_texts(table: pd.DataFrame, expected: list[str]) -> None:
    assert paper_texts(table) == expected


def test_minimal_table_without_abstract_clean() -> None:
    table = pd.DataFrame(
        {
            "id": ["a", "b", "c", "d"],
            "title": ["", "", "", ""],
            "abstract": ["Graph networks.", "Graph kernels.", "Image diffusion.", "Diffusion sampling."],
        }
    )
    groups = analyze(table, n_topics=2).papers.groupby("topic")["id"].apply(list).tolist()
    assert sorted(groups) == [["a", "b"], ["c", "d"]]


def test_cli_analyze(seeds_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dashboard.cli.main import main

    out = tmp_path / "analysed.jsonl"
    assert main(["analyze", str(seeds_dir), "--out", str(out), "--topics", "4"]) == 0
    table = pd.read_json(out, lines=True)
    assert len(table) == 57
    assert set(ANALYSIS_COLUMNS) <= set(table.columns)
    assert table["topic"].nunique() <= 5  # four topics, maybe outliers
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) in (4, 5) and "·" in printed[0]


@pytest.mark.parametrize(
    ("extra", "status", "message"),
    [(["--topics", "zero"], 2, "number of topics"), (["--taxonomy", "missing.toml"], 2, "cannot read")],
)
def test_cli_analyze_usage_errors(
    seeds_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    status: int,
    message: str,
) -> None:
    from dashboard.cli.main import main

    try:
        code = main(["analyze", str(seeds_dir), "--out", str(tmp_path / "x.csv"), *extra])
    except SystemExit as exit_:  # argparse rejects bad values itself
        code = int(exit_.code or 0)
    assert code == status
    assert message in capsys.readouterr().err

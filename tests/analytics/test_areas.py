"""Research areas: the shipped taxonomy, keyword rules, thresholds, and clear errors for a bad file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.analytics.areas import (
    TaxonomyError,
    area_scores,
    areas_from_scores,
    assign_areas,
    load_taxonomy,
    parse_taxonomy,
)

TAXONOMY = load_taxonomy()


def test_default_taxonomy_covers_the_calls_for_papers() -> None:
    names = TAXONOMY.names
    assert len(names) == len(set(names)) >= 20
    for expected in (
        "Reinforcement learning",
        "Generative models",
        "Optimization",
        "Learning theory",
        "Probabilistic methods",
        "Interpretability & explainability",
        "Graphs & geometric learning",
        "Time series & dynamical systems",
        "Computer vision",
        "Natural language processing",
        "Causality",
        "Datasets & benchmarks",
    ):
        assert expected in names


@pytest.mark.parametrize(
    ("text", "area"),
    [
        ("We train a reinforcement learning agent with policy gradient on Atari.", "Reinforcement learning"),
        ("A graph neural network for node classification.", "Graphs & geometric learning"),
        ("Diffusion models for image generation.", "Generative models"),
        ("We study differential privacy of SGD.", "Privacy & security"),
        ("A new benchmark dataset for code generation with large language models.", "Datasets & benchmarks"),
        ("Forecasting time series with transformers.", "Time series & dynamical systems"),
        ("Fairness of classifiers across demographic groups.", "Fairness & societal impact"),
        ("Speech recognition for low-resource languages.", "Speech & audio"),
        ("A robot learns manipulation from demonstrations.", "Robotics & embodied AI"),
        ("Causal discovery from observational data.", "Causality"),
        ("Quantization and pruning of LLMs for efficient inference on GPU.", "Efficient ML & systems"),
        # plural, capitals and hyphens match alike
        ("GRAPH-NEURAL-NETWORKS on molecules", "Graphs & geometric learning"),
    ],
)
def test_assign_areas(text: str, area: str) -> None:
    assert area in assign_areas([text], TAXONOMY)[0]


def test_boilerplate_gets_no_area() -> None:
    assert assign_areas(["We propose a novel method that outperforms baselines.", ""], TAXONOMY) == [[], []]


RULES = """
[settings]
min_score = 2
max_areas = 2
relative_cut = 0.5

[[area]]
name = "Graphs"
strong = ["graph neural network"]
keywords = ["graph", "node"]
exclude = ["graph of thoughts"]

[[area]]
name = "Vision"
keywords = ["image", "pixel"]

[[area]]
name = "Audio"
strong = ["speech"]
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("graph neural networks", ["Graphs"]),  # one strong phrase (2) reaches min_score
        ("a graph", []),  # one keyword (1) does not
        ("graph and node", ["Graphs"]),  # two keywords do
        ("graph graph graph graph graph", ["Graphs"]),  # a phrase counts at most 3 times: 3
        ("graph of thoughts on graph neural networks", []),  # excluded
        ("image pixel image pixel, graph neural network", ["Vision", "Graphs"]),  # 4 vs 3, best first
        ("image image image pixel pixel, speech", ["Vision"]),  # speech (2) < 0.5 x 5
        ("speech speech image image pixel graph neural network node", ["Graphs", "Audio"]),  # max_areas
    ],
)
def test_scoring_rules(text: str, expected: list[str]) -> None:
    assert assign_areas([text], parse_taxonomy(RULES, "rules.toml")) == [expected]


def test_scores_matrix_has_one_column_per_area() -> None:
    taxonomy = parse_taxonomy(RULES)
    scores = area_scores(["graph node", "speech"], taxonomy)
    assert scores.shape == (2, 3)
    assert scores.tolist() == [[2.0, 0.0, 0.0], [0.0, 0.0, 2.0]]
    assert areas_from_scores(np.zeros((1, 3)), taxonomy) == [[]]


def test_texts_scored_together_score_as_each_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The texts of a batch are matched in one array: a phrase never runs from one text into the next,
    and a batch cut between texts changes nothing."""
    taxonomy = parse_taxonomy(RULES)
    texts = [
        "a graph",  # "graph" ends it and "neural network" starts the next: not "graph neural network"
        "neural network on a graph of thoughts",
        "",
        "graph-neural network, graph neural network",  # a hyphen splits a word as the phrases are split
        "graph of thoughts",
        "speech speech speech speech image",
    ]
    alone = np.vstack([area_scores([text], taxonomy) for text in texts])
    assert alone.tolist() == [
        [1.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],  # the exclusion zeroes its area
        [0.0, 0.0, 0.0],
        [6.0, 0.0, 0.0],  # twice the strong phrase, and "graph" twice (2 x 2 + 2 x 1)
        [0.0, 0.0, 0.0],
        [0.0, 1.0, 6.0],  # four mentions count as three
    ]
    assert area_scores(texts, taxonomy).tolist() == alone.tolist()
    monkeypatch.setattr("dashboard.analytics.areas._SCORED_AT_ONCE", 2)
    assert area_scores(texts, taxonomy).tolist() == alone.tolist()
    assert area_scores([], taxonomy).shape == (0, 3)


def test_user_taxonomy_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(RULES, encoding="utf-8")
    taxonomy = load_taxonomy(path)
    assert taxonomy.names == ["Graphs", "Vision", "Audio"]
    assert taxonomy.source == str(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[area]]\nname = "A"\nkeywords = graph\n', "line 3"),  # TOML syntax: tomllib's line
        (
            '[[area]]\nname = "A"\nkeywords = ["graph"]\n\n[[area]]\nkeywords = ["node"]\n',
            "line 5",
        ),  # no name
        ('[[area]]\nname = "A"\nkeywords = "graph"\n', "must be a list of strings"),
        ('[[area]]\nname = "A"\nkeyword = ["x"]\n', "unknown key"),
        ('[[area]]\nname = "A"\n', "no keywords"),
        (
            '[[area]]\nname = "A"\nkeywords = ["graph"]\n[[area]]\nname = "A"\nkeywords = ["node"]\n',
            "used twice",
        ),
        ('[settings]\nmin_score = "high"\n[[area]]\nname = "A"\nkeywords = ["graph"]\n', "min_score"),
        ("", "no areas found"),
    ],
)
def test_bad_taxonomy_names_file_and_place(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TaxonomyError) as error:
        load_taxonomy(path)
    assert str(path) in str(error.value)
    assert message in str(error.value)


def test_missing_taxonomy_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TaxonomyError, match="cannot read"):
        load_taxonomy(tmp_path / "nowhere.toml")


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_areas_are_known_names_best_first(text: str) -> None:
    (areas,) = assign_areas([text], TAXONOMY)
    assert len(areas) <= TAXONOMY.max_areas
    assert set(areas) <= set(TAXONOMY.names)
    assert len(set(areas)) == len(areas)

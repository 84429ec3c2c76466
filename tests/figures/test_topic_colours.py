"""The topic tree and the map give a topic one colour; the tree's rows show long labels (issue 49)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard import corpus
from dashboard.analytics import analysis, hierarchy
from dashboard.figures import charts
from dashboard.figures import tree as tree_charts

SEEDS = Path(__file__).resolve().parents[2] / "seeds"


@pytest.fixture(scope="module")
def fitted() -> analysis.Analysis:
    return analysis.analyze(corpus.load([SEEDS]).papers)


def test_the_tree_draws_each_topic_in_the_maps_colour(fitted: analysis.Analysis) -> None:
    tree: hierarchy.TopicTree = analysis.topic_tree(fitted)
    k = tree.n_leaves
    colours = charts.colours_of_topics(fitted.papers[["x", "y", "topic"]])
    figure = tree_charts.tree_figure(tree, k, [f"t{i}" for i in range(k)], tree.node_labels(), colours)
    leaves = [t for t in figure.data if t.mode == "markers" and isinstance(t.marker.color, tuple | list)][0]
    groups = tree.cut(k)
    assert [str(c) for c in leaves.marker.color] == [colours[int(g)] for g in groups]


def test_the_trees_rows_keep_long_labels(fitted: analysis.Analysis) -> None:
    # The tree has the page's whole width: a row's name is no longer cut at 40 characters.
    tree = analysis.topic_tree(fitted)
    names = [
        f"topic {i} · graph neural networks · message passing · oversmoothing" for i in range(tree.n_leaves)
    ]
    figure = tree_charts.tree_figure(tree, tree.n_leaves, names, tree.node_labels())
    shown = figure.layout.yaxis.ticktext
    assert all(len(text) >= 60 for text in shown)

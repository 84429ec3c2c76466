"""The topic tree (dashboard.analytics.hierarchy): cuts give exactly k topics over every paper, are nested,
are labelled from counts; the index stores the tree (and an index without it still cuts); the Topics
page's number of topics is a cut, and its refit action refits."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import corpus
from dashboard import index as index
from dashboard.analytics import analysis, hierarchy
from dashboard.analytics.topics import TopicModel, class_tfidf, make_labels
from dashboard.figures import tree as tree_charts
from dashboard.filters import Filters
from dashboard.schema import OUTLIER_LABEL, OUTLIER_TOPIC
from dashboard.ui import keys

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "seeds"
APP = str(REPO / "app.py")


@pytest.fixture(scope="module")
def fitted() -> analysis.Analysis:
    return analysis.analyze(corpus.load([SEEDS]).papers)


@pytest.fixture(scope="module")
def tree(fitted: analysis.Analysis) -> hierarchy.TopicTree:
    return analysis.topic_tree(fitted)


def test_the_tree_joins_every_fitted_topic(fitted: analysis.Analysis, tree: hierarchy.TopicTree) -> None:
    n = int((fitted.topics["topic"] >= 0).sum())
    assert n >= 3  # enough to cut
    assert tree.n_leaves == n and tree.linkage.shape == (n - 1, 4)
    assert tree.linkage[-1, 3] == n  # the last merge holds every leaf
    assert np.all(np.diff(tree.linkage[:, 2]) >= 0)  # heights in merge order
    assert tree.sizes.sum() == int((fitted.papers["topic"] >= 0).sum())


def test_a_cut_gives_exactly_k_topics_covering_every_paper(
    fitted: analysis.Analysis, tree: hierarchy.TopicTree
) -> None:
    fitted_topics = fitted.papers["topic"].to_numpy()
    for k in range(2, tree.n_leaves + 1):
        cut = analysis.cut(fitted, tree, k)
        topics = cut.papers["topic"].to_numpy()
        assert sorted(set(topics[topics >= 0])) == list(range(k)), k
        # outliers stay outliers, every other paper has one of the k topics
        assert np.array_equal(topics < 0, fitted_topics < 0)
        table = cut.topics
        assert sorted(table.loc[table["topic"] >= 0, "topic"]) == list(range(k))
        assert table["size"].sum() == len(cut.papers)
        labels = dict(zip(table["topic"], table["label"], strict=True))
        assert (cut.papers["topic_label"] == cut.papers["topic"].map(labels)).all()
        if k < tree.n_leaves:  # (at every leaf the cut is the fitted analysis itself)
            # one small code per paper, not a string: a million label strings were 40 MB of new memory
            assert cut.papers["topic_label"].dtype == "category"
            assert (
                cut.papers["topic_label"].memory_usage(index=False, deep=True) < 2 * len(cut.papers) + 8_000
            )
        sizes = table.loc[table["topic"] >= 0, "size"].to_numpy()
        assert np.all(np.diff(sizes) <= 0)  # topic 0 is the largest
        for topic, ids in zip(table["topic"], table["representative_ids"], strict=True):
            assert all(int(topics[cut.positions[i]]) == topic for i in ids)


def test_cuts_are_nested(tree: hierarchy.TopicTree) -> None:
    for k in range(2, tree.n_leaves):
        finer, coarser = tree.cut(k + 1), tree.cut(k)
        # every group of the finer cut lies inside one group of the coarser one...
        for group in range(k + 1):
            assert len(set(coarser[finer == group])) == 1
        # ...and exactly two of them were merged
        assert len(set(finer)) == k + 1 and len(set(coarser)) == k


def test_cut_labels_come_from_the_counts_of_the_merged_papers(
    fitted: analysis.Analysis, tree: hierarchy.TopicTree
) -> None:
    tfidf, terms = fitted.model.tfidf_, fitted.model.terms_
    for k in (2, 3, tree.n_leaves - 1):
        cut = analysis.cut(fitted, tree, k)
        topics = cut.papers["topic"].to_numpy()
        # Independently: class-based TF-IDF over the papers' own rows, grouped by their cut topic.
        scores, shares = class_tfidf(tfidf, topics, k)
        sizes = np.bincount(topics[topics >= 0], minlength=k)
        expected = make_labels(scores, shares, terms, list(np.argsort(-sizes, kind="stable")))
        shown = cut.topics.loc[cut.topics["topic"] >= 0].sort_values("topic")["label"].tolist()
        assert shown == expected


def test_a_cut_at_the_fitted_number_is_the_fitted_model(
    fitted: analysis.Analysis, tree: hierarchy.TopicTree
) -> None:
    assert analysis.cut(fitted, tree, tree.n_leaves) is fitted


def test_ward_merges_the_closest_pair_first() -> None:
    centroids = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.0, 5.3]])
    linkage = hierarchy.ward_linkage(centroids, np.array([10, 10, 10, 10]))
    assert linkage[0, :2].tolist() == [0, 1]
    assert linkage[1, :2].tolist() == [2, 3]
    assert linkage[2, :2].tolist() == [4, 5]


def test_the_index_keeps_the_tree_and_an_older_index_computes_it(tmp_path: Path) -> None:
    out = tmp_path / "seeds.index"
    index.build_index([SEEDS], out, workers=1)
    opened = index.open_index(out, verify=True)
    stored = index.read_tree(opened)
    assert stored is not None
    computed = analysis.topic_tree(opened.analysis)
    assert np.allclose(stored.linkage, computed.linkage, atol=1e-5)
    assert np.allclose(stored.mass, computed.mass, atol=1e-4)
    older = replace(opened, manifest={**opened.manifest, "files": dict(opened.manifest["files"])})
    del older.manifest["files"][index.TREE_FILE]
    assert index.read_tree(older) is None


def test_the_tree_figure_colours_the_groups_of_the_cut(tree: hierarchy.TopicTree) -> None:
    figure = tree_charts.tree_figure(tree, 2, [f"t{i}" for i in range(tree.n_leaves)], tree.node_labels())
    layout = figure.to_dict()["layout"]
    assert len(layout["yaxis"]["ticktext"]) == tree.n_leaves
    assert [shape["type"] for shape in layout["shapes"]] == ["line"]  # the cut
    colours = {trace["line"]["color"] for trace in figure.to_dict()["data"] if trace["mode"] == "lines"}
    assert len(colours) == 3  # the two groups of the cut and the grey above it


@pytest.mark.parametrize(
    ("query", "refit"),
    [({"k": "5", "refit": "1"}, True), ({"refit": "1"}, False), ({"k": "5", "refit": "no"}, False)],
)
def test_refit_is_in_the_url_only_with_a_number_of_topics(query: dict[str, str], refit: bool) -> None:
    filters, _ = Filters.from_query(query)
    assert filters.refit is refit
    assert Filters.from_query(filters.to_query())[0] == filters
    assert filters.model == ("5-refit" if refit else filters.model)


# --------------------------------------------------------------------- the Topics page


@pytest.fixture
def seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


def _topics_page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page("src/dashboard/app_pages/topics.py")
    at.session_state[f"{keys.TOPICS_DETAIL}.open"] = True  # "One topic in detail" is drawn while open
    return at.run()


def _shown_topics(at: AppTest) -> list[str]:
    """The topics the page's topic-in-detail list offers, as "N: label" (outliers left out)."""
    focus = next(s for s in at.selectbox if str(s.key).startswith(keys.TOPICS_FOCUS))
    return [name for name in focus.options if name != OUTLIER_LABEL and not name.startswith("-1")]


def test_the_number_of_topics_on_the_page_is_a_cut_not_a_refit(
    seeds_only: None, fitted: analysis.Analysis, tree: hierarchy.TopicTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _topics_page()
    assert not at.exception
    fits: list[int] = []
    original = TopicModel.fit
    monkeypatch.setattr(TopicModel, "fit", lambda self, *a, **kw: fits.append(1) or original(self, *a, **kw))
    at.selectbox(key=keys.N_TOPICS).set_value("3").run()
    assert not at.exception, [e.value for e in at.exception]
    assert fits == []  # no refit
    cut = analysis.cut(fitted, tree, 3)
    expected = [f"{t}: {label}" for t, label in zip(cut.topics["topic"], cut.topics["label"], strict=True)]
    assert sorted(_shown_topics(at)) == sorted(e for e in expected if not e.startswith(f"{OUTLIER_TOPIC}:"))
    assert any(b.key == keys.TOPICS_REFIT for b in at.button)
    # the tree is offered under the map, drawn once its expander is opened (tests/ui/test_lazy_sections.py)
    assert any("fitted topics merge" in e.label for e in at.expander)


def test_the_refit_action_refits_at_that_number(seeds_only: None) -> None:
    at = _topics_page({"k": "4"})
    assert not at.exception
    at.button(key=keys.TOPICS_REFIT).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params.get("refit") in ("1", ["1"])
    refit = analysis.analyze(corpus.load([SEEDS]).papers, n_topics=4)
    labels = refit.topics.loc[refit.topics["topic"] >= 0, "label"].tolist()
    assert sorted(name.split(": ", 1)[1] for name in _shown_topics(at)) == sorted(labels)
    at.button(key=keys.TOPICS_CUT).click().run()
    assert "refit" not in at.query_params


def test_an_index_built_before_trees_were_stored_still_cuts(
    seeds_only: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "seeds.index"
    index.build_index([SEEDS], out, workers=1)
    older = tmp_path / "older.index"
    shutil.copytree(out, older)
    (older / index.TREE_FILE).unlink()
    manifest = json.loads((older / index.MANIFEST).read_text())
    del manifest["files"][index.TREE_FILE]
    manifest["digest"] = "older-" + manifest["digest"]
    (older / index.MANIFEST).write_text(json.dumps(manifest))
    shown = {}
    for name in (out, older):
        monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(name))
        at = _topics_page({"k": "3"})
        assert not at.exception, [e.value for e in at.exception]
        shown[name] = _shown_topics(at)
    assert len([t for t in shown[out] if not t.startswith("-1")]) == 3
    assert shown[out] == shown[older]
    frame = pd.DataFrame({"topics": shown[out]})
    assert frame["topics"].is_unique


def test_a_cut_whose_labels_repeat_keeps_them_as_text(
    fitted: analysis.Analysis, tree: hierarchy.TopicTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two groups named alike cannot be two categories: the column is the labels as strings then.
    real = hierarchy.TopicTree.describe

    def alike(self: hierarchy.TopicTree, k: int) -> hierarchy.TopicCut:
        described = real(self, k)
        return replace(described, labels=["same · words"] * len(described.labels))

    monkeypatch.setattr(hierarchy.TopicTree, "describe", alike)
    cut = analysis.cut(fitted, tree, 2)
    labels = cut.papers["topic_label"]
    assert labels.dtype != "category"
    assert set(labels[cut.papers["topic"] >= 0]) == {"same · words"}
    assert (labels[cut.papers["topic"] < 0] == OUTLIER_LABEL).all()

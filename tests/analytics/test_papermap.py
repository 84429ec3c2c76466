"""The paper map (t-SNE of the paper vectors): deterministic, neighbourhood-preserving, linear above the
sample, stored in the index (an index from before it still opens), and drawn on the Topics page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.io
import pytest
from sklearn.manifold import trustworthiness
from sklearn.preprocessing import normalize
from streamlit.testing.v1 import AppTest
from support.plotly_arrays import values

from dashboard import corpus, filters
from dashboard import index as index
from dashboard.analytics import papermap
from dashboard.figures import charts
from dashboard.ui import keys

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "seeds"


def clusters(
    n_per: int = 50, n_clusters: int = 3, dims: int = 12, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """L2-normalised vectors around ``n_clusters`` random directions, and each row's cluster."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_clusters, dims))
    labels = np.repeat(np.arange(n_clusters), n_per)
    vectors = centres[labels] + 0.35 * rng.normal(size=(len(labels), dims))
    return normalize(vectors).astype(np.float32), labels


def neighbour_purity(coords: np.ndarray, labels: np.ndarray, k: int = 5) -> float:
    """Share of each point's k nearest 2-D neighbours that are in its own cluster."""
    distance = ((coords[:, None, :] - coords[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(distance, np.inf)
    nearest = np.argsort(distance, axis=1)[:, :k]
    return float((labels[nearest] == labels[:, None]).mean())


def test_same_vectors_and_seed_give_the_same_coordinates() -> None:
    vectors, _ = clusters()
    first = papermap.layout(vectors, random_state=0)
    assert first.shape == (150, 2) and np.isfinite(first).all()
    assert np.array_equal(first, papermap.layout(vectors.copy(), random_state=0))
    # the sampled path (fit on a seeded sample, place the rest) is deterministic too
    sampled = papermap.layout(vectors, random_state=0, fit_size=90)
    assert np.array_equal(sampled, papermap.layout(vectors, random_state=0, fit_size=90))
    assert not np.array_equal(sampled, papermap.layout(vectors, random_state=1, fit_size=90))


def test_the_map_is_fitted_on_each_papers_exact_nearest_neighbours() -> None:
    vectors, _ = clusters()
    indices, distances = papermap.neighbours(vectors, 7, chunk=40)  # blocks that do not divide 150
    similarity = vectors.astype(np.float64) @ vectors.T
    np.fill_diagonal(similarity, -np.inf)
    expected = np.sort(np.argsort(-similarity, axis=1)[:, :7], axis=1)
    assert np.array_equal(np.sort(indices, axis=1), expected)
    assert (np.diff(distances, axis=1) >= 0).all()  # nearest first
    found = np.take_along_axis(similarity, indices, axis=1)
    assert np.allclose(distances, np.sqrt(2 - 2 * found), atol=1e-3)
    assert papermap.neighbours(vectors[:4], 10)[0].shape == (4, 3)  # at most every other paper


def test_the_map_keeps_neighbours_together_better_than_pca() -> None:
    vectors, labels = clusters()
    coords = papermap.layout(vectors, random_state=0)
    assert neighbour_purity(coords, labels) > 0.95
    pca = vectors @ np.linalg.svd(vectors - vectors.mean(0), full_matrices=False)[2][:2].T
    assert trustworthiness(vectors, coords, n_neighbors=10) > trustworthiness(vectors, pca, n_neighbors=10)
    assert np.abs(coords).max() == pytest.approx(papermap.EXTENT, rel=0.5)  # scaled to about -10..10


def test_papers_placed_after_the_sample_land_among_their_own_cluster() -> None:
    vectors, labels = clusters()
    coords = papermap.layout(vectors, random_state=0, fit_size=60)
    assert np.isfinite(coords).all()
    assert neighbour_purity(coords, labels) > 0.9


def test_papers_are_placed_the_same_on_one_thread_and_several(monkeypatch: pytest.MonkeyPatch) -> None:
    vectors, labels = clusters(n_per=200)
    fitted = vectors[::7]
    fitted_coords = np.random.default_rng(1).normal(size=(len(fitted), 2))
    vectors[5] = 0.0  # no text: no position
    one = papermap.place(vectors, fitted, fitted_coords, chunk=64)
    monkeypatch.setattr(papermap, "PARALLEL_FROM", 1)
    monkeypatch.setattr(papermap, "usable_cores", lambda: 3)
    several = papermap.place(vectors, fitted, fitted_coords, chunk=64)
    assert np.array_equal(one, several, equal_nan=True)
    assert np.isnan(one[5]).all() and np.isfinite(np.delete(one, 5, axis=0)).all()
    # Each paper at the weighted mean of its ten most similar fitted papers.
    similarity = vectors[17] @ fitted.T
    nearest = np.argsort(-similarity)[:10]
    expected = (similarity[nearest, None] * fitted_coords[nearest]).sum(0) / similarity[nearest].sum()
    assert one[17] == pytest.approx(expected, abs=1e-5)


def test_papers_without_a_vector_get_no_position_and_fall_in_no_box() -> None:
    vectors, _ = clusters(n_per=10)
    vectors[[0, 7]] = 0.0  # empty abstracts
    coords = papermap.layout(vectors, random_state=0)
    assert np.isnan(coords[[0, 7]]).all() and np.isfinite(np.delete(coords, [0, 7], axis=0)).all()
    papers = pd.DataFrame({"x": coords[:, 0], "y": coords[:, 1]})
    everything = filters.Filters(box=(-1e6, 1e6, -1e6, 1e6)).mask(papers).to_numpy()
    assert not everything[[0, 7]].any() and everything.sum() == len(coords) - 2
    assert papermap.layout(np.zeros((3, 4)), random_state=0).shape == (3, 2)
    assert len(papermap.layout(np.zeros((0, 4)), random_state=0)) == 0


# ----------------------------------------------------------------------------- the index


@pytest.fixture(scope="module")
def seeds_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("map-index") / "seeds.index"
    index.build_index([SEEDS], out, workers=1)
    return out


def test_the_index_stores_the_map_and_a_refit_keeps_it(seeds_index: Path) -> None:
    opened = index.open_index(seeds_index, verify=True)
    facts = opened.manifest["map"]
    assert facts["method"] == papermap.METHOD and facts["random_state"] == 0 and facts["fit_papers"] == 57
    assert index.has_map(opened.manifest)
    expected = papermap.layout(opened.analysis.model.lsa_, random_state=0)
    assert np.array_equal(opened.papers[["x", "y"]].to_numpy(), expected)
    refitted = index.refit(opened, 3)
    assert np.array_equal(refitted.papers[["x", "y"]].to_numpy(), expected)  # the map is not the topics'


def _as_before_the_map(source: Path, target: Path) -> Path:
    """A copy of an index whose manifest says nothing of the map, as one built before it."""
    shutil.copytree(source, target)
    manifest = json.loads((target / index.MANIFEST).read_text(encoding="utf-8"))
    del manifest["map"]
    manifest.pop("digest")
    manifest["digest"] = index.manifest_digest(manifest)
    (target / index.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return target


def test_an_index_from_before_the_map_still_opens_and_the_page_says_so(
    seeds_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = _as_before_the_map(seeds_index, tmp_path / "old.index")
    opened = index.open_index(old, verify=True)
    assert not index.has_map(opened.manifest)
    assert len(index.refit(opened, 3).papers) == 57  # a refit lays out its discs as before
    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(old))
    monkeypatch.setattr("sys.argv", ["app.py"])
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.switch_page("src/dashboard/app_pages/topics.py").run()
    assert not at.exception
    assert any("built before the paper map" in c.value for c in at.main.caption)


# ----------------------------------------------------------------------------- the Topics page


def map_figure(at: AppTest) -> dict:
    for element in at.main.get("plotly_chart"):
        figure = plotly.io.from_json(element.proto.spec).to_dict()
        if figure["layout"]["title"]["text"].startswith("Map of papers"):
            return figure
    raise AssertionError("no map on the page")


def test_topics_page_draws_a_point_per_paper_and_colours_by_a_field(
    seeds_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(seeds_index))
    monkeypatch.setattr("sys.argv", ["app.py"])
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.switch_page("src/dashboard/app_pages/topics.py").run()
    assert not at.exception
    figure = map_figure(at)
    rows = [i for trace in figure["data"] for i in values(trace.get("customdata", []))]
    papers = index.open_index(seeds_index).papers
    assert sorted(rows) == list(range(len(papers)))  # each point carries its paper's row number
    for trace in figure["data"][:3]:  # ... at the paper's own place on the map
        points = papers.iloc[values(trace["customdata"])]
        assert np.allclose(points["x"], values(trace["x"])) and np.allclose(points["y"], values(trace["y"]))
    assert figure["layout"]["annotations"], "topic labels at their clusters"
    assert any(
        "<br>" in text for trace in figure["data"] for text in trace["hovertext"]
    )  # title, then authors/year
    choices = at.selectbox(key=keys.TOPICS_MAP_COLOUR).options
    assert "Topic" in choices and "Year" in choices
    at.selectbox(key=keys.TOPICS_MAP_COLOUR).select("year").run()
    assert not at.exception
    figure = map_figure(at)
    years = {str(int(y)) for y in papers["year"].dropna()}
    assert {trace["name"] for trace in figure["data"]} <= years | {"unknown"}
    assert figure["layout"]["showlegend"] and figure["layout"]["annotations"]


def test_a_box_on_the_map_filters_to_the_papers_inside_and_hits_stand_out(
    seeds_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    papers = index.open_index(seeds_index).papers
    x0, x1 = float(papers["x"].min()), float(papers["x"].median())
    box = f"{x0},{x1},-100,100"
    inside = set(papers.loc[(papers["x"] >= x0) & (papers["x"] <= x1), "id"])
    monkeypatch.setenv("PAPER_DASHBOARD_CORPUS", str(seeds_index))
    monkeypatch.setattr("sys.argv", ["app.py"])
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["box"] = box
    at.switch_page("src/dashboard/app_pages/topics.py").run()
    assert not at.exception
    figure = map_figure(at)
    drawn = {papers["id"].iloc[i] for trace in figure["data"] for i in values(trace.get("customdata", []))}
    assert drawn == inside and 0 < len(inside) < len(papers)
    assert figure["data"][0]["name"] == "Filtered out"
    # the box round-trips through the URL as its four corners
    parsed, notices = filters.Filters.from_query({"box": box})
    assert not notices and parsed.to_query()["box"].count(",") == 3
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.query_params["q"] = "diffusion"
    at.switch_page("src/dashboard/app_pages/topics.py").run()
    hits = [t for t in map_figure(at)["data"] if values(t.get("customdata", []))]
    assert hits and all(t["marker"]["line"]["color"] == charts.HIT_OUTLINE for t in hits)


def test_corpus_load_and_map_of_the_seeds_agree_with_the_index(seeds_index: Path) -> None:
    from dashboard.analytics.analysis import analyze

    raw = analyze(corpus.load([SEEDS]).papers)
    stored = index.open_index(seeds_index).papers
    assert np.array_equal(raw.papers[["x", "y"]].to_numpy(), stored[["x", "y"]].to_numpy())


def test_vectors_of_one_dimension_still_give_a_map() -> None:
    # Four near-identical abstracts: their LSA has a single dimension (an upload of them failed).
    vectors = np.array([[1.0], [1.0], [1.0], [1.0], [1.0]])
    coords = papermap.layout(vectors)
    assert coords.shape == (5, 2) and np.isfinite(coords).all()


def test_cluster_neighbours_are_symmetric_and_include_clusters_that_touch() -> None:
    from dashboard.analytics.papermap import cluster_neighbours

    rng = np.random.default_rng(0)
    # a long thin cluster (0) lying along two round ones (1, 2) whose centres are far from its own,
    # and a round one (3) far away; the outliers (-1) are no cluster
    x = np.concatenate(
        [
            np.linspace(0, 10, 200),
            rng.normal(1, 0.3, 50),
            rng.normal(9, 0.3, 50),
            rng.normal(30, 0.3, 50),
            [5.0],
        ]
    )
    y = np.concatenate(
        [np.zeros(200), rng.normal(0.6, 0.2, 50), rng.normal(0.6, 0.2, 50), rng.normal(30, 0.3, 50), [0.0]]
    )
    labels = np.concatenate([np.zeros(200), np.ones(50), np.full(50, 2), np.full(50, 3), [-1]]).astype(int)
    found = cluster_neighbours(x, y, labels, nearest=1)
    assert set(found) == {0, 1, 2, 3}
    assert {1, 2} <= found[0]  # they touch, whatever their centres
    assert all(a in found[b] for a in found for b in found[a])

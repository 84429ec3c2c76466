"""The paper map: a neighbourhood-preserving 2-D layout of the papers' vectors, one point per paper.

    >>> import numpy as np
    >>> vectors = np.random.default_rng(0).normal(size=(60, 8)).astype(np.float32)
    >>> coords = layout(vectors, random_state=0)
    >>> coords.shape, bool(np.array_equal(coords, layout(vectors, random_state=0)))
    ((60, 2), True)

Choices (each measured by ``bench/map_quality.py``; figures in the README, "The paper map"):

- **Method: t-SNE by openTSNE** (FFT-accelerated from 10,000 points, Barnes-Hut below; perplexity 30,
  cosine neighbours, PCA initialisation, a coarser FFT grid: `INTS_IN_INTERVAL`) of the LSA vectors
  (those "most similar papers" and the topic model read). On a 5,000-paper sample of the 27k corpus
  its trustworthiness (k = 10) was 0.986, ahead of UMAP (0.977), the disc layout the map had before
  (0.968), PaCMAP (0.943) and PCA (0.739).
  openTSNE is compiled ahead of time (Cython): no numba JIT. UMAP and PaCMAP compile their kernels
  with numba in every new process (15-40 s here), and the app fits a raw corpus's analysis in a fresh
  worker process each time, so they would add that to every upload.
- **Exact neighbours, found here** (`neighbours`: matrix products in blocks) and handed to openTSNE.
  Its own search built an approximate (Annoy) index, and first imported pynndescent, when installed,
  to see whether it could use it: numba loading in every fresh process, seconds before any work.
- **The fit is the fixed cost**: ``DEFAULT_FIT_SIZE`` papers and `ITERATIONS` steps. A smaller sample
  keeps trustworthiness (each placed paper lands among its nearest fitted ones), and it is the one
  part of the map whose cost does not grow with the corpus; placing grows linearly with the corpus
  and with the sample.
- **Deterministic**: a fixed ``random_state``, a seeded sample and PCA initialisation: the same vectors
  give the same coordinates, bit for bit (also across thread counts: tested).
- **Linear in the corpus**: up to ``fit_size`` papers the layout is fitted on all of them; above, on a
  seeded sample of ``fit_size``, and every other paper is placed at the similarity-weighted mean of the
  map positions of its ``PLACE_NEIGHBORS`` most similar fitted papers (cosine in the vector space), in
  blocks, so a million papers cost minutes and bounded memory. (openTSNE's own ``transform`` optimises
  every new point again: far slower at a million, for the same neighbourhoods.)
- Papers with no text vector (an empty or placeholder abstract: a zero row) are similar to nothing;
  they get NaN coordinates, are not drawn and fall in no box.
- Coordinates are centred and scaled so the wider axis spans about -10..10, rounded to 4 decimals (what
  the index and the ``box=`` filter keep).
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dashboard.system.cores import usable_cores

METHOD = "opentsne"
DEFAULT_FIT_SIZE = 10_000  # from here openTSNE's FFT gradient (Barnes-Hut below costs more)
PERPLEXITY = 30.0
# Threads above 10,000 papers only: for fewer, starting and spinning them cost more than they share
# (for the seeds, many times the CPU on two threads as on one). The result is the same (tested).
PARALLEL_FROM = 10_000
PLACE_NEIGHBORS = 10
EXTENT = 10.0
# The FFT gradient's grid: one interval per 2 units of the embedding instead of openTSNE's 1. The grid
# grows with the map's extent, so late iterations cost up to 8x the early ones; at 2 the 27k corpus's
# map took less than half the time at the same trustworthiness@10 (bench/map_quality.py). Below
# 10,000 papers (Barnes-Hut) it has no effect.
INTS_IN_INTERVAL = 2
# openTSNE's optimisation: its 250 exaggerated iterations (they separate the clusters), then 250 of
# its 500 more: trustworthiness@10 stays where 500 put it (bench/map_quality.py), at a third less work.
EXAGGERATION_ITERATIONS = 250
ITERATIONS = 250


def neighbours(vectors: np.ndarray, k: int, chunk: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` most similar other rows by cosine, exactly, nearest first: ``(indices, distances)``.

    Distances are ``sqrt(2 - 2 cos)``, the Euclidean distance of the L2-normalised rows (what openTSNE's
    Annoy index gives for the cosine metric). Matrix products in row blocks (memory ``chunk x n``): at
    the map's sample size and a few tens of dimensions this is faster than building an approximate
    index, and exact.
    """
    x = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = (x / np.where(norms > 0, norms, 1)).astype(np.float32)
    n = len(x)
    k = min(k, n - 1)
    indices = np.empty((n, k), dtype=np.int64)
    distances = np.empty((n, k), dtype=np.float64)
    for start in range(0, n, chunk):
        similarity = x[start : start + chunk] @ x.T
        rows = np.arange(len(similarity))
        similarity[rows, start + rows] = -np.inf  # a paper is not its own neighbour
        nearest = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
        values = np.take_along_axis(similarity, nearest, axis=1)
        order = np.argsort(-values, axis=1, kind="stable")
        indices[start : start + len(rows)] = np.take_along_axis(nearest, order, axis=1)
        values = np.take_along_axis(values, order, axis=1).astype(np.float64)
        distances[start : start + len(rows)] = np.sqrt(np.clip(2.0 - 2.0 * values, 0.0, None))
    return indices, distances


def _fit_tsne(vectors: np.ndarray, random_state: int) -> np.ndarray:
    import openTSNE  # imported here: only a process that fits a map pays for it
    from openTSNE import affinity, initialization
    from openTSNE.nearest_neighbors import PrecomputedNeighbors

    n = len(vectors)
    if n <= 3:  # too few for neighbourhoods: a line in the given order
        return np.stack([np.arange(n, dtype=np.float64), np.zeros(n)], axis=1)
    vectors = np.asarray(vectors, dtype=np.float64)
    if vectors.shape[1] < 2:  # a tiny corpus's LSA may have one dimension; PCA initialisation needs two
        vectors = np.hstack([vectors, np.zeros((n, 2 - vectors.shape[1]))])
    perplexity = max(1.0, min(PERPLEXITY, (n - 1) / 3))
    n_jobs = min(2, usable_cores()) if n >= PARALLEL_FROM else 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small-corpus notices (perplexity lowered)
        # The neighbours openTSNE would look up (3 x perplexity), found exactly by `neighbours`.
        indices, distances = neighbours(vectors, max(1, int(3 * perplexity)))
        affinities = affinity.PerplexityBasedNN(
            perplexity=perplexity,
            knn_index=PrecomputedNeighbors(indices, distances),
            n_jobs=n_jobs,
            random_state=random_state,
        )
        tsne = openTSNE.TSNE(
            random_state=random_state,
            n_jobs=n_jobs,
            ints_in_interval=INTS_IN_INTERVAL,
            n_iter=ITERATIONS,
            early_exaggeration_iter=EXAGGERATION_ITERATIONS,
            verbose=False,
        )
        start = initialization.pca(vectors, random_state=random_state)
        coords = np.asarray(tsne.fit(affinities=affinities, initialization=start), dtype=np.float64)
    if not np.isfinite(coords).all():  # identical vectors have no neighbourhoods: a line, as for few
        return np.stack([np.arange(n, dtype=np.float64), np.zeros(n)], axis=1)
    return coords


def place(
    vectors: np.ndarray,
    fitted: np.ndarray,
    fitted_coords: np.ndarray,
    n_neighbors: int = PLACE_NEIGHBORS,
    chunk: int = 1024,
) -> np.ndarray:
    """Map positions for ``vectors`` (L2 rows): the similarity-weighted mean of their nearest fitted papers.

    ``fitted`` are the vectors the layout was fitted on and ``fitted_coords`` their positions. A zero
    row gets NaN. Blocks of rows are placed on every core from `PARALLEL_FROM` rows (each block's
    result does not depend on the others: the same coordinates on one thread or several).
    """
    out = np.full((len(vectors), 2), np.nan)
    k = min(n_neighbors, len(fitted))
    if k == 0:
        return out
    fitted = np.asarray(fitted, dtype=np.float32)

    def place_block(start: int) -> None:
        block = np.asarray(vectors[start : start + chunk], dtype=np.float32)
        similarity = block @ fitted.T
        # The k largest of each row, partitioned as they are: partitioning their negation (a copy)
        # took twice as long.
        nearest = np.argpartition(similarity, -k, axis=1)[:, -k:]
        weight = np.clip(np.take_along_axis(similarity, nearest, axis=1), 0, None).astype(np.float64)
        total = weight.sum(axis=1, keepdims=True)
        coords = (weight[..., None] * fitted_coords[nearest]).sum(axis=1) / np.where(total > 0, total, 1)
        coords[total[:, 0] <= 0] = np.nan
        out[start : start + len(block)] = coords

    starts = range(0, len(vectors), chunk)
    threads = min(usable_cores(), len(starts)) if len(vectors) >= PARALLEL_FROM else 1
    if threads > 1:  # NumPy lets go of the GIL in the product and the partition: the threads share the work
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="map-place") as pool:
            list(pool.map(place_block, starts))
    else:
        for start in starts:
            place_block(start)
    return out


def layout(vectors: np.ndarray, *, random_state: int = 0, fit_size: int = DEFAULT_FIT_SIZE) -> np.ndarray:
    """2-D map coordinates (n x 2, float64, NaN for papers without a vector) of L2-normalised ``vectors``.

    Fitted on every paper with a vector up to ``fit_size``, else on a seeded sample of them (the rest are
    placed with `place`). Same vectors and ``random_state``: same coordinates.
    """
    vectors = np.asarray(vectors)
    n = len(vectors)
    coords = np.full((n, 2), np.nan)
    norms = np.linalg.norm(np.asarray(vectors, dtype=np.float32), axis=1) if n else np.zeros(0)
    with_text = np.flatnonzero(norms > 0)
    if len(with_text) == 0:
        return coords
    if len(with_text) <= fit_size:
        fit_rows = with_text
    else:
        rng = np.random.default_rng(random_state)
        fit_rows = np.sort(rng.choice(with_text, fit_size, replace=False))
    fitted = np.asarray(vectors[fit_rows], dtype=np.float32)
    fitted_coords = _normalised(_fit_tsne(fitted, random_state))
    coords[fit_rows] = fitted_coords
    rest = np.setdiff1d(with_text, fit_rows, assume_unique=True)
    if len(rest):
        coords[rest] = place(vectors[rest], fitted, fitted_coords)
    return np.round(coords, 4)


def _normalised(coords: np.ndarray) -> np.ndarray:
    """Centred on the median, the wider axis spanning about -EXTENT..EXTENT (robust to a few far points)."""
    if len(coords) == 0:
        return coords
    centre = np.median(coords, axis=0)
    spread = np.percentile(np.abs(coords - centre), 99.5, axis=0).max()
    return (coords - centre) * (EXTENT / spread if spread > 0 else 1.0)


# Which clusters count as neighbours on the map (`cluster_neighbours`): each cluster's nearest few by
# centre, and any two whose points meet in a cell of a grid over the map (a long cluster can touch one
# whose centre is far). A cluster has a cell when it holds at least MIN_CELL_POINTS of its points and
# MIN_CELL_SHARE of the cell's: a few strays in another cluster's region make no neighbours.
NEAREST_CLUSTERS = 8
GRID_CELLS = 24
MIN_CELL_POINTS = 3
MIN_CELL_SHARE = 0.15


def cluster_neighbours(
    x: np.ndarray,
    y: np.ndarray,
    labels: np.ndarray,
    *,
    nearest: int = NEAREST_CLUSTERS,
    cells: int = GRID_CELLS,
    skip: int | None = -1,
) -> dict[int, set[int]]:
    """Which clusters (``labels``, one per point at ``x``, ``y``) lie next to which on the map.

    Two clusters are neighbours when one is among the other's ``nearest`` by centre (the median of its
    points, or the middle of its densest grid cell, where its label goes) or when their points meet in
    a cell (or side by side cells) of a ``cells`` x ``cells`` grid over the map. The label ``skip``
    (the outliers, drawn grey) is no cluster; points without a position are left out. Symmetric: b in
    result[a] exactly when a in result[b].

    >>> cluster_neighbours(np.array([0.0, 0.1, 5.0, 5.1, 10.0]), np.zeros(5), np.array([0, 0, 1, 1, 2]),
    ...                    nearest=1)
    {0: {1}, 1: {0, 2}, 2: {1}}
    """
    x, y, labels = np.asarray(x, dtype=float), np.asarray(y, dtype=float), np.asarray(labels)
    keep = np.isfinite(x) & np.isfinite(y) & (labels != skip if skip is not None else True)
    x, y, labels = x[keep], y[keep], labels[keep]
    names, codes = np.unique(labels, return_inverse=True)
    result: dict[int, set[int]] = {int(name): set() for name in names}
    n = len(names)
    if n < 2:
        return result
    span_x, span_y = (np.ptp(x) or 1.0), (np.ptp(y) or 1.0)
    column = np.minimum(((x - x.min()) / span_x * cells).astype(int), cells - 1)
    row_of = np.minimum(((y - y.min()) / span_y * cells).astype(int), cells - 1)
    counts = np.zeros((cells, cells, n), dtype=np.int64)
    np.add.at(counts, (row_of, column, codes), 1)
    # Two centres per cluster: the median of its points, and its densest cell (where the map's label
    # goes: `charts.label_position`), so clusters whose labels sit side by side are neighbours too.
    medians = np.array([[np.median(x[codes == c]), np.median(y[codes == c])] for c in range(n)])
    densest = counts.reshape(-1, n).argmax(axis=0)
    cell_centres = np.stack(
        [
            x.min() + (densest % cells + 0.5) * span_x / cells,
            y.min() + (densest // cells + 0.5) * span_y / cells,
        ],
        axis=1,
    )
    adjacent = np.zeros((n, n), dtype=bool)
    for centres in (medians, cell_centres):
        distance = np.sqrt(((centres[:, None, :] - centres[None, :, :]) ** 2).sum(-1))
        np.fill_diagonal(distance, np.inf)
        for c, row in enumerate(distance):
            adjacent[c, np.argsort(row, kind="stable")[: min(nearest, n - 1)]] = True
    totals = counts.sum(axis=2, keepdims=True)
    present = (counts >= MIN_CELL_POINTS) & (counts >= MIN_CELL_SHARE * totals)
    near = present.copy()  # a cluster's cells and the cells beside them
    near[1:] |= present[:-1]
    near[:-1] |= present[1:]
    near[:, 1:] |= present[:, :-1]
    near[:, :-1] |= present[:, 1:]
    flat_present = present.reshape(-1, n).astype(np.int64)
    touching = flat_present.T @ near.reshape(-1, n).astype(np.int64) > 0
    adjacent |= touching
    adjacent |= adjacent.T
    np.fill_diagonal(adjacent, False)
    for a, b in zip(*np.nonzero(adjacent), strict=True):
        result[int(names[a])].add(int(names[b]))
    return result

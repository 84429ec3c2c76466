"""How well does the paper map keep neighbours? Trustworthiness of 2-D layouts of the 27k corpus, and time.

Prints one table: for each layout of the LSA vectors of all 27k papers of ``multiconf-2021-2024``,
scikit-learn's ``trustworthiness`` (k = 10) of its 2-D coordinates against the LSA vectors, on a seeded
5,000-paper sample (papers with text), and the seconds the layout took:

- ``disc``: the layout the map had before (one disc per topic, `similarity.paper_map`, 25 topics);
- ``pca``: the first two principal components (the standard linear baseline);
- ``papermap``: what the app and the index compute (`dashboard.analytics.papermap.layout`: openTSNE fitted
on a
  seeded 20,000-paper sample, the other papers placed from their nearest fitted neighbours);
- with ``--all``: openTSNE on all papers, UMAP (umap-learn) and PaCMAP, where installed (they are not
  dependencies of the project: ``pip install umap-learn pacmap`` to compare).

Trustworthiness is 1 when every paper's 10 nearest neighbours on the map are among its nearest in the
vector space (the map invents no neighbourhoods).

    python bench/map_quality.py            # disc, PCA and the app's map
    python bench/map_quality.py --all      # and openTSNE (all papers), UMAP and PaCMAP
    python bench/map_quality.py --index bench/data/index-1m   # also time the map at 1M from an index
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sklearn.decomposition import PCA
from sklearn.manifold import trustworthiness

from dashboard.analytics import papermap, similarity
from dashboard.analytics.analysis import paper_texts
from dashboard.analytics.topics import TopicModel
from dashboard.corpus import load

REPO = Path(__file__).resolve().parents[1]
BIG = REPO.parent / "shared" / "corpora" / "multiconf-2021-2024" / "papers.jsonl.gz"
SAMPLE = 5_000
K = 10


def _umap(vectors: np.ndarray) -> np.ndarray:
    import umap

    return np.asarray(
        umap.UMAP(n_neighbors=15, min_dist=0.1, metric="cosine", random_state=0).fit_transform(vectors)
    )


def _pacmap(vectors: np.ndarray) -> np.ndarray:
    import pacmap

    return np.asarray(pacmap.PaCMAP(n_components=2, random_state=0).fit_transform(vectors))


def _opentsne_all(vectors: np.ndarray) -> np.ndarray:
    return papermap.layout(vectors, random_state=0, fit_size=len(vectors))


def main() -> None:
    """Print the trustworthiness table (and with ``--index`` the map's time at that index's size)."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--all", action="store_true", help="also openTSNE on all papers, UMAP and PaCMAP")
    parser.add_argument("--index", type=Path, help="an index whose LSA vectors to lay out (e.g. 1M papers)")
    args = parser.parse_args()

    started = time.perf_counter()
    papers = load([BIG]).papers
    model = TopicModel(n_topics=25, random_state=0).fit(paper_texts(papers))
    print(
        f"{len(papers):,} papers loaded and topics fitted in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    lsa = model.lsa_
    with_text = np.flatnonzero(np.linalg.norm(lsa, axis=1) > 0)
    sample = np.sort(np.random.default_rng(0).choice(with_text, SAMPLE, replace=False))

    layouts: dict[str, Callable[[], np.ndarray]] = {
        "disc (before)": lambda: similarity.paper_map(model.embedding_, model.labels_, model.doc_topic_),
        "pca": lambda: PCA(2, random_state=0).fit_transform(lsa),
        f"papermap (openTSNE, fit {papermap.DEFAULT_FIT_SIZE:,} + place)": lambda: papermap.layout(lsa),
    }
    if args.all:
        layouts["openTSNE, all papers"] = lambda: _opentsne_all(lsa)
        layouts["umap"] = lambda: _umap(lsa)
        layouts["pacmap"] = lambda: _pacmap(lsa)
    print(f"\n{'layout':<44} {'trustworthiness@10':>18} {'seconds':>8}")
    for name, make in layouts.items():
        try:
            began = time.perf_counter()
            coords = np.asarray(make(), dtype=np.float64)
            seconds = time.perf_counter() - began
        except ImportError as error:
            print(f"{name:<44} {'not installed: ' + str(error.name):>27}")
            continue
        score = trustworthiness(lsa[sample], coords[sample], n_neighbors=K)
        print(f"{name:<44} {score:>18.4f} {seconds:>8.1f}", flush=True)

    if args.index is not None:
        from dashboard import index as index

        opened = index.open_index(args.index)
        vectors = opened.analysis.model.lsa_
        began = time.perf_counter()
        papermap.layout(vectors)
        print(f"\npapermap of {len(vectors):,} papers ({args.index}): {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()

"""Papers like this, with the ``[semantic]`` embedding model: precision@10 on ICLR 1k and speed.

For each paper of the 1,000 ICLR 2026 submissions with an OpenReview ``primary_area``, its 10 nearest
papers by cosine (itself left out) in each vector space, and the share of them with the same
``primary_area``, averaged over papers (the definition of the "papers like this" benchmark). Spaces:
the topic model's TF-IDF rows, its LSA vectors, and all-MiniLM-L6-v2 (int8 ONNX) sentence embeddings of
the same texts (`dashboard.search.semantic`). Also the model's papers per second on this CPU.

    python bench/semantic_quality.py
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dashboard.analytics.analysis import paper_texts
from dashboard.analytics.topics import TopicModel
from dashboard.corpus import load
from dashboard.search import semantic

REPO = Path(__file__).resolve().parents[1]
ICLR = REPO.parent / "shared" / "corpora" / "iclr2026-openreview-1k" / "papers.jsonl"
K = 10


def precision_at_k(vectors: np.ndarray | sp.spmatrix, areas: np.ndarray, k: int = K) -> float:
    """Mean share of each paper's k nearest (cosine, itself excluded) that share its area."""
    similarity = vectors @ vectors.T
    similarity = np.asarray(similarity.todense() if sp.issparse(similarity) else similarity, dtype=np.float64)
    np.fill_diagonal(similarity, -np.inf)
    nearest = np.argsort(-similarity, axis=1, kind="stable")[:, :k]
    return float((areas[nearest] == areas[:, None]).mean())


def main() -> None:
    """Print precision@10 per space and the embedding model's papers per second."""
    papers = load([ICLR]).papers
    keep = papers["primary_area"].fillna("").astype(str).str.len().to_numpy() > 0
    papers = papers[keep].reset_index(drop=True)
    texts = paper_texts(papers)
    areas = papers["primary_area"].astype(str).to_numpy()
    model = TopicModel(random_state=0).fit(texts)
    encoder = semantic.Encoder()
    encoder.encode(texts[:8])  # load the model first: its start is not the papers' time
    began = time.perf_counter()
    embedded = encoder.encode(texts)
    seconds = time.perf_counter() - began
    print(f"{len(papers):,} ICLR papers with a primary_area ({len(set(areas))} areas)\n")
    print(f"{'space':<40} {'precision@10':>12}")
    for name, vectors in (
        ("TF-IDF", model.tfidf_),
        ("LSA", model.lsa_),
        (f"embedding ({semantic.MODEL_ID})", embedded),
    ):
        print(f"{name:<40} {precision_at_k(vectors, areas):>12.3f}")
    print(f"\nembedding: {len(texts) / seconds:.1f} papers per second ({seconds:.1f} s for {len(texts):,})")


if __name__ == "__main__":
    main()

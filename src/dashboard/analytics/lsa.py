"""The topic model's LSA step, in one place.

`TopicModel._fit_lsa` fits it and keeps its axes, with which the index build projects the papers
outside the fit sample (`dashboard.index.steps.lsa_projection`); an index built before it kept its model
derives the axes again from the fit sample (`dashboard.index.append.derive_transform`). Both call
`lsa_fit`, so a change of solver here changes them together: two copies of the solver's name once
drifted apart and every build of more papers than the fit sample stopped with "the LSA step could not be
reproduced".
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.decomposition import TruncatedSVD

GRAM_UP_TO = 2_000  # papers: up to here the exact Gram eigenproblem (`gram_lsa`), above it a truncated SVD
# ARPACK converges to the exact axes whatever its random start vector: a randomized SVD's last axes moved
# with the seed (the spectrum is flat there), enough to change the automatic number of topics.
SOLVER = "arpack"
OLD_SOLVER = "randomized"  # what indexes built before 2026-12-06 used above GRAM_UP_TO papers


def gram_lsa(matrix: sp.spmatrix, dims: int) -> np.ndarray:
    """Exact LSA document vectors (U x singular values) from the eigenvectors of the papers' Gram matrix.

    For a few thousand papers this small dense eigenproblem is faster and steadier than an iterative SVD;
    each axis's sign is fixed (largest coordinate positive) so the result does not depend on the solver.
    """
    gram = np.asarray((matrix @ matrix.T).todense(), dtype=np.float64)
    n = gram.shape[0]
    values, vectors = scipy.linalg.eigh(gram, subset_by_index=[n - dims, n - 1], driver="evr")
    order = np.argsort(values)[::-1]
    coords = vectors[:, order] * np.sqrt(np.clip(values[order], 0, None))
    flip = coords[np.argmax(np.abs(coords), axis=0), np.arange(coords.shape[1])] < 0
    coords[:, flip] *= -1
    return coords.astype(np.float32)


def lsa_fit(
    tfidf: sp.spmatrix, dims: int, random_state: int, solver: str = SOLVER
) -> tuple[np.ndarray, np.ndarray]:
    """(papers x ``dims`` LSA coordinates, float32; terms x ``dims`` projection, float64) of ``tfidf``.

    The projection maps any TF-IDF row to the same coordinates: the SVD's components above `GRAM_UP_TO`
    papers (what ``TruncatedSVD.transform`` applies); for the exact Gram solution (U x S) it is
    ``X^T U S / S^2``, i.e. ``V^T``. ``solver`` is `SOLVER` except to reproduce an older index.
    """
    if tfidf.shape[0] <= GRAM_UP_TO:
        coords = gram_lsa(tfidf, dims)
        wide = coords.astype(np.float64)
        scale = np.square(np.linalg.norm(wide, axis=0))
        return coords, np.asarray(tfidf.T @ wide) / np.where(scale > 0, scale, 1.0)
    svd = TruncatedSVD(dims, algorithm=solver, random_state=random_state)
    coords = svd.fit_transform(tfidf).astype(np.float32)
    return coords, svd.components_.T.astype(np.float64)

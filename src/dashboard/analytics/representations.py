"""The spaces the topic model can cluster papers in: one registry, so a new space is one entry.

Each entry says where a paper's vector comes from and how much taxonomy guidance (the research-area
keyword view, :mod:`dashboard.analytics.areas`) suits that space, as measured on labelled conference
files by ``bench/topic_quality.py``:

- ``lsa`` (the default): a truncated SVD of the TF-IDF the model computes anyway. It costs a fraction
  of a second per thousand papers, assigns new papers by one matrix product (so the index build and its
  Dask maps stay cheap), and needs nothing beyond scikit-learn. The guidance weight was tuned here.
- ``minilm``: the sentence embeddings of the ``[semantic]`` extra (all-MiniLM-L6-v2, int8 ONNX:
  `dashboard.search.semantic`). Topics agree better with human labels in this space, but encoding runs
  at roughly ten abstracts per second per core, far too slow to be the default for tens of thousands of
  papers. The vectors are computed by the caller (a layer above this one) and handed to
  ``TopicModel.fit(texts, vectors=...)``. No guidance here: the keyword areas are machine-learning areas,
  and in this space they cost more on a computer-vision file's sessions than they gain on ICLR's areas.
- ``lsa+minilm``: both, side by side (each L2-normalised), for a corpus where the caller has the
  embeddings: the words' view and the sentences' view each vote. No guidance either.

``TopicModel(guidance=...)`` scales the space's weight, so it turns guidance down or off in LSA and has no
effect in a space whose weight is 0.

>>> get("lsa").external, get("minilm").external
(False, True)
>>> sorted(REPRESENTATIONS)
['lsa', 'lsa+minilm', 'minilm']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Representation:
    """One space: its name, a readable label, its guidance weight, and whether its vectors come from
    outside the topic model (``external``: the caller encodes the papers) and whether LSA is part of it."""

    name: str
    label: str
    guidance: float
    external: bool
    uses_lsa: bool

    def base(self, lsa: np.ndarray, vectors: np.ndarray | None) -> np.ndarray:
        """The papers' vectors in this space (L2 rows, float32), before guidance and smoothing.

        ``lsa`` are the model's LSA rows; ``vectors`` the caller's embeddings (required when external).
        """
        if self.external and vectors is None:
            raise ValueError(
                f"the {self.name!r} representation needs the papers' embeddings: "
                "pass fit(texts, vectors=...) (one row per text)"
            )
        parts = []
        if self.uses_lsa:
            parts.append(np.asarray(lsa, dtype=np.float32))
        if self.external and vectors is not None:
            if len(vectors) != len(lsa):
                raise ValueError(f"vectors have {len(vectors)} rows for {len(lsa)} texts: one row per text")
            parts.append(_unit_rows(np.asarray(vectors, dtype=np.float32)))
        joined = parts[0] if len(parts) == 1 else np.hstack(parts)
        return _unit_rows(joined)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a zero row stays zero), float32; numpy only: the app imports this module
    when it opens a prebuilt index, without scikit-learn."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)


REPRESENTATIONS: dict[str, Representation] = {
    "lsa": Representation("lsa", "LSA of the TF-IDF", guidance=1.0, external=False, uses_lsa=True),
    "minilm": Representation(
        "minilm", "sentence embedding (all-MiniLM-L6-v2)", guidance=0.0, external=True, uses_lsa=False
    ),
    "lsa+minilm": Representation(
        "lsa+minilm", "LSA and sentence embedding side by side", guidance=0.0, external=True, uses_lsa=True
    ),
}
DEFAULT_REPRESENTATION = "lsa"


def get(name: str) -> Representation:
    """The registry entry called ``name`` (ValueError naming the known ones otherwise)."""
    try:
        return REPRESENTATIONS[name]
    except KeyError:
        known = ", ".join(sorted(REPRESENTATIONS))
        raise ValueError(f"unknown representation {name!r}: choose one of {known}") from None


def fallback(name: str, have_vectors: bool) -> str:
    """The representation to use: ``name``, or the default when ``name`` needs embeddings the caller
    could not compute (the ``[semantic]`` extra is not installed).

    >>> fallback("minilm", have_vectors=False), fallback("minilm", have_vectors=True)
    ('lsa', 'minilm')
    """
    return name if have_vectors or not get(name).external else DEFAULT_REPRESENTATION

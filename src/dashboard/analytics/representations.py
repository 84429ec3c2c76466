"""The spaces the topic model can cluster papers in: one registry, so a new space is one entry.

Each entry says where a paper's vector comes from and how much taxonomy guidance (the research-area
keyword view, :mod:`dashboard.analytics.areas`) suits that space, as measured on labelled conference
files by ``bench/topic_quality.py``:

- ``lsa``: a truncated SVD of the TF-IDF the model computes anyway. It costs a fraction of a second per
  thousand papers, assigns new papers by one matrix product (so the index build and its Dask maps stay
  cheap), and needs nothing beyond scikit-learn. Full guidance.
- ``minilm``: the sentence embeddings of all-MiniLM-L6-v2 (int8 ONNX, a dependency:
  `dashboard.search.semantic`). Topics agree better with human labels in this space (ahead of BERTopic
  on the same vectors), but encoding runs at about ten abstracts per CPU-second. The vectors are
  computed by the caller (a layer above this one: `dashboard.search.topicspace`) and handed to
  ``TopicModel.fit(texts, vectors=...)``. Guidance by spread (`spread_weight`): full where the corpus
  spans the taxonomy, none where one area holds most of it.
- ``lsa+minilm``: both, side by side (each L2-normalised), for a corpus where the caller has the
  embeddings: the words' view and the sentences' view each vote. No guidance.

**The default is a rule, ``auto`` (`choose`)**, the same for the app, the CLI and the index build:
``minilm`` for a corpus of up to `EMBEDDED_PAPERS` papers when the embedding model is installed,
``lsa`` otherwise. Where quality and time pull apart, each user gets the side that suits the corpus:

- Up to 2,000 papers (one conference's accepted papers, a session, a reading list) the embedding's topics
  agree better with human labels at every size measured (60 to 1,319 papers, most at the smallest, where
  LSA has too few documents to find directions), and encoding is a one-time cost of at most about 3.5
  CPU-minutes (under a minute on a four-core laptop), kept with the corpus's vectors.
- Above it, the user who opens a 27k or a million-paper file gets LSA: encoding 27k papers would take
  about 50 CPU-minutes, against a whole build of about one minute. ``--representation minilm`` asks for
  the embedding's topics at any size.

Why guidance by spread in the embedding space: the keyword areas say most where a corpus's papers are
spread over many of them (a general ML conference's submissions); where one area holds most papers (a
vision conference), pulling papers towards their areas merges what the sentences keep apart. In LSA the
words already carry the area keywords and the rule did not help there, so LSA keeps its
full weight. The measurements that chose this are on the docs' performance page
(``bench/topic_quality.py``).

``TopicModel(guidance=...)`` scales the space's weight, so it turns guidance down or off in LSA and has no
effect in a space whose weight is 0.

>>> get("lsa").external, get("minilm").external
(False, True)
>>> sorted(REPRESENTATIONS)
['lsa', 'lsa+minilm', 'minilm']
>>> choose(AUTO, 1_000, can_encode=True), choose(AUTO, 27_000, can_encode=True)
('minilm', 'lsa')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Representation:
    """One space: its name, a readable label, its guidance weight, whether its vectors come from
    outside the topic model (``external``: the caller encodes the papers), whether LSA is part of it and
    whether the guidance weight is scaled by the corpus's spread over the taxonomy (`spread_weight`)."""

    name: str
    label: str
    guidance: float
    external: bool
    uses_lsa: bool
    guidance_by_spread: bool = False
    grouped_by: str = ""  # for people: "papers are grouped by ..." (the Topics page says it)

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
    "lsa": Representation(
        "lsa",
        "LSA of the TF-IDF",
        guidance=1.0,
        external=False,
        uses_lsa=True,
        grouped_by="the words of their titles and abstracts (LSA of TF-IDF)",
    ),
    "minilm": Representation(
        "minilm",
        "sentence embedding (all-MiniLM-L6-v2)",
        guidance=1.0,
        external=True,
        uses_lsa=False,
        guidance_by_spread=True,
        grouped_by="what their titles and abstracts say (the all-MiniLM-L6-v2 sentence embedding)",
    ),
    "lsa+minilm": Representation(
        "lsa+minilm",
        "LSA and sentence embedding side by side",
        guidance=0.0,
        external=True,
        uses_lsa=True,
        grouped_by="their words and what they say together (LSA and all-MiniLM-L6-v2)",
    ),
}
# The product's default: a rule by corpus size (`choose`), not one space.
AUTO = "auto"
DEFAULT_REPRESENTATION = AUTO
# The space a model uses when no embeddings are at hand (no extra, a large corpus, a bare TopicModel).
BASE_REPRESENTATION = "lsa"
# The largest corpus whose default topics are found in the embedding space: about 3.5 CPU-minutes of
# encoding (about 10 papers per CPU-second measured), within the minutes a first open may take.
EMBEDDED_PAPERS = 2_000
# Guidance by spread: none at or below SPREAD_NONE (half the entropy of an even spread: a corpus of one
# or two fields), full from SPREAD_FULL (about the spread of a general ML conference's submissions),
# linear between.
SPREAD_NONE = 0.5
SPREAD_FULL = 0.9


def spread_weight(spread: float) -> float:
    """The share of its guidance weight a spread-gated space uses, given the corpus's `areas.spread`.

    >>> spread_weight(0.3), round(spread_weight(0.7), 2), spread_weight(0.95)
    (0.0, 0.5, 1.0)
    """
    return float(np.clip((spread - SPREAD_NONE) / (SPREAD_FULL - SPREAD_NONE), 0.0, 1.0))


def get(name: str) -> Representation:
    """The registry entry called ``name`` (ValueError naming the known ones otherwise)."""
    try:
        return REPRESENTATIONS[name]
    except KeyError:
        known = ", ".join(sorted(REPRESENTATIONS))
        raise ValueError(f"unknown representation {name!r}: choose one of {known}") from None


def choose(name: str, n_papers: int, can_encode: bool) -> str:
    """The space to fit ``n_papers`` in when ``name`` is asked for: ``auto`` is ``minilm`` up to
    `EMBEDDED_PAPERS` papers and `BASE_REPRESENTATION` above it; any space that needs embeddings the
    caller cannot compute (``can_encode`` False: the embedding model is not installed) falls back
    to `BASE_REPRESENTATION`. ValueError for an unknown name.

    >>> choose("minilm", 50_000, can_encode=True), choose("minilm", 10, can_encode=False)
    ('minilm', 'lsa')
    """
    if name == AUTO:
        name = "minilm" if n_papers <= EMBEDDED_PAPERS else BASE_REPRESENTATION
    space = get(name)  # ValueError for an unknown name, whatever the encoder
    return name if can_encode or not space.external else BASE_REPRESENTATION


def names() -> list[str]:
    """What ``--representation`` accepts: ``auto`` and every registered space."""
    return [AUTO, *REPRESENTATIONS]

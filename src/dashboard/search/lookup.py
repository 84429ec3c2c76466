"""Finding one paper by what a user remembers of it: part of its title, an author, or its id.

Compare's picker searches the whole corpus with it, whatever the filters (a multiselect of every
title cannot go to the browser at a million papers). Pure Arrow and numpy; no streamlit.

    >>> papers = pd.DataFrame({"id": ["p1", "p2"], "title": ["Graph nets", "Video diffusion"]})
    >>> find_papers(lookup_text(papers), papers["id"], "diffusion").tolist()
    [1]
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

FOUND_AT_MOST = 12


def _authors_text(values: object) -> str:
    if isinstance(values, list | tuple | np.ndarray):
        return "; ".join(str(v) for v in values)
    return "" if values is None or (isinstance(values, float) and np.isnan(values)) else str(values)


def lookup_text(papers: pd.DataFrame) -> pa.Array:
    """Per paper, the text a lookup reads: title, authors (where the corpus has them) and id.

    Made once per corpus (a few seconds at a million papers) and searched on every keystroke.
    """
    text = papers["title"].astype("str")
    if "authors" in papers.columns:
        text = text + "\n" + papers["authors"].map(_authors_text)
    text = text + "\n" + papers["id"].astype("str")
    return pa.array(text.to_numpy(dtype=object), type=pa.large_string())


def find_papers(text: pa.Array, ids: pd.Series, query: str, limit: int = FOUND_AT_MOST) -> np.ndarray:
    """Row positions of the papers whose title, authors or id hold every word of ``query``.

    An exact id comes first, then the rest in corpus order; at most ``limit`` rows. Case is
    ignored and words are matched as typed (no regular expressions: a title with "(" is found).
    """
    words = query.lower().split()
    if not words or len(text) == 0:
        return np.array([], dtype=np.int64)
    keep = np.ones(len(text), dtype=bool)
    for word in words:
        hits = pc.match_substring(text, word, ignore_case=True).fill_null(False)
        keep &= hits.to_numpy(zero_copy_only=False).astype(bool)
    rows = np.flatnonzero(keep)
    exact = np.flatnonzero(ids.astype("str").to_numpy() == query.strip()) if len(rows) else rows
    first = [int(r) for r in exact]
    ordered = first + [int(r) for r in rows[: limit + len(first)] if int(r) not in set(first)]
    return np.asarray(ordered[:limit], dtype=np.int64)

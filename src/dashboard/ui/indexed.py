"""The app's side of a prebuilt index (:mod:`dashboard.index.build`): opened once, shared by every session.

`dashboard.ui.data` asks here first: when the corpus path is an index directory, the table, report,
analysis, search and term counts come from the index (memory-mapped, nothing recomputed) instead of
being built from raw files. The cache key is the index's manifest digest, which changes whenever the
index is rebuilt.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import corpus, filters
from dashboard import index as paper_index
from dashboard.analytics import terms
from dashboard.analytics.analysis import Analysis
from dashboard.analytics.hierarchy import TopicTree
from dashboard.system import heap

T = TypeVar("T")
LOG = logging.getLogger(__name__)

# digest -> index directory, filled when a corpus path turns out to be an index. Content-keyed and
# the same for every session: it holds no per-session data.
_PATHS: dict[str, str] = {}


def digest_of(path: str) -> str | None:
    """The cache key of the index at ``path``, or None when ``path`` is not an index directory."""
    if not paper_index.is_index(path):
        return None
    try:
        digest = str(paper_index.read_manifest(path)["digest"])
    except paper_index.IndexFormatError as error:
        # Opening will report the problem; the key changes when the manifest does.
        digest = "unreadable-index-" + hashlib.sha256(str(error).encode()).hexdigest()
    _PATHS[digest] = str(path)
    return digest


@st.cache_resource(show_spinner=False, max_entries=4)
def _open(digest: str, path: str) -> paper_index.PaperIndex | str:
    try:
        with heap.long_lived():  # millions of objects, not walked by the collector (`dashboard.system.heap`)
            return paper_index.open_index(path)
    except paper_index.IndexFormatError as error:
        LOG.warning("cannot open index %s: %s", path, error)
        return str(error)


def opened(digest: str) -> paper_index.PaperIndex | None:
    """The opened index behind ``digest`` (None when the corpus is not an index or cannot be opened)."""
    path = _PATHS.get(digest)
    if path is None:
        return None
    result = _open(digest, path)
    return result if isinstance(result, paper_index.PaperIndex) else None


def path_of(digest: str) -> str | None:
    """The index directory behind ``digest`` (None when the corpus is not an index)."""
    return _PATHS.get(digest)


def is_index(digest: str) -> bool:
    """True when the corpus behind ``digest`` is an index directory."""
    return digest in _PATHS


def load_result(digest: str) -> corpus.LoadResult:
    """The index's paper table and load report; an unreadable index gives no papers and a report why."""
    path = _PATHS[digest]
    result = _open(digest, path)
    if isinstance(result, paper_index.PaperIndex):
        return corpus.LoadResult(papers=result.papers, report=result.report)
    name = Path(path).name or path
    problem = corpus.Problem(name, "", result)
    return corpus.LoadResult(
        papers=pd.DataFrame(),
        report=corpus.LoadReport([corpus.FileReport(name, "index", None, 0, skipped=[problem])]),
    )


def analysis(digest: str, n_topics: int | str) -> Analysis | None:
    """The index's analysis ("auto": the topics it was built with; another number refits on its sample)."""
    index = opened(digest)
    if index is None:
        return None
    if n_topics == "auto" or int(n_topics) == int(index.manifest["topics"]):
        return index.analysis
    return _stored(digest, lambda opened: paper_index.refit(opened, int(n_topics)), "fitting the papers")


def facets(digest: str, model: str) -> dict[str, pd.Series] | None:
    """The sidebar's facet counts kept in the index (None: not an index, or another topic model;
    ``model`` is `Filters.model`)."""
    index = opened(digest)
    if index is None or index.facets is None:
        return None
    if model not in ("auto", str(index.manifest["topics"])):
        return None
    return index.facets


def _stored(digest: str, read: Callable[[paper_index.PaperIndex], T | None], instead: str) -> T | None:
    """What ``read`` finds in the corpus's index: None when it is not an index, when the index was
    built before it kept that, or when that file is damaged (logged: the app does ``instead``)."""
    index = opened(digest)
    if index is None:
        return None
    try:
        return read(index)
    except paper_index.IndexFormatError as error:
        LOG.warning("%s; %s instead", error, instead)
        return None


def tree(digest: str) -> TopicTree | None:
    """The topic tree stored in the index (None: not an index, or one built before trees were kept)."""
    return _stored(digest, paper_index.read_tree, "computing the topic tree")


def meanings(digest: str) -> list[list[str]] | None:
    """The papers' method names per meaning stored in the index (None: not an index, or one built
    before they were kept)."""
    return _stored(digest, paper_index.read_meanings, "reading the abstracts")


def mask(digest: str, selection: filters.Filters, papers: pd.DataFrame) -> pd.Series | None:
    """The filters' mask with the search answered by the index's inverted index (None: not an index)."""
    index = opened(digest)
    if index is None:
        return None
    keep = selection.without("q").mask(papers)
    if selection.q:
        keep = keep & index.search(selection.q)
    return keep


def term_counts(digest: str, ngram: int, keep_stop_words: bool) -> terms.TermCounts | None:
    """The index's precomputed term counts (stop words removed); None when it has not got them."""
    if keep_stop_words:
        return None
    return _stored(digest, lambda index: index.term_counts(ngram), "counting the terms")


def search_mask(digest: str, q: str) -> np.ndarray | None:
    """Which papers match ``q`` by the index's inverted index (None: not an index)."""
    index = opened(digest)
    return None if index is None else index.search(q)


def predates_map(digest: str) -> bool:
    """True for an index built before the paper map (its ``x, y`` are one disc per topic)."""
    index = opened(digest)
    return index is not None and not paper_index.has_map(index.manifest)

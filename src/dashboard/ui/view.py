"""The one value every page reads: the corpus, the filters from the URL, and which papers pass them.

`dashboard.ui.context.page_context` builds it once per script run; the pages, the charts and every
download read the papers, the mask and the filters from it, so they agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.filters import Filters
from dashboard.readers.source_names import source_names
from dashboard.schema import OUTLIER_TOPIC
from dashboard.ui import data


@dataclass(frozen=True)
class View:
    """One run's view of the corpus: every paper, the filters and which papers pass them."""

    source: data.ChosenCorpus
    report: Any  # corpus.LoadReport
    papers: pd.DataFrame
    filters: Filters
    mask: pd.Series
    facets: dict[str, pd.Series]
    analysis: Any = None  # analysis.Analysis, or None when the corpus could not be analysed
    analysis_problem: str = ""
    topic_names: dict[int, str] = field(default_factory=dict)
    list_mask: Any = None  # np.ndarray: the papers in the chosen reading lists; None when none is chosen
    # np.ndarray: the papers "papers like" lists (`ranked.liked_mask`); None without ``like``/``liketext``.
    # A filter like any other, so the count line, the list action, the charts and the download agree.
    like_mask: Any = None
    repo_generation: tuple[int, float] = (0, 0.0)  # (answers, latest check): keys repository caches

    @cached_property
    def filtered(self) -> pd.DataFrame:
        """The papers that pass the filters, in corpus order, every column (downloads, full text)."""
        if self.mask.all():  # no copy of the whole table (gigabytes of text at a million papers)
            return self.papers
        return self.papers[self.mask.to_numpy()]

    @property
    def n_topics_found(self) -> int:
        return sum(1 for t in self.topic_names if t != OUTLIER_TOPIC)

    @property
    def model_key(self) -> str:
        """Which topic model this view shows (corpus and number of topics), for widget keys.

        A widget showing topics is keyed on it, so a new model gives a new widget instead of one
        that keeps the old model's topic, label or selection.
        """
        return f"{self.source.digest[:12]}.{self.filters.model}"

    @property
    def topic_order(self) -> list[int]:
        """Topic numbers, largest first, outliers last."""
        counts = self.facets.get("topic", pd.Series(dtype=int))
        return sorted(self.topic_names, key=lambda t: (t == OUTLIER_TOPIC, -counts.get(t, 0), t))

    def mask_without(self, *keys: str) -> pd.Series:
        """Which papers pass every filter but the named ones (e.g. counts beside the topic list).

        Made once per run for each set of filters that is left: without a year filter, the mask without
        the year is the run's own mask, and a page asks for a dozen such masks.
        """
        return self._masks_without(keys)[0]

    def array_without(self, *keys: str) -> np.ndarray:
        """`mask_without` as a read-only boolean array, the same array for the same filters left (so
        `trends.Axes.cells` counts a table once however many charts ask for it): in every run, too,
        unless a reading list or the repository filter is among them (`data.mask_array`)."""
        return self._masks_without(keys)[1]

    @cached_property
    def _masks(self) -> dict[tuple[Filters, bool, bool], tuple[pd.Series, np.ndarray]]:
        return {}

    def _masks_without(self, keys: tuple[str, ...]) -> tuple[pd.Series, np.ndarray]:
        left = self.filters.without(*keys, "list")
        with_list = self.list_mask is not None and "list" not in keys
        with_like = self.like_mask is not None and not {"like", "liketext"} & set(keys)
        known = self._masks.get((left, with_list, with_like))
        if known is None:
            mask = data.mask(self.source.digest, left, self.papers)
            if with_list:
                mask = mask & self.list_mask
            if with_like:
                mask = mask & self.like_mask
            if with_list or with_like:
                array = data.read_only(mask)
            else:
                array = data.mask_array(self.source.digest, left, self.papers)
            known = self._masks[(left, with_list, with_like)] = (mask, array)
        return known

    @property
    def source_names(self) -> dict[str, str]:
        """A readable name for each source file (`dashboard.readers.source_names`): never a hash or a path."""
        return _source_names(self.source.digest, self.papers)

    def describe(self) -> str:
        """What is filtered, in words (topic labels instead of numbers)."""
        return self.filters.describe(self.topic_names)

    def file_name(self, stem: str, extension: str) -> str:
        """A download's file name saying what was filtered, e.g. ``papers_q-graph_code-released.csv``."""
        return f"{stem}_{self.filters.slug()}.{extension}"


@st.cache_resource(show_spinner=False, max_entries=16)
def _source_names(digest: str, _papers: pd.DataFrame) -> dict[str, str]:
    return source_names(_papers[[c for c in ("source", "venue", "year") if c in _papers.columns]])

"""The paper table: one row per paper, the single contract every module reads.

`corpus.load()` returns it; `analysis.analyze()` adds the analysis columns; filters, charts,
exports and pages only ever read these names. Column order below is the export order.

Core columns (always present after `corpus.load`)
------------------------------------------------
id                str        the record's own id, else ``<file stem>-<n>`` (n = position); unique in a load
source            str        file name the paper came from (no directory part)
position          int        1-based position of the paper within its source file
venue             str        e.g. ``ICML``; ``""`` when unknown
year              Int64      e.g. 2026; <NA> when unknown
title             str        the record's own title, else a short derived title
title_is_derived  bool       True when ``title`` was derived from the abstract
abstract          str        the abstract verbatim, as read
abstract_clean    str        LaTeX and markdown rendered to readable plain text, whitespace normalised
n_words           int        words in ``abstract_clean``
method_names      list[str]  names the paper gives its own method, model, dataset or benchmark
links             list[dict] ``{"url": str, "kind": str}``, de-duplicated, cleaned; kind in LINK_KINDS
code_url          str        the paper's own repository URL; ``""`` when none
github_repo       str        ``owner/name`` when ``code_url`` is on GitHub; ``""`` otherwise
code_status       str        one of CODE_STATUSES
datasets          list[str]  benchmarks and datasets named in the text
authors           list[str]  author names, in the source's order; ``[]`` when none
affiliations      list[str]  the paper's institutions, each once, in the source's order (normalised names
                             such as Paper Copilot's ``aff_unique_norm`` preferred over per-author ``aff``)
countries         list[str]  the institutions' countries, each once
decision          str        the source's own decision or status text (``Poster``, ``ICLR 2026 Oral``,
                             ``Reject``...); ``""`` when none
decision_tier     str        ``decision`` sorted into one of DECISION_TIERS; ``unknown`` when the source
                             gives no decision or one that names no tier (``Submitted to ICLR 2026``)
track             str        the source's track (``main``, ``Datasets and Benchmarks``); ``""`` when none
tldr              str        the source's one-sentence summary; ``""`` when none
project_url       str        the paper's project page as the record gives it; ``""`` when none
paper_url         str        the paper's own page (record ``url``/``site``/``oa``/forum), else its PDF
citations         Int64      citation count the source gives; <NA> when missing
has_abstract      bool       False for an empty or placeholder abstract (``Abstract Unavailable``, ``TBA``,
                             ``N/A``, ``Part of Advances in ...``): such papers stay in tables and counts
                             but are left out of topics, terms and similarity

Optional columns (present when a reader found them; other columns are welcome too)
-------------------------------------------------------------------------------
url, pdf_url      str        the paper's page / PDF as the record names them
keywords          list[str]  keywords, tags, arXiv categories, fields of study
primary_area      str        a label given by the source (OpenReview ``primary_area``)
session           str        the conference session the source puts the paper in

Review columns (present when a file of the load has review scores, `dashboard.readers.reviews`)
-----------------------------------------------------------------------------------------------
ratings           list[float] the reviewers' scores in review order, from Paper Copilot's ``rating``, the
                             official reviews among an OpenReview note's ``details.replies`` or
                             ``directReplies``, or a column of that name; ``[]`` when the paper has none
                             (a paper one of whose scores does not parse gets ``[]`` too, and the load
                             report names it: a score is never guessed)
confidences       list[float] the same reviewers' confidences in the same order; ``[]`` when the source
                             gives none or not one per score
n_reviews         int        ``len(ratings)``
rating_mean       float      mean of ``ratings``; NaN when the paper has no scores
rating_sd         float      population standard deviation of ``ratings``; NaN under two scores
rating_scale      str        the scale's range as the source states it (``1-10``); ``""`` when it does
                             not: then scores are only compared within one venue and year

Repository columns (added from the repository cache, `dashboard.repocheck.columns`)
------------------------------------------------------------------------------------
repo_state        str        one of REPO_STATES; ``""`` when the paper links no checkable repository
repo_stars        Int64      stars (Hugging Face: likes); <NA> when unknown
repo_license      str        SPDX id (GitHub), licence key (GitLab, Hub); ``""`` when unknown
repo_pushed_at    str        ISO date of the last push; ``""`` when unknown

Analysis columns (added by `analysis.analyze`)
---------------------------------------------
topic             int        topic number, -1 for an outlier and for every paper whose ``has_abstract``
                             is False (those are never fitted: they form no topic)
topic_label       str        e.g. ``diffusion · guidance · sampling``; ``"Outlier"`` for -1
topic_weight      float      strength of the paper's membership of its topic (0..1)
is_outlier        bool       no topic is clear for the paper
areas             list[str]  research areas from the taxonomy (multi-label)
x, y              float      2-D map coordinates
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the table's constants are read where pandas is not imported yet
    import numpy as np
    import pandas as pd

CORE_COLUMNS: tuple[str, ...] = (
    "id",
    "source",
    "position",
    "venue",
    "year",
    "title",
    "title_is_derived",
    "abstract",
    "abstract_clean",
    "n_words",
    "method_names",
    "links",
    "code_url",
    "github_repo",
    "code_status",
    "datasets",
    "authors",
    "affiliations",
    "countries",
    "decision",
    "decision_tier",
    "track",
    "tldr",
    "project_url",
    "paper_url",
    "citations",
    "has_abstract",
)

REVIEW_COLUMNS: tuple[str, ...] = (
    "ratings",
    "confidences",
    "n_reviews",
    "rating_mean",
    "rating_sd",
    "rating_scale",
)

OPTIONAL_COLUMNS: tuple[str, ...] = ("url", "pdf_url", "keywords", "primary_area", "session", *REVIEW_COLUMNS)

ANALYSIS_COLUMNS: tuple[str, ...] = ("topic", "topic_label", "topic_weight", "is_outlier", "areas", "x", "y")

LIST_COLUMNS: frozenset[str] = frozenset(
    {"method_names", "links", "datasets", "authors", "affiliations", "countries", "keywords", "areas"}
    | {"ratings", "confidences"}
)

# ``workshop``: sent to (or accepted at) a workshop, not the main track: a decision, not an acceptance.
DECISION_TIERS: tuple[str, ...] = (
    "oral", "spotlight", "poster", "accept", "workshop", "reject", "withdrawn", "unknown"
)  # fmt: skip

LINK_KINDS: tuple[str, ...] = ("code", "account", "project_page", "paper", "data", "other")

# `dashboard.text.links.code_release` says what each means; "stated": code said to be available, no link.
CODE_STATUSES: tuple[str, ...] = (
    "released", "project_page_only", "account_only", "stated", "promised", "none",
)  # fmt: skip

# What a check of the paper's own repository found (`dashboard.repocheck.states` says what each means).
REPO_STATES: tuple[str, ...] = (
    "live", "empty", "readme_only", "placeholder", "archived", "moved", "not_found", "blocked", "error",
    "not_checked",
)  # fmt: skip
# Added from the repository cache (`dashboard.repocheck`); repo_state is "" for a paper with no
# repository on GitHub, GitLab or Hugging Face, "not_checked" until an answer exists.
REPO_COLUMNS: tuple[str, ...] = ("repo_state", "repo_stars", "repo_license", "repo_pushed_at")

OUTLIER_TOPIC = -1
OUTLIER_LABEL = "Outlier"


def rows_of(papers: pd.DataFrame, rows: Sequence[int] | np.ndarray, columns: Sequence[str]) -> pd.DataFrame:
    """Those rows (by position) of those columns the table has: no copy of any other row or column.

    Taking rows of every column of a large table copies them all (`papers.iloc[rows]`: 3.5 s for the
    repositories of a million papers, where the table needs eight columns). For an index's table it
    also reads them: the 20,000 rows of a map sample made 2.6 GB of a million papers' abstracts
    resident in the server.
    """
    import numpy as np

    present = [c for c in columns if c in papers.columns]
    return papers.iloc[np.asarray(rows, dtype=np.intp), papers.columns.get_indexer(present)]

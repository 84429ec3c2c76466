"""The paper table's repository columns, from the cache: ``repo_state``, ``repo_stars``,
``repo_license``, ``repo_pushed_at`` (`dashboard.schema.REPO_COLUMNS`).

A paper's repository is its own (`targets.paper_targets`); where the cache has no answer yet the
state is ``not_checked``, and ``""`` where the paper has no repository on the three hosts. Reading
the cache never touches the network.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from dashboard.repocheck.store import Store, StoreError, default_path
from dashboard.repocheck.targets import paper_targets

ENV_SWITCH = "PAPER_DASHBOARD_REPOCHECK"


def checking_enabled(environ: Mapping[str, str] = os.environ) -> bool:
    """False when ``PAPER_DASHBOARD_REPOCHECK`` is ``off`` (``0``, ``false``, ``no``): cached answers only."""
    return environ.get(ENV_SWITCH, "on").strip().lower() not in ("off", "0", "false", "no")


def read_answers(path: Path) -> tuple[pd.DataFrame, str]:
    """Every stored answer and a problem ("" when none); an absent file is no answers, not a problem."""
    try:
        store = Store.open_existing(path)
    except StoreError as error:
        return _no_answers(), str(error)
    if store is None:
        return _no_answers(), ""
    try:
        with store:
            frame = store.answers()
    except Exception as error:  # a damaged file degrades the feature, never the page
        return _no_answers(), f"cannot read the repository cache {path}: {error}"
    return frame, skipped_message(path, store.skipped)


def skipped_message(path: Path, skipped: list[str]) -> str:
    """What was left out of the cache ``path`` as unreadable (``""``: nothing), at most three named."""
    if not skipped:
        return ""
    named = "; ".join(skipped[:3]) + ("; ..." if len(skipped) > 3 else "")
    rows = "row" if len(skipped) == 1 else "rows"
    return f"skipped {len(skipped):,} unreadable {rows} of the repository cache {path} ({named})"


def _no_answers() -> pd.DataFrame:
    from dashboard.repocheck.store import ANSWER_COLUMNS

    frame = pd.DataFrame({column: pd.Series(dtype=object) for column in ANSWER_COLUMNS})
    frame["stars"] = pd.array([], dtype="Int64")
    return frame


def repo_columns(keys: pd.Series, answers: pd.DataFrame) -> pd.DataFrame:
    """The four columns for papers whose repository keys are ``keys`` (``""``: none), same index."""
    known = {
        key: (state, stars, license_, pushed)
        for key, state, stars, license_, pushed in zip(
            answers["key"],
            answers["state"],
            answers["stars"],
            answers["license"],
            answers["pushed_at"],
            strict=True,
        )
    }
    # One look-up per distinct repository, then positions: cheap at a million papers.
    codes, distinct = pd.factorize(keys.to_numpy(dtype=object))
    none: tuple[str, object, str, str] = ("", None, "", "")
    unchecked: tuple[str, object, str, str] = ("not_checked", None, "", "")
    rows = [known.get(key, unchecked) if key else none for key in distinct]
    column = [np.array([row[i] for row in rows], dtype=object) for i in range(4)]
    take = codes if len(rows) else np.zeros(0, dtype=np.int64)
    stars = pd.array([None if v is None or pd.isna(v) else int(v) for v in column[1]], dtype="Int64")
    license_ = np.array([v or "" for v in column[2]], dtype=object)
    pushed = np.array([v or "" for v in column[3]], dtype=object)
    return pd.DataFrame(
        {
            "repo_state": pd.Series(column[0][take], index=keys.index, dtype="str"),
            "repo_stars": pd.Series(stars.take(take), index=keys.index),
            "repo_license": pd.Series(license_[take], index=keys.index, dtype="str"),
            "repo_pushed_at": pd.Series(pushed[take], index=keys.index, dtype="str"),
        },
        index=keys.index,
    )


def with_repo_columns(papers: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """``papers`` with the four columns added (replaced when present); the others are not copied
    (copy-on-write)."""
    columns = repo_columns(paper_targets(papers), answers)
    kept = papers.drop(columns=[c for c in columns.columns if c in papers.columns])
    return pd.concat([kept, columns], axis=1)


def default_cache(environ: Mapping[str, str] = os.environ) -> Path:
    """The cache file the app and the CLI use unless told otherwise."""
    return default_path(environ)


def with_cached_answers(papers: pd.DataFrame, environ: Mapping[str, str] = os.environ) -> pd.DataFrame:
    """``papers`` with the repository columns when the cache file holds answers, else unchanged.

    For ``paper-dashboard parse``: a table is only widened where a check has been run.
    """
    path = default_cache(environ)
    answers, _ = read_answers(path)  # rows it skipped (an edited file) leave the others usable
    if not len(answers):
        return papers
    return with_repo_columns(papers, answers)

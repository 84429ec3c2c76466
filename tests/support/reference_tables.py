"""The straightforward pandas versions of the tables the pages show: what `dashboard.ui.tables`'
fast ``*_in_view`` functions must equal on any subset (they count from per-corpus codes instead).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from dashboard.ui import tables


def list_counts(values: pd.Series) -> pd.Series:
    """Papers per item of a list column (each paper counted once per item), most frequent first."""
    exploded = pd.Series(values.to_numpy(), index=np.arange(len(values))).explode().dropna()
    exploded = exploded[exploded.astype("str").str.strip() != ""]
    pairs = pd.DataFrame({"row": exploded.index, "item": exploded.astype("str").to_numpy()}).drop_duplicates()
    return pairs["item"].value_counts().rename("papers")


def method_names(papers: pd.DataFrame) -> pd.DataFrame:
    """Each method name with the number of papers naming it and the first such paper's title."""
    rows = papers[["title", "method_names"]].explode("method_names").dropna(subset=["method_names"])
    rows = rows[rows["method_names"].astype("str").str.strip() != ""]
    if rows.empty:
        return pd.DataFrame({"name": [], "papers": [], "title": []})
    rows = rows.assign(name=rows["method_names"].astype("str"))
    grouped = rows.groupby("name", sort=False).agg(papers=("title", "size"), title=("title", "first"))
    grouped = grouped.reset_index().sort_values(["papers", "name"], ascending=[False, True])
    return grouped.reset_index(drop=True)[["name", "papers", "title"]]


def release_by(papers: pd.DataFrame, column: str, labels: Mapping[Any, str] | None = None) -> pd.DataFrame:
    """Per value of ``column``: papers with released code and all papers (columns group, released, papers).

    List columns (e.g. ``areas``) count a paper in each of its groups.
    """
    table = papers[[column, "code_status"]]
    if tables.is_list_column(table[column]):
        table = table.explode(column).dropna(subset=[column])
    grouped = (
        table.assign(released=table["code_status"].eq(tables.RELEASED))
        .groupby(column, sort=False, dropna=True)["released"]
        .agg(released="sum", papers="size")
        .reset_index()
        .rename(columns={column: "group"})
    )
    if labels:
        grouped["group"] = grouped["group"].map(lambda g: labels.get(g, str(g)))
    grouped["released"] = grouped["released"].astype(int)
    grouped["papers"] = grouped["papers"].astype(int)
    return grouped.sort_values(["papers", "group"], ascending=[False, True], key=_sort_key).reset_index(
        drop=True
    )


def link_tracker(
    papers: pd.DataFrame,
    host_of: Callable[[str], str],
    repo_of: Callable[[str], str],
) -> pd.DataFrame:
    """One row per link of each paper: id, title, url, kind, host, repo, code_status."""
    links = tables.link_table(papers, host_of, repo_of)
    return tables.tracker_rows(links, papers, np.arange(len(links)))


def shared_repos(papers: pd.DataFrame) -> pd.DataFrame:
    """Repositories named as the code of more than one paper (columns repo, papers, titles, ids)."""
    with_repo = papers[papers["github_repo"].astype("str").str.strip() != ""]
    if with_repo.empty:
        return pd.DataFrame({"repo": [], "papers": [], "titles": [], "ids": []})
    keyed = with_repo.assign(repo_key=with_repo["github_repo"].astype("str").str.lower())
    grouped = keyed.groupby("repo_key", sort=False).agg(
        repo=("github_repo", "first"), papers=("id", "size"), titles=("title", list), ids=("id", list)
    )
    shared = grouped[grouped["papers"] > 1].sort_values(["papers", "repo"], ascending=[False, True])
    return shared.reset_index(drop=True)[["repo", "papers", "titles", "ids"]]


def _sort_key(column: pd.Series) -> pd.Series:
    return column if column.name == "papers" else column.astype("str")

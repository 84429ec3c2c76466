"""Tables the pages show, shaped from the paper table. Pure pandas (no streamlit), unit-tested.

>>> import pandas as pd
>>> papers = pd.DataFrame({"source": ["a", "a", "b"], "code_status": ["released", "none", "none"]})
>>> release_by(papers, "source").to_dict("records")
[{'group': 'a', 'released': 1, 'papers': 2}, {'group': 'b', 'released': 0, 'papers': 1}]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

RELEASED = "released"


def fit_widths(widths: Mapping[str, int], budget: int) -> dict[str, int]:
    """Column widths that fit ``budget`` pixels: the widest columns are cut to one common width.

    Narrow columns (numbers, kinds) keep their width; long text columns share what is left. Widths
    that already fit are kept as they are.

    >>> fit_widths({"topic": 220, "papers": 60, "top terms": 600}, 400)
    {'topic': 170, 'papers': 60, 'top terms': 170}
    """
    if sum(widths.values()) <= budget or not widths:
        return dict(widths)
    # The largest cap c with sum(min(w, c)) <= budget: columns at or below it keep their width.
    kept, cut = 0, len(widths)
    cap = budget / cut
    for width in sorted(widths.values()):
        if width > cap:
            break
        kept, cut = kept + width, cut - 1
        cap = (budget - kept) / cut if cut else float(budget)
    return {name: min(width, int(cap)) for name, width in widths.items()}


def year_text(value: Any) -> str:
    """A year as text: 2023 and 2023.0 give "2023"; a missing year gives ""."""
    return "" if value is None or pd.isna(value) else str(int(value))


def venue_year(papers: pd.DataFrame) -> pd.Series:
    """ "NeurIPS 2023" per paper: venue and year joined, whichever of them the paper has.

    >>> venue_year(pd.DataFrame({"venue": ["ICML", None], "year": [2023, 2021]})).tolist()
    ['ICML 2023', '2021']
    """
    blank = pd.Series("", index=papers.index, dtype="string")
    venue = papers["venue"].astype("string").fillna("") if "venue" in papers.columns else blank
    year = papers["year"].map(year_text).astype("string") if "year" in papers.columns else blank
    return (venue + " " + year).str.strip()


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
    if table[column].map(lambda v: isinstance(v, list | tuple | np.ndarray)).any():
        table = table.explode(column).dropna(subset=[column])
    grouped = (
        table.assign(released=table["code_status"].eq(RELEASED))
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


def _sort_key(column: pd.Series) -> pd.Series:
    return column if column.name == "papers" else column.astype("str")


def link_tracker(
    papers: pd.DataFrame,
    host_of: Callable[[str], str],
    repo_of: Callable[[str], str],
) -> pd.DataFrame:
    """One row per link of each paper: id, title, url, kind, host, repo, code_status."""
    columns = ["id", "title", "url", "kind", "host", "repo", "code_status"]
    rows = papers[["id", "title", "links", "code_status"]].explode("links").dropna(subset=["links"])
    rows = rows[rows["links"].map(lambda link: isinstance(link, dict) and bool(link.get("url")))]
    if rows.empty:
        return pd.DataFrame({c: pd.Series(dtype="str") for c in columns})
    urls = rows["links"].map(lambda link: str(link["url"]))
    tracker = pd.DataFrame(
        {
            "id": rows["id"].to_numpy(),
            "title": rows["title"].to_numpy(),
            "url": urls.to_numpy(),
            "kind": rows["links"].map(lambda link: str(link.get("kind", "other"))).to_numpy(),
            "host": urls.map(host_of).to_numpy(),
            "repo": urls.map(repo_of).to_numpy(),
            "code_status": rows["code_status"].to_numpy(),
        }
    )
    return tracker[columns].reset_index(drop=True)


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


def topic_overview(topics: pd.DataFrame, counts: pd.Series, names: Mapping[int, str]) -> pd.DataFrame:
    """Topics as a table: name, papers (in the current view), top terms as text."""
    table = pd.DataFrame(
        {
            "topic": topics["topic"].astype(int).to_numpy(),
            "name": [names.get(int(t), str(t)) for t in topics["topic"]],
            "papers": [int(counts.get(int(t), 0)) for t in topics["topic"]],
            "top terms": [_terms_text(terms) for terms in topics["top_terms"]],
        }
    )
    return table.sort_values(["papers", "topic"], ascending=[False, True]).reset_index(drop=True)


def _terms_text(terms: object, limit: int = 10) -> str:
    if not isinstance(terms, list | tuple | np.ndarray):
        return ""
    words = [str(t[0]) if isinstance(t, list | tuple) else str(t) for t in list(terms)[:limit]]
    return ", ".join(words)

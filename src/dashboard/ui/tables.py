"""Tables the pages show, shaped from the paper table. Pure pandas and numpy (no streamlit).

Counts of a filtered subset come from per-corpus codes and a boolean mask (``*_in_view``), never
from a copy of the filtered papers: at a million papers a copy costs seconds. The straightforward
pandas versions they must equal live in ``tests/reference_tables.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from pandas.api.types import is_list_like

from dashboard.analytics.terms import fit_width, text_width_px
from dashboard.text import extract

RELEASED = "released"


_MACHINE_NAME = re.compile(r"[0-9a-f]{8,}|[0-9a-f]{8}-[0-9a-f]{4}-", re.IGNORECASE)


def source_files_tell_something(sources: Iterable[object]) -> bool:
    """Whether a per-source-file chart or column says anything: several files, named by a person.

    One file on every row says nothing; nor do machine-made names (``003_fb8fd97882dc0bc7.txt``, the
    bundled seeds' hashes), whose split is arbitrary.

    >>> source_files_tell_something(["iclr2025.json", "nips2024.json"])
    True
    >>> source_files_tell_something(["000_f074a6e2e82fdcc8.txt", "001_0a4efe27d1109a12.txt"])
    False
    """
    names = {str(s) for s in sources}
    if len(names) < 2:
        return False
    return not all(_MACHINE_NAME.search(name) and any(c.isdigit() for c in name) for name in names)


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


def is_list_column(values: pd.Series) -> bool:
    """Whether a column holds lists (``areas``), told from its dtype and first value, not row by row.

    >>> is_list_column(pd.Series([None, ["a"]])), is_list_column(pd.Series(["a", "b"]))
    (True, False)
    """
    if values.dtype != object:
        return False
    first = values.first_valid_index()
    return first is not None and isinstance(values.at[first], list | tuple | np.ndarray)


# --- counting any subset of a corpus --------------------------------------------------------------
# A page shows counts over the papers that pass the filters. Exploding list columns and grouping
# strings over a million papers takes seconds; done once per corpus as integer codes (`Groups`),
# the counts for any mask are a `np.bincount` of the codes whose paper is in it.


@dataclass(frozen=True)
class Groups:
    """A column as integer codes, one item per value (per list element for a list column).

    ``rows[i]`` is the position of item i's paper and ``codes[i]`` its value's position in ``values``;
    missing values are left out. Items are ordered by code, then row.
    """

    rows: np.ndarray
    codes: np.ndarray
    values: pd.Index
    by_row: np.ndarray | None = None  # a column of one value per paper: code + 1 of each paper (0: none)
    # The items again in paper order (codes) and each paper's number of items: `counts` of a list column
    # (a million papers' five million authors) then reads them in order instead of gathering at random.
    codes_by_paper: np.ndarray | None = None
    per_paper: np.ndarray | None = None

    def in_view(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows, codes) of the items whose paper is in ``mask`` (a boolean array over the papers)."""
        keep = mask[self.rows]
        return self.rows[keep], self.codes[keep]

    def counts(self, mask: np.ndarray) -> np.ndarray:
        """Items per value among the papers in ``mask`` (one count per entry of ``values``)."""
        if self.by_row is not None:  # in paper order: a sequential read, twice as fast as `in_view`;
            # weighed by the mask, no code is copied (half the time of counting the masked codes)
            counted = np.bincount(self.by_row, weights=mask, minlength=len(self.values) + 1)
            return counted[1:].astype(np.int64)
        if self._paper_items is not None:  # a product of the mask with the papers' items (below)
            return (self._paper_items.T @ np.asarray(mask, dtype=np.int32)).astype(np.int64)
        return np.bincount(self.in_view(mask)[1], minlength=len(self.values))

    @cached_property
    def _paper_items(self) -> sp.csr_matrix | None:
        """Papers x values, 1 where a paper has the value: made once, when ``codes_by_paper`` is known.

        Its product with a mask counts a million papers' five million authors in 12 ms, against 25 ms
        for gathering the masked items' codes and counting them (`np.repeat` of the mask per item)."""
        if self.codes_by_paper is None or self.per_paper is None:
            return None
        bounds = np.zeros(len(self.per_paper) + 1, dtype=np.int64)
        np.cumsum(self.per_paper, out=bounds[1:])
        ones = np.ones(len(self.codes_by_paper), dtype=np.int32)
        return sp.csr_matrix(
            (ones, self.codes_by_paper, bounds), shape=(len(self.per_paper), len(self.values))
        )


def _groups(
    rows: np.ndarray, values: Any, *, n_papers: int, sort: bool = False, one_per_row: bool = False
) -> Groups:
    """``values`` (one per item; the paper of item i at ``rows[i]``, in paper order) as `Groups`."""
    codes, uniques = pd.factorize(values, sort=sort)
    return _coded(rows, codes, pd.Index(uniques), n_papers=n_papers, one_per_row=one_per_row)


def _coded(
    rows: np.ndarray, codes: np.ndarray, values: pd.Index, *, n_papers: int, one_per_row: bool = False
) -> Groups:
    """`Groups` of items already coded: item i of paper ``rows[i]`` has ``values[codes[i]]`` (-1: none)."""
    by_row = (codes + 1).astype(np.int32) if one_per_row else None
    present = codes >= 0
    rows, codes = rows[present], codes[present]
    in_paper_order = None if one_per_row else codes.astype(np.int32)
    per_paper = None if one_per_row else np.bincount(rows, minlength=n_papers)
    order = _stable_order(codes, len(values))  # rows stay in corpus order within a value
    rows, codes = rows[order].astype(np.int64, copy=False), codes[order].astype(np.int64, copy=False)
    return Groups(
        rows=rows,
        codes=codes,
        values=values,
        by_row=by_row,
        codes_by_paper=in_paper_order,
        per_paper=per_paper,
    )


def _stable_order(codes: np.ndarray, n_values: int) -> np.ndarray:
    """The order that sorts ``codes`` (each in ``range(n_values)``) keeping equal codes in place.

    A stable sort of 16-bit numbers is a radix sort (5x faster than a merge sort for a million topic
    numbers); more values than that are sorted on their low 16 bits, then stably on their high ones
    (the 4.7 million authors of a million papers: 0.08 s against 0.5 s in one sort of 64-bit codes).
    """
    if n_values <= 2**16:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    wide = codes.astype(np.uint32)
    low = np.argsort((wide & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((wide[low] >> 16).astype(np.uint16), kind="stable")]


def _flattened(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(the row position of each element, the elements) of a list column, in row then list order, as
    ``explode().dropna()`` gives them: an empty or missing list has none, a value that is not a list is
    one element, and a missing element is left out.

    One pass over the lists, then array operations: pandas' ``explode`` took 3.4 s for the 4.7 million
    authors of a million papers, this 0.5 s (1.3-1.9 s as a process's first, fresh memory and all).
    """
    lengths = np.ones(len(values), dtype=np.int64)
    flat: list[Any] = []
    extend, append = flat.extend, flat.append
    for row, value in enumerate(values.to_numpy()):
        if type(value) is list or is_list_like(value):  # a string is not list-like
            extend(value)
            lengths[row] = len(value)
        else:
            append(value)
    items = np.empty(len(flat), dtype=object)
    items[:] = flat
    rows = np.repeat(np.arange(len(values)), lengths)
    present = ~pd.isna(items)
    return rows[present], items[present]


def group_codes(values: pd.Series) -> Groups:
    """The groups `release_by` counts: each value of a column, or each element of a list column."""
    if is_list_column(values):
        return _groups(*_flattened(values), n_papers=len(values))
    return _groups(np.arange(len(values)), values.array, n_papers=len(values), one_per_row=True)


def list_items(values: pd.Series, *, once_per_row: bool) -> Groups:
    """The non-blank elements of a list column as text (``once_per_row``: a repeated element once).

    Elements are told apart by their text (``1`` and ``"1"`` are one value); codes are in name order,
    so tables sort by name without comparing strings. The text, its blankness and its order are worked
    out once per distinct element, not per element: at a million papers' 4.7 million authors (52,498
    names) this took 1.9-4.5 s against 7.8-8.6 s for the same `Groups` made element by element.
    """
    rows, items = _flattened(values)
    try:
        codes, distinct = pd.factorize(items)
    except TypeError:  # unhashable elements (a list of link records): their text is all there is
        codes, distinct = pd.factorize(pd.Series(items, dtype=object).astype(str).to_numpy(dtype=object))
    texts, sorted_texts = pd.factorize(np.asarray(distinct.astype(str), dtype=object), sort=True)
    names = pd.Index(sorted_texts)
    kept = np.asarray(names.str.strip() != "", dtype=bool)
    renumbered = np.cumsum(kept) - 1  # a kept name's code among the kept ones
    codes = texts[codes]
    keep = kept[codes]
    rows, codes = rows[keep], renumbered[codes[keep]]
    names = names[kept]
    if once_per_row:  # the first of a paper's repeats of a name
        first = ~pd.Series(rows * max(len(names), 1) + codes).duplicated().to_numpy()
        rows, codes = rows[first], codes[first]
    return _coded(rows, codes, names, n_papers=len(values))


def release_in_view(
    groups: Groups, mask: np.ndarray, released: np.ndarray, labels: Mapping[Any, str] | None = None
) -> pd.DataFrame:
    """`release_by` of the papers in ``mask``, from the column's `Groups` (``released``: per paper).

    Equal to ``release_by(papers[mask], column, labels)`` for ``groups = group_codes(papers[column])``.
    """
    return releases_in_view([(groups, labels)], mask, released)[0]


JOINT_CELLS = 1 << 20  # cells of one joint count (float64: 8 MB): columns beyond it are counted apart


def releases_in_view(
    groupings: Sequence[tuple[Groups, Mapping[Any, str] | None]],
    mask: np.ndarray,
    released: np.ndarray,
    *,
    max_cells: int = JOINT_CELLS,
) -> list[pd.DataFrame]:
    """`release_in_view` of several columns (each `Groups` with its labels) over the same papers.

    Single-valued columns are counted together: each paper's codes in all of them, and whether it
    released code, make one number, and one `np.bincount` weighed by ``mask`` counts every
    combination; each column's papers and releases are sums of that table. At a million papers the
    Links page's four tables took 38 ms with two counts per column (papers, and papers with code)
    and a frame sort each; counted together 5.9 ms, counted apart 14.3 ms.
    Columns that would make it larger than ``max_cells`` start another such count; list columns
    (a paper in several groups) are counted apart.
    """
    counted: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    batch: list[int] = []
    cells = 2
    for number, (groups, _) in enumerate(groupings):
        if groups.by_row is None:
            counted[number] = (groups.counts(mask), groups.counts(mask & released))
            continue
        size = len(groups.values) + 1  # `by_row` codes: 0 is no value
        if batch and cells * size > max_cells:
            counted.update(_joint_counts([groupings[n][0] for n in batch], batch, mask, released))
            batch, cells = [], 2
        batch.append(number)
        cells *= size
    if batch:
        counted.update(_joint_counts([groupings[n][0] for n in batch], batch, mask, released))
    return [
        _release_table(groups, labels, *counted[number]) for number, (groups, labels) in enumerate(groupings)
    ]


def _joint_counts(
    columns: Sequence[Groups], numbers: Sequence[int], mask: np.ndarray, released: np.ndarray
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """(papers, papers with code) per value of each single-valued column, from one joint count."""
    sizes = [len(groups.values) + 1 for groups in columns]
    cells = 2 * int(np.prod(sizes))
    joint: np.ndarray = released.astype(np.int64 if cells > np.iinfo(np.int32).max else np.int32)
    stride = 2
    for groups, size in zip(columns, sizes, strict=True):
        assert groups.by_row is not None
        joint += groups.by_row.astype(joint.dtype, copy=False) * stride
        stride *= size
    # the last column varies slowest: axes in reverse order, then released (0/1)
    table = np.bincount(joint, weights=mask, minlength=cells).reshape([*reversed(sizes), 2])
    result = {}
    for place, number in enumerate(numbers):
        axis = len(sizes) - 1 - place
        others = tuple(a for a in range(len(sizes)) if a != axis)
        per_value = table.sum(axis=others)  # (size, 2): without code, with code
        result[number] = (
            per_value.sum(axis=1)[1:].astype(np.int64),
            per_value[1:, 1].astype(np.int64),
        )
    return result


def _release_table(
    groups: Groups, labels: Mapping[Any, str] | None, papers: np.ndarray, released_counts: np.ndarray
) -> pd.DataFrame:
    """Group, released, papers of the values with papers: most papers first, then by name as text."""
    present = np.flatnonzero(papers)
    values = groups.values.take(present)
    names = [labels.get(v, str(v)) for v in values] if labels else list(values)
    # sorted in Python: for a few dozen groups a frame's sort by a key costs more than the sort itself
    order = sorted(range(len(present)), key=lambda n: (-int(papers[present[n]]), str(names[n])))
    kept = present[order]
    return pd.DataFrame(
        {
            "group": [names[n] for n in order] if labels else values.take(order),
            "released": released_counts[kept].astype(int),
            "papers": papers[kept].astype(int),
        }
    )


def crosstab_in_view(
    rows: Groups, columns: Groups, mask: np.ndarray, labels: Mapping[Any, str] | None = None
) -> pd.DataFrame:
    """Papers in ``mask`` per value of one column (``rows``) and of another (``columns``), both
    single-valued: ``pd.crosstab`` of the two over those papers (values as text, sorted; a paper
    missing either is left out), by one `np.bincount`. ``labels`` name the row values.
    """
    row_of = np.full(len(mask), -1, dtype=np.int64)
    row_of[rows.rows] = rows.codes
    papers, column_codes = columns.in_view(mask)
    row_codes = row_of[papers]
    known = row_codes >= 0
    width = len(columns.values)
    counts = np.bincount(
        row_codes[known] * width + column_codes[known], minlength=len(rows.values) * width
    ).reshape(len(rows.values), width)
    names = np.array([labels.get(v, str(v)) if labels else str(v) for v in rows.values], dtype=object)
    counts[names == ""] = 0  # a blank group is no group
    used_rows, used_columns = np.flatnonzero(counts.sum(axis=1)), np.flatnonzero(counts.sum(axis=0))
    table = pd.DataFrame(
        counts[np.ix_(used_rows, used_columns)],
        index=pd.Index(names[used_rows], name="group"),
        columns=pd.Index([str(v) for v in columns.values.take(used_columns)], name="state"),
    )
    return table.sort_index().sort_index(axis=1)


def values_in_view(groups: Groups, mask: np.ndarray) -> pd.Index:
    """The distinct values the papers in ``mask`` have (``nunique`` of the column is its length)."""
    return groups.values.take(np.flatnonzero(groups.counts(mask)))


def value_counts_in_view(groups: Groups, mask: np.ndarray) -> pd.Series:
    """Papers in ``mask`` per value of a single-valued column: ``value_counts(sort=False)`` of the
    masked column as a categorical (every value, zeros included, in the order of ``groups.values``).

    Counted in paper order, weighed by the mask (`Groups.counts`): gathering the masked papers' codes
    as a categorical first cost 11-14 ms a chart at a million papers.
    """
    return pd.Series(groups.counts(mask), index=groups.values, name="count")


def counts_in_view(items: Groups, mask: np.ndarray) -> pd.Series:
    """`list_counts` of the papers in ``mask``, from ``list_items(values, once_per_row=True)``."""
    counts = items.counts(mask)
    present = np.flatnonzero(counts)
    table = pd.Series(counts[present], index=items.values.take(present).rename("item"), name="papers")
    return table.sort_values(ascending=False, kind="stable")


METHOD_NAMES_SHOWN = 10  # the Overview's table of the most named; every name is in a grid below it


def method_names_in_view(
    items: Groups, mask: np.ndarray, titles: pd.Series, *, first: int | None = None
) -> pd.DataFrame:
    """`method_names` of the papers in ``mask`` (``titles``: every paper's); with ``first``, only the
    ``first`` most named (`distinct_in_view` counts them all).

    ``items`` is ``list_items(papers["method_names"], once_per_row=False)``, or of their meanings
    (`extract.name_meanings`), whose entries are shown as `extract.meaning_label` gives them: a name
    kept apart per paper is one row per paper, shown as the bare name.
    """
    rows, codes = items.in_view(mask)
    if not len(codes):
        return pd.DataFrame({"name": [], "papers": [], "title": []})
    # Items are ordered by code, then row: each run of a code starts at its first paper in view.
    starts = _run_starts(codes)
    papers = np.diff(np.r_[starts, len(codes)])
    order = np.argsort(-papers, kind="stable")[:first]  # ties stay in name order (the codes' order)
    return pd.DataFrame(
        {
            # `extract.meaning_label` of each, in one pass: a call per name took 0.4 s for the 127,000
            # names of a common word's papers at a million
            "name": pd.Series(items.values.take(codes[starts][order]), dtype=pd.StringDtype("pyarrow"))
            .str.replace(extract.MEANING_TAIL, "", regex=True)
            .to_numpy(dtype=object),
            "papers": papers[order],
            "title": titles.iloc[rows[starts][order]].to_numpy(),
        }
    )


def distinct_in_view(items: Groups, mask: np.ndarray) -> int:
    """How many of ``items``' values the papers in ``mask`` have: the rows of `method_names_in_view`."""
    return len(_run_starts(items.in_view(mask)[1]))


def _run_starts(codes: np.ndarray) -> np.ndarray:
    """Where each run of equal codes starts in a sorted code array."""
    if not len(codes):
        return np.array([], dtype=np.int64)
    return np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])


TRACKER_COLUMNS = ["id", "title", "url", "kind", "host", "repo", "code_status"]


# Record fields that hold a link of the paper, and the kind it is (`schema.LINK_KINDS`).
RECORD_LINK_FIELDS: tuple[tuple[str, str], ...] = (("code_url", "code"), ("project_url", "project_page"))


def _comparable(url: str) -> str:
    """A URL as two spellings of the same link compare: no scheme, ``www.``, case or trailing slash."""
    bare = url.split("://", 1)[-1].lower()
    return bare.removeprefix("www.").rstrip("/")


def link_table(
    papers: pd.DataFrame,
    host_of: Callable[[str], str],
    repo_of: Callable[[str], str],
) -> pd.DataFrame:
    """Every link of every paper, made once per corpus: row (the paper's position), url, kind, host, repo.

    The links in the abstract, then the record's own code and project fields (Paper Copilot's
    ``github`` and ``project``) where the abstract does not give the same URL: a repository named only
    in a field is still a link of the paper. Host and repository are worked out once per distinct URL.
    """
    rows: list[int] = []
    urls: list[str] = []
    kinds: list[str] = []
    fields = [(column, kind) for column, kind in RECORD_LINK_FIELDS if column in papers.columns]
    field_values = [papers[column].to_numpy() for column, _ in fields]
    for row, paper_links in enumerate(papers["links"].to_numpy()):
        if isinstance(paper_links, dict):
            paper_links = [paper_links]
        elif not isinstance(paper_links, list | tuple | np.ndarray):
            paper_links = []
        seen: set[str] = set()
        first = len(urls)
        for link in paper_links:
            if isinstance(link, dict) and link.get("url"):
                rows.append(row)
                urls.append(str(link["url"]))
                kinds.append(str(link.get("kind", "other")))
                seen.add(_comparable(urls[-1]))
        if not fields:
            continue
        # The abstract's links name their repositories too ("/tree/main" is the same repository).
        seen |= {repo_of(url) for url in urls[first:]} - {""}
        for (_, kind), values in zip(fields, field_values, strict=True):
            url = values[row]
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                continue
            if _comparable(url) in seen or (repo_of(url) or None) in seen:
                continue
            rows.append(row)
            urls.append(url)
            kinds.append(kind)
            seen.add(_comparable(url))
    distinct = dict.fromkeys(urls)
    hosts = {url: host_of(url) for url in distinct}
    repos = {url: repo_of(url) for url in distinct}
    return pd.DataFrame(
        {
            "row": np.asarray(rows, dtype=np.int64),
            "url": pd.Series(urls, dtype=object),
            "kind": pd.Series(kinds, dtype=object),
            "host": pd.Series([hosts[url] for url in urls], dtype=object),
            "repo": pd.Series([repos[url] for url in urls], dtype=object),
        }
    )


def links_in_view(links: pd.DataFrame, mask: np.ndarray) -> np.ndarray:
    """Positions in `link_table` of the links of the papers in ``mask``."""
    return np.flatnonzero(mask[links["row"].to_numpy()])


def tracker_rows(links: pd.DataFrame, papers: pd.DataFrame, positions: np.ndarray) -> pd.DataFrame:
    """The link tracker's rows at these positions of `link_table`.

    Columns id, title, url, kind, host, repo, code_status (the paper's).
    """
    if not len(positions):
        return pd.DataFrame({c: pd.Series(dtype="str") for c in TRACKER_COLUMNS})
    picked = links.iloc[positions]
    rows = picked["row"].to_numpy()
    return pd.DataFrame(
        {
            "id": papers["id"].iloc[rows].to_numpy(),
            "title": papers["title"].iloc[rows].to_numpy(),
            "url": picked["url"].to_numpy(),
            "kind": picked["kind"].to_numpy(),
            "host": picked["host"].to_numpy(),
            "repo": picked["repo"].to_numpy(),
            "code_status": papers["code_status"].iloc[rows].to_numpy(),
        }
    )


@dataclass(frozen=True)
class RepoGroups:
    """The papers naming a repository, grouped by the repository in lower case (`shared_repos`).

    ``repo``, ``title`` and ``id`` are each item's paper's, in the order of ``groups``' items, so a
    filter change takes them without going back to the paper table.
    """

    groups: Groups
    repo: np.ndarray
    title: np.ndarray
    id: np.ndarray


def repo_groups(papers: pd.DataFrame) -> RepoGroups:
    """`RepoGroups` of a paper table: made once per corpus."""
    repos = papers["github_repo"].astype("str")
    named = np.flatnonzero((repos.str.strip() != "").to_numpy(dtype=bool))
    groups = _groups(named, repos.iloc[named].str.lower().to_numpy(dtype=object), n_papers=len(papers))

    def of_items(column: str) -> np.ndarray:
        return np.asarray(papers[column].iloc[groups.rows].to_numpy(), dtype=object)

    return RepoGroups(groups=groups, repo=of_items("github_repo"), title=of_items("title"), id=of_items("id"))


TITLES_SHOWN = 5  # titles of a shared repository listed in its row (`titles_text`)


@dataclass(frozen=True)
class SharedRepos:
    """The repositories named by more than one paper of a view (`shared_repos_in_view`).

    ``order`` lists them as shown: most papers first, then by name. The titles and ids of a
    repository's papers are gathered only for the rows a table shows (`table`): a million papers'
    4,700 shared repositories, 22 papers each, took a tenth of the Links page's run for every one.
    """

    repos: RepoGroups
    members: np.ndarray  # the items of the shared repositories, run by run
    bounds: np.ndarray  # where each repository's run starts in ``members``, and the end: len + 1 values
    order: pd.DataFrame  # repo (its first paper's spelling), papers, run: one row per repository, sorted

    def __len__(self) -> int:
        return len(self.order)

    def table(self, rows: slice = slice(None)) -> pd.DataFrame:
        """Rows ``rows`` of the table: repo, papers, titles and ids (lists, in corpus order)."""
        shown = self.order.iloc[rows]
        runs = shown["run"].to_numpy()
        titles, ids = [], []
        for first, last in zip(self.bounds[runs].tolist(), self.bounds[runs + 1].tolist(), strict=True):
            items = self.members[first:last]
            titles.append(self.repos.title[items].tolist())
            ids.append(self.repos.id[items].tolist())
        table = shown.drop(columns="run").assign(titles=titles, ids=ids)
        return table.reset_index(drop=True)


def shared_repos_in_view(repos: RepoGroups, mask: np.ndarray) -> SharedRepos:
    """`shared_repos` of the papers in ``mask``, from ``repo_groups(papers)``: ``.table()`` equals it."""
    items = np.flatnonzero(mask[repos.groups.rows])
    codes = repos.groups.codes[items]
    starts = _run_starts(codes)
    sizes = np.diff(np.r_[starts, len(codes)])
    shared = sizes > 1
    members = items[np.repeat(shared, sizes)]
    sizes = sizes[shared]
    order = pd.DataFrame(
        {
            "repo": repos.repo[items[starts[shared]]],
            "papers": sizes.astype(np.int64),
            "run": np.arange(len(sizes)),
        }
    ).sort_values(["papers", "repo"], ascending=[False, True])
    return SharedRepos(repos, members, np.r_[0, np.cumsum(sizes)], order)


def titles_text(titles: Sequence[object], shown: int = TITLES_SHOWN) -> str:
    """The first ``shown`` titles joined with " | ", and how many more there are.

    >>> titles_text(["A", "B", "C", "D", "E"], shown=3)
    'A | B | C | and 2 more'
    """
    first = " | ".join(str(title) for title in titles[:shown])
    rest = len(titles) - shown
    return f"{first} | and {rest:,} more" if rest > 0 else first


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


# --- the Papers table's order ------------------------------------------------------------------------
# Columns a user can sort the Papers table by: (label, the column it reads). Corpus order is none.
SORTS: dict[str, tuple[str, str]] = {
    "title": ("Title", "title"),
    "authors": ("First author", "authors"),
    "method_names": ("Method name", "method_names"),
    "topic": ("Topic (as in the topic list)", "topic"),
    "areas": ("Research area", "areas"),
    "code_status": ("Code status", "code_status"),
    "venue": ("Venue", "venue"),
    "year": ("Year", "year"),
    "citations": ("Citations", "citations"),
    "n_words": ("Words in the abstract", "n_words"),
}


def _first_text(values: object) -> str:
    if isinstance(values, list | tuple | np.ndarray):
        return str(values[0]).lower() if len(values) else ""
    return "" if values is None or (isinstance(values, float) and np.isnan(values)) else str(values).lower()


def sort_rows(
    papers: pd.DataFrame,
    rows: np.ndarray,
    column: str,
    *,
    descending: bool = False,
    topic_rank: Mapping[int, int] | None = None,
) -> np.ndarray:
    """``rows`` (positions in ``papers``) ordered by ``column``; ties and blanks keep corpus order.

    Text sorts without case, a list column by its first item, topics by ``topic_rank`` (the topic
    list's order); empty values come last in either direction.

    >>> papers = pd.DataFrame({"title": ["b", "A", ""], "n_words": [3, 1, 2]})
    >>> sort_rows(papers, np.arange(3), "title").tolist(), sort_rows(papers, np.arange(3), "n_words").tolist()
    ([1, 0, 2], [1, 2, 0])
    """
    if column not in papers.columns or len(rows) < 2:
        return rows
    values = papers[column].iloc[rows]
    if column == "topic" and topic_rank is not None:
        keys = values.map(lambda t: topic_rank.get(int(t), len(topic_rank))).to_numpy(dtype=np.int64)
        blank = np.zeros(len(rows), dtype=bool)
    elif pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        blank = np.isnan(numbers)
        keys = np.where(blank, 0.0, numbers)
    else:
        text = values.map(_first_text) if is_list_column(values) or values.dtype == object else values
        text = pd.Series(text, dtype="str").str.lower().str.strip().fillna("")
        blank = (text == "").to_numpy()
        keys = pd.factorize(text, sort=True)[0]
    keys = -keys if descending else keys
    order = np.lexsort((np.arange(len(rows)), keys, blank))  # last key first: blanks, then value, then corpus
    return rows[order]


# The grid's text: its line height and cell padding; widths are the tables' font's measured widths
# (`terms.text_width_px`, which Keyword in context fits its cells with too).
LINE_PX = 18
CELL_PADDING_PX = 17
text_px = text_width_px


def _cut(word: str, room: float) -> str:
    """``word`` cut to fit ``room`` pixels with its "…", keeping a comma or stop after it."""
    core = word.rstrip(",;:.")
    tail = word[len(core) :]
    return fit_width(core, room - text_px(tail)) + tail


def fit_cell(text: str, width_px: int, row_px: int) -> str:
    """``text`` cut to what a grid cell ``width_px`` wide and ``row_px`` tall shows, at a word, with "…".

    The grid wraps a cell's text itself, and breaks a word longer than the cell mid-word
    ("quantizatio / n") and cuts text past the row's last line with no sign: a word too long for a line
    ends in "…" instead, and so does text past the last line.

    >>> fit_cell("EgoTactile, EgoPressureFormer, EgoPressureDiff", 130, 76)
    'EgoTactile, EgoPressureFo…, EgoPressureDiff'
    >>> fit_cell("a " * 80, 100, 40)
    'a a a a a a a a a a a a a a a…'
    """
    room = (width_px - CELL_PADDING_PX) * 0.92  # the widths above are averages: keep a margin
    lines = max(1, row_px // LINE_PX)
    space = text_px(" ")
    shown: list[str] = []
    line, used = 0, 0.0  # the line being filled, and its pixels so far
    for word in str(text).split():
        if text_px(word) > room:
            word = _cut(word, room)
        full = used
        if used and used + space + text_px(word) > room:
            line, used = line + 1, 0.0
        if line >= lines:  # past the last line: the last line ends in "…", with room for it
            if full + text_px("…") > room and len(shown) > 1:
                shown.pop()
            last = shown[-1].rstrip(",;:.")
            shown[-1] = last if last.endswith("…") else last + "…"
            break
        shown.append(word)
        used += text_px(word) + (space if used else 0)
    return " ".join(shown)

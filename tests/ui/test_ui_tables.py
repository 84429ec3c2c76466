"""Tables the pages show: release rates, list counts, the link tracker, shared repositories."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support import reference_tables as reference
from support.synthetic import TOPIC_LABELS, make_papers

from dashboard.text import extract, links
from dashboard.ui import tables

PAPERS = make_papers()


def test_list_counts_counts_each_paper_once_per_item() -> None:
    values = pd.Series([["a", "b", "a"], [], ["b"], None, [""]])
    assert reference.list_counts(values).to_dict() == {"b": 2, "a": 1}


def test_release_by_source_and_by_a_list_column() -> None:
    by_source = reference.release_by(PAPERS, "source")
    assert by_source.to_dict("records") == [
        {"group": "a.txt", "released": 1, "papers": 2},
        {"group": "b.jsonl", "released": 0, "papers": 2},
        {"group": "c.csv", "released": 1, "papers": 2},
    ]
    by_area = reference.release_by(PAPERS, "areas").set_index("group")
    assert by_area.loc["Graphs"].to_dict() == {"released": 2, "papers": 3}
    assert by_area.loc["Theory"].to_dict() == {"released": 0, "papers": 1}


def test_release_by_topic_uses_labels() -> None:
    by_topic = reference.release_by(PAPERS, "topic", labels=TOPIC_LABELS)
    assert set(by_topic["group"]) == {*TOPIC_LABELS.values(), "-1"}


def test_link_tracker_has_one_row_per_link() -> None:
    tracker = reference.link_tracker(
        PAPERS, host_of=lambda u: u.split("/")[2], repo_of=lambda u: "r" if "y/" in u else ""
    )
    assert list(tracker.columns) == ["id", "title", "url", "kind", "host", "repo", "code_status"]
    assert len(tracker) == 6
    p6 = tracker[tracker["id"] == "p6"]
    assert list(p6["kind"]) == ["code", "data"]
    assert list(p6["host"]) == ["github.com", "d.org"]
    assert list(p6["repo"]) == ["r", ""]


def test_link_tracker_of_papers_without_links_is_empty_with_columns() -> None:
    tracker = reference.link_tracker(PAPERS[PAPERS["id"] == "p2"], host_of=str, repo_of=str)
    assert tracker.empty and "url" in tracker.columns


def test_shared_repos_groups_case_insensitively() -> None:
    papers = PAPERS.assign(github_repo=["x/graphmol", "", "", "", "", "X/GraphMol"])
    shared = reference.shared_repos(papers)
    assert shared[["repo", "papers"]].to_dict("records") == [{"repo": "x/graphmol", "papers": 2}]
    assert shared.loc[0, "ids"] == ["p1", "p6"]
    assert reference.shared_repos(PAPERS).empty


def test_method_names_table() -> None:
    papers = PAPERS.assign(method_names=[["A"], ["A", "B"], [], [], [""], ["B"]])
    assert reference.method_names(papers).to_dict("records") == [
        {"name": "A", "papers": 2, "title": "Graph networks for molecules"},
        {"name": "B", "papers": 2, "title": "Message passing revisited"},
    ]


def test_topic_overview_sorts_by_papers_in_view() -> None:
    topics = pd.DataFrame(
        {
            "topic": [0, 1],
            "label": ["a", "b"],
            "top_terms": [[("graph", 0.5), ("node", 0.2)], [("video", 0.9)]],
        }
    )
    table = tables.topic_overview(topics, pd.Series({1: 4, 0: 2}), {0: "0: a", 1: "1: b"})
    assert table.to_dict("records") == [
        {"topic": 1, "name": "1: b", "papers": 4, "top terms": "video"},
        {"topic": 0, "name": "0: a", "papers": 2, "top terms": "graph, node"},
    ]


def test_venue_year_joins_what_each_paper_has() -> None:
    papers = pd.DataFrame(
        {"venue": ["NeurIPS", None, "ICLR", ""], "year": pd.array([2023, 2021, None, None], dtype="Int64")}
    )
    assert tables.venue_year(papers).tolist() == ["NeurIPS 2023", "2021", "ICLR", ""]
    assert tables.venue_year(pd.DataFrame({"year": [2024.0, float("nan")]})).tolist() == ["2024", ""]
    assert tables.venue_year(pd.DataFrame({"venue": ["ICML"]})).tolist() == ["ICML"]


def test_fit_widths_cuts_the_widest_columns_to_a_common_width() -> None:
    widths = {"paper": 300, "url": 300, "kind": 90, "host": 120, "repo": 160, "status": 120}
    fitted = tables.fit_widths(widths, 816)
    assert sum(fitted.values()) <= 816
    assert {k: fitted[k] for k in ("kind", "host", "repo", "status")} == {
        "kind": 90, "host": 120, "repo": 160, "status": 120
    }  # fmt: skip
    assert fitted["paper"] == fitted["url"] >= 160
    assert tables.fit_widths({"a": 100, "b": 50}, 400) == {"a": 100, "b": 50}  # fits: untouched
    assert tables.fit_widths({"a": 500, "b": 500}, 100) == {"a": 50, "b": 50}
    assert tables.fit_widths({}, 10) == {}


# --- the per-corpus codes give what pandas gives on the filtered papers ---------------------------


def _random_papers(n: int = 400, seed: int = 3) -> pd.DataFrame:
    """Papers with the awkward values real corpora have: blanks, missing values, repeats, mixed case."""
    rng = np.random.default_rng(seed)
    words = ["QM9", "ImageNet", "", " ", "COCO", "MNIST", "ImageNet"]
    urls = [
        "https://github.com/a/b",
        "https://github.com/someone",
        "https://www.proj.io/x",
        "https://arxiv.org/abs/1",
        "https://huggingface.co/datasets/x/y",
    ]
    kinds = ["code", "account", "project_page", "paper", "data"]

    def some_words() -> list[str] | None:
        if rng.random() < 0.1:
            return None
        return [str(w) for w in rng.choice(words, size=rng.integers(0, 4))]

    def some_links() -> list[dict[str, str]]:
        picked = rng.choice(len(urls), size=rng.integers(0, 3), replace=False)
        return [{"url": urls[i], "kind": kinds[i]} for i in picked] + (
            [{"url": ""}] if rng.random() < 0.05 else []
        )

    statuses = ["released", "project_page_only", "account_only", "promised", "none"]
    return pd.DataFrame(
        {
            "id": [f"p{i}" for i in range(n)],
            "title": [f"Title {i % 37}" for i in range(n)],
            "source": rng.choice(["a.txt", "b.jsonl", "c.csv"], size=n),
            "venue": pd.Series(rng.choice(["ICML", "ICLR", "", "NeurIPS"], size=n), dtype="string").mask(
                rng.random(n) < 0.05
            ),
            "year": pd.array(rng.choice([2021, 2022, 2023], size=n), dtype="Int64"),
            "topic": rng.integers(-1, 6, size=n),
            "is_outlier": rng.random(n) < 0.1,
            "areas": [some_words() or [] for _ in range(n)],
            "datasets": [some_words() for _ in range(n)],
            "method_names": [some_words() or [] for _ in range(n)],
            "links": [some_links() for _ in range(n)],
            "code_status": rng.choice(statuses, size=n),
            "github_repo": rng.choice(["x/Graph", "X/graph", "", "y/z", "q/r", "  "], size=n),
        }
    )


RANDOM = _random_papers()
MASKS = {
    "all": np.ones(len(RANDOM), dtype=bool),
    "most": np.random.default_rng(3).random(len(RANDOM)) < 0.85,  # counted as all less those left out
    "half": np.random.default_rng(1).random(len(RANDOM)) < 0.5,
    "few": np.random.default_rng(2).random(len(RANDOM)) < 0.03,
}


@pytest.mark.parametrize("mask", MASKS.values(), ids=MASKS.keys())
@pytest.mark.parametrize("column", ["source", "venue", "year", "topic", "areas"])
def test_release_in_view_equals_release_by_of_the_filtered_papers(column: str, mask: np.ndarray) -> None:
    labels = {t: f"topic {t}" for t in range(-1, 5)} if column == "topic" else None
    released = RANDOM["code_status"].eq("released").to_numpy()
    fast = tables.release_in_view(tables.group_codes(RANDOM[column]), mask, released, labels)
    expected = reference.release_by(RANDOM[mask], column, labels)
    pd.testing.assert_frame_equal(fast, expected, check_dtype=False)


@pytest.mark.parametrize("max_cells", [tables.JOINT_CELLS, 64, 2])  # one joint count; several; each apart
@pytest.mark.parametrize("mask", MASKS.values(), ids=MASKS.keys())
def test_releases_in_view_of_several_columns_equal_release_by_of_each(
    mask: np.ndarray, max_cells: int
) -> None:
    columns = ["topic", "venue", "areas", "year", "source"]  # a list column among them is counted apart
    labels = {t: f"topic {t}" for t in range(-1, 5)}
    released = RANDOM["code_status"].eq("released").to_numpy()
    groupings = [(tables.group_codes(RANDOM[c]), labels if c == "topic" else None) for c in columns]
    fast = tables.releases_in_view(groupings, mask, released, max_cells=max_cells)
    for column, table in zip(columns, fast, strict=True):
        expected = reference.release_by(RANDOM[mask], column, labels if column == "topic" else None)
        pd.testing.assert_frame_equal(table, expected, check_dtype=False)


@pytest.mark.parametrize("mask", MASKS.values(), ids=MASKS.keys())
@pytest.mark.parametrize("column", ["venue", "topic", "code_status", "areas"])
def test_values_and_value_counts_in_view_equal_pandas(column: str, mask: np.ndarray) -> None:
    groups = tables.group_codes(RANDOM[column])
    shown = RANDOM[mask][column]
    if column == "areas":
        shown = shown.explode().dropna()
    assert len(tables.values_in_view(groups, mask)) == shown.nunique()
    if column == "areas":
        return  # a list column: `counts_in_view` counts its items
    counts = tables.value_counts_in_view(groups, mask)
    assert counts[counts > 0].to_dict() == shown.value_counts().to_dict()
    # every value, in the column's order, as the masked column as a categorical would count them
    as_categories = pd.Categorical(shown, categories=groups.values)
    expected = pd.Series(as_categories).value_counts(sort=False)
    assert list(counts.index) == list(expected.index) and counts.tolist() == expected.tolist()


@pytest.mark.parametrize("mask", MASKS.values(), ids=MASKS.keys())
def test_counts_in_view_equal_list_counts(mask: np.ndarray) -> None:
    fast = tables.counts_in_view(tables.list_items(RANDOM["datasets"], once_per_row=True), mask)
    expected = reference.list_counts(RANDOM[mask]["datasets"])
    assert fast.to_dict() == expected.to_dict()
    assert fast.is_monotonic_decreasing and fast.name == "papers"


@pytest.mark.parametrize("mask", MASKS.values(), ids=MASKS.keys())
def test_method_names_in_view_equal_method_names(mask: np.ndarray) -> None:
    items = tables.list_items(RANDOM["method_names"], once_per_row=False)
    fast = tables.method_names_in_view(items, mask, RANDOM["title"])
    pd.testing.assert_frame_equal(fast, reference.method_names(RANDOM[mask]), check_dtype=False)


def test_method_names_in_view_label_meanings_as_meaning_label_does() -> None:
    # Labelled in one pass (pyarrow's regular expressions), as `extract.meaning_label` labels each: a
    # name kept apart per paper loses its number, a long form keeps its words, line breaks included.
    meanings = pd.Series(
        [["COMET\u206317", "MAD (Multi-Agent Debate)"], ["COMET\u20632\nx"], ["ViT"], ["A (two\nlines)"], []]
    )
    titles = pd.Series([f"Paper {n}" for n in range(len(meanings))])
    found = tables.method_names_in_view(
        tables.list_items(meanings, once_per_row=False), np.ones(len(meanings), dtype=bool), titles
    )
    expected = [extract.meaning_label(m) for paper in meanings for m in paper]
    assert (
        sorted(found["name"])
        == sorted(expected)
        == ["A (two\nlines)", "COMET", "COMET", "MAD (Multi-Agent Debate)", "ViT"]
    )
    assert all(type(name) is str for name in found["name"])


@pytest.mark.parametrize("mask", MASKS.values(), ids=MASKS.keys())
def test_the_first_method_names_and_their_number_agree_with_the_whole_table(mask: np.ndarray) -> None:
    items = tables.list_items(RANDOM["method_names"], once_per_row=False)
    whole = tables.method_names_in_view(items, mask, RANDOM["title"])
    assert tables.distinct_in_view(items, mask) == len(whole)
    for first in (1, 3, len(whole) + 5):
        top = tables.method_names_in_view(items, mask, RANDOM["title"], first=first)
        pd.testing.assert_frame_equal(top, whole.head(first))


def test_method_names_in_view_of_papers_naming_none_is_empty() -> None:
    items = tables.list_items(RANDOM["method_names"], once_per_row=False)
    assert tables.method_names_in_view(items, np.zeros(len(RANDOM), dtype=bool), RANDOM["title"]).empty


@pytest.mark.parametrize("mask", MASKS.values(), ids=MASKS.keys())
def test_shared_repos_in_view_equal_shared_repos(mask: np.ndarray) -> None:
    shared = tables.shared_repos_in_view(tables.repo_groups(RANDOM), mask)
    expected = reference.shared_repos(RANDOM[mask])
    pd.testing.assert_frame_equal(shared.table(), expected, check_dtype=False)
    assert len(shared) == len(expected)
    # A page of the table gathers the titles of its own rows only, and they are the same rows.
    for rows in (slice(0, 3), slice(2, 7), slice(len(expected) - 1, len(expected) + 5)):
        pd.testing.assert_frame_equal(
            shared.table(rows), expected.iloc[rows].reset_index(drop=True), check_dtype=False
        )


def _tracker_by_explode(papers: pd.DataFrame) -> pd.DataFrame:
    """The link tracker the plain pandas way: explode the links, then map host and repo per row."""
    rows = papers[["id", "title", "links", "code_status"]].explode("links").dropna(subset=["links"])
    rows = rows[rows["links"].map(lambda link: isinstance(link, dict) and bool(link.get("url")))]
    urls = rows["links"].map(lambda link: str(link["url"]))
    return pd.DataFrame(
        {
            "id": rows["id"].to_numpy(),
            "title": rows["title"].to_numpy(),
            "url": urls.to_numpy(),
            "kind": rows["links"].map(lambda link: str(link.get("kind", "other"))).to_numpy(),
            "host": urls.map(links.url_host).to_numpy(),
            "repo": urls.map(links.repo_of).to_numpy(),
            "code_status": rows["code_status"].to_numpy(),
        }
    )


@pytest.mark.parametrize("mask", MASKS.values(), ids=MASKS.keys())
def test_tracker_rows_in_view_equal_the_exploded_links(mask: np.ndarray) -> None:
    table = tables.link_table(RANDOM, links.url_host, links.repo_of)
    fast = tables.tracker_rows(table, RANDOM, tables.links_in_view(table, mask))
    pd.testing.assert_frame_equal(fast, _tracker_by_explode(RANDOM[mask]), check_dtype=False)


@pytest.mark.parametrize(
    ("values", "is_list"),
    [
        (pd.Series([None, ["a"], "b"]), True),
        (pd.Series([[], ["a"]]), True),
        (pd.Series(["a", None]), False),
        (pd.Series([None, None]), False),
        (pd.Series([1, 2]), False),
        (pd.Series(["a"], dtype="string"), False),
    ],
)
def test_is_list_column(values: pd.Series, is_list: bool) -> None:
    assert tables.is_list_column(values) is is_list


@pytest.mark.parametrize("mask", MASKS.values(), ids=MASKS.keys())
@pytest.mark.parametrize("column", ["venue", "year", "topic"])
def test_crosstab_in_view_equals_pandas_crosstab(column: str, mask: np.ndarray) -> None:
    # the repository states per group of the Links & code page: the old way was pd.crosstab of the strings
    drawn = np.random.default_rng(3).choice(["live", "archived", "", "not_checked"], size=len(RANDOM))
    states = pd.Series(drawn, dtype="str")
    labels = {t: f"topic {t}" for t in range(-1, 6)} if column == "topic" else None
    fast = tables.crosstab_in_view(
        tables.group_codes(RANDOM[column]), tables.group_codes(states.mask(states.eq(""))), mask, labels
    )
    keep = mask & states.ne("").to_numpy()
    groups = RANDOM[column][keep]
    groups = groups.map(labels) if labels else groups
    frame = pd.DataFrame({"group": groups.to_numpy(), "state": states[keep].to_numpy()})
    frame = frame[frame["group"].notna() & frame["group"].astype(str).ne("")]
    expected = pd.crosstab(frame["group"].astype(str), frame["state"])
    pd.testing.assert_frame_equal(fast, expected, check_dtype=False, check_names=False)
    assert fast.to_numpy().sum() == len(frame)


@pytest.mark.parametrize("mask", MASKS.values(), ids=MASKS.keys())
@pytest.mark.parametrize("column", ["venue", "topic", "areas", "datasets"])
def test_counts_in_view_read_in_paper_order_equal_the_gathered_items(column: str, mask: np.ndarray) -> None:
    # `Groups.counts` reads a one-value column by paper, a list column's items in paper order; both must
    # count exactly the items `in_view` gathers
    groups = (
        tables.list_items(RANDOM[column], once_per_row=True)
        if column == "datasets"
        else tables.group_codes(RANDOM[column])
    )
    assert groups.by_row is not None or groups.codes_by_paper is not None
    expected = np.bincount(groups.in_view(mask)[1], minlength=len(groups.values))
    assert groups.counts(mask).tolist() == expected.tolist()


def test_found_scores_read_in_the_found_order_or_looked_up_by_row() -> None:
    from dashboard.ui.ranked import Found

    found = Found(np.array([7, 2, 9, 4]), np.array([3.14159, 2.5, 1.00049, 0.25]), "search")
    assert found.scores_of(np.array([7, 2, 9])) == [3.142, 2.5, 1.0]  # the found order
    # another order (e.g. by year): each row's own score; a row the search did not rank scores 0
    assert found.scores_of(np.array([4, 11, 7, 0])) == [0.25, 0.0, 3.142, 0.0]
    assert found.scores_of(np.array([], dtype=np.int64)) == []


def test_a_list_cell_shows_its_first_items_and_how_many_more() -> None:
    from dashboard.ui.components import joined

    assert joined(["a", "b", "c", "d"], limit=2) == "a, b (+2)"
    assert joined(np.array(["x", "y"]), limit=2) == "x, y"
    assert joined((1, 2, 3)) == "1, 2, 3"
    assert joined(None) == "" and joined(float("nan")) == "" and joined([]) == ""


# A list column as real files give it: lists, tuples and arrays; empty and missing lists; a plain value
# where a list was expected; missing, blank and repeated elements; a number beside its own text.
AWKWARD_LISTS = pd.Series(
    [
        ["Ada Lovelace", "Alan Turing"],
        [],
        None,
        ("Grace Hopper", None, "Ada Lovelace"),
        "Alan Turing",
        np.array(["  ", "Kurt Gödel"], dtype=object),
        float("nan"),
        ["Ada Lovelace", "Ada Lovelace", ""],
        [1, "1", float("nan")],
        ["Émilie du Châtelet"],
    ],
    index=[f"p{i}" for i in range(10)],  # not positions: the rows are positions whatever the index
)


def _reference_items(values: pd.Series, once_per_row: bool) -> pd.DataFrame:
    """(row, item) of ``values`` the plain pandas way: explode, text, no blanks, repeats once."""
    items = pd.Series(values.to_numpy(), index=np.arange(len(values))).explode().dropna().astype("str")
    items = items[items.str.strip() != ""]
    pairs = pd.DataFrame({"row": items.index.to_numpy(dtype=np.int64), "item": items.to_numpy()})
    return pairs.drop_duplicates() if once_per_row else pairs


@pytest.mark.parametrize("once_per_row", [True, False])
def test_list_items_are_the_exploded_text_of_the_lists(once_per_row: bool) -> None:
    groups = tables.list_items(AWKWARD_LISTS, once_per_row=once_per_row)
    expected = _reference_items(AWKWARD_LISTS, once_per_row)
    assert list(groups.values) == sorted(set(expected["item"]))  # name order, one value per text
    got = pd.DataFrame({"row": groups.rows, "item": groups.values[groups.codes]})
    ordered = expected.sort_values(["item", "row"], kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, ordered, check_dtype=False)
    assert groups.per_paper is not None and groups.per_paper.tolist() == [
        int((expected["row"] == row).sum()) for row in range(len(AWKWARD_LISTS))
    ]
    every = np.ones(len(AWKWARD_LISTS), dtype=bool)
    assert groups.counts(every).tolist() == [int((expected["item"] == v).sum()) for v in groups.values]


def test_group_codes_of_a_list_column_keep_every_element_as_it_is() -> None:
    groups = tables.group_codes(AWKWARD_LISTS)
    items = pd.Series(AWKWARD_LISTS.to_numpy(), index=np.arange(len(AWKWARD_LISTS))).explode().dropna()
    got = sorted(zip(groups.rows.tolist(), groups.values[groups.codes].tolist(), strict=True), key=repr)
    assert got == sorted(zip(items.index.tolist(), items.tolist(), strict=True), key=repr)
    assert 1 in set(groups.values) and "1" in set(groups.values)  # not text: values as they are


def test_list_items_of_unhashable_elements_are_their_text() -> None:
    records = pd.Series(
        [[{"url": "https://a.org"}], [], [{"url": "https://a.org"}, {"url": "https://b.org"}]]
    )
    groups = tables.list_items(records, once_per_row=True)
    expected = _reference_items(records, once_per_row=True)
    assert (
        list(groups.values)
        == sorted(set(expected["item"]))
        == ["{'url': 'https://a.org'}", "{'url': 'https://b.org'}"]
    )
    assert groups.rows.tolist() == [0, 2, 2]


@pytest.mark.parametrize(
    ("paper_links", "code_url", "project_url", "expected"),
    [
        # A repository named only in the record's field is a link of the paper.
        ([], "https://github.com/c/d", "", [("https://github.com/c/d", "code")]),
        # The same repository in the abstract (another spelling or a deeper path) is not listed twice.
        ([{"url": "https://github.com/a/b/tree/main", "kind": "code"}], "https://github.com/a/b", "",
         [("https://github.com/a/b/tree/main", "code")]),
        ([{"url": "https://www.site.org/x/", "kind": "project_page"}], "", "https://site.org/x",
         [("https://www.site.org/x/", "project_page")]),
        # A project page beside an abstract's repository; a field that is no URL is no link.
        ([{"url": "https://github.com/a/b", "kind": "code"}], "github.com/a/b", "https://a.github.io/b",
         [("https://github.com/a/b", "code"), ("https://a.github.io/b", "project_page")]),
        (None, "", "", []),
    ],
)  # fmt: skip
def test_link_table_holds_the_records_code_and_project_fields(
    paper_links: object, code_url: str, project_url: str, expected: list[tuple[str, str]]
) -> None:
    papers = pd.DataFrame({"links": [paper_links], "code_url": [code_url], "project_url": [project_url]})
    table = tables.link_table(papers, links.url_host, links.repo_of)
    assert list(zip(table["url"], table["kind"], strict=True)) == expected


@pytest.mark.corpora
@pytest.mark.parametrize("name", ["iccv2019.json", "icml2019.json"])
def test_paper_copilot_repositories_from_the_github_field_are_links(corpora_dir: object, name: str) -> None:
    from dashboard import corpus

    papers = corpus.load([corpora_dir / "papercopilot-iccv2019-icml2019" / name]).papers  # type: ignore[operator]
    table = tables.link_table(papers, links.url_host, links.repo_of)
    # GitHub names ignore case: ``TAMU-VITA/UAV-NDFT`` in the abstract is the field's ``TAMU-Vita/...``.
    listed = {(row, url.lower()) for row, url in zip(table["row"], table["url"], strict=True)}
    listed |= {(row, repo.lower()) for row, repo in zip(table["row"], table["repo"], strict=True) if repo}
    code = papers["code_url"].astype(str).str.lower()
    with_code = [(row, url) for row, url in enumerate(code) if url.startswith("http")]
    assert len(with_code) > 40
    missing = [
        (row, url)
        for row, url in with_code
        if (row, url) not in listed and (row, links.repo_of(url)) not in listed
    ]
    assert not missing  # every repository a record names is among the paper's links


@pytest.mark.parametrize(
    ("text", "width", "row_px"),
    [
        ("EgoTactile, EgoPressureFormer, EgoPressureDiff", 130, 76),
        ("Out-of-Distribution generalization for quantization-aware training of transformers", 90, 76),
        ("Learning theory, Representation learning, Generative models, Probabilistic methods", 110, 76),
        ("short", 90, 76),
        ("", 90, 76),
        ("x" * 500, 60, 40),
    ],
)
def test_fit_cell_never_breaks_a_word_nor_cuts_without_an_ellipsis(
    text: str, width: int, row_px: int
) -> None:
    fitted = tables.fit_cell(text, width, row_px)
    room = (width - tables.CELL_PADDING_PX) * 0.92
    assert all(tables.text_px(word) <= room for word in fitted.split())  # no word the grid would break
    # Greedy wrapping, as the grid wraps, stays within the row's lines.
    lines, used = 1, 0.0
    for word in fitted.split():
        if used and used + tables.text_px(" ") + tables.text_px(word) > room:
            lines, used = lines + 1, 0.0
        used += tables.text_px(word) + (tables.text_px(" ") if used else 0)
    assert lines <= row_px // tables.LINE_PX
    if fitted != " ".join(text.split()):
        assert "…" in fitted  # whatever is cut says so

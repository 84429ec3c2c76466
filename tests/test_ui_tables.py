"""Tables the pages show: release rates, list counts, the link tracker, shared repositories."""

from __future__ import annotations

import pandas as pd
from synthetic import TOPIC_LABELS, make_papers

from dashboard.ui import tables

PAPERS = make_papers()


def test_list_counts_counts_each_paper_once_per_item() -> None:
    values = pd.Series([["a", "b", "a"], [], ["b"], None, [""]])
    assert tables.list_counts(values).to_dict() == {"b": 2, "a": 1}


def test_release_by_source_and_by_a_list_column() -> None:
    by_source = tables.release_by(PAPERS, "source")
    assert by_source.to_dict("records") == [
        {"group": "a.txt", "released": 1, "papers": 2},
        {"group": "b.jsonl", "released": 0, "papers": 2},
        {"group": "c.csv", "released": 1, "papers": 2},
    ]
    by_area = tables.release_by(PAPERS, "areas").set_index("group")
    assert by_area.loc["Graphs"].to_dict() == {"released": 2, "papers": 3}
    assert by_area.loc["Theory"].to_dict() == {"released": 0, "papers": 1}


def test_release_by_topic_uses_labels() -> None:
    by_topic = tables.release_by(PAPERS, "topic", labels=TOPIC_LABELS)
    assert set(by_topic["group"]) == {*TOPIC_LABELS.values(), "-1"}


def test_link_tracker_has_one_row_per_link() -> None:
    tracker = tables.link_tracker(
        PAPERS, host_of=lambda u: u.split("/")[2], repo_of=lambda u: "r" if "y/" in u else ""
    )
    assert list(tracker.columns) == ["id", "title", "url", "kind", "host", "repo", "code_status"]
    assert len(tracker) == 6
    p6 = tracker[tracker["id"] == "p6"]
    assert list(p6["kind"]) == ["code", "data"]
    assert list(p6["host"]) == ["github.com", "d.org"]
    assert list(p6["repo"]) == ["r", ""]


def test_link_tracker_of_papers_without_links_is_empty_with_columns() -> None:
    tracker = tables.link_tracker(PAPERS[PAPERS["id"] == "p2"], host_of=str, repo_of=str)
    assert tracker.empty and "url" in tracker.columns


def test_shared_repos_groups_case_insensitively() -> None:
    papers = PAPERS.assign(github_repo=["x/graphmol", "", "", "", "", "X/GraphMol"])
    shared = tables.shared_repos(papers)
    assert shared[["repo", "papers"]].to_dict("records") == [{"repo": "x/graphmol", "papers": 2}]
    assert shared.loc[0, "ids"] == ["p1", "p6"]
    assert tables.shared_repos(PAPERS).empty


def test_method_names_table() -> None:
    papers = PAPERS.assign(method_names=[["A"], ["A", "B"], [], [], [""], ["B"]])
    assert tables.method_names(papers).to_dict("records") == [
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

"""The column contract of issue 10: every new column after every load, filled where the source has it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dashboard import corpus
from dashboard.schema import CORE_COLUMNS, DECISION_TIERS, REPO_STATES
from dashboard.text.clean import is_placeholder_abstract
from dashboard.text.enrich import decision_tier

NEW_COLUMNS = ("authors", "affiliations", "countries", "decision", "decision_tier", "track", "tldr",
               "project_url", "paper_url", "citations", "has_abstract")  # fmt: skip


def test_new_columns_are_core_and_constants_exist() -> None:
    assert set(NEW_COLUMNS) <= set(CORE_COLUMNS)
    assert DECISION_TIERS[-1] == "unknown" and "withdrawn" in DECISION_TIERS
    assert REPO_STATES[-1] == "not_checked" and len(REPO_STATES) == 10


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("a.txt", b"ICML 2026 Papers\n\nWe study graphs.\n"),
        ("a.csv", b"title,abstract\nT,We study graphs.\n"),
        ("a.json", b'[{"abstract": "We study graphs."}]'),
        ("bad.json", b"[1]"),
    ],
)
def test_defaults_where_the_source_has_nothing(name: str, data: bytes) -> None:
    papers = corpus.load_uploads([(name, data)]).papers
    assert list(papers.columns[: len(CORE_COLUMNS)]) == list(CORE_COLUMNS)
    assert papers["citations"].dtype == "Int64" and papers["has_abstract"].dtype == bool
    for row in papers.itertuples():
        assert (row.authors, row.affiliations, row.countries) == ([], [], [])
        texts = (row.decision, row.decision_tier, row.track, row.tldr, row.project_url)
        assert texts == ("", "unknown", "", "", "")
        assert pd.isna(row.citations) and row.has_abstract


def test_a_paper_copilot_shaped_record_fills_them() -> None:
    record = {
        "title": "T", "abstract": "We study graphs.", "status": "Spotlight", "track": "main",
        "author": "Ann One;  Bob Two; Cy Three",
        "aff": "Uni A, Town, X; Uni A, Town, X; Lab B, Inc.",
        "aff_unique_norm": "Uni A;Lab B, Inc.", "aff_country_unique": "X;Y",
        "site": "https://icml.cc/virtual/2024/poster/1", "pdf": "https://x.org/1.pdf",
        "project": "https://myproject.org/", "gs_citation": 12, "tldr": "Graphs, studied.",
    }  # fmt: skip
    row = corpus.load_uploads([("x.json", json.dumps([record]).encode())]).papers.iloc[0]
    assert row["authors"] == ["Ann One", "Bob Two", "Cy Three"]
    assert row["affiliations"] == ["Uni A", "Lab B, Inc."]
    assert row["countries"] == ["X", "Y"]
    assert (row["decision"], row["decision_tier"], row["track"]) == ("Spotlight", "spotlight", "main")
    assert row["paper_url"] == "https://icml.cc/virtual/2024/poster/1"
    assert row["project_url"] == "https://myproject.org/"
    assert row["citations"] == 12 and row["tldr"] == "Graphs, studied."


def test_per_author_affiliations_are_kept_once_each_without_splitting_at_commas() -> None:
    record = {"abstract": "A.", "aff": "Uni A, Town; Uni A, Town; Lab B"}
    row = corpus.load_uploads([("x.json", json.dumps([record]).encode())]).papers.iloc[0]
    assert row["affiliations"] == ["Uni A, Town", "Lab B"]


@pytest.mark.parametrize(
    ("text", "tier"),
    [
        ("Oral", "oral"), ("Accept (Oral)", "oral"), ("ICLR 2026 Oral", "oral"), ("Spotlight", "spotlight"),
        ("Accept (spotlight)", "spotlight"), ("Poster", "poster"), ("ICLR 2026 Poster", "poster"),
        ("Accept", "accept"), ("Accept (Poster)", "poster"), ("Reject", "reject"),
        ("ICLR 2026 Conference Desk Rejected Submission", "reject"), ("Withdraw", "withdrawn"),
        ("ICLR 2026 Conference Withdrawn Submission", "withdrawn"), ("Submitted to ICLR 2026", "unknown"),
        ("", "unknown"), ("Active", "unknown"), ("Workshop", "workshop"),
        ("Invite to Workshop Track", "workshop"), ("ICLR 2019 Workshop Poster", "workshop"),
        ("Reject (invited to the workshop)", "reject"),
    ],
)  # fmt: skip
def test_decision_tiers(text: str, tier: str) -> None:
    assert decision_tier(text) == tier
    assert tier in DECISION_TIERS


@pytest.mark.parametrize(
    ("abstract", "placeholder"),
    [
        ("Abstract Unavailable", True), ("No abstract available.", True), ("TBA", True), ("N/A", True),
        ("", True), ("-", True), ("Coming soon", True),
        ("Part of Advances in Neural Information Processing Systems 35 (NeurIPS 2022) Main Track", True),
        ("We study graphs.", False), ("Available data is scarce; we fix that.", False),
        ("None of the above.", False),
    ],
)  # fmt: skip
def test_placeholder_abstracts(abstract: str, placeholder: bool) -> None:
    assert is_placeholder_abstract(abstract) is placeholder


def test_placeholder_abstract_gives_has_abstract_false_and_stays_in_the_table() -> None:
    records = [{"title": "A", "abstract": "Abstract Unavailable"}, {"title": "B", "abstract": "We study X."}]
    papers = corpus.load_uploads([("x.json", json.dumps(records).encode())]).papers
    assert papers["has_abstract"].tolist() == [False, True]


def test_placeholder_abstracts_form_no_topic(seeds_dir) -> None:
    from dashboard import corpus as corpus_module
    from dashboard.analytics.analysis import analyze

    seeds = corpus_module.load([seeds_dir]).papers
    placeholders = [
        {"title": f"Paper {n}", "abstract": text}
        for n, text in enumerate(["Abstract Unavailable", "TBA", "N/A", "No abstract available."] * 6)
    ]
    extra = corpus_module.load_uploads([("more.json", json.dumps(placeholders).encode())]).papers
    papers = pd.concat([seeds, extra], ignore_index=True)
    assert int((~papers["has_abstract"]).sum()) == len(placeholders)
    result = analyze(papers, n_topics=5)
    missing = ~result.papers["has_abstract"]
    assert (result.papers.loc[missing, "topic"] == -1).all()
    assert (result.papers.loc[missing, "topic_label"] == "Outlier").all()
    words = {"abstract", "unavailable", "tba", "available"}
    for terms in result.topics.loc[result.topics["topic"] >= 0, "top_terms"]:
        assert not words & {str(t[0] if isinstance(t, (tuple, list)) else t) for t in terms}
    # they stay in the table, and similarity leaves them out
    assert len(result.papers) == len(papers)
    placeholder_id = str(result.papers.loc[missing, "id"].iloc[0])
    assert result.most_similar(placeholder_id).empty
    some_id = str(result.papers.loc[~missing, "id"].iloc[0])
    assert not set(result.most_similar(some_id, n=20)["id"]) & set(result.papers.loc[missing, "id"])


def test_index_and_a_load_report_the_same_duplicate_abstracts(seeds_dir, tmp_path) -> None:
    import shutil

    from dashboard import corpus as corpus_module
    from dashboard import index as index

    folder = tmp_path / "corpus"
    shutil.copytree(seeds_dir, folder)
    first = corpus_module.load([folder]).papers["abstract"].iloc[0]
    # the same abstract in another file, with different line breaks: one rule says it is the same
    (folder / "zz-copy.json").write_text(json.dumps([{"abstract": first.replace(" ", "\n  ", 3)}]), "utf-8")

    def duplicates(report: corpus_module.LoadReport) -> int:
        return sum("same abstract" in p.message for p in report.warnings)

    loaded = corpus_module.load([folder]).report
    index.build_index([folder], tmp_path / "out.index", workers=1)
    built = index.read_report(tmp_path / "out.index")
    assert duplicates(loaded) == duplicates(built) >= 1

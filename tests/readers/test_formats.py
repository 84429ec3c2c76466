"""Each supported export, read from a small fixture written from the format's documentation.

The fixtures (tests/fixtures/formats, see its README) carry the quirks of issue 10: code fields as
markdown or several URLs, account-only and project-only papers, pipe-joined lists, venue and year
only in the file name / the bibtex / a page URL, placeholder abstracts, PDF artefacts, unescaped
CSV quotes, OpenReview decisions given as replies, the Papers with Code pair joined by URL or arXiv id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from dashboard import corpus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def load(*names: str) -> corpus.LoadResult:
    return corpus.load([FIXTURES / name for name in names])


def row(result: corpus.LoadResult, paper_id: str) -> pd.Series:
    papers = result.papers.set_index("id")
    return papers.loc[paper_id]


# (file, paper id, expected fields): one row per quirk the issue lists
CASES: list[tuple[str, str, dict[str, Any]]] = [
    # Paper Copilot paperlists: ";"-joined authors and affiliations, status tiers, site/oa, citations
    (
        "iclr2025.json",
        "p1",
        {
            "venue": "ICLR",
            "year": 2025,
            "authors": ["Ann One", "Bob Two"],
            "affiliations": ["Uni A", "Lab B"],
            "countries": ["X", "Y"],
            "decision": "Oral",
            "decision_tier": "oral",
            "track": "main",
            "tldr": "Sparse attention for graphs.",
            "paper_url": "https://iclr.cc/virtual/2025/poster/101",
            "citations": 12,
            "github_repo": "owner/sgt",
            "code_status": "released",
            "has_abstract": True,
        },
    ),
    # several URLs joined by "; " in the github field: the first repository, not "cy/first; https:"
    (
        "iclr2025.json",
        "p2",
        {
            "github_repo": "cy/first",
            "code_url": "https://github.com/cy/first",
            "code_status": "released",
            "decision_tier": "spotlight",
            "citations": 0,
        },
    ),
    # an account URL alone in the github field: the same rule as in the abstract
    ("iclr2025.json", "p3", {"code_status": "account_only", "github_repo": "", "code_url": ""}),
    # a project page only
    (
        "iclr2025.json",
        "p4",
        {
            "code_status": "project_page_only",
            "project_url": "https://eve.github.io/project/",
            "decision_tier": "reject",
        },
    ),
    # placeholder abstract; no site URL, so venue and year come from the file name
    (
        "iclr2025.json",
        "p5",
        {"has_abstract": False, "decision_tier": "withdrawn", "venue": "ICLR", "year": 2025},
    ),
    # venue and year only in the bibtex field, or only in the page URL
    ("paperlist.json", "3768", {"venue": "ICML", "year": 2019, "authors": ["Gus Seven", "Hal Eight"]}),
    ("paperlist.json", "3769", {"venue": "ICCV", "year": 2019, "decision_tier": "oral"}),
    # Mini-Conf sitedata/papers.csv: "|"-joined authors and keywords; venue/year from the file name
    (
        "ICML_2024_papers.csv",
        "m1",
        {
            "authors": ["Ann One", "Bob Two", "Cy Three"],
            "keywords": ["graphs", "pipes"],
            "venue": "ICML",
            "year": 2024,
        },
    ),
    (
        "ICML_2024_papers.csv",
        "m2",
        {"abstract": 'Our method is "zero-shot" in the sense that no labels are used.'},
    ),
    # Mini-Conf papers.json as served (id/forum + content)
    (
        "miniconf-papers.json",
        "m3",
        {"authors": ["Eve Five", "Fay Six"], "keywords": ["a", "b"], "tldr": "Served shape."},
    ),
    # OpenReview API v1: venueid gives venue and year, the venue text the decision
    (
        "openreview-v1.json",
        "or1",
        {
            "venue": "ICLR",
            "year": 2023,
            "decision": "ICLR 2023 notable top 5%",
            "decision_tier": "oral",
            "paper_url": "https://openreview.net/forum?id=or1",
        },
    ),
    # OpenReview API v2: content.<field>.value; a decision reply wins over "Submitted to"
    (
        "openreview-v2.json",
        "or2",
        {"venue": "ICLR", "year": 2025, "decision_tier": "spotlight", "authors": ["Hal Eight", "Ida Nine"]},
    ),
    ("openreview-v2.json", "or3", {"decision": "Reject", "decision_tier": "reject"}),
    # arXiv snapshot: year of the first version, categories as keywords,
    # venue arXiv unless journal-ref names one
    (
        "arxiv-metadata.jsonl",
        "0704.0001",
        {
            "venue": "arXiv",
            "year": 2007,
            "keywords": ["hep-ph"],
            "authors": ["C. Balázs", "E. L. Berger", "P. M. Nadolsky"],
            "paper_url": "https://arxiv.org/abs/0704.0001",
        },
    ),
    (
        "arxiv-metadata.jsonl",
        "2106.01234",
        {"venue": "NeurIPS", "year": 2021, "keywords": ["cs.LG", "stat.ML"]},
    ),
    # Semantic Scholar Graph API answer and bulk dataset line (lower-case keys)
    (
        "s2-search.json",
        "649def34f8be52c8b66281af98ae884c09aef38b",
        {
            "venue": "NeurIPS",
            "year": 2017,
            "authors": ["Ashish Vaswani", "Noam Shazeer"],
            "citations": 100000,
            "keywords": ["Computer Science"],
            "tldr": "A new architecture based on attention.",
        },
    ),
    (
        "s2-papers.jsonl",
        "215416146",
        {
            "venue": "NAACL",
            "year": 2018,
            "citations": 300,
            "keywords": ["Computer Science"],
            "authors": ["Waleed Ammar"],
        },
    ),
    # BibTeX: authors split on "and", "Last, First" turned round, braces and accents rendered,
    # @string resolved
    (
        "zotero.bib",
        "devlin2019bert",
        {
            "title": "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
            "authors": ["Jacob Devlin", "Ming-Wei Chang", "Tim Rocktäschel", "Google Brain Team"],
            "venue": "NAACL",
            "year": 2019,
            "keywords": ["language models", "pre-training"],
            "paper_url": "https://aclanthology.org/N19-1423",
        },
    ),
    (
        "zotero.bib",
        "key2",
        {
            "venue": "ICML",
            "year": 2020,
            "authors": ["Ann One", "Bob Two"],
            "paper_url": "https://doi.org/10.1000/xyz",
            "has_abstract": False,
        },
    ),
    # ACL Anthology XML: <fixed-case> and <tex-math> markup, the Anthology id as page and PDF, venue and
    # year from the volume's <meta>, <pwccode> as the code; an old collection id names its venue
    (
        "2023.acl.xml",
        "2023.acl-long.1",
        {
            "title": "SparseGraph: Message Passing for NER",
            "authors": ["Ann One", "Bob Two", "Cy Three"],
            "venue": "ACL",
            "year": 2023,
            "paper_url": "https://aclanthology.org/2023.acl-long.1",
            "code_status": "released",
        },
    ),
    ("P19.xml", "P19-1001", {"venue": "ACL", "year": 2019, "authors": ["Gus Seven", "Hal Eight"]}),
]


@pytest.mark.parametrize(("name", "paper_id", "expected"), CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_format_fields(name: str, paper_id: str, expected: dict[str, Any]) -> None:
    paper = row(load(name), paper_id)
    for column, value in expected.items():
        got = paper[column]
        assert (got if not isinstance(got, list) else list(got)) == value, column


def test_pdf_artefacts_and_ligatures_are_cleaned_but_the_abstract_is_kept_verbatim() -> None:
    result = load("iclr2025.json")
    assert "(cid:" in row(result, "p1")["abstract"]
    assert "(cid:" not in row(result, "p1")["abstract_clean"]
    assert row(result, "p2")["abstract_clean"] == "We release two codebases for the first time."


def test_csv_quote_repair_is_reported_never_silent() -> None:
    report = load("ICML_2024_papers.csv").report
    assert [(w.place, "unescaped quotes" in w.message) for w in report.warnings] == [("line 3", True)]


def test_bibtex_entry_the_parser_cannot_read_is_reported_by_line() -> None:
    report = load("zotero.bib").report
    assert [p.place for p in report.skipped] == ["line 21"]
    assert report.papers == 2


def test_the_load_report_says_where_venue_and_year_came_from() -> None:
    report = load("iclr2025.json", "ICML_2024_papers.csv", "miniconf-papers.json").report
    sources = report.venue_year_sources()
    counts = {(r.source, r.origin): r.papers for r in sources.itertuples()}
    assert counts == {
        ("iclr2025.json", "record"): 4,
        ("iclr2025.json", "file name"): 1,
        ("ICML_2024_papers.csv", "file name"): 2,
        ("miniconf-papers.json", "none"): 1,
    }
    # The line the sidebar and the CLI show: most papers first, the ones without any at the end.
    assert report.venue_year_line() == (
        "Venue and year from the records (4 papers), the file name (3); none found for 1 paper"
    )


def test_the_cli_and_the_sidebar_show_where_venue_and_year_came_from(tmp_path: Path) -> None:
    import subprocess
    import sys

    from streamlit.testing.v1 import AppTest

    paths = [FIXTURES / "iclr2025.json", FIXTURES / "ICML_2024_papers.csv"]
    done = subprocess.run(
        [sys.executable, "-m", "dashboard.cli.main", "stats", *map(str, paths)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "Venue and year from the records (4 papers), the file name (3)" in done.stderr
    app = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    app.run()  # the seeds: venue and year from each file's header line
    assert not app.exception
    captions = [c.value.replace("\\", "") for c in app.sidebar.caption]  # markdown escapes off
    assert "Venue and year from the header line (57 papers)" in captions


@pytest.mark.parametrize(
    ("name", "header", "venue", "year", "origin"),
    [
        (
            "iclr2025.txt",
            "ICML 2026 Papers",
            "ICLR",
            2025,
            "file name",
        ),  # the file name comes before the header
        ("notes.txt", "ICML 2026 Papers", "ICML", 2026, "header"),
        ("nips2024.txt", "Accepted papers", "NeurIPS", 2024, "file name"),
        ("ICML_2024_papers.txt", "Papers", "ICML", 2024, "file name"),
    ],
)
def test_venue_and_year_order_record_then_file_name_then_header(
    name: str, header: str, venue: str, year: int, origin: str
) -> None:
    result = corpus.load_uploads([(name, f"{header}\n\nWe study graphs.\n\nWe study images.\n".encode())])
    assert result.papers["venue"].tolist() == [venue, venue]
    assert result.papers["year"].tolist() == [year, year]
    assert result.report.files[0].venue_year_from == {origin: 2}


def test_record_venue_wins_over_the_file_name() -> None:
    result = corpus.load_uploads([("iclr2025.json", b'[{"abstract": "A.", "venue": "ICML 2024"}]')])
    assert (result.papers["venue"][0], result.papers["year"][0]) == ("ICML", 2024)
    assert result.report.files[0].venue_year_from == {"record": 1}


def test_papers_with_code_pair_joins_by_paper_url_or_arxiv_id() -> None:
    result = load("links-between-papers-and-code.json", "papers-with-abstracts.json")
    assert result.report.papers == 2  # the links file holds no papers of its own
    one, two = row(result, "2101.00001"), row(result, "papers-with-abstracts-2")
    assert (one["code_url"], one["github_repo"], one["code_status"]) == (
        "https://github.com/kim/official",
        "kim/official",
        "released",
    )
    assert one["code_is_official"] and one["implementations"] == [
        "https://github.com/someone/reimpl"
    ]  # by arXiv id
    assert (two["code_url"], two["code_status"], two["code_is_official"]) == ("", "none", False)
    assert two["implementations"] == ["https://github.com/other/two"]
    assert (one["venue"], one["year"], two["year"]) == ("NeurIPS", 2021, 2020)
    messages = [p.message for p in result.report.warnings]
    assert any("1 code link for papers that are not in this load" in m for m in messages)


def test_papers_with_code_links_file_alone_is_reported() -> None:
    result = load("links-between-papers-and-code.json")
    assert result.report.papers == 0
    assert "papers-with-abstracts.json" in result.report.skipped[0].message


@pytest.mark.parametrize(
    ("csv_text", "abstracts", "message"),
    [
        # a column named like an abstract: used silently
        ("title,abstract\nT,We study graphs.\n", ["We study graphs."], None),
        # "text" that reads like abstracts: used, and the report says so and why
        (
            "name,text\nAnn,We study graphs with many nodes and edges here.\n",
            ["We study graphs with many nodes and edges here."],
            "column 'text' read as the abstract",
        ),
        # an unnamed column of abstract-length prose
        (
            "name,body\nAnn," + " ".join(["word"] * 30) + "\n",
            [" ".join(["word"] * 30)],
            "column 'body' read as the abstract",
        ),
    ],
)
def test_csv_abstract_column_choice_is_said(csv_text: str, abstracts: list[str], message: str | None) -> None:
    result = corpus.load_uploads([("x.csv", csv_text.encode())])
    assert result.papers["abstract"].tolist() == abstracts
    warnings = [p.message for p in result.report.warnings]
    assert (message is None and not warnings) or any(message in w for w in warnings)


def test_csv_without_an_abstract_like_column_is_refused_listing_the_columns() -> None:
    result = corpus.load_uploads([("people.csv", b"name,text\nAnn One,Bob Two\nCy,Dee\n")])
    assert result.report.papers == 0
    message = result.report.skipped[0].message
    assert "no abstract column" in message and "'name', 'text'" in message


@pytest.mark.parametrize(
    ("line", "expected", "warned"),
    [
        ('1,"He said ""hi"" ok",k', 'He said "hi" ok', False),  # correct escaping: nothing to repair
        ('1,"Our "zero-shot" idea",k', 'Our "zero-shot" idea', True),
        ("1,plain text,k", "plain text", False),
    ],
)
def test_csv_quotes(line: str, expected: str, warned: bool) -> None:
    result = corpus.load_uploads([("q.csv", f"id,abstract,x\n{line}\n".encode())])
    assert result.papers["abstract"].tolist() == [expected]
    assert bool(result.report.warnings) is warned


def test_ambiguous_unescaped_quote_skips_the_row_and_says_so() -> None:
    # the inner quote is followed by a comma: where the field ends cannot be told
    result = corpus.load_uploads([("q.csv", b'id,abstract\n1,"A "b", c" d"\n2,fine\n')])
    assert result.papers["abstract"].tolist() == ["fine"]
    assert "ambiguous" in result.report.skipped[0].message


@pytest.mark.parametrize(
    ("github", "project", "abstract", "expected"),
    [
        ("https://github.com/a/b", "", "We study X.", ("https://github.com/a/b", "a/b", "released")),
        (
            "[![github](/images/github_icon.svg) a/b](https://github.com/a/b)",
            "",
            "X.",
            ("https://github.com/a/b", "a/b", "released"),
        ),
        (
            "https://github.com/a/b; https://github.com/c/d",
            "",
            "X.",
            ("https://github.com/a/b", "a/b", "released"),
        ),
        (
            "https://github.com/a/b;https://github.com/c/d",
            "",
            "X.",
            ("https://github.com/a/b", "a/b", "released"),
        ),
        ("github.com/a/b", "", "X.", ("https://github.com/a/b", "a/b", "released")),
        # an account alone: the same answer as the same URL in the abstract
        ("https://github.com/someone", "", "X.", ("", "", "account_only")),
        ("", "", "Code: https://github.com/someone", ("", "", "account_only")),
        # a github.io page in the code field is a project page, like in the abstract
        ("https://someone.github.io/proj/", "", "X.", ("", "", "project_page_only")),
        ("", "https://www.cs.cmu.edu/~someone/proj", "X.", ("", "", "project_page_only")),
        # the abstract's own repository still wins over an account-only field
        (
            "https://github.com/someone",
            "",
            "Code: https://github.com/someone/tool",
            ("https://github.com/someone/tool", "someone/tool", "released"),
        ),
    ],
)
def test_code_field_rule_shared_with_the_abstract(
    github: str, project: str, abstract: str, expected: tuple[str, str, str]
) -> None:
    record = {"title": "T", "abstract": abstract, "github": github, "project": project}
    paper = corpus.load_uploads([("x.json", json.dumps([record]).encode())]).papers.iloc[0]
    assert (paper["code_url"], paper["github_repo"], paper["code_status"]) == expected

"""The readers on the real public corpora in ../shared/corpora (skipped where that folder is absent).

Expected counts come from each corpus's README.txt, so the tests check the readers against what the
corpus says about itself rather than against numbers copied here.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from dashboard import corpus
from dashboard.schema import CODE_STATUSES, CORE_COLUMNS

pytestmark = pytest.mark.corpora


def readme_counts(readme: Path, heading: str) -> dict[str, int]:
    """The ``name: count`` lines under `heading` in a corpus README."""
    lines = readme.read_text("utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == heading) + 1
    counts: dict[str, int] = {}
    for line in lines[start:]:
        if not line.startswith("  ") or ":" not in line:
            break
        name, count = line.strip().rsplit(":", 1)
        counts[name.strip()] = int(count)
    return counts


def venue_year_counts(papers) -> dict[str, int]:
    return dict(
        Counter(f"{venue} {year}" for venue, year in zip(papers["venue"], papers["year"], strict=True))
    )


def test_icml_jsonl_all_4245_records(corpora_dir: Path) -> None:
    folder = corpora_dir / "icml2021-2023-pmlr"
    result = corpus.load([folder / "papers.jsonl"], derive=False)
    papers = result.papers
    assert len(papers) == 4245
    assert not result.report.skipped
    assert venue_year_counts(papers) == readme_counts(folder / "README.txt", "papers per venue/year:")
    assert papers["id"].is_unique and papers["title"].str.len().gt(0).all()
    assert papers["url"].str.startswith("http").all()
    assert papers["authors"].map(len).gt(0).all()


def test_icml_abstracts_txt_with_its_header(corpora_dir: Path) -> None:
    folder = corpora_dir / "icml2021-2023-pmlr"
    result = corpus.load([folder / "abstracts.txt"], derive=False)
    assert len(result.papers) == 4245
    assert not result.report.skipped
    assert set(result.papers["venue"]) == {"ICML"}  # header "ICML 2021-2023 Papers": a range, no one year
    assert result.papers["year"].isna().all()
    # the same abstracts as the JSON Lines file, whose whitespace runs abstracts.txt collapsed
    jsonl = corpus.load([folder / "papers.jsonl"], derive=False).papers
    assert result.papers["abstract"].tolist() == [" ".join(a.split()) for a in jsonl["abstract"]]


def test_openreview_raw_api_notes(corpora_dir: Path) -> None:
    folder = corpora_dir / "iclr2026-openreview-1k"
    readme = folder / "README.txt"
    result = corpus.load([folder / "original" / "paper_info_api_response.json"], derive=False)
    papers = result.papers
    assert len(papers) == 1000
    assert not result.report.skipped
    notes = json.loads((folder / "original" / "paper_info_api_response.json").read_text("utf-8"))
    assert papers["id"].tolist() == [note["id"] for note in notes]
    assert papers["title"].tolist() == [note["content"]["title"]["value"].strip() for note in notes]
    assert dict(Counter(papers["primary_area"])) == readme_counts(readme, "primary_area counts:")
    assert dict(Counter(papers["decision"])) == readme_counts(readme, "decision counts:")
    assert set(papers["venue"]) == {"ICLR"} and set(papers["year"]) == {2026}
    assert (papers["url"] == "https://openreview.net/forum?id=" + papers["id"]).all()
    assert papers["pdf_url"].str.startswith("https://openreview.net/pdf/").all()
    assert papers["keywords"].map(len).gt(0).all()


def test_openreview_jsonl_lifts_labels(corpora_dir: Path) -> None:
    folder = corpora_dir / "iclr2026-openreview-1k"
    raw = corpus.load([folder / "original"], derive=False).papers
    lines = corpus.load([folder / "papers.jsonl"], derive=False).papers
    assert len(lines) == 1000
    columns = ["id", "title", "abstract", "venue", "year", "primary_area", "decision", "url", "pdf_url"]
    assert lines[columns].equals(raw[columns])
    assert lines["keywords"].tolist() == raw["keywords"].tolist()


def test_multiconf_27k_with_every_derived_field(corpora_dir: Path) -> None:
    folder = corpora_dir / "multiconf-2021-2024"
    result = corpus.load([folder / "papers.jsonl.gz"])
    papers = result.papers
    assert len(papers) == 27179
    assert not result.report.skipped
    assert venue_year_counts(papers) == readme_counts(folder / "README.txt", "papers per venue/year:")
    assert list(papers.columns[: len(CORE_COLUMNS)]) == list(CORE_COLUMNS)
    assert papers["id"].is_unique
    # abstracts that give a GitHub repository: (nearly) all are found as code releases
    gives_repo = papers["abstract"].str.contains(
        r"https?://(?:www\.)?github\.com/[\w.-]+/[\w.-]+", regex=True
    )
    assert gives_repo.sum() > 4000
    assert (papers.loc[gives_repo, "code_status"] == "released").mean() > 0.99
    released = papers["code_status"] == "released"
    assert papers.loc[released, "code_url"].str.startswith("http").all()
    assert set(papers["code_status"]) <= set(CODE_STATUSES)

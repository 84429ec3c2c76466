"""Issue 10's checks on the real exports in ../shared/corpora (skipped where that folder is absent)."""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from pathlib import Path

import pytest

from dashboard import corpus
from dashboard.text import links

pytestmark = pytest.mark.corpora

# A repository URL as a person reads it in a code field: github.com/owner/name (not github.io pages)
_REPO = re.compile(r"github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)")
_ACCOUNT_ONLY = re.compile(r"^\s*(?:https?://)?(?:www\.)?github\.com/[A-Za-z0-9_.-]+/?\s*$")


def _paper_copilot(corpora_dir: Path) -> tuple[list[dict], corpus.LoadResult]:
    folder = corpora_dir / "papercopilot-iccv2019-icml2019"
    records = [r for f in sorted(folder.glob("*.json")) for r in json.loads(f.read_text("utf-8"))]
    return records, corpus.load([folder])


def test_paper_copilot_venue_year_and_code_fields(corpora_dir: Path) -> None:
    records, result = _paper_copilot(corpora_dir)
    papers = result.papers
    assert len(papers) == len(records) == result.report.papers
    filled = (papers["venue"] != "") & papers["year"].notna()
    assert filled.mean() >= 0.99, papers.loc[~filled, ["source", "id"]]
    checked = {"repo": 0, "account": 0, "project": 0}
    for record, (_, paper) in zip(records, papers.iterrows(), strict=True):
        github = unicodedata.normalize("NFKC", (record.get("github") or "").strip())  # "ﬁ" copied from PDFs
        in_abstract = _REPO.search(record.get("abstract") or "")
        repo = _REPO.search(github.replace(".git", ""))
        if repo and ".github.io" not in github.split(repo.group(0))[0]:
            checked["repo"] += 1
            assert paper["code_status"] == "released", github
            assert paper["github_repo"].lower() == f"{repo.group(1)}/{repo.group(2)}".lower().rstrip("."), (
                github
            )
        elif _ACCOUNT_ONLY.match(github) and not in_abstract:
            checked["account"] += 1
            assert (paper["code_status"], paper["github_repo"]) == ("account_only", ""), github
        # A shortened link the abstract names as its code ("Code is available at: tinyurl.com/x") is code
        # whose repository is unknown (`links.is_shortener`), not a project page.
        elif (
            not github
            and (record.get("project") or "").strip()
            and not in_abstract
            and not (links.is_shortener(record["project"].strip()) and paper["code_status"] == "released")
        ):
            checked["project"] += 1
            assert paper["code_status"] == "project_page_only", record.get("project")
    assert min(checked.values()) >= 1, checked  # each kind of field was met


def test_no_pdf_artefacts_in_any_abstract_clean(corpora_dir: Path) -> None:
    for folder in ("iclr2026-openreview-1k", "icml2021-2023-pmlr"):
        result = corpus.load([corpora_dir / folder / "papers.jsonl"])
        assert not result.papers["abstract_clean"].str.contains("(cid:", regex=False).any(), folder
    _, copilot = _paper_copilot(corpora_dir)
    assert not copilot.papers["abstract_clean"].str.contains("(cid:", regex=False).any()


def test_mini_conf_layout_csv_keeps_every_author(corpora_dir: Path, tmp_path: Path) -> None:
    # The Mini-Conf sitedata/papers.csv layout, made from a real corpus: authors and keywords joined by "|".
    source = corpora_dir / "icml2021-2023-pmlr" / "papers.jsonl"
    records = [json.loads(line) for line in source.read_text("utf-8").splitlines() if line.strip()]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["UID", "title", "authors", "abstract", "keywords", "sessions"])
    for record in records:
        writer.writerow(
            [record["id"], record["title"], "|".join(record["authors"]), record["abstract"], "", "Session A"]
        )
    path = tmp_path / "papers.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    papers = corpus.load([path], derive=False).papers
    expected = sum(len(r["authors"]) for r in records) / len(records)
    assert len(papers) == len(records)
    assert papers["authors"].map(len).mean() == pytest.approx(expected)
    assert expected > 3  # several authors a paper: one "author" holding every name would fail the check

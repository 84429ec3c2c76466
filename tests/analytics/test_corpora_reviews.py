"""Review scores of the two real Paper Copilot files (ICLR 2017, CoRL 2023): the per-tier mean scores and
acceptance shares, two of them checked against the raw file by plain json code here."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean

import pytest

from dashboard import corpus
from dashboard.analytics import reviews

pytestmark = pytest.mark.corpora
FOLDER = "papercopilot-reviews-iclr2017-corl2023"


def raw_records(path: Path) -> list[dict]:
    """The file's records as the reader keeps them: those with a title or an abstract."""
    records = json.loads(path.read_text(encoding="utf-8"))
    return [r for r in records if (r.get("title") or "").strip() or (r.get("abstract") or "").strip()]


def paper_means(records: list[dict], status: str) -> list[float]:
    """Each paper's mean of its ';'-joined scores, for the papers of one status."""
    return [
        mean(float(s) for s in r["rating"].split(";"))
        for r in records
        if r["status"] == status and r["rating"].strip()
    ]


@pytest.fixture(scope="module")
def iclr2017(corpora_dir: Path) -> corpus.LoadResult:
    return corpus.load([corpora_dir / FOLDER / "iclr2017.json"])


@pytest.fixture(scope="module")
def corl2023(corpora_dir: Path) -> corpus.LoadResult:
    return corpus.load([corpora_dir / FOLDER / "corl2023.json"])


def test_iclr2017_per_tier_mean_scores_and_acceptance(iclr2017: corpus.LoadResult) -> None:
    papers = iclr2017.papers
    assert not [w for w in iclr2017.report.warnings if "score" in w.message]  # every score parses
    table = reviews.group_scores(papers, "decision").set_index("group")
    assert table["rated"].to_dict() == {"oral": 15, "poster": 183, "workshop": 47, "reject": 244}
    assert table["rating_mean"].round(3).to_dict() == {
        "oral": 8.078,
        "poster": 6.830,
        "workshop": 5.374,  # "Invite to Workshop Track": decided, not accepted to the conference
        "reject": 4.734,
    }
    overall = reviews.group_scores(papers, "venue").set_index("group")
    assert overall.loc["ICLR", "accept_share"] == pytest.approx(198 / 489)  # the workshop papers decided too
    assert reviews.acceptance_cut(papers) == 6.29
    assert reviews.mixed_scales(papers) == ""


def test_iclr2017_figures_match_the_raw_file(corpora_dir: Path, iclr2017: corpus.LoadResult) -> None:
    records = raw_records(corpora_dir / FOLDER / "iclr2017.json")
    table = reviews.group_scores(iclr2017.papers, "decision").set_index("group")
    # check 1: the reject tier's mean of each paper's mean score, from the raw "rating" strings
    assert table.loc["reject", "rating_mean"] == pytest.approx(mean(paper_means(records, "Reject")))
    # check 2: the accepted share of decided papers (Oral and Poster over Oral, Poster, Workshop and
    # Reject: a paper invited to the workshop track was not accepted to the conference)
    statuses = [r["status"] for r in records]
    accepted = statuses.count("Oral") + statuses.count("Poster")
    share = reviews.group_scores(iclr2017.papers, "venue")["accept_share"].iloc[0]
    decided = accepted + statuses.count("Workshop") + statuses.count("Reject")
    assert share == pytest.approx(accepted / decided)


def test_corl2023_per_tier_mean_scores(corpora_dir: Path, corl2023: corpus.LoadResult) -> None:
    table = reviews.group_scores(corl2023.papers, "decision").set_index("group")
    assert table["rated"].to_dict() == {"oral": 33, "poster": 166}
    assert table["rating_mean"].round(3).to_dict() == {"oral": 7.747, "poster": 6.281}
    assert table["accept_share"].to_dict() == {"oral": 1.0, "poster": 1.0}  # accepted papers only
    records = raw_records(corpora_dir / FOLDER / "corl2023.json")
    assert table.loc["oral", "rating_mean"] == pytest.approx(mean(paper_means(records, "Oral")))
    assert reviews.acceptance_cut(corl2023.papers) is None  # no rejected paper to cross


def test_the_two_venues_together_are_said_to_mix_scales(corpora_dir: Path) -> None:
    papers = corpus.load(
        [corpora_dir / FOLDER / "iclr2017.json", corpora_dir / FOLDER / "corl2023.json"]
    ).papers
    warning = reviews.mixed_scales(papers)
    assert "ICLR 2017" in warning and "CoRL 2023" in warning

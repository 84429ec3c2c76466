"""Trends compare like with like: a share that moves only because a year holds other venues is not a
trend, a change inside a venue still is (issue 51, section 2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.venue_mix import (
    BALANCED_FLAT,
    JOINS_LATER,
    LEAVES_EARLY,
    NO_VENUE_IN_BOTH,
    ONE_VENUE_RISING,
    RISES_INSIDE_A,
    YEARS,
    venue_mix_papers,
)

from dashboard.analytics import trends
from dashboard.figures import trends as trend_charts

EARLIER, LATER = (2020, 2021), (2022, 2023)


def _topic_zero(plan: dict, method: str, **columns: object) -> pd.Series:
    papers = venue_mix_papers(plan).assign(**columns)
    table = trends.topic_changes(trends.Axes.of(papers), EARLIER, LATER, method=method)
    return table.set_index("topic").loc[0]


@pytest.mark.parametrize(
    ("plan", "pooled", "within", "mix_only"),
    [
        (JOINS_LATER, "rising", "flat", True),  # flat in every venue: a venue joining is no trend
        (LEAVES_EARLY, "falling", "flat", True),
        (RISES_INSIDE_A, "rising", "rising", False),  # a real rise inside one venue is still one
        (BALANCED_FLAT, "flat", "flat", False),
        (ONE_VENUE_RISING, "rising", "rising", False),
        (NO_VENUE_IN_BOTH, "rising", "not compared", False),
    ],
    ids=["joins-later", "leaves-early", "rises-inside-a", "balanced-flat", "one-venue", "no-venue-in-both"],
)
def test_a_change_is_reported_by_default_only_when_it_happens_within_venues(
    plan: dict, pooled: str, within: str, mix_only: bool
) -> None:
    row = _topic_zero(plan, trends.DEFAULT_METHOD)
    assert trends.DEFAULT_METHOD == "venues"
    assert (row["change"], row["pooled_change"], row["within_change"]) == (within, pooled, within)
    assert bool(row["venue_mix_only"]) is mix_only
    assert _topic_zero(plan, "pooled")["change"] == pooled  # the pooled share stays a choice


def test_the_flat_topic_whose_venue_joins_later_is_flat_within_venues_and_named_in_the_note() -> None:
    axes = trends.Axes.of(venue_mix_papers(JOINS_LATER))
    changes = trends.topic_changes(axes, EARLIER, LATER)
    row = changes.set_index("topic").loc[0]
    assert row["from_share"] == pytest.approx(row["to_share"], abs=1e-6)
    assert (row["pooled_from_share"], row["pooled_to_share"]) == pytest.approx((0.1, 0.3))
    assert abs(row["score"]) < 0.01 and abs(row["z"]) < 0.01 and row["pooled_z"] > trends.CLEAR_Z
    # Only venue A holds papers in both periods: the shares are over its papers.
    assert (row["from_total"], row["to_total"]) == (600, 600)
    assert (row["from_papers"], row["to_papers"]) == (60, 60)
    note = trends.venue_mix_note(changes.assign(label=changes["topic"].map({0: "graphs", 1: "agents"})))
    assert "graphs: pooled rises 10.0% → 30.0%, within venues flat (23.3% → 23.3%)" in note
    assert "agents: pooled falls 90.0% → 70.0%" in note
    assert trends.venue_mix_note(trends.topic_changes(trends.Axes.of(venue_mix_papers(BALANCED_FLAT)),
                                                      EARLIER, LATER)) == ""  # fmt: skip


@pytest.mark.parametrize(
    ("plan", "columns"),
    [
        (ONE_VENUE_RISING, {}),
        (ONE_VENUE_RISING, {"venue": ""}),  # no venue at all
        ({"A": {2020: 0.2, 2021: 0.3}, "B": {2020: 0.4, 2021: 0.6}}, {"venue": "only"}),
    ],
    ids=["one-venue", "blank-venue", "one-venue-named"],
)
def test_with_one_venue_the_within_venue_shares_are_the_pooled_ones(plan: dict, columns: dict) -> None:
    papers = venue_mix_papers(plan).assign(**columns)
    axes = trends.Axes.of(papers)
    shares = trends.topic_shares(axes, "year")
    assert np.allclose(shares["share"], shares["pooled_share"], atol=1e-6)
    assert (shares["compared_papers"] == shares["group_papers"]).all()
    years = sorted(papers["year"].unique())
    changes = trends.topic_changes(axes, years[: len(years) // 2], years[len(years) // 2 :])
    pooled = trends.topic_changes(axes, years[: len(years) // 2], years[len(years) // 2 :], method="pooled")
    assert changes["score"].tolist() == pooled["score"].tolist()
    assert not changes["venue_mix_only"].any()


def test_a_papers_without_a_venue_are_a_venue_of_their_own() -> None:
    # The blank-venue papers join later with more of topic 0: standardised, nothing changes.
    papers = venue_mix_papers({"A": dict.fromkeys(YEARS, 0.1), "": {2022: 0.5, 2023: 0.5}})
    row = trends.topic_changes(trends.Axes.of(papers), EARLIER, LATER).set_index("topic").loc[0]
    assert (row["change"], row["pooled_change"]) == ("flat", "rising")


@pytest.mark.parametrize(
    ("plan", "method", "expected"),
    [
        (JOINS_LATER, "venues", [0.2333] * 4),  # flat: 10% at A, 50% at B, on the fixed mix (2:1)
        (JOINS_LATER, "pooled", [0.1, 0.1, 0.3, 0.3]),
        (ONE_VENUE_RISING, "venues", [0.1, 0.1, 0.3, 0.3]),
        (NO_VENUE_IN_BOTH, "venues", [0.1, 0.1, None, None]),  # B's years share no venue with A's
    ],
)
def test_the_topic_share_per_year(plan: dict, method: str, expected: list[float | None]) -> None:
    table = trends.topic_shares(trends.Axes.of(venue_mix_papers(plan)), "year", method=method)
    got = table[table["topic"] == 0]["share"].tolist()
    assert [None if np.isnan(g) else round(g, 4) for g in got] == expected
    shares = table.pivot(index="year", columns="topic", values="share").dropna()
    assert np.allclose(shares.sum(axis=1), 1.0, atol=1e-5)  # a year's shares still sum to 1
    assert (table.groupby("year")["papers"].sum() == table.groupby("year")["group_papers"].first()).all()


def test_a_venue_in_one_year_only_does_not_count_among_the_compared_papers() -> None:
    plan = {"A": dict.fromkeys(YEARS, 0.1), "B": {2021: 0.5}}
    table = trends.topic_shares(trends.Axes.of(venue_mix_papers(plan)), "year")
    per_year = table.drop_duplicates("year").set_index("year")
    assert per_year.loc[2021, "group_papers"] == 600 and per_year.loc[2021, "compared_papers"] == 300
    assert table[table["topic"] == 0]["share"].round(6).nunique() == 1  # flat


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ([[[1, 9], [1, 9]], [[0, 0], [5, 5]]], [[0.2333, 0.7667], [0.2333, 0.7667]]),
        ([[[2, 8], [4, 6]]], [[0.2, 0.8], [0.4, 0.6]]),  # one venue: the pooled shares
        ([[[0, 0], [0, 0]]], [[None, None], [None, None]]),  # no papers
    ],
)
def test_within_venue_shares_table(counts: list, expected: list) -> None:
    shares, _ = trends.within_venue_shares(np.array(counts))
    assert [[None if np.isnan(v) else round(float(v), 4) for v in row] for row in shares] == expected


def test_the_coverage_grid_says_which_venues_each_year_holds() -> None:
    papers = venue_mix_papers({**JOINS_LATER, "": {2023: 0.0}}, per_cell=10)
    grid = trends.coverage(trends.Axes.of(papers))
    assert grid.to_dict("index") == {
        "A": {"2020": 10, "2021": 10, "2022": 10, "2023": 10},
        "B": {"2020": 0, "2021": 0, "2022": 10, "2023": 10},
        "(no venue)": {"2020": 0, "2021": 0, "2022": 0, "2023": 10},
    }
    mask = papers["venue"].eq("A").to_numpy()
    assert list(trends.coverage(trends.Axes.of(papers), mask).index) == ["A"]


def test_a_share_over_fewer_than_five_papers_is_not_drawn() -> None:
    # A venue with 3 papers in 2023: its point is hidden, and the hover of the others names their n.
    papers = venue_mix_papers({"A": {2020: 0.1, 2021: 0.1, 2022: 0.1}, "B": {2023: 0.0}}, per_cell=20)
    papers = papers[~((papers["venue"] == "B") & (papers.index % 20 >= 3))]
    shares = trends.topic_shares(trends.Axes.of(papers), "year", method="pooled")
    fig = trend_charts.topic_lines(shares, topics=[0])
    line = fig.to_dict()["data"][0]
    assert line["y"][:3] == pytest.approx([0.1] * 3) and line["y"][3] is None
    assert "%{customdata[3]:,} papers of %{customdata[5]:,}" in line["hovertemplate"]
    assert [point[5] for point in line["customdata"]] == [20, 20, 20, 3]


def test_a_heatmap_cell_over_fewer_than_five_papers_is_blank_and_says_why() -> None:
    papers = venue_mix_papers({"A": {2020: 0.1, 2021: 0.1}, "B": {2021: 0.0}}, per_cell=20)
    papers = papers[~((papers["venue"] == "B") & (papers.index % 20 >= 4))]  # B holds 4 papers
    shares = trends.topic_shares(trends.Axes.of(papers), "venue")
    fig = trend_charts.share_heatmap(shares, topics=[0, 1]).to_dict()
    heat, markers = fig["data"]
    assert heat["x"] == ["A", "B"] and [row[1] for row in heat["z"]] == [None, None]
    assert heat["z"][0][0] == pytest.approx(0.1)
    assert [point[6] for point in markers["customdata"]] == ["10.0%", "fewer than 5 papers", "90.0%",
                                                             "fewer than 5 papers"]  # fmt: skip


def test_a_year_of_one_venue_among_years_of_several_is_a_hollow_point_within_venues() -> None:
    # As in the 27k corpus, whose 2024 holds AAAI only: that year's share within venues rests on one venue.
    plan = {"A": dict.fromkeys(YEARS, 0.1), "B": {2020: 0.5, 2021: 0.5, 2022: 0.5}}
    shares = trends.topic_shares(trends.Axes.of(venue_mix_papers(plan)), "year")
    assert shares.drop_duplicates("year")["venues"].tolist() == [2, 2, 2, 1]
    within = trend_charts.topic_lines(shares, topics=[0], within_venues=True).to_dict()["data"][0]
    assert within["marker"]["symbol"] == ["circle", "circle", "circle", "circle-open"]
    assert within["customdata"][3][7] == "; one venue only" and "customdata[6]" in within["hovertemplate"]
    pooled = trend_charts.topic_lines(shares, topics=[0]).to_dict()["data"][0]
    assert pooled["marker"]["symbol"] == ["circle"] * 4 and "customdata[6]" not in pooled["hovertemplate"]


@pytest.mark.parametrize("method", list(trends.METHODS))
def test_the_venue_mix_note_gives_both_shares_whichever_is_shown(method: str) -> None:
    changes = trends.topic_changes(
        trends.Axes.of(venue_mix_papers(JOINS_LATER)), EARLIER, LATER, method=method
    )
    items = trends.venue_mix_items(changes.assign(label=changes["topic"].map({0: "graphs", 1: "agents"})))
    assert items[0] == "graphs: pooled rises 10.0% → 30.0%, within venues flat (23.3% → 23.3%)"

"""Trends on synthetic corpora with planted trends: what grows comes out on top, what is flat does not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.synthetic import trend_papers

from dashboard.analytics import trends
from dashboard.analytics.terms import TermCounts
from dashboard.figures import trends as trend_charts
from dashboard.filters import Filters

YEARS = (2020, 2021, 2022, 2023, 2024)


@pytest.fixture(scope="module")
def papers() -> pd.DataFrame:
    return trend_papers()


@pytest.fixture(scope="module")
def axes(papers: pd.DataFrame) -> trends.Axes:
    return trends.Axes.of(papers)


@pytest.mark.parametrize("by", trends.GROUPINGS)
def test_shares_per_group_sum_to_one(axes: trends.Axes, by: str) -> None:
    table = trends.topic_shares(axes, by)
    sums = table.groupby("group")["share"].sum()
    assert np.allclose(sums.to_numpy(), 1.0, atol=1e-5)
    n_groups = {"year": len(YEARS), "venue": 2, "venue,year": 2 * len(YEARS)}[by]
    assert len(sums) == n_groups
    assert (table.groupby("group")["papers"].sum() > 0).all()


def test_shares_count_the_masked_papers_only(papers: pd.DataFrame, axes: trends.Axes) -> None:
    mask = papers["venue"].eq("ConfB").to_numpy()
    table = trends.topic_shares(axes, "year", mask)
    expected = papers[mask].groupby(["year", "topic"]).size()
    got = table.set_index(["year", "topic"])["papers"]
    assert (got[got > 0] == expected.reindex(got[got > 0].index)).all()
    assert int(table["papers"].sum()) == int(mask.sum())


def test_outliers_and_papers_without_a_year() -> None:
    papers = pd.DataFrame(
        {
            "year": pd.array([2021, 2021, None, 2022], dtype="Int64"),
            "venue": ["A", "", "A", "A"],
            "topic": [-1, 0, 0, 0],
            "code_status": ["none"] * 4,
        }
    )
    table = trends.topic_shares(trends.Axes.of(papers), "year", method="pooled")
    by_group = table.set_index(["group", "topic"])["share"]
    assert by_group[("2021", -1)] == 0.5 and by_group[("2022", 0)] == 1.0
    assert table["papers"].sum() == 3  # the paper without a year is in no group
    per_venue = trends.topic_shares(trends.Axes.of(papers), "venue,year")
    assert set(per_venue["group"]) == {"A 2021", "A 2022"}  # a paper without a venue is in no group


def test_the_growing_topic_comes_out_on_top_and_the_flat_one_does_not(axes: trends.Axes) -> None:
    table = trends.topic_changes(axes, *trends.default_periods(YEARS))
    assert table["topic"].iloc[0] == 1  # diffusion, planted to grow every year
    assert table["topic"].iloc[-1] == 0  # graphs, planted to shrink
    flat = table.set_index("topic").loc[2]
    assert abs(flat["score"]) < table["score"].iloc[0] / 3
    assert flat["to_share"] == pytest.approx(flat["from_share"], abs=0.08)


def test_the_growing_word_comes_out_on_top_and_flat_and_rare_ones_do_not() -> None:
    papers = trend_papers(diffusion_growth=0.0, seed=1)  # topics flat: only "quantum" grows
    axes = trends.Axes.of(papers)
    counts = TermCounts.build(papers)
    before, after = trends.default_periods(YEARS)
    table = trends.rising_terms(counts, trends.period_mask(axes, before), trends.period_mask(axes, after))
    assert table["term"].iloc[0] == "quantum"
    top = table.iloc[0]
    assert top["to_share"] > 3 * top["from_share"] and top["score"] > 1.5 * table["score"].iloc[1] > 0
    rising = table[table["score"] > 0]
    assert "zebra" not in set(rising["term"].head(5))  # used once: chance, not a trend
    lattice = (
        trends.rising_terms(
            counts, trends.period_mask(axes, before), trends.period_mask(axes, after), top=10_000
        )
        .set_index("term")
        .loc["lattice"]
    )
    assert abs(lattice["score"]) < 2.5  # in half the papers every year


def test_rising_terms_counted_within_the_whole_periods_equal_those_counted_directly() -> None:
    papers = trend_papers(diffusion_growth=0.0, seed=1)
    axes = trends.Axes.of(papers)
    before, after = trends.default_periods(YEARS)
    mask = np.ones(len(papers), dtype=bool)
    mask[::7] = False  # a filter that keeps most papers: counted as the period less the rest
    filtered = trends.period_mask(axes, before, mask), trends.period_mask(axes, after, mask)
    expected = trends.rising_terms(TermCounts.build(papers), *filtered)
    counts = TermCounts.build(papers)  # fresh: nothing remembered from the direct count
    within = (trends.period_counts(counts, axes, before), trends.period_counts(counts, axes, after))
    assert within[0].mask.tolist() == trends.period_mask(axes, before).tolist()
    got = trends.rising_terms(counts, *filtered, within=within)
    pd.testing.assert_frame_equal(got, expected)
    assert got["term"].iloc[0] == "quantum"


def test_a_period_is_its_years_among_the_masked_papers_and_never_a_paper_without_a_year() -> None:
    papers = pd.DataFrame(
        {"year": pd.array([2021, None, 2023, 2022, 2021], dtype="Int64"), "topic": [0] * 5,
         "code_status": ["none"] * 5, "venue": ["A"] * 5}
    )  # fmt: skip
    axes = trends.Axes.of(papers)
    assert trends.period_mask(axes, [2021, 2023]).tolist() == [True, False, True, False, True]
    mask = np.array([True, True, True, True, False])
    assert trends.period_mask(axes, [2021], mask).tolist() == [True, False, False, False, False]
    assert not trends.period_mask(axes, [1999]).any()


def test_rising_terms_with_an_empty_period(axes: trends.Axes, papers: pd.DataFrame) -> None:
    counts = TermCounts.build(papers)
    table = trends.rising_terms(counts, trends.period_mask(axes, [1999]), trends.period_mask(axes, [2024]))
    assert table.empty and list(table.columns)[:3] == ["term", "from_share", "to_share"]


@pytest.mark.parametrize(
    ("years", "expected"),
    [
        ([2021], ((), ())),
        ([2021, 2022], ((2021,), (2022,))),
        ([2023, 2021, 2022], ((2021,), (2023,))),
        ([2021, 2022, 2023, 2024], ((2021, 2022), (2023, 2024))),
    ],
)
def test_default_periods_are_the_halves_of_the_span(years: list[int], expected: tuple) -> None:
    assert trends.default_periods(years) == expected


def test_a_topics_terms_per_year_follow_its_papers_that_year() -> None:
    # One topic, two years: its papers speak of "alpha" in 2021 and of "omega" in 2022.
    texts = ["alpha beta model"] * 5 + ["omega beta model"] * 5 + ["other words here"] * 5
    papers = pd.DataFrame(
        {
            "abstract_clean": texts,
            "year": [2021] * 5 + [2022] * 5 + [2022] * 5,
            "topic": [0] * 10 + [1] * 5,
            "code_status": ["none"] * 15,
        }
    )
    table = trends.topic_year_terms(TermCounts.build(papers), trends.Axes.of(papers), n_terms=2)
    terms = {(t, y): words for t, y, words in table.itertuples(index=False)}
    assert terms[(0, 2021)][0] == "alpha" and "omega" not in terms[(0, 2021)]
    assert terms[(0, 2022)][0] == "omega" and "alpha" not in terms[(0, 2022)]


def test_each_venues_distinctive_topic(axes: trends.Axes) -> None:
    table = trends.distinctive_topics(axes)
    assert table[table["venue"] == "ConfB"]["topic"].iloc[0] == 2  # planted: more agents papers


def test_code_release_grows_and_its_shares_are_per_group(axes: trends.Axes, papers: pd.DataFrame) -> None:
    table = trends.code_release(axes, "year")
    expected = papers.groupby("year")["code_status"].apply(lambda s: (s == "released").mean())
    assert np.allclose(table["share"].to_numpy(), expected.to_numpy(), atol=1e-6)
    assert table["share"].iloc[-1] > table["share"].iloc[0] + 0.2
    assert "live_share" not in table.columns
    with_repos = papers.assign(
        repo_state=np.where(papers["code_status"] == "released", "live", "not_checked")
    )
    live = trends.code_release(trends.Axes.of(with_repos), "venue,year")
    assert (live["live"] == live["released"]).all() and "live_share" in live.columns
    # Before any check (every repository "not_checked", or none at all): no live line of 0%.
    unchecked = papers.assign(repo_state=np.where(papers["code_status"] == "released", "not_checked", ""))
    assert "live_share" not in trends.code_release(trends.Axes.of(unchecked), "year").columns
    one_answer = unchecked.assign(repo_state=["error", *unchecked["repo_state"].iloc[1:]])
    assert trends.code_release(trends.Axes.of(one_answer), "year")["live_share"].eq(0).all()


def test_acceptance_per_topic_area_and_year(axes: trends.Axes, papers: pd.DataFrame) -> None:
    by_topic = trends.acceptance(axes, "topic").set_index("topic")
    expected = papers.groupby("topic")["decision_tier"].apply(lambda s: (s == "poster").mean())
    assert np.allclose(by_topic["share"].to_numpy(), expected.to_numpy())
    assert by_topic["share"].idxmax() == 1  # planted: diffusion papers are accepted twice as often
    by_area = trends.acceptance(axes, "area").set_index("area")
    assert by_area.loc["Diffusion", "share"] == pytest.approx(by_topic.loc[1, "share"])
    assert trends.acceptance(axes, "year")["decided"].sum() == len(papers)


def test_unknown_tiers_are_not_decided_and_no_tier_column_means_no_decisions(papers: pd.DataFrame) -> None:
    unknown = papers.assign(decision_tier="unknown")
    assert not trends.has_decisions(trends.Axes.of(unknown))
    assert trends.acceptance(trends.Axes.of(unknown), "topic").empty
    assert not trends.has_decisions(trends.Axes.of(papers.drop(columns="decision_tier")))


@pytest.mark.parametrize(
    ("current", "clicked", "expected"),
    [
        (Filters(), [{"topic": 3, "year": 2023}], Filters(topic=(3,), year=(2023,))),
        (
            Filters(q="graph", topic=(1, 2), code=("released",)),
            [{"topic": 3, "year": 2023}],
            Filters(q="graph", topic=(3,), year=(2023,), code=("released",)),
        ),
        (
            Filters(venue=("A",), year=(2021,)),
            [{"topic": 0, "venue": "B", "year": 2022}],
            Filters(venue=("B",), year=(2022,), topic=(0,)),
        ),
        (
            Filters(venue=("A",)),
            [{"topic": 0, "year": 2022}],
            Filters(venue=("A",), topic=(0,), year=(2022,)),
        ),
        (Filters(venue=("A",)), [{"venue": "", "year": "2022"}], Filters(year=(2022,))),
        (Filters(), [{"year": 2021}, {"year": 2022}], Filters(year=(2021, 2022))),
        (Filters(area=("X",)), [{"area": "Graphs"}], Filters(area=("Graphs",))),
        (Filters(year=(2021,)), [], Filters(year=(2021,))),
    ],
)
def test_a_click_sets_exactly_the_filters_of_what_was_clicked(
    current: Filters, clicked: list[dict[str, object]], expected: Filters
) -> None:
    assert trends.clicked_filters(current, clicked) == expected


def _clicked(fig: object, point: list[object]) -> dict[str, object]:
    keys = fig.layout.meta["click_keys"]  # type: ignore[attr-defined]
    return dict(zip(keys, point, strict=False))


def test_every_point_of_the_topic_lines_names_its_topic_and_year(axes: trends.Axes) -> None:
    shares = trends.topic_shares(axes, "venue,year", labels={0: "graphs", 1: "diffusion", 2: "agents"})
    fig = trend_charts.topic_lines(shares, topics=[1, 2], by_venue=True, terms={(1, 2024): ["diffusion"]})
    assert fig.layout.meta["click_keys"] == ("topic", "year", "venue")
    assert len(fig.data) == 4  # two topics in two venue panels
    for trace in fig.data:
        for x, y, point in zip(trace.x, trace.y, trace.customdata, strict=True):
            cell = _clicked(fig, point)
            row = shares[
                (shares["topic"] == int(cell["topic"]))
                & (shares["year"] == int(cell["year"]))
                & (shares["venue"] == cell["venue"])
            ]
            assert int(x) == int(cell["year"]) and float(row["share"].iloc[0]) == pytest.approx(y)
    hover = [p[4] for trace in fig.data for p in trace.customdata if p[0] == 1 and p[1] == 2024]
    assert hover and all("diffusion" in h for h in hover)


def test_every_heatmap_cell_has_a_clickable_marker_naming_it(axes: trends.Axes) -> None:
    shares = trends.topic_shares(axes, "venue,year")
    fig = trend_charts.share_heatmap(shares, topics=[0, 1, 2], by_year=True)
    heat, markers = fig.data
    assert heat.type == "heatmap" and heat.hoverinfo == "skip"
    assert len(markers.customdata) == 3 * 2 * len(YEARS)
    for point in markers.customdata:
        cell = _clicked(fig, point)
        row = shares[
            (shares["topic"] == cell["topic"])
            & (shares["venue"] == cell["venue"])
            & (shares["year"] == cell["year"])
        ]
        assert float(row["share"].iloc[0]) == pytest.approx(point[4])


def test_change_bars_and_release_lines_carry_what_a_click_sets(axes: trends.Axes) -> None:
    changes = trends.topic_changes(axes, (2020, 2021), (2023, 2024), labels={1: "diffusion <b>"})
    fig = trend_charts.change_bars(changes, name="label", key="topic", title="Topics")
    assert fig.layout.meta["click_keys"] == ("topic",)
    assert sorted(int(p[0]) for p in fig.data[0].customdata) == sorted(changes["topic"])
    assert "diffusion &lt;b&gt;" in list(fig.data[0].y)  # corpus text is escaped
    release = trend_charts.code_release_lines(trends.code_release(axes, "venue,year"), by="venue,year")
    assert release.layout.meta["click_keys"] == ("year", "venue")
    assert {p[1] for trace in release.data for p in trace.customdata} == {"ConfA", "ConfB"}


def test_topic_terms_per_year_on_a_sample_still_name_the_planted_words(papers: pd.DataFrame) -> None:
    counts, axes = TermCounts.build(papers), trends.Axes.of(papers)
    sampled = trends.topic_year_terms(counts, axes, max_papers=120)
    assert set(zip(sampled["topic"], sampled["year"], strict=True)) <= {
        (t, y) for t in (0, 1, 2) for y in YEARS
    }
    diffusion = sampled[sampled["topic"] == 1]["terms"].sum()
    assert set(diffusion) <= {
        "diffusion",
        "denoising",
        "image",
        "generation",
        "sampler",
        "score",
        "quantum",
        "lattice",
        "zebra",
        "method",
        "results",
        "study",
    }


@pytest.mark.parametrize("joint_cells", [trends.JOINT_CELLS, 0], ids=["joint", "table-by-table"])
def test_counts_per_combination_equal_a_group_by_of_the_masked_papers(
    joint_cells: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Years and venues with gaps, every tier and none: `Axes.cells` (one code per paper and combination)
    # against pandas counting the same papers, under masks that keep all, most, few and none. A
    # read-only mask's tables are sums of one joint table; with too many combinations for one
    # (`JOINT_CELLS`), and for a writable mask, each table is counted on its own.
    monkeypatch.setattr(trends, "JOINT_CELLS", joint_cells)
    rng = np.random.default_rng(7)
    n = 3_000
    papers = pd.DataFrame(
        {
            "year": rng.choice([2019, 2020, 2022, None], n),
            "venue": rng.choice(["ICML", "ICLR", " ", None], n),
            "topic": rng.choice([-1, 0, 1, 2, 5], n),
            "code_status": rng.choice(["released", "none"], n),
            "repo_state": rng.choice(["live", "gone", "not_checked"], n),
            "decision_tier": rng.choice([*trends.DECIDED_TIERS, "unknown", None], n),
        }
    )
    axes = trends.Axes.of(papers)
    assert bool(axes._joint_names) == (joint_cells > 0)
    values = {
        "year": pd.to_numeric(papers["year"]).astype("Int64"),
        "venue": papers["venue"].astype("string").str.strip().replace("", pd.NA),
        "topic": papers["topic"],
        "tier": papers["decision_tier"]
        .astype("string")
        .str.lower()
        .where(lambda t: t.isin(trends.DECIDED_TIERS)),
        "released": papers["code_status"].eq("released").astype(int),
        "live": papers["repo_state"].eq("live").astype(int),
    }
    codes = {
        "year": list(axes.years), "venue": list(axes.venues), "topic": list(axes.topics),
        "tier": list(trends.DECIDED_TIERS), "released": [0, 1], "live": [0, 1],
    }  # fmt: skip
    for names in [
        ("year",),
        ("venue", "topic"),
        ("year", "tier"),
        ("venue", "year", "topic"),
        ("year", "live"),
    ]:
        for keep in (1.0, 0.7, 0.05, 0.0):
            mask = rng.random(n) < keep
            frame = pd.DataFrame({name: values[name] for name in names})[mask].dropna()
            expected = np.zeros([len(codes[name]) for name in names], dtype=np.int64)
            for combination, count in frame.value_counts().items():
                expected[tuple(codes[name].index(v) for name, v in zip(names, combination, strict=True))] = (
                    count
                )
            assert np.array_equal(axes.cells(names, mask), expected), (names, keep)
            frozen = mask.copy()
            frozen.setflags(write=False)  # a read-only mask: its counts are kept (`_Counted`)
            for _ in range(2):
                assert np.array_equal(axes.cells(names, frozen), expected), (names, keep)
    assert (
        trends.tier_counts(axes)["papers"].sum() == papers["year"].notna().mul(values["tier"].notna()).sum()
    )


def test_counts_under_a_read_only_mask_are_kept_and_a_writable_mask_is_counted_again() -> None:
    # The Trends page asks for a dozen tables under one mask per run: a read-only mask (the page's
    # `View.array_without`) is counted once per combination; a writable one may change, so never kept.
    papers = pd.DataFrame(
        {"year": [2021, 2021, 2022, 2023] * 5, "venue": ["A", "B"] * 10, "topic": [0, 1, 1, 2, -1] * 4}
    )
    axes = trends.Axes.of(papers)
    frozen = np.arange(len(papers)) % 3 != 0
    frozen.setflags(write=False)
    first = axes.cells(("year", "topic"), frozen)
    assert axes.cells(("year", "topic"), frozen) is first
    assert not first.flags.writeable  # a caller cannot change what the next one reads
    assert axes.cells(("venue",), frozen) is not first
    # The same values in another array are another mask (known by identity, not by content).
    twin = frozen.copy()
    twin.setflags(write=False)
    assert axes.cells(("year", "topic"), twin) is not first
    assert np.array_equal(axes.cells(("year", "topic"), twin), first)
    # A writable mask changed in place gives the new counts.
    open_mask = np.ones(len(papers), dtype=bool)
    assert axes.cells(("year",), open_mask).sum() == len(papers)
    open_mask[:10] = False
    assert axes.cells(("year",), open_mask).sum() == len(papers) - 10
    # Only the last few masks are kept: an old one is counted again, with the same result.
    for i in range(trends._Counted.KEPT_MASKS):
        other = np.arange(len(papers)) % (i + 4) != 0
        other.setflags(write=False)
        axes.cells(("year", "topic"), other)
    again = axes.cells(("year", "topic"), frozen)
    assert again is not first and np.array_equal(again, first)
    assert len(axes._counted._entries) == trends._Counted.KEPT_MASKS

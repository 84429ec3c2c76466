"""Trends within venues against pooled: what the venue mix of each year does to "rising" and "falling".

    python bench/trend_venues.py                       # the synthetic trend test only
    python bench/trend_venues.py /tmp/index-27k        # and a corpus (a prebuilt index, or corpus files)
    python bench/trend_venues.py /tmp/index-27k --show "language model"   # and these topics' years

Prints (1) the synthetic trend test of issue 51: a topic flat within every venue whose pooled share
rises because a venue joins later, and a real rise planted inside one venue, each as the pooled and the
within-venue comparison call it; (2) for a corpus: which venues each year holds, the topics the pooled
share calls rising or falling that the within-venue share does not (and the other way), and per year
the pooled and the within-venue share of those topics, with their n.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the synthetic corpora of the tests

from venue_mix import JOINS_LATER, RISES_INSIDE_A, venue_mix_papers  # noqa: E402

from dashboard.analytics import trends  # noqa: E402


def synthetic_test() -> None:
    """The planted cases: a venue joining later (no trend) and a rise inside one venue (a trend)."""
    print("== synthetic trend test (topic 0; 2020-2021 -> 2022-2023; 300 papers per venue and year)")
    for name, plan, wanted in (
        ("flat in every venue, venue B joins in 2022", JOINS_LATER, "flat"),
        ("rise planted inside venue A, B joins in 2022", RISES_INSIDE_A, "rising"),
    ):
        axes = trends.Axes.of(venue_mix_papers(plan))
        row = trends.topic_changes(axes, (2020, 2021), (2022, 2023)).set_index("topic").loc[0]
        verdict = "ok" if row["change"] == wanted else "WRONG"
        print(
            f"  {name}: pooled {row['pooled_from_share']:.1%} -> {row['pooled_to_share']:.1%} "
            f"(z {row['pooled_z']:+.1f}, {row['pooled_change']}); within venues {row['from_share']:.1%} -> "
            f"{row['to_share']:.1%} (z {row['within_z']:+.1f}, {row['within_change']}); "
            f"reported by default: {row['change']} [{verdict}: should be {wanted}]"
        )


def load(paths: list[str]) -> tuple[pd.DataFrame, dict[int, str]]:
    """The analysed papers and topic labels of an index directory, or of corpus files (fitted here)."""
    from dashboard import index as paper_index

    if len(paths) == 1 and paper_index.is_index(paths[0]):
        analysis = paper_index.open_index(paths[0]).analysis
    else:
        from dashboard.analytics.analysis import analyze
        from dashboard.cli import main as cli

        analysis = analyze(cli.load_inputs(paths).papers)
    labels = {
        int(t): str(label)
        for t, label in zip(analysis.topics["topic"], analysis.topics["label"], strict=True)
    }
    return analysis.papers, labels


def corpus_report(paths: list[str], show: list[str]) -> None:
    """The coverage grid and the topics on which pooled and within-venue comparisons disagree."""
    started = time.perf_counter()
    papers, labels = load(paths)
    print(
        f"\n== {', '.join(paths)}: {len(papers):,} papers, {len(labels)} topics "
        f"({time.perf_counter() - started:.0f} s to open)"
    )
    axes = trends.Axes.of(papers)
    print("\nwhich venues each year holds (papers):")
    print(trends.coverage(axes).to_string())
    years, _ = axes.span()
    before, after = trends.default_periods(years)
    started = time.perf_counter()
    changes = trends.topic_changes(axes, before, after, labels=labels)
    took = time.perf_counter() - started
    span = f"{before[0]}-{before[-1]} -> {after[0]}-{after[-1]}"
    pooled = changes["pooled_change"].value_counts().to_dict()
    within = changes["within_change"].value_counts().to_dict()
    print(f"\n{span}: {len(changes)} topics compared ({took * 1000:.0f} ms both ways)")
    print(f"  pooled:        {pooled}")
    print(f"  within venues: {within}")
    flagged = changes[changes["venue_mix_only"]].sort_values("pooled_z", key=abs, ascending=False)
    called, mixed = changes["pooled_change"] != "flat", changes["venue_mix_only"].astype(bool)
    print(
        f"  the pooled share calls {int(called.sum())} topics rising or falling, "
        f"{int((called & mixed).sum())} of them not so within venues; "
        f"{int((~called & mixed).sum())} topics change within venues only"
    )
    columns = ["topic", "label", "pooled_from_share", "pooled_to_share", "pooled_z", "pooled_change",
               "from_share", "to_share", "within_z", "within_change"]  # fmt: skip
    with pd.option_context("display.width", 200, "display.max_colwidth", 36, "display.max_rows", 100):
        print("\ntopics whose pooled and within-venue calls differ (strongest pooled change first):")
        print(flagged[columns].round(4).to_string(index=False))
        asked = changes[[any(text in label for text in show) for label in changes["label"]]]
        shown = list(dict.fromkeys([*flagged["topic"].head(6), *asked["topic"]]))
        if len(asked):
            print(f"\ntopics asked for (--show {' '.join(show)}):")
            print(asked[columns].round(4).to_string(index=False))
        if shown:
            per_year = trends.topic_shares(axes, "year", labels=labels)
            per_year = per_year[per_year["topic"].isin(shown)]
            table = per_year.pivot_table(
                index=["topic", "label"], columns="year", values=["pooled_share", "share"], aggfunc="first"
            )
            print("\nper year, pooled share and share within venues of the first six (and those asked for):")
            print(table.round(4).to_string())
            n = per_year.drop_duplicates("year").set_index("year")[["group_papers", "compared_papers"]]
            print("\nn per year (all papers; papers of venues held in another year too):")
            print(n.T.to_string())


def main() -> None:
    """Run the synthetic test, then the corpus report for PATH (when given)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="an index directory or corpus files")
    parser.add_argument("--show", nargs="*", default=[], metavar="TEXT", help="topics whose label holds TEXT")
    args = parser.parse_args()
    synthetic_test()
    if args.paths:
        corpus_report(args.paths, args.show)


if __name__ == "__main__":
    main()

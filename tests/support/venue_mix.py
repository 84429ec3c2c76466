"""Corpora whose years hold different venues: a topic's pooled share moves with the venue mix alone.

Counts are exact (no sampling), so a test can say what each share is; 300 papers per venue and year
make a pooled 10% -> 30% a clear rise (`trends.CLEAR_Z`). A plan is, per venue, the years
it holds and per year the share of topic 0 (the topic watched); topic 1 takes the rest of the papers.

    >>> papers = venue_mix_papers({"A": {2020: 0.1, 2021: 0.1}, "B": {2021: 0.5}}, per_cell=10)
    >>> papers.groupby(["venue", "year"])["topic"].apply(lambda t: int((t == 0).sum())).to_dict()
    {('A', 2020): 1, ('A', 2021): 1, ('B', 2021): 5}
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

WORDS = {
    0: ("graph", "node", "edge", "molecule", "message", "passing"),
    1: ("policy", "reward", "agent", "environment", "exploration", "return"),
}

YEARS = (2020, 2021, 2022, 2023)

# Topic 0 is flat within each venue (10% at A, 50% at B); B holds only the later years, so the pooled
# share of topic 0 rises from 10% to 30%.
JOINS_LATER = {"A": dict.fromkeys(YEARS, 0.1), "B": {2022: 0.5, 2023: 0.5}}
# The same venues, B in the earlier years only: the pooled share falls.
LEAVES_EARLY = {"A": dict.fromkeys(YEARS, 0.1), "B": {2020: 0.5, 2021: 0.5}}
# B joins later as above, and inside A topic 0 really grows (10% -> 40%).
RISES_INSIDE_A = {"A": {2020: 0.1, 2021: 0.1, 2022: 0.4, 2023: 0.4}, "B": {2022: 0.5, 2023: 0.5}}
# Both venues every year, topic 0 flat in each: no change either way.
BALANCED_FLAT = {"A": dict.fromkeys(YEARS, 0.1), "B": dict.fromkeys(YEARS, 0.5)}
# One venue whose topic 0 grows.
ONE_VENUE_RISING = {"A": {2020: 0.1, 2021: 0.1, 2022: 0.3, 2023: 0.3}}
# No venue holds papers in both periods.
NO_VENUE_IN_BOTH = {"A": {2020: 0.1, 2021: 0.1}, "B": {2022: 0.5, 2023: 0.5}}


def venue_mix_papers(plan: Mapping[str, Mapping[int, float]], per_cell: int = 300) -> pd.DataFrame:
    """``per_cell`` papers per (venue, year) of ``plan``, ``round(share * per_cell)`` of them in topic 0.

    Columns: id, venue, year, title, abstract, abstract_clean, topic, code_status (the Trends page's);
    an abstract is twelve words drawn from its topic's `WORDS` (seeded), so a topic model finds the two.
    A venue named "" gives papers without a venue.
    """
    rng = np.random.default_rng(0)
    rows = []
    for venue, years in plan.items():
        for year, share in years.items():
            in_topic = round(share * per_cell)
            for i in range(per_cell):
                topic = 0 if i < in_topic else 1
                words = " ".join(rng.choice(WORDS[topic], size=12))
                rows.append(
                    {
                        "id": f"{venue or 'none'}-{year}-{i}",
                        "venue": venue,
                        "year": year,
                        "title": f"paper {i} of {venue or 'no venue'} {year}",
                        "abstract": f"{words} study {i}.",
                        "abstract_clean": f"{words} study {i}.",
                        "topic": topic,
                        "code_status": "released" if i % 3 == 0 else "none",
                    }
                )
    papers = pd.DataFrame(rows)
    papers["year"] = papers["year"].astype("Int64")
    return papers

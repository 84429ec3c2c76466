"""Time the Reviews page's analytics on synthetic scored papers and print seconds per call.

    python bench/reviews.py [N]    # default 100,000 papers, 3-5 reviews each on a 1-10 scale

Each call of `dashboard.analytics.reviews` the page makes is timed once on all N papers (CPU seconds of this
process, `time.process_time`, so other processes on a shared machine count less).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from dashboard.analytics import reviews


def scored_papers(n: int, seed: int = 0) -> pd.DataFrame:
    """N papers with 3-5 scores (1-10) and confidences (1-5), three tiers, 20 topics, two areas each."""
    rng = np.random.default_rng(seed)
    ratings = [list(rng.integers(1, 11, rng.integers(3, 6)).astype(float)) for _ in range(n)]
    papers = pd.DataFrame(
        {
            "id": [f"p{i}" for i in range(n)],
            "title": ["t"] * n,
            "decision": ["Poster"] * n,
            "decision_tier": rng.choice(["poster", "reject", "oral"], n),
            "venue": ["V"] * n,
            "year": [2024] * n,
            "ratings": ratings,
            "confidences": [list(rng.integers(1, 6, len(r)).astype(float)) for r in ratings],
            "rating_scale": [""] * n,
            "areas": [["A", "B"]] * n,
            "topic": rng.integers(0, 20, n),
        }
    )
    papers["n_reviews"] = [len(r) for r in ratings]
    papers["rating_mean"] = [float(np.mean(r)) for r in ratings]
    papers["rating_sd"] = [float(np.std(r)) for r in ratings]
    return papers


def main() -> None:
    """Print each call's CPU seconds and the total."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    papers = scored_papers(n)
    mask = np.ones(n, dtype=bool)
    calls: dict[str, Callable[[], object]] = {
        "rated_papers": lambda: reviews.rated_papers(papers, mask),
        "review_pairs": lambda: reviews.review_pairs(papers, mask),
        "score_bins": lambda: reviews.score_bins(papers, mask),
        "acceptance_cut": lambda: reviews.acceptance_cut(papers, mask),
        "borderline": lambda: reviews.borderline(papers, mask),
        "split_decisions": lambda: reviews.split_decisions(papers, mask),
        "group_scores topic": lambda: reviews.group_scores(papers, "topic", mask),
        "group_scores area": lambda: reviews.group_scores(papers, "area", mask),
        "mixed_scales": lambda: reviews.mixed_scales(papers, mask),
        "score_bounds": lambda: reviews.score_bounds(papers),
    }
    total = 0.0
    print(f"{n:,} papers")
    for name, call in calls.items():
        start = time.process_time()
        call()
        took = time.process_time() - start
        total += took
        print(f"  {name:<20} {took:6.2f} s")
    print(f"  {'total':<20} {total:6.2f} s")


if __name__ == "__main__":
    main()

"""A cut of the topic tree against a refit: agreement with OpenReview's primary_area on ICLR 2026 1k.

For several k, prints the AMI against ``primary_area`` of (a) the default model's tree cut at k
(`dashboard.analytics.analysis.cut`: the auto-fitted topics merged by Ward on their centroids, no refit)
and (b) a
refit at k (`analysis.analyze(n_topics=k)`), their difference, the AMI between the two partitions, and
the seconds each took. Outliers count as one more cluster (topic -1), as in bench/topic_quality.py.

    python bench/topic_tree.py                 # k = 5, 10, 15, 21, and the fitted number
    python bench/topic_tree.py --k 8 12        # other k
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import adjusted_mutual_info_score

from dashboard.analytics import analysis
from dashboard.corpus import load

REPO = Path(__file__).resolve().parents[1]
ICLR = REPO.parent / "shared" / "corpora" / "iclr2026-openreview-1k" / "papers.jsonl"


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--k", type=int, nargs="*", default=[5, 10, 15, 21])
    parser.add_argument("--corpus", type=Path, default=ICLR)
    args = parser.parse_args()
    papers = load([args.corpus]).papers
    truth = papers["primary_area"].fillna("").astype(str).to_numpy()
    started = time.perf_counter()
    base = analysis.analyze(papers)
    fit_seconds = time.perf_counter() - started
    started = time.perf_counter()
    tree = analysis.topic_tree(base)
    tree_seconds = time.perf_counter() - started
    n = tree.n_leaves
    base_ami = adjusted_mutual_info_score(truth, base.papers["topic"])
    print(f"{args.corpus.name}: {len(papers):,} papers, {len(set(truth))} primary areas")
    print(
        f"auto fit: {n} topics, AMI {base_ami:.3f}, {fit_seconds:.1f} s; tree built in {tree_seconds:.3f} s"
    )
    print(
        f"{'k':>4} {'cut AMI':>8} {'refit AMI':>9} {'cut-refit':>9} {'AMI(cut,refit)':>14}"
        f" {'cut s':>7} {'refit s':>8}"
    )
    differences = []
    for k in [k for k in args.k if 2 <= k < n]:
        started = time.perf_counter()
        cut = analysis.cut(base, tree, k)
        cut_seconds = time.perf_counter() - started
        started = time.perf_counter()
        refit = analysis.analyze(papers, n_topics=k)
        refit_seconds = time.perf_counter() - started
        cut_ami = adjusted_mutual_info_score(truth, cut.papers["topic"])
        refit_ami = adjusted_mutual_info_score(truth, refit.papers["topic"])
        between = adjusted_mutual_info_score(cut.papers["topic"], refit.papers["topic"])
        differences.append(cut_ami - refit_ami)
        print(
            f"{k:>4} {cut_ami:>8.3f} {refit_ami:>9.3f} {cut_ami - refit_ami:>+9.3f} {between:>14.3f} "
            f"{cut_seconds:>7.3f} {refit_seconds:>8.1f}"
        )
    if differences:
        worst = min(differences)
        print(
            f"cut - refit AMI: mean {np.mean(differences):+.3f}, worst {worst:+.3f} "
            f"({'within' if worst >= -0.01 else 'NOT within'} 0.01 of the refit at every k)"
        )


if __name__ == "__main__":
    main()

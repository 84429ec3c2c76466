"""Precision of the Overview's method-name rows, scored on hand-labelled (name, paper) pairs.

    python bench/method_precision.py                  # the 27k corpus (../shared/corpora)
    python bench/method_precision.py --show 100       # also print the top rows' pairs not yet labelled

Recomputes the rows with the code the Overview uses (`index.method_meanings`, `tables.list_items`,
`tables.method_names_in_view`) and reads `tests/fixtures/method_pairs.csv`: each row there says
whether a paper's abstract names the same method as the row's meaning (label 1) or another one (0).
A row of two or more papers claims each of its papers names its meaning; precision is the share of
the labelled pairs the rows claim today whose label is 1. A labelled pair the rows no longer claim
counts as not claimed. The top rows' pairs (up to four papers a row, a hundred pairs) that carry no
label yet are counted and, with ``--show``, printed with the sentence around the name, to be read
and labelled.
"""

from __future__ import annotations

import argparse
import csv
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dashboard import corpus
from dashboard import index as paper_index
from dashboard.text import extract
from dashboard.ui import tables

REPO = Path(__file__).resolve().parents[1]
DEFAULT = [REPO.parent / "shared" / "corpora" / "multiconf-2021-2024"]
LABELS = REPO / "tests" / "fixtures" / "method_pairs.csv"
PAIRS = 100  # pairs read from the top rows
PER_ROW = 4  # papers read per row


def rows_of(papers: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, list[int]]]:
    """The Overview's table of every paper in view, and each shown name's papers (rows of 2 or more)."""
    started = time.perf_counter()
    meanings = paper_index.method_meanings(papers)
    seconds = time.perf_counter() - started
    items = tables.list_items(pd.Series(meanings, index=papers.index, dtype=object), once_per_row=False)
    view = tables.method_names_in_view(items, np.ones(len(papers), dtype=bool), papers["title"])
    members: dict[str, list[int]] = {}
    for position, names in enumerate(meanings):
        for meaning in names:
            members.setdefault(meaning, []).append(position)
    shared = {extract.meaning_label(m): p for m, p in members.items() if len(p) >= 2}
    print(f"{len(papers):,} papers; meanings in {seconds:.2f} s; {len(shared):,} rows of 2 or more papers")
    return view, shared


def sentence(text: str, name: str) -> str:
    """The sentence of ``text`` around the first use of ``name`` (the bare acronym of a row)."""
    bare = name.split(" (", 1)[0]
    match = re.search(rf"(?<![\w-]){re.escape(bare)}(?![\w])", text) or re.search(re.escape(bare), text)
    if not match:
        return text[:300]
    start = max(text.rfind(". ", 0, match.start()) + 2, match.start() - 300, 0)
    end = text.find(". ", match.end())
    return text[start : (end if end >= 0 else len(text))][:500]


def main() -> None:
    """Recompute the rows, score the labelled pairs, list the top pairs still to label."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--show", type=int, default=0, help="print this many unlabelled top pairs")
    args = parser.parse_args()
    papers = corpus.load(args.paths).papers
    view, shared = rows_of(papers)
    ids = papers["id"].astype(str).to_numpy()
    claimed = {(name, ids[p]) for name, positions in shared.items() for p in positions}
    with open(args.labels, encoding="utf-8", newline="") as handle:
        labelled = {(r["row_meaning"], r["paper_id"]): r for r in csv.DictReader(handle)}
    scored = [labelled[pair] for pair in labelled if pair in claimed]
    right = sum(r["label"] == "1" for r in scored)
    print(f"labelled pairs: {len(labelled)}; claimed by today's rows: {len(scored)}")
    if scored:
        print(f"precision: {right}/{len(scored)} = {right / len(scored):.1%}")
    top: list[tuple[str, int]] = []
    for name in view["name"]:
        if len(top) >= PAIRS:
            break
        top.extend((name, p) for p in shared.get(name, [])[:PER_ROW])
    top = top[:PAIRS]
    missing = [(name, p) for name, p in top if (name, ids[p]) not in labelled]
    print(f"top {len(top)} pairs: {len(top) - len(missing)} labelled, {len(missing)} not yet")
    top_labels = [labelled[(name, ids[p])]["label"] for name, p in top if (name, ids[p]) in labelled]
    if top_labels:
        print(f"precision on the top pairs: {top_labels.count('1')}/{len(top_labels)}")
    print("top rows:", "; ".join(f"{n} ({len(shared.get(n, []))})" for n in view["name"][:10]))
    texts = papers["abstract_clean"].to_numpy()
    for name, p in missing[: args.show]:
        print(f"\n{name}\t{ids[p]}\n    {sentence(str(texts[p]), name)}")


if __name__ == "__main__":
    main()

"""Which words nearly every abstract uses, whatever its subject: candidates for the stop list.

    python bench/boilerplate.py /work/shared/corpora/*   # or any corpus files or folders

For each corpus, the share of its papers whose abstract has each word (after the stop list in
`dashboard.text.tokens`), and then the words among the most common in *every* corpus: a word that tops
the list in ICLR 2026, ICML 2019-2023 and ICCV 2019 alike says nothing about any one paper's
subject ("code" from "code is available"). The stop list's boilerplate was extended from this
table (see ``tokens.BOILERPLATE``); subject words that happen to be common everywhere (diffusion,
language) are a reader's call, not the script's.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from dashboard import corpus
from dashboard.text import tokens

TOP = 60


def document_shares(path: Path) -> tuple[int, dict[str, float]]:
    """(papers, word -> share of papers using it) for one corpus."""
    papers = corpus.load([path], derive=False).papers
    counts: Counter[str] = Counter()
    for abstract in papers["abstract"].astype("str"):
        counts.update(set(tokens.ngrams(abstract, (1, 1), stop_words=True)))
    return len(papers), {word: n / max(1, len(papers)) for word, n in counts.items()}


def main(paths: list[str]) -> None:
    tops: list[set[str]] = []
    shares: dict[str, list[float]] = {}
    for path in paths:
        n, share = document_shares(Path(path))
        top = sorted(share, key=share.__getitem__, reverse=True)[:TOP]
        tops.append(set(top))
        for word in top:
            shares.setdefault(word, []).append(share[word])
        print(f"\n{Path(path).name}: {n:,} papers; most used words (share of abstracts)")
        print(", ".join(f"{w} {share[w]:.0%}" for w in top[:40]))
    everywhere = set.intersection(*tops) if tops else set()
    print(f"\nIn the top {TOP} of every corpus:")
    for word in sorted(everywhere, key=lambda w: -min(shares[w])):
        print(f"  {word:20s} " + " ".join(f"{s:.0%}" for s in shares[word]))


if __name__ == "__main__":
    main(sys.argv[1:])

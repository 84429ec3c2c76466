"""Which method names lead the Overview on a corpus: the top names as counted per meaning.

    python bench/method_names.py                      # the 27k corpus (../shared/corpora)
    python bench/method_names.py PATH... --top 30

Prints the top names the way the Overview counts them (`extract.name_meanings`: a name together with
the long form its abstract gives, so "MAD (Masking Adversarial Damage)" and "MAD (Margin-Aware
Distillation)" are two rows), and beside it the old count by spelling alone, with how many distinct
long forms each of those spellings had: a spelling with several is unrelated papers sharing an
acronym. Also the time the meanings take, once per corpus.
"""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

from dashboard import corpus
from dashboard.text import extract

REPO = Path(__file__).resolve().parents[1]
DEFAULT = [REPO.parent / "shared" / "corpora" / "multiconf-2021-2024"]


def main() -> None:
    """Load the corpus, count method names by spelling and by meaning, print both top lists."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    papers = corpus.load(args.paths).papers
    by_spelling = collections.Counter(n for names in papers["method_names"] for n in set(names))
    started = time.perf_counter()
    meanings = extract.name_meanings(papers["abstract_clean"], papers["method_names"])
    seconds = time.perf_counter() - started
    by_meaning = collections.Counter(extract.meaning_label(m) for names in meanings for m in set(names))
    long_forms: dict[str, set[str]] = collections.defaultdict(set)
    for names in meanings:
        for meaning in names:
            spelling, _, long_form = meaning.partition(" (")
            long_forms[spelling].add(long_form)
    print(f"{len(papers):,} papers; meanings of {sum(map(len, meanings)):,} names in {seconds:.2f} s")
    print(f"\n{'by spelling (before)':<34} {'long forms':>10}    by meaning (now)")
    old = by_spelling.most_common(args.top)
    new = by_meaning.most_common(args.top)
    for (name, count), (meaning, n) in zip(old, new, strict=False):
        print(f"{name[:26]:<26} {count:>6} {len(long_forms[name]):>10}    {meaning[:60]:<60} {n:>4}")
    ambiguous = sum(1 for name, _ in old if len(long_forms[name]) > 1)
    print(f"\n{ambiguous} of the top {len(old)} spellings stand for more than one meaning")


if __name__ == "__main__":
    main()

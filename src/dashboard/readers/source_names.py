"""Readable names for a corpus's source files, for people: never a hash or a server's folder.

A file is named by what its papers say of it: the venue and year they all share (``ICML 2026``, read
from a header line such as ``ICML 2026 Papers`` or from the records), else its file name without
folders and compression suffixes, unless that name is only a hash or a number (``000_f074a6e2.txt``).
Files that would share a name are told apart by their order: ``ICML 2026 · part 2 of 3``. The
``source`` column keeps the file name, so filters and links stay stable; only what is shown changes.
"""

from __future__ import annotations

import re
from collections import Counter

import pandas as pd

# A stem that says nothing to a reader: digits, hex digests, separators (``000_f074a6e2e82fdcc8``).
_MEANINGLESS = re.compile(r"[0-9a-f_\-.]*[0-9][0-9a-f_\-.]*", re.IGNORECASE)
_SUFFIXES = re.compile(r"(\.[a-z0-9]{1,8})?(\.(gz|bz2|xz|zip))?$", re.IGNORECASE)


def _stem(source: str) -> str:
    name = source.replace("\\", "/").rsplit("/", 1)[-1]
    return _SUFFIXES.sub("", name) or name


def _shared(values: pd.Series) -> str:
    known = {str(v).strip() for v in values.dropna() if str(v).strip()}
    return known.pop() if len(known) == 1 else ""


def source_names(papers: pd.DataFrame) -> dict[str, str]:
    """``{source file: readable name}`` for every source of ``papers``, in the order they come.

    >>> frame = pd.DataFrame({"source": ["000_f0a1.txt", "001_b2c3.txt"], "venue": ["ICML"] * 2,
    ...                       "year": [2026, 2026]})
    >>> source_names(frame)
    {'000_f0a1.txt': 'ICML 2026 · part 1 of 2', '001_b2c3.txt': 'ICML 2026 · part 2 of 2'}
    """
    if "source" not in papers.columns or papers.empty:
        return {}
    source_of = papers["source"].astype(str)
    sources = list(dict.fromkeys(source_of))
    base: dict[str, str] = {}
    for source in sources:  # a corpus has a few files: a mask each costs nothing
        group = papers[(source_of == source).to_numpy()]
        venue = _shared(group["venue"]) if "venue" in group.columns else ""
        year = _shared(group["year"]) if "year" in group.columns else ""
        said = " ".join(part for part in (venue, year) if part)
        stem = _stem(source)
        base[source] = said or ("file" if _MEANINGLESS.fullmatch(stem) else stem)
    totals = Counter(base.values())
    seen: Counter[str] = Counter()
    names = {}
    for source in sources:
        name = base[source]
        if totals[name] > 1:
            seen[name] += 1
            name = f"{name} · part {seen[name]} of {totals[name]}"
        names[source] = name
    return names

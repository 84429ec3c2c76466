"""Saved searches and the corpus versions a library has seen: what "new since last time" compares with.

Both live in the library file (`dashboard.library.store`, schema 3) and survive restarts:

    >>> from dashboard.filters import Filters
    >>> lib = Library.open(":memory:")
    >>> save_search(lib, "graphs", Filters(q="graph neural", code=("released",)))
    'graphs'
    >>> saved_searches(lib)[0].filters == Filters(q="graph neural", code=("released",))
    True

**A saved search** is a name and a `Filters` value, kept as the Filters' URL query string
(``urlencode(Filters.to_query(), doseq=True)``): what a page's URL would hold, so it reads back with
`Filters.from_query` exactly, and a filter added later to the app does not change the stored format.

**A seen version** is a corpus (or index) the user marked as seen: its digest, a label, the date, how
many papers it had, and the papers it was the *first* to show (a delta against every version marked
before it). The union of the deltas is every paper ever seen, so the library grows with the number of
distinct papers, not with the number of versions opened. A paper is kept twice over:

- its **id**, in one zlib-compressed blob of the sorted, newline-joined ids;
- its **normalised title** (`store.normalise_text`, the library's own matching key), as an 8-byte
  BLAKE2b hash in a sorted ``uint64`` array (an 80-character title becomes 8 bytes; with a million
  titles the chance that a new title hashes onto a seen one is about 1 in 10^13).

**The same paper** across versions: its normalised title was seen, or its id was seen and the id is not
positional. An id a reader made from a file's name and the paper's position (``abstracts-12``, see
`positional`) names a place, not a paper: a paper inserted earlier in the file shifts every such id,
so only the title counts for it (as `store.CorpusLookup.find` checks an id against its title). Two
different papers with the same normalised title count as one.

**Recording is explicit** (the choice the issue leaves open): a version is marked seen by the Library
page's "Mark these as seen" button or ``paper-dashboard digest --mark-seen``, never by merely opening
a corpus. Opening is not reading: an automatic mark would hide a new dump's papers the moment any page
showed the corpus, before the user looked at the "New since" view, and would write to the library on
every visit of a public server. Marking costs one write of the delta (a few hundred KB for 27k papers
the first time, only the new papers' ids and hashes after that).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode

import numpy as np
import pandas as pd

from dashboard.filters import Filters
from dashboard.library.store import Library, LibraryError, clean_name, normalise_text

MAX_QUERY_CHARS = 20_000  # a stored query is a URL's; longer text is no saved search
_NO_TITLE = np.uint64(0)  # the hash of "no title": never stored, never matched


# --------------------------------------------------------------------- saved searches


@dataclass(frozen=True)
class SavedSearch:
    """One saved search: its name, its filters, when it was saved."""

    name: str
    filters: Filters
    created_at: str

    @property
    def query(self) -> str:
        """The filters as a URL query string (what is stored)."""
        return filters_to_query(self.filters)


def filters_to_query(filters: Filters) -> str:
    """``Filters`` as a URL query string; `filters_from_query` reads it back equal.

    >>> filters_to_query(Filters(q="graph", year=(2023, 2024)))
    'q=graph&year=2023&year=2024'
    """
    return urlencode(filters.to_query(), doseq=True)


def filters_from_query(query: str) -> tuple[Filters, list[str]]:
    """A URL query string as ``Filters`` and the notices of what was dropped (bad values never raise)."""
    return Filters.from_query(parse_qs(query, keep_blank_values=False))


def save_search(lib: Library, name: str, filters: Filters) -> str:
    """Keep ``filters`` under ``name`` (replacing a search of that name); the name as kept."""
    name = clean_name(name, "search name")
    query = filters_to_query(filters)
    if len(query) > MAX_QUERY_CHARS:
        raise LibraryError(f"a saved search holds at most {MAX_QUERY_CHARS:,} characters of URL query")
    with lib._write() as db:
        db.execute(
            "INSERT INTO saved_searches (name, query, created_at) VALUES (?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET query = excluded.query",
            (name, query, _now()),
        )
    return name


def saved_searches(lib: Library) -> list[SavedSearch]:
    """Every saved search, by name (a stored query the app no longer fully reads keeps what it can)."""
    rows = lib._read("SELECT name, query, created_at FROM saved_searches ORDER BY name COLLATE NOCASE")
    return [SavedSearch(name, filters_from_query(query)[0], created) for name, query, created in rows]


def delete_search(lib: Library, name: str) -> bool:
    """Forget a saved search; False when there was none of that name."""
    with lib._write() as db:
        return db.execute("DELETE FROM saved_searches WHERE name = ?", (" ".join(name.split()),)).rowcount > 0


# --------------------------------------------------------------------- what a paper is, across versions


def title_hashes(titles: Sequence[object] | pd.Series) -> np.ndarray:
    """The 8-byte hash of each normalised title (0 for a title with no letters or digits).

    >>> a, b = title_hashes(["Attention is all you need", "ATTENTION is ALL you-need!"])
    >>> bool(a == b)
    True
    """
    out = np.empty(len(titles), dtype=np.uint64)
    for n, title in enumerate(titles):
        key = normalise_text(title)
        out[n] = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little") if key else 0
    return out


_TAIL_NUMBER = re.compile(r"-(\d+)\Z")


def positional(papers: pd.DataFrame) -> np.ndarray:
    """True where a paper's id was made from its place in a file (``<file>-<position>``, the readers'
    fallback when a record has no id): such an id names a place, not a paper.

    >>> positional(pd.DataFrame({"id": ["notes-3", "2401.00001", "x-9"], "position": [3, 4, 5]})).tolist()
    [True, False, False]
    """
    if "position" not in papers.columns:
        return np.zeros(len(papers), dtype=bool)
    ids = papers["id"].astype(str).tolist()
    positions = papers["position"].tolist()
    flags = np.zeros(len(ids), dtype=bool)
    for n, (paper_id, position) in enumerate(zip(ids, positions, strict=True)):
        tail = _TAIL_NUMBER.search(paper_id)
        flags[n] = tail is not None and str(position) == tail.group(1)
    return flags


# --------------------------------------------------------------------- seen versions


@dataclass(frozen=True)
class SeenVersion:
    """A corpus version marked seen: digest, label, when, its papers and how many were new then."""

    digest: str
    label: str
    opened_at: str
    papers: int
    new: int
    stored_bytes: int

    @property
    def date(self) -> str:
        """The day it was marked seen, ``YYYY-MM-DD``."""
        return self.opened_at[:10]


@dataclass(frozen=True)
class Seen:
    """Every paper of some seen versions: ids (a set) and title hashes (sorted); ``last`` the newest
    of those versions (None when no version was seen)."""

    ids: frozenset[str]
    titles: np.ndarray
    last: SeenVersion | None

    def mask(self, papers: pd.DataFrame, hashes: np.ndarray | None = None) -> np.ndarray:
        """True for each paper already seen: same normalised title, or same id (not a positional one).

        ``hashes`` is `title_hashes` of the papers' titles when the caller already has it.
        """
        if hashes is None:
            hashes = title_hashes(papers["title"].tolist())
        by_title = (hashes != _NO_TITLE) & np.isin(hashes, self.titles)
        by_id = papers["id"].astype(str).isin(self.ids).to_numpy() & ~positional(papers)
        return np.asarray(by_title | by_id, dtype=bool)


def _pack_ids(ids: Sequence[str]) -> bytes:
    return zlib.compress("\n".join(sorted(ids)).encode("utf-8"), 6)


def _unpack_ids(blob: bytes) -> list[str]:
    text = zlib.decompress(blob).decode("utf-8")
    return text.split("\n") if text else []


def _unpack_titles(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<u8").astype(np.uint64)


def versions(lib: Library) -> list[SeenVersion]:
    """Every version marked seen, oldest first."""
    rows = lib._read(
        "SELECT digest, label, opened_at, papers, length(new_ids) + length(new_titles), new_titles "
        "FROM seen_versions ORDER BY opened_at, id"
    )
    return [
        SeenVersion(digest, label, opened_at, int(papers), len(titles) // 8, int(size))
        for digest, label, opened_at, papers, size, titles in rows
    ]


def seen(lib: Library, before: dt.date | None = None) -> Seen:
    """The papers of every version marked seen (only those marked on or before ``before`` when given)."""
    rows = lib._read(
        "SELECT digest, label, opened_at, papers, new_ids, new_titles FROM seen_versions "
        "ORDER BY opened_at, id"
    )
    if before is not None:
        rows = [row for row in rows if row[2][:10] <= before.isoformat()]
    ids: set[str] = set()
    titles = [np.zeros(0, dtype=np.uint64)]
    for _, _, _, _, new_ids, new_titles in rows:
        ids.update(_unpack_ids(new_ids))
        titles.append(_unpack_titles(new_titles))
    last = None
    if rows:
        digest, label, opened_at, papers, new_ids, new_titles = rows[-1]
        last = SeenVersion(
            digest, label, opened_at, int(papers), len(new_titles) // 8, len(new_ids) + len(new_titles)
        )
    return Seen(frozenset(ids), np.unique(np.concatenate(titles)), last)


def is_seen(lib: Library, digest: str) -> bool:
    """True when the version with this digest was marked seen."""
    return bool(lib._read("SELECT 1 FROM seen_versions WHERE digest = ?", (digest,)))


def mark_seen(lib: Library, digest: str, papers: pd.DataFrame, label: str = "") -> SeenVersion:
    """Mark a corpus version seen: keep the ids and title hashes of its papers no earlier version
    showed. Marking a version again changes nothing (its first date stays). Returns the version."""
    hashes = title_hashes(papers["title"].tolist())
    with lib._write() as db:  # one transaction: two marks at once cannot both count a paper as new
        row = db.execute(
            "SELECT digest, label, opened_at, papers, length(new_titles) / 8, "
            "length(new_ids) + length(new_titles) FROM seen_versions WHERE digest = ?",
            (digest,),
        ).fetchone()
        if row is not None:
            return SeenVersion(row[0], row[1], row[2], int(row[3]), int(row[4]), int(row[5]))
        ids: set[str] = set()
        old_titles = [np.zeros(0, dtype=np.uint64)]
        for new_ids, new_titles in db.execute("SELECT new_ids, new_titles FROM seen_versions"):
            ids.update(_unpack_ids(new_ids))
            old_titles.append(_unpack_titles(new_titles))
        known_titles = np.concatenate(old_titles)
        paper_ids = papers["id"].astype(str)
        fresh_ids = sorted(set(paper_ids.tolist()) - ids)
        candidates = np.unique(hashes[hashes != _NO_TITLE])
        fresh_titles = candidates[~np.isin(candidates, known_titles)]
        id_blob, title_blob = _pack_ids(fresh_ids), fresh_titles.astype("<u8").tobytes()
        when = _now()
        label = " ".join(str(label).split())[:200]
        db.execute(
            "INSERT INTO seen_versions (digest, label, opened_at, papers, new_ids, new_titles) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (digest, label, when, len(papers), id_blob, title_blob),
        )
    return SeenVersion(digest, label, when, len(papers), len(fresh_titles), len(id_blob) + len(title_blob))


def forget_versions(lib: Library) -> int:
    """Forget every seen version (the next corpus opened starts afresh); how many were forgotten."""
    with lib._write() as db:
        return db.execute("DELETE FROM seen_versions").rowcount


def parse_date(text: str) -> dt.date:
    """``YYYY-MM-DD`` as a date; ValueError naming the text otherwise."""
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"expected a date as YYYY-MM-DD, got {text!r}") from None


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")

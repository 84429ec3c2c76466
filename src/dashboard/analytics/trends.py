"""Trends: how topics, terms, code release and decisions move across years and venues.

Everything is counted from `Axes`, the papers' year, venue and topic (and code status, repository state,
decision tier, areas) as integer codes made once per corpus; a filter change is then a few `np.bincount`
calls over the filter's mask, fast at a million papers.

    >>> papers = pd.DataFrame({"year": [2021, 2021, 2022, 2022], "venue": ["A", "A", "A", "B"],
    ...                        "topic": [0, 1, 1, 1], "code_status": ["none"] * 4})
    >>> table = topic_shares(Axes.of(papers), "year", method="pooled")
    >>> table[["group", "topic", "papers", "share"]].values.tolist()
    [['2021', 0, 1, 0.5], ['2021', 1, 1, 0.5], ['2022', 0, 0, 0.0], ['2022', 1, 2, 1.0]]

Choices the issue leaves open, made here:

* A share is papers of a topic (or with released code, or accepted) over the papers of the group.
  Outliers are a topic of their own (``-1``), so the shares of a group sum to 1.
* Rising and falling terms and topics compare two periods, each a set of years: by default the first
  and the last half of the span (an odd middle year is in neither); the page and the CLI can name two
  years. Terms are scored on their occurrences with `terms.log_odds_z` (the Terms page's weighted
  log-odds with an informative prior: the two periods' pooled term shares, worth 1,000 occurrences), so
  a rare word cannot top the list by chance; topics the same way on their paper counts. Shares shown are
  the share of a period's papers that use the term (or are in the topic).
* A topic's terms in one year are BERTopic's topics-over-time representation with one global model: the
  c-TF-IDF of the topic's papers in that year, with the idf of the whole corpus's topics, averaged with
  the topic's global c-TF-IDF ("global tuning"); no refitting per year.
* Acceptance share: accepted tiers (oral, spotlight, poster, accept) over papers with a known decision
  (those plus workshop, reject and withdrawn); papers whose tier is ``unknown`` are left out of the
  denominator.
* Years compared like with like (``method="venues"``, the default of the page and the CLI): a year's
  pooled share mixes the venues it holds, so a venue that joins later (with its own topic mix) moves
  every topic's share though nothing changed inside any venue. The shares within each venue are
  standardised instead (`within_venue_shares`): per topic a venue effect and a year (or period) effect
  are fitted to the venue × year counts (a Poisson main-effects model, i.e. iterative proportional
  fitting of both margins), and a year's share is its effect on the corpus's fixed venue mix, the
  shares of a year scaled to sum to 1. Only venues holding papers in more than one of the years
  compared carry the comparison; with one venue (or no venue column) it equals the pooled share.
  Papers without a venue are a venue of their own. Years that share no venue with the others (no
  chain of venues links them) get no share. ``method="pooled"`` keeps the plain share.
* A topic "rose" or "fell" when the two-proportion z of its two shares (each over its n) is beyond
  ±`CLEAR_Z`; a pooled rise or fall that the within-venue comparison does not repeat comes from which
  venues the periods hold (``venue_mix_only``).
* A share over fewer than `MIN_PAPERS` papers is not drawn (the charts say so in the hover or a note).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TypeGuard

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dashboard.analytics.terms import DEFAULT_PRIOR_STRENGTH, Subset, TermCounts, log_odds_z
from dashboard.filters import Filters
from dashboard.schema import OUTLIER_LABEL, OUTLIER_TOPIC

GROUPINGS: tuple[str, ...] = ("year", "venue", "venue,year")
ACCEPTED_TIERS: tuple[str, ...] = ("oral", "spotlight", "poster", "accept")
DECIDED_TIERS: tuple[str, ...] = (*ACCEPTED_TIERS, "workshop", "reject", "withdrawn")
TOPIC_TERMS = 5  # terms in a topic's year-specific representation (the hover of the topic lines)
TERMS_SAMPLE = 200_000  # papers counted at most for those terms (a seeded sample above that)
# Cells of the joint table of every code (`Axes._joint`), 8 MB a mask: 5 years, 20 venues, 50 topics, the
# code and repository flags and the 7 tiers (each with a "missing" code) are 463,000; a corpus with more
# combinations counts table by table.
JOINT_CELLS = 1_000_000
METHODS: dict[str, str] = {
    "venues": "within venues (standardised to a fixed venue mix)",
    "pooled": "pooled (all the year's papers together)",
}
DEFAULT_METHOD = "venues"
MIN_PAPERS = 5  # a share or rate over fewer papers is not drawn: one paper moves it by 20 points or more
# A topic rose or fell "clearly" when the two-proportion z of its shares (over their n) is beyond this:
# with some 50 topics compared at once, 3 (not 2) keeps chance from calling one of them rising in most
# runs. The ranking score (weighted log-odds, prior worth 1,000 papers) is not used for this: its prior
# outweighs a small corpus, where a topic going from 18% to 61% of 120 papers scored under 3.
CLEAR_Z = 3.0


def _codes(values: pd.Series, *, sort: bool = True) -> tuple[np.ndarray, pd.Index]:
    """Per row the position of its value in the sorted distinct values (-1: missing or blank)."""
    if values.dtype == object or pd.api.types.is_string_dtype(values):
        values = values.astype("string").str.strip().replace("", pd.NA)
    codes, uniques = pd.factorize(values, sort=sort)
    return codes.astype(np.int64), pd.Index(uniques)


def _marginal(joint: np.ndarray, axes: Sequence[str], names: Sequence[str]) -> np.ndarray:
    """The table of ``names`` (in that order) from ``joint``, whose axes are ``axes``, each with a first
    "missing" code: the other axes summed, each named axis without its missing code (a paper missing a
    named code is not counted).

        >>> joint = np.arange(12).reshape(3, 4)  # a: missing, 0, 1; b: missing, 0, 1, 2
        >>> _marginal(joint, ("a", "b"), ("b",)).tolist()  # every a, missing too; b without its first
        [15, 18, 21]
        >>> _marginal(joint, ("a", "b"), ("b", "a")).tolist()
        [[5, 9], [6, 10], [7, 11]]
    """
    if any(name not in axes for name in names) or len(set(names)) != len(names):
        raise ValueError(f"{list(names)} are not distinct axes of {list(axes)}")
    others = tuple(i for i, axis in enumerate(axes) if axis not in names)
    kept = [axis for axis in axes if axis in names]
    summed = joint[tuple(slice(None) if i in others else slice(1, None) for i in range(len(axes)))]
    table = summed.sum(axis=others) if others else summed
    return np.ascontiguousarray(np.transpose(table, [kept.index(name) for name in names]), dtype=np.int64)


class _Counted:
    """`Axes.cells` tables kept per (names, mask) for read-only masks, the last `KEPT_MASKS` masks.

    A mask is known by identity (``is``), and its entry holds the array with its tables. A writable
    mask or a Series is never kept (it could change). Shared by every session of a corpus, hence the
    lock.
    """

    KEPT_MASKS = 4

    def __init__(self) -> None:
        self._entries: list[tuple[np.ndarray, dict[tuple[str, ...], np.ndarray]]] = []  # newest last
        self._lock = threading.Lock()

    def _tables(self, mask: object, *, add: bool) -> dict[tuple[str, ...], np.ndarray] | None:
        """The tables kept for ``mask`` (a new entry when ``add``); None for a mask never kept."""
        if not self.keeps(mask):
            return None
        for kept, tables in self._entries:
            if kept is mask:
                return tables
        if not add:
            return None
        self._entries = [*self._entries[-(self.KEPT_MASKS - 1) :], (mask, {})]
        return self._entries[-1][1]

    @staticmethod
    def keeps(mask: object) -> TypeGuard[np.ndarray]:
        """Whether tables under ``mask`` are kept: a read-only boolean array."""
        return isinstance(mask, np.ndarray) and mask.dtype == bool and not mask.flags.writeable

    def get(self, names: tuple[str, ...], mask: object) -> np.ndarray | None:
        with self._lock:
            tables = self._tables(mask, add=False)
            return None if tables is None else tables.get(names)

    def put(self, names: tuple[str, ...], mask: object, table: np.ndarray) -> None:
        with self._lock:
            tables = self._tables(mask, add=True)
            if tables is not None:
                tables[names] = table


@dataclass(frozen=True)
class Axes:
    """The papers' year, venue, topic and outcomes as integer codes: counting a subset is a bincount.

    ``year``/``venue``/``topic`` hold per paper the position in ``years``/``venues``/``topics`` (-1:
    missing). ``released`` and ``live`` (None until some repository was checked: `repo_state`) are
    per-paper flags; ``tier`` is the decision tier (None without the ``decision_tier`` column);
    ``area_rows`` and ``area_codes`` list each (paper, area) pair.
    """

    year: np.ndarray
    years: np.ndarray
    venue: np.ndarray
    venues: np.ndarray
    topic: np.ndarray
    topics: np.ndarray
    released: np.ndarray
    live: np.ndarray | None = None
    tier: np.ndarray | None = None
    area_rows: np.ndarray | None = None
    area_codes: np.ndarray | None = None
    areas: np.ndarray | None = None

    @classmethod
    def of(cls, papers: pd.DataFrame) -> Axes:
        """The codes of a paper table (analysed or not: without ``topic`` every paper is topic -1)."""
        n = len(papers)
        if "year" in papers.columns:
            year, years = _codes(pd.to_numeric(papers["year"], errors="coerce").astype("Int64"))
        else:
            year, years = np.full(n, -1, dtype=np.int64), pd.Index([], dtype="int64")
        if "venue" in papers.columns:
            venue, venues = _codes(papers["venue"])
        else:
            venue, venues = np.full(n, -1, dtype=np.int64), pd.Index([], dtype=object)
        if "topic" in papers.columns:
            topic, topics = _codes(papers["topic"].astype("int64"))
        else:
            topic, topics = np.zeros(n, dtype=np.int64), pd.Index([OUTLIER_TOPIC])
        status = papers["code_status"] if "code_status" in papers.columns else pd.Series([""] * n)
        released = status.eq("released").to_numpy(dtype=bool, na_value=False)
        live = None
        if "repo_state" in papers.columns:
            # Only once some repository has an answer: before any check every paper is "not_checked"
            # (or "", no repository), and a line of 0% live would say the code is gone.
            states = papers["repo_state"].astype("string").fillna("")
            if (~states.isin(("", "not_checked"))).any():
                live = states.eq("live").to_numpy(dtype=bool)
        tier = None
        if "decision_tier" in papers.columns:
            tiers = papers["decision_tier"].astype("string").fillna("unknown").str.strip().str.lower()
            known = {t: i for i, t in enumerate(DECIDED_TIERS)}
            tier = tiers.map(known).fillna(-1).to_numpy(dtype=np.int64)
        area_rows = area_codes = areas = None
        if "areas" in papers.columns:
            items = pd.Series(papers["areas"].to_numpy(), index=np.arange(n)).explode().dropna()
            items = items[items.astype(str).str.strip() != ""]
            codes, uniques = pd.factorize(items.astype(str), sort=True)
            pairs = pd.DataFrame({"row": items.index.to_numpy(), "code": codes}).drop_duplicates()
            area_rows, area_codes = pairs["row"].to_numpy(np.int64), pairs["code"].to_numpy(np.int64)
            areas = np.asarray(uniques, dtype=object)
        return cls(
            year=year,
            years=np.asarray(years, dtype=np.int64),
            venue=venue,
            venues=np.asarray(venues, dtype=object),
            topic=topic,
            topics=np.asarray(topics, dtype=np.int64),
            released=released,
            live=live,
            tier=tier,
            area_rows=area_rows,
            area_codes=area_codes,
            areas=areas,
        )

    @property
    def n_papers(self) -> int:
        """Papers coded."""
        return len(self.year)

    def inside(self, mask: np.ndarray | pd.Series | None) -> np.ndarray:
        """``mask`` as a boolean array over the papers (every paper when None)."""
        if mask is None:
            return np.ones(self.n_papers, dtype=bool)
        inside = np.asarray(mask, dtype=bool)
        if inside.shape != (self.n_papers,):
            raise ValueError(f"mask has {inside.shape} entries; expected one per paper ({self.n_papers})")
        return inside

    def _axis(self, name: str) -> tuple[np.ndarray, int]:
        """Per paper the code of ``name`` (year, venue, topic, tier, released, live; -1: none) and how
        many codes there are."""
        flags = {"released": self.released, "live": self.live}
        if name in flags:
            flag = flags[name]
            if flag is None:
                raise ValueError(f"these papers have no {name!r} column")
            return flag.astype(np.int64), 2
        coded = {
            "year": (self.year, len(self.years)),
            "venue": (self.venue, len(self.venues)),
            "topic": (self.topic, len(self.topics)),
            "tier": (self.tier, len(DECIDED_TIERS)),
        }
        codes, size = coded.get(name, (None, 0))
        if codes is None:
            raise ValueError(f"no codes for {name!r}")
        return codes, size

    @cached_property
    def _combined(self) -> dict[tuple[str, ...], tuple[np.ndarray, tuple[int, ...]]]:
        return {}  # filled by `cells`, one entry per combination asked for (shared read-only)

    @cached_property
    def _counted(self) -> _Counted:
        return _Counted()

    def cells(self, names: Sequence[str], mask: np.ndarray | pd.Series | None = None) -> np.ndarray:
        """The masked papers counted per combination of the named codes (`_axis`), an array of shape
        (codes of names[0], codes of names[1], ...); a paper missing any of them is not counted.

        A read-only boolean array as ``mask`` is taken as unchanging: its counts are kept (`_Counted`)
        and a second table over the same mask and names is not counted again (the Trends page draws
        most of its charts under one mask). The tables of one such mask come from one count of every
        code at once (`_joint`) where that table is small (`JOINT_CELLS`): at a million papers a Trends
        run asks for a dozen tables, each a pass over every paper (28 ms a run), where one pass and a
        dozen sums over a table of a few thousand cells do. The result is read-only.
        """
        key = tuple(names)
        kept = self._counted.get(key, mask)
        if kept is not None:
            return kept
        if self._counted.keeps(mask) and self._joint_names:
            table = _marginal(self._joint(mask), self._joint_names, key)
        else:
            table = _marginal(self._count(key, mask), key, key)
        table.setflags(write=False)
        self._counted.put(key, mask, table)
        return table

    def _combination(self, names: tuple[str, ...]) -> tuple[np.ndarray, tuple[int, ...]]:
        """One code per paper for the combination of ``names``, each axis's codes shifted by one so
        that missing (-1) comes first, and the shape of its table (each axis one code longer); made
        once per combination (int32 where it fits; shared read-only)."""
        known = self._combined.get(names)
        if known is None:
            parts = [self._axis(name) for name in names]
            shape = tuple(size + 1 for _, size in parts)
            combined = np.zeros(self.n_papers, dtype=np.int64)
            for codes, size in parts:
                combined = combined * (size + 1) + (codes + 1)
            cells = int(np.prod(shape, dtype=np.int64))
            known = (combined.astype(np.int32 if cells < 2**31 - 1 else np.int64), shape)
            known[0].setflags(write=False)
            self._combined[names] = known
        return known

    def _count(self, names: tuple[str, ...], mask: np.ndarray | pd.Series | None) -> np.ndarray:
        """The masked papers counted per combination of ``names``, missing codes included (first on
        each axis, `_combination`), as int64."""
        combined, shape = self._combination(names)
        cells = int(np.prod(shape, dtype=np.int64))
        if mask is None:
            counted = np.bincount(combined, minlength=cells)
        else:  # weighing by the mask reads the codes once and copies none of them (half the time)
            counted = np.bincount(combined, weights=self.inside(mask), minlength=cells).astype(np.int64)
        return counted.reshape(shape)

    @cached_property
    def _joint_names(self) -> tuple[str, ...]:
        """The codes the joint table counts: all this corpus has, or none when its table would be
        larger than `JOINT_CELLS` (each axis has one more code there: missing)."""
        names = ["year", "venue", "topic", "released"]
        names += [name for name, codes in (("live", self.live), ("tier", self.tier)) if codes is not None]
        cells = int(np.prod([self._axis(name)[1] + 1 for name in names], dtype=np.int64))
        return tuple(names) if cells <= JOINT_CELLS else ()

    def _joint(self, mask: np.ndarray) -> np.ndarray:
        """The read-only ``mask``'s papers counted per combination of every code (`_joint_names`),
        missing codes included: the table every `cells` table of this mask is a sum of, kept with them."""
        key = ("", *self._joint_names)  # no table of `cells` has an empty name
        joint = self._counted.get(key, mask)
        if joint is None:
            joint = self._count(self._joint_names, mask)
            joint.setflags(write=False)
            self._counted.put(key, mask, joint)
        return joint

    def span(self, mask: np.ndarray | pd.Series | None = None) -> tuple[list[int], list[str]]:
        """The years and venues the masked papers have (sorted)."""
        years = np.flatnonzero(self.cells(("year",), mask))
        venues = np.flatnonzero(self.cells(("venue",), mask))
        return [int(y) for y in self.years[years]], [str(v) for v in self.venues[venues]]

    def group_cells(self, by: str, name: str, mask: np.ndarray | pd.Series | None = None) -> np.ndarray:
        """`cells` per group of `groups` (``by``) and code of ``name``: shape (groups, codes of name)."""
        if by not in GROUPINGS:
            raise ValueError(f"by must be one of {', '.join(GROUPINGS)}; got {by!r}")
        table = self.cells((*by.split(","), name), mask)
        return table.reshape(-1, table.shape[-1])

    def groups(self, by: str) -> pd.DataFrame:
        """The groups papers are counted in (`group_cells`' rows, in order): group, year, venue.

        ``by`` is ``year``, ``venue`` or ``venue,year``; ``group`` is ``2023``, ``ICML`` or ``ICML 2023``.
        Made once per grouping (shared: a caller copies before changing it).
        """
        if by not in GROUPINGS:
            raise ValueError(f"by must be one of {', '.join(GROUPINGS)}; got {by!r}")
        known = self._groups.get(by)
        if known is None:
            known = self._groups[by] = self._make_groups(by)
        return known

    @cached_property
    def _groups(self) -> dict[str, pd.DataFrame]:
        return {}

    def _make_groups(self, by: str) -> pd.DataFrame:
        n_years, n_venues = len(self.years), len(self.venues)
        if by == "year":
            table = pd.DataFrame({"year": self.years, "venue": [""] * n_years})
            table["group"] = table["year"].astype(str)
        elif by == "venue":
            table = pd.DataFrame({"year": pd.array([pd.NA] * n_venues, dtype="Int64"), "venue": self.venues})
            table["group"] = table["venue"].astype(str)
        else:
            years, venues = np.tile(self.years, n_venues), np.repeat(self.venues, n_years)
            table = pd.DataFrame({"year": years, "venue": venues})
            table["group"] = table["venue"].astype(str) + " " + table["year"].astype(str)
        return table[["group", "year", "venue"]]

    def year_codes(self, years: Collection[int]) -> np.ndarray:
        """Per year code, whether it is one of ``years`` (a period, as rows of a per-year table)."""
        return np.isin(self.years, list(years))


def _labels(topics: np.ndarray, labels: Mapping[int, str] | None) -> list[str]:
    names = labels or {}
    return [
        OUTLIER_LABEL if t == OUTLIER_TOPIC else str(names.get(int(t), f"Topic {int(t)}")) for t in topics
    ]


def topic_shares(
    axes: Axes,
    by: str = "year",
    mask: np.ndarray | pd.Series | None = None,
    labels: Mapping[int, str] | None = None,
    method: str = DEFAULT_METHOD,
) -> pd.DataFrame:
    """Each topic's papers and share of the papers per group: group, year, venue, topic, label, papers,
    group_papers, share, pooled_share, compared_papers, venues.

    Every topic of the corpus appears in every group that has papers (zeros included, so lines do not
    break); groups in year, venue order. Outliers are topic -1; a group's shares sum to 1.
    ``papers`` of ``group_papers`` are the topic's papers in the group; ``pooled_share`` their ratio.
    By year with ``method="venues"``, ``share`` is standardised over venues (`within_venue_shares`;
    NaN for a year linked to no other by a venue) and ``compared_papers`` the year's papers in venues
    that hold papers in another year too; otherwise ``share`` is the pooled share (a group of one
    venue, or per venue and year, compares like with like already) and ``compared_papers`` the group's.
    ``venues``: how many venues the group's papers come from (papers without a venue count as one; a
    year of one venue among years of several has a share within venues that rests on that venue alone).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    groups = axes.groups(by)
    n_topics = len(axes.topics)
    cells = axes.group_cells(by, "topic", mask)
    totals = cells.sum(axis=1)
    present = np.flatnonzero(totals)
    cells, totals, groups = cells[present], totals[present], groups.iloc[present].reset_index(drop=True)
    table = groups.loc[groups.index.repeat(n_topics)].reset_index(drop=True)
    table["topic"] = np.tile(axes.topics, len(groups))
    table["label"] = np.tile(np.asarray(_labels(axes.topics, labels), dtype=object), len(groups))
    table["papers"] = cells.ravel().astype("int64")
    table["group_papers"] = np.repeat(totals, n_topics).astype("int64")
    table["share"] = (cells / totals[:, None]).ravel().round(6)
    table["pooled_share"] = table["share"]
    table["compared_papers"] = table["group_papers"]
    table["venues"] = 1
    if by == "year" and len(present):
        per_venue = venue_year_topic(axes, mask)
        held = (per_venue.sum(axis=2) > 0).sum(axis=0)
        table["venues"] = np.repeat(held[present], n_topics).astype("int64")
        if method == "venues":
            shares, compared = within_venue_shares(per_venue)
            table["share"] = shares[present].ravel().round(6)
            table["compared_papers"] = np.repeat(compared[present], n_topics).astype("int64")
    return table


def coverage(axes: Axes, mask: np.ndarray | pd.Series | None = None) -> pd.DataFrame:
    """Which venues each year holds: the masked papers per venue (rows, "(no venue)" last when some
    paper has none) and year (columns, as text); venues and years without papers left out.

        >>> papers = pd.DataFrame({"year": [2021, 2022, 2022], "venue": ["A", "A", "B"]})
        >>> coverage(Axes.of(papers)).to_dict("index")
        {'A': {'2021': 1, '2022': 1}, 'B': {'2021': 0, '2022': 1}}
    """
    per_venue = axes.cells(("venue", "year"), mask)
    no_venue = axes.cells(("year",), mask) - per_venue.sum(axis=0)
    table = pd.DataFrame(
        np.vstack([per_venue, no_venue[None]]),
        index=[*(str(v) for v in axes.venues), "(no venue)"],
        columns=[str(y) for y in axes.years],
    )
    table = table.loc[table.sum(axis=1) > 0, table.sum(axis=0) > 0]
    table.index.name = "venue"
    return table.astype("int64")


def venue_year_topic(axes: Axes, mask: np.ndarray | pd.Series | None = None) -> np.ndarray:
    """The masked papers per (venue, year code, topic code): papers without a venue are one more venue
    (last), venues without papers are left out. Shape (venues, years, topics).

        >>> papers = pd.DataFrame({"year": [2021, 2022, 2022], "venue": ["A", "A", ""], "topic": [0, 0, 1]})
        >>> venue_year_topic(Axes.of(papers)).tolist()  # A, then the paper without a venue
        [[[1, 0], [1, 0]], [[0, 0], [0, 1]]]
    """
    per_venue = axes.cells(("venue", "year", "topic"), mask)
    no_venue = axes.cells(("year", "topic"), mask) - per_venue.sum(axis=0)
    table = np.concatenate([per_venue, no_venue[None]], axis=0)
    return table[table.sum(axis=(1, 2)) > 0]


def _linked(papers: np.ndarray) -> np.ndarray:
    """Per group (a column of ``papers``, venues x groups) whether it is in the largest set of groups
    (by papers) that venues link: two groups are linked by a venue holding papers in both."""
    held = papers > 0
    label = np.full(papers.shape[1], -1)
    for start in np.flatnonzero(held.any(axis=0)):
        if label[start] >= 0:
            continue
        reached = np.zeros(papers.shape[1], dtype=bool)
        reached[start] = True
        while True:
            grown = reached | held[held[:, reached].any(axis=1)].any(axis=0)
            if (grown == reached).all():
                break
            reached = grown
        label[reached] = start
    if (label < 0).all():
        return np.zeros(papers.shape[1], dtype=bool)
    sizes = np.bincount(label[label >= 0], weights=papers.sum(axis=0)[label >= 0])
    return label == int(np.argmax(sizes))


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), 0.0)


def within_venue_shares(
    counts: np.ndarray, iterations: int = 1000, tolerance: float = 1e-9
) -> tuple[np.ndarray, np.ndarray]:
    """Each topic's share per group (a year or a period) standardised over venues, and per group the
    papers that carry the comparison.

    ``counts``: papers per (venue, group, topic), e.g. `venue_year_topic`. Per topic the counts are
    fitted as papers(venue, group) x venue effect x group effect (Poisson main effects, by iterative
    proportional fitting); a group's share is its effect on the fixed venue mix of all the papers,
    the shares of a group scaled to sum to 1. A topic flat within every venue is flat whichever venues
    a group holds; with one venue the shares are the pooled ones. Returns (shares, groups x topics,
    NaN for a group no venue links to the largest linked set of groups; compared, per group its papers
    in venues that hold papers in another linked group too).

        >>> counts = np.array([[[1, 9], [1, 9]], [[0, 0], [5, 5]]])  # venue A both years, B joins
        >>> shares, compared = within_venue_shares(counts)
        >>> shares.round(2).tolist(), compared.tolist()  # pooled, topic 0 would rise from 10% to 30%
        ([[0.23, 0.77], [0.23, 0.77]], [10.0, 10.0])
    """
    counts = np.asarray(counts, dtype=np.float64)
    n_groups, n_topics = counts.shape[1], counts.shape[2]
    shares = np.full((n_groups, n_topics), np.nan)
    linked = _linked(counts.sum(axis=2))
    if not linked.any():
        return shares, np.zeros(n_groups)
    counts = counts * linked[None, :, None]
    papers = counts.sum(axis=2)  # venues x groups
    by_venue, by_group = counts.sum(axis=1), counts.sum(axis=0)  # venues x topics, groups x topics
    group_effect = np.ones((n_groups, n_topics))
    for _ in range(iterations):
        venue_effect = _ratio(by_venue, papers @ group_effect)
        fitted = _ratio(by_group, papers.T @ venue_effect)
        settled = np.abs(fitted - group_effect).max() <= tolerance * max(1.0, float(fitted.max()))
        group_effect = fitted
        if settled:
            break
    mix = papers.sum(axis=1) / papers.sum()
    raw = group_effect * (mix @ venue_effect)[None, :]
    shares[linked] = _ratio(raw, raw.sum(axis=1, keepdims=True))[linked]
    spanning = (papers > 0).sum(axis=1) >= 2  # a venue in one group only tells nothing of the change
    return shares, papers[spanning].sum(axis=0)


def default_periods(years: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The first and the last half of a span of years (an odd middle year is in neither).

    >>> default_periods([2021, 2022, 2023, 2024, 2025])
    ((2021, 2022), (2024, 2025))
    """
    ordered = sorted(set(int(y) for y in years))
    half = len(ordered) // 2
    if half == 0:
        return (), ()
    return tuple(ordered[:half]), tuple(ordered[-half:])


def period_mask(axes: Axes, years: Collection[int], mask: np.ndarray | pd.Series | None = None) -> np.ndarray:
    """The masked papers of the given years."""
    # A look-up of each paper's year code (the last entry, where -1 lands, is "no year"): np.isin over
    # a million codes is slower than this look-up, and a Trends run asks for six of these.
    wanted = np.zeros(len(axes.years) + 1, dtype=bool)
    wanted[:-1] = axes.year_codes(years)
    return axes.inside(mask) & wanted[axes.year]


def _changes(counts_from: np.ndarray, counts_to: np.ndarray, prior_strength: float) -> np.ndarray:
    """Weighted log-odds z of ``to`` against ``from`` with the pooled shares as the informative prior."""
    pooled = counts_from + counts_to
    prior = prior_strength * pooled / max(float(pooled.sum()), 1.0) + 0.01
    return log_odds_z(counts_to, counts_from, prior)


CHANGE_COLUMNS: tuple[str, ...] = (
    "topic", "label", "from_papers", "to_papers", "from_total", "to_total", "from_share", "to_share",
    "score", "z", "change", "pooled_from_share", "pooled_to_share", "pooled_score", "pooled_z",
    "pooled_change", "within_from_share", "within_to_share", "within_score", "within_z", "within_change",
    "venue_mix_only",
)  # fmt: skip


def proportion_z(share_from: np.ndarray, share_to: np.ndarray, n_from: float, n_to: float) -> np.ndarray:
    """The two-proportion z of each share going from ``share_from`` (of ``n_from`` papers) to ``share_to``.

    >>> proportion_z(np.array([0.1, 0.2]), np.array([0.3, 0.2]), 600, 1200).round(1).tolist()
    [9.5, 0.0]
    """
    pooled = (share_from * n_from + share_to * n_to) / max(n_from + n_to, 1.0)
    spread = np.sqrt(pooled * (1 - pooled) * (1 / max(n_from, 1.0) + 1 / max(n_to, 1.0)))
    return _ratio(share_to - share_from, spread)


def _change(z: np.ndarray) -> np.ndarray:
    """``rising``, ``falling`` or ``flat`` per two-proportion z (`CLEAR_Z`)."""
    return np.where(z >= CLEAR_Z, "rising", np.where(z <= -CLEAR_Z, "falling", "flat")).astype(object)


def topic_changes(
    axes: Axes,
    from_years: Collection[int],
    to_years: Collection[int],
    mask: np.ndarray | pd.Series | None = None,
    labels: Mapping[int, str] | None = None,
    prior_strength: float = DEFAULT_PRIOR_STRENGTH,
    method: str = DEFAULT_METHOD,
) -> pd.DataFrame:
    """Topics whose share grew or shrank most between two periods, highest score first.

    Both comparisons are made: ``pooled_*`` over all the papers of each period, ``within_*`` within
    venues (`within_venue_shares` of the two periods: only venues with papers in both periods carry
    it). ``method`` picks the one in from_papers, to_papers, from_total, to_total (the topic's papers
    and all papers the shares are over), from_share, to_share, score (weighted log-odds z of the later
    period against the earlier; within venues on the standardised shares times the compared papers: the
    ranking), z (two-proportion z of the shares over their n) and change (``rising``/``falling`` where z
    is beyond ±`CLEAR_Z`, else ``flat``). ``venue_mix_only``: the
    pooled share rises or falls and the within-venue one does not (or the other way): the change
    comes from which venues the periods hold. With no venue in both periods the within-venue change is
    ``not compared`` (its score NaN). Outliers are counted in the shares but not ranked.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    per_year = axes.cells(("year", "topic"), mask)
    earlier, later = axes.year_codes(from_years), axes.year_codes(to_years)
    counts_from, counts_to = per_year[earlier].sum(axis=0), per_year[later].sum(axis=0)
    if counts_from.sum() == 0 or counts_to.sum() == 0:
        return pd.DataFrame(columns=list(CHANGE_COLUMNS))
    pooled_score = _changes(counts_from.astype(float), counts_to.astype(float), prior_strength)
    per_venue = venue_year_topic(axes, mask)
    periods = np.stack([per_venue[:, earlier].sum(axis=1), per_venue[:, later].sum(axis=1)], axis=1)
    shares, compared = within_venue_shares(periods)
    in_both = (periods.sum(axis=2) > 0).all(axis=1)  # venues x 2 -> the venues compared
    within_papers = periods[in_both].sum(axis=0)  # 2 x topics
    n_from, n_to = float(counts_from.sum()), float(counts_to.sum())
    pooled_shares = counts_from / n_from, counts_to / n_to
    if compared.min() > 0 and not np.isnan(shares).any():
        within_score = _changes(shares[0] * compared[0], shares[1] * compared[1], prior_strength)
        within_z = proportion_z(shares[0], shares[1], float(compared[0]), float(compared[1]))
        within_change = _change(within_z)
    else:
        within_score = within_z = np.full(len(axes.topics), np.nan)
        within_change = np.full(len(axes.topics), "not compared", dtype=object)
    pooled_z = proportion_z(pooled_shares[0], pooled_shares[1], n_from, n_to)
    pooled_change = _change(pooled_z)
    venue_mix_only = (pooled_change != within_change) & (within_change != "not compared")
    venue_mix_only &= (pooled_change != "flat") | (within_change != "flat")
    if method == "venues":
        papers, totals, chosen, score, z = within_papers, compared, shares, within_score, within_z
    else:
        papers = np.stack([counts_from, counts_to])
        totals = np.array([n_from, n_to])
        chosen, score, z = np.stack(pooled_shares), pooled_score, pooled_z
    table = pd.DataFrame(
        {
            "topic": axes.topics,
            "label": _labels(axes.topics, labels),
            "from_papers": papers[0].astype("int64"),
            "to_papers": papers[1].astype("int64"),
            "from_total": np.full(len(axes.topics), int(totals[0])),
            "to_total": np.full(len(axes.topics), int(totals[1])),
            "from_share": np.round(chosen[0], 6),
            "to_share": np.round(chosen[1], 6),
            "score": np.round(score, 3),
            "z": np.round(z, 3),
            "change": within_change if method == "venues" else pooled_change,
            "pooled_from_share": pooled_shares[0].round(6),
            "pooled_to_share": pooled_shares[1].round(6),
            "pooled_score": pooled_score.round(3),
            "pooled_z": pooled_z.round(3),
            "pooled_change": pooled_change,
            "within_from_share": np.round(shares[0], 6),
            "within_to_share": np.round(shares[1], 6),
            "within_score": np.round(within_score, 3),
            "within_z": np.round(within_z, 3),
            "within_change": within_change,
            "venue_mix_only": venue_mix_only,
        }
    )
    table = table[(axes.topics != OUTLIER_TOPIC) & (counts_from + counts_to > 0)]
    return table.sort_values(["score", "topic"], ascending=[False, True]).reset_index(drop=True)


def venue_mix_items(changes: pd.DataFrame) -> list[str]:
    """Per topic whose pooled rise or fall comes from which venues the periods hold (`topic_changes`'
    ``venue_mix_only``), what each comparison says, strongest pooled change first.

        >>> changes = pd.DataFrame({"label": ["llm"], "pooled_change": ["rising"], "within_change": ["flat"],
        ...     "pooled_from_share": [0.02], "pooled_to_share": [0.066], "within_from_share": [0.03],
        ...     "within_to_share": [0.031], "pooled_z": [5.0], "venue_mix_only": [True]})
        >>> venue_mix_items(changes)
        ['llm: pooled rises 2.0% → 6.6%, within venues flat (3.0% → 3.1%)']
    """
    if changes.empty or "venue_mix_only" not in changes:
        return []
    flagged = changes[changes["venue_mix_only"].astype(bool)]
    flagged = flagged.iloc[np.argsort(-np.abs(flagged["pooled_z"].to_numpy(dtype=float)), kind="stable")]
    verbs = {"rising": "rises", "falling": "falls", "flat": "flat"}
    return [
        f"{label}: pooled {verbs[str(pooled)]} {a:.1%} → {b:.1%}, within venues {verbs[str(within)]} "
        f"({c:.1%} → {d:.1%})"
        for label, pooled, within, a, b, c, d in zip(
            flagged["label"], flagged["pooled_change"], flagged["within_change"],
            flagged["pooled_from_share"], flagged["pooled_to_share"],
            flagged["within_from_share"], flagged["within_to_share"], strict=True,
        )
    ]  # fmt: skip


def venue_mix_note(changes: pd.DataFrame, limit: int = 5) -> str:
    """`venue_mix_items` as one sentence (the first ``limit``), or "" when there is none."""
    items = venue_mix_items(changes)
    if not items:
        return ""
    more = f"; and {len(items) - limit} more" if len(items) > limit else ""
    return (
        "The pooled share and the share within venues disagree (the pooled change comes from which venues "
        f"the years hold) for {'; '.join(items[:limit])}{more}."
    )


def rising_terms(
    counts: TermCounts,
    from_mask: np.ndarray | pd.Series,
    to_mask: np.ndarray | pd.Series,
    *,
    top: int = 15,
    prior_strength: float = DEFAULT_PRIOR_STRENGTH,
    within: tuple[Subset | None, Subset | None] = (None, None),
) -> pd.DataFrame:
    """The ``top`` rising terms (highest score first) then the ``top`` falling ones (lowest last).

    Columns: term, from_share, to_share (share of the period's papers using it), from_papers, to_papers,
    from_count, to_count (occurrences), score (weighted log-odds z of the later period against the
    earlier, on occurrences). An empty period gives an empty table. ``within``: for each period, a
    `Subset` of papers holding it whose counts are known (`period_counts`: the whole period), so a
    filter that keeps most of it is counted as those counts less the papers it leaves out.
    """
    inside_from, inside_to = np.asarray(from_mask, dtype=bool), np.asarray(to_mask, dtype=bool)
    count_from, papers_from = counts.subset_counts(inside_from, within=within[0])
    count_to, papers_to = counts.subset_counts(inside_to, within=within[1])
    columns = [
        "term",
        "from_share",
        "to_share",
        "from_papers",
        "to_papers",
        "from_count",
        "to_count",
        "score",
    ]
    n_from, n_to = int(inside_from.sum()), int(inside_to.sum())
    if n_from == 0 or n_to == 0 or count_from.sum() == 0 or count_to.sum() == 0:
        return pd.DataFrame(columns=columns).astype({"term": "str", "score": "float64"})
    used = np.flatnonzero(count_from + count_to > 0)
    z = _changes(count_from[used], count_to[used], prior_strength)
    order = np.lexsort((counts.term_rank[used], -z))  # ties in term order
    rising = order[z[order] > 0][:top]
    falling = order[z[order] < 0][::-1][:top][::-1]
    chosen = np.concatenate([rising, falling]).astype(int)
    picked = used[chosen]
    return pd.DataFrame(
        {
            "term": pd.Series(counts.terms[picked], dtype="str"),
            "from_share": (papers_from[picked] / n_from).round(6),
            "to_share": (papers_to[picked] / n_to).round(6),
            "from_papers": papers_from[picked].astype("int64"),
            "to_papers": papers_to[picked].astype("int64"),
            "from_count": count_from[picked].astype("int64"),
            "to_count": count_to[picked].astype("int64"),
            "score": np.round(z[chosen], 3),
        }
    )


def period_counts(counts: TermCounts, axes: Axes, years: Collection[int]) -> Subset:
    """The papers of ``years`` and their term counts (`TermCounts.subset_counts`): the `Subset` a
    filtered period is counted within (`rising_terms`)."""
    inside = period_mask(axes, years)
    return Subset(inside, *counts.subset_counts(inside))


def topic_year_terms(
    counts: TermCounts,
    axes: Axes,
    n_terms: int = TOPIC_TERMS,
    max_papers: int = TERMS_SAMPLE,
    random_state: int = 0,
) -> pd.DataFrame:
    """Each topic's most representative terms in each year (BERTopic's topics over time, one model).

    c-TF-IDF of the topic's papers in that year with the idf of the corpus's topics (no refit), averaged
    with the topic's c-TF-IDF over all years. Columns: topic, year, terms (a list, best first).
    Outliers and papers without a year are left out. Above ``max_papers`` a seeded sample of that many
    papers is counted (the top terms of a topic-year are stable long before that; a million papers
    would read the whole count matrix).
    """
    columns = ["topic", "year", "terms"]
    n_years, n_topics = len(axes.years), len(axes.topics)
    topic_of = axes.topics[np.clip(axes.topic, 0, None)] if n_topics else np.full(axes.n_papers, -1)
    keep = (axes.topic >= 0) & (topic_of != OUTLIER_TOPIC) & (axes.year >= 0)
    if not keep.any() or counts.counts.shape[1] == 0:
        return pd.DataFrame(columns=columns)
    rows = np.flatnonzero(keep)
    if len(rows) > max_papers:
        rows = np.sort(np.random.default_rng(random_state).choice(rows, max_papers, replace=False))
    cell = axes.topic[rows] * n_years + axes.year[rows]
    cells, cell_index = np.unique(cell, return_inverse=True)
    membership = sp.csr_matrix(
        (np.ones(len(rows), dtype=np.float64), (cell_index, rows)), shape=(len(cells), axes.n_papers)
    )
    mass = np.asarray((membership @ counts.counts).todense(), dtype=np.float64)  # cells x terms
    topic_of_cell = cells // n_years
    topic_mass = np.zeros((n_topics, mass.shape[1]))
    np.add.at(topic_mass, topic_of_cell, mass)
    present = topic_mass.sum(axis=1) > 0
    term_mass = topic_mass.sum(axis=0)
    average = topic_mass.sum() / max(int(present.sum()), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        idf = np.log1p(np.where(term_mass > 0, average / term_mass, 0.0))
        local = np.nan_to_num(mass / mass.sum(axis=1, keepdims=True)) * idf
        overall = np.nan_to_num(topic_mass / topic_mass.sum(axis=1, keepdims=True)) * idf
    scores = (local + overall[topic_of_cell]) / 2
    scores[mass == 0] = 0.0  # a term the topic never used that year does not describe that year
    records = []
    for i, c in enumerate(cells):
        row = scores[i]
        best = [int(j) for j in np.argsort(-row, kind="stable")[:n_terms] if row[j] > 0]
        records.append(
            (
                int(axes.topics[c // n_years]),
                int(axes.years[c % n_years]),
                [str(counts.terms[j]) for j in best],
            )
        )
    return pd.DataFrame(records, columns=columns)


def distinctive_topics(
    axes: Axes,
    mask: np.ndarray | pd.Series | None = None,
    labels: Mapping[int, str] | None = None,
    top: int = 3,
    prior_strength: float = DEFAULT_PRIOR_STRENGTH,
) -> pd.DataFrame:
    """Each venue's most distinctive topics against the others: venue, topic, label, papers, share, score.

    Scored with the weighted log-odds z of the venue's topic counts against the other venues' (outliers
    not ranked). Fewer than two venues give an empty table.
    """
    columns = ["venue", "topic", "label", "papers", "share", "score"]
    cells = axes.cells(("venue", "topic"), mask).astype(float)
    present = np.flatnonzero(cells.sum(axis=1))
    if len(present) < 2:
        return pd.DataFrame(columns=columns)
    total = cells.sum(axis=0)
    prior = prior_strength * total / total.sum() + 0.01
    names = _labels(axes.topics, labels)
    ranked = np.flatnonzero(axes.topics != OUTLIER_TOPIC)
    records = []
    for v in present:
        z = log_odds_z(cells[v], total - cells[v], prior)
        best = [t for t in ranked[np.argsort(-z[ranked], kind="stable")] if z[t] > 0 and cells[v, t] > 0][
            :top
        ]
        for t in best:
            share = cells[v, t] / cells[v].sum()
            records.append(
                (str(axes.venues[v]), int(axes.topics[t]), names[t], int(cells[v, t]), share, z[t])
            )
    table = pd.DataFrame(records, columns=columns)
    table["share"] = table["share"].astype(float).round(6)
    table["score"] = table["score"].astype(float).round(3)
    return table


def code_release(axes: Axes, by: str = "year", mask: np.ndarray | pd.Series | None = None) -> pd.DataFrame:
    """Papers with released code per group: group, year, venue, papers, released, share.

    With repository checks (the ``repo_state`` column) also ``live`` and ``live_share``: papers whose
    repository answered as live.
    """
    groups = axes.groups(by)
    by_release = axes.group_cells(by, "released", mask)
    table = groups.copy()
    table["papers"], table["released"] = (
        by_release.sum(axis=1).astype("int64"),
        by_release[:, 1].astype("int64"),
    )
    if axes.live is not None:
        table["live"] = axes.group_cells(by, "live", mask)[:, 1].astype("int64")
    table = table[table["papers"] > 0].reset_index(drop=True)
    table["share"] = (table["released"] / table["papers"]).round(6)
    if axes.live is not None:
        table["live_share"] = (table["live"] / table["papers"]).round(6)
    return table


def has_decisions(axes: Axes, mask: np.ndarray | pd.Series | None = None) -> bool:
    """True when some masked paper has a known decision tier."""
    return axes.tier is not None and int(axes.cells(("tier",), mask).sum()) > 0


def acceptance(
    axes: Axes,
    key: str,
    mask: np.ndarray | pd.Series | None = None,
    labels: Mapping[int, str] | None = None,
) -> pd.DataFrame:
    """Acceptance share per ``topic``, ``area``, ``year`` or ``venue``: <key>, label, decided, accepted, share

    ``decided``: papers with a known decision; ``accepted``: in an accepted tier. Empty without tiers.
    """
    columns = [key, "label", "decided", "accepted", "share"]
    if axes.tier is None:
        return pd.DataFrame(columns=columns)
    if key == "area":
        if axes.area_rows is None or axes.areas is None or axes.area_codes is None:
            return pd.DataFrame(columns=columns)
        inside = axes.inside(mask)
        decided = inside & (axes.tier >= 0)
        accepted = decided & (axes.tier < len(ACCEPTED_TIERS))
        rows, codes, values = axes.area_rows, axes.area_codes, axes.areas
        names = [str(v) for v in values]
        n_decided = np.bincount(codes[decided[rows]], minlength=len(values))
        n_accepted = np.bincount(codes[accepted[rows]], minlength=len(values))
    else:
        all_values = {"topic": axes.topics, "year": axes.years, "venue": axes.venues}
        if key not in all_values:
            raise ValueError(f"key must be topic, area, year or venue; got {key!r}")
        values = all_values[key]
        names = _labels(values, labels) if key == "topic" else [str(v) for v in values]
        by_tier = axes.cells((key, "tier"), mask)  # values x DECIDED_TIERS, accepted tiers first
        n_decided, n_accepted = by_tier.sum(axis=1), by_tier[:, : len(ACCEPTED_TIERS)].sum(axis=1)
    table = pd.DataFrame(
        {key: list(values), "label": names, "decided": n_decided.astype("int64"), "accepted": n_accepted}
    )
    table = table[table["decided"] > 0].reset_index(drop=True)
    table["accepted"] = table["accepted"].astype("int64")
    table["share"] = (table["accepted"] / table["decided"]).round(6)
    return table


def tier_counts(axes: Axes, mask: np.ndarray | pd.Series | None = None) -> pd.DataFrame:
    """Papers per decision tier and year: year, tier, papers (known tiers only)."""
    columns = ["year", "tier", "papers"]
    if axes.tier is None:
        return pd.DataFrame(columns=columns)
    n_tiers = len(DECIDED_TIERS)
    cells = axes.cells(("year", "tier"), mask)
    table = pd.DataFrame(
        {
            "year": np.repeat(axes.years, n_tiers),
            "tier": np.tile(np.asarray(DECIDED_TIERS, dtype=object), len(axes.years)),
            "papers": cells.ravel().astype("int64"),
        }
    )
    return table[table["papers"] > 0].reset_index(drop=True)


# ------------------------------------------------------------------------- from a click to the filters

CLICK_KEYS: tuple[str, ...] = ("topic", "year", "venue", "area")


def clicked_filters(current: Filters, clicked: Sequence[Mapping[str, object]]) -> Filters:
    """The filters after clicking chart elements: each key a clicked element names is set to its values.

    ``clicked`` holds one mapping per clicked point, cell or bar, e.g. ``{"topic": 3, "year": 2023}``;
    keys the chart does not name keep their filter, and a blank value (a paper without a venue) is no
    value. Other filters (search, code status...) stay.

        >>> after = clicked_filters(Filters(q="graph", year=(2021,)), [{"topic": 3, "year": 2023}])
        >>> after.q, after.topic, after.year, after.venue
        ('graph', (3,), (2023,), ())
    """
    changes: dict[str, list[object]] = {}
    for point in clicked:
        for key in CLICK_KEYS:
            if key not in point:
                continue
            value = point[key]
            changes.setdefault(key, [])
            if value is None or (isinstance(value, float) and np.isnan(value)) or str(value).strip() == "":
                continue
            cast = int(value) if key in ("topic", "year") else str(value)  # type: ignore[call-overload]
            if cast not in changes[key]:
                changes[key].append(cast)
    if not changes:
        return current
    return replace(current, **{key: tuple(values) for key, values in changes.items()})  # type: ignore[arg-type]

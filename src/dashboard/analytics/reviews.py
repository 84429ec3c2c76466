"""Review analytics: scores per decision, where acceptance fell, borderline and split papers, per group.

Reads the review columns of `dashboard.schema` (``ratings``, ``confidences``, ``n_reviews``,
``rating_mean``, ``rating_sd``, ``rating_scale``); every function takes the paper table and a boolean
mask (the papers in view) and returns a plain table, so the Reviews page, its charts
(`dashboard.figures.reviews`) and ``paper-dashboard reviews`` agree.

Accepted and decided are as on the Trends page (`trends.ACCEPTED_TIERS`, `trends.DECIDED_TIERS`): oral,
spotlight, poster or accept, as a share of the papers with a known decision (workshop, reject and
withdrawn count as decided, unknown does not).

Scales: a score of 6 means one thing at ICLR 2017 (1-10) and another at ACM MM (1-5). Papers are on one
scale when they share a stated ``rating_scale``, or, where the source states none, when they share a
venue and year. `mixed_scales` says when the papers in view span several such scales; the page and the
command then say that pooled figures mix them and show the per-venue figures beside them.

    >>> import pandas as pd
    >>> papers = pd.DataFrame({"rating_mean": [3.0, 5.0, 6.0, 8.0], "decision_tier": ["reject", "reject",
    ...                        "poster", "oral"], "n_reviews": [3, 3, 3, 3]})
    >>> acceptance_cut(papers, pd.Series(True, index=papers.index))
    5.5
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from dashboard.analytics.trends import ACCEPTED_TIERS, DECIDED_TIERS
from dashboard.schema import DECISION_TIERS

GROUPINGS: tuple[str, ...] = ("decision", "topic", "area", "venue", "year")
GROUP_COLUMNS: list[str] = [
    "group",
    "papers",
    "rated",
    "reviews",
    "rating_mean",
    "rating_sd",
    "confidence_mean",
    "accept_share",
]
BIN_WIDTHS: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0)
MAX_BINS = 20
NO_VENUE = "(no venue)"


def has_scores(papers: pd.DataFrame) -> bool:
    """True when some paper of the table has a review score."""
    return "n_reviews" in papers.columns and bool((pd.to_numeric(papers["n_reviews"]) > 0).any())


def _as_mask(papers: pd.DataFrame, mask: Any) -> np.ndarray:
    if mask is None:
        return np.ones(len(papers), dtype=bool)
    return np.asarray(mask, dtype=bool)


def rated_mask(papers: pd.DataFrame, mask: Any = None) -> np.ndarray:
    """The masked papers that have at least one score."""
    if "n_reviews" not in papers.columns:
        return np.zeros(len(papers), dtype=bool)
    n_reviews = pd.to_numeric(papers["n_reviews"], errors="coerce").fillna(0).to_numpy()
    return _as_mask(papers, mask) & (n_reviews > 0)


def _tiers(papers: pd.DataFrame) -> np.ndarray:
    if "decision_tier" not in papers.columns:
        return np.full(len(papers), "unknown", dtype=object)
    return papers["decision_tier"].astype("str").fillna("unknown").to_numpy(dtype=object)


def _accepted_decided(papers: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    tiers = _tiers(papers)
    return np.isin(tiers, ACCEPTED_TIERS), np.isin(tiers, DECIDED_TIERS)


def _means(papers: pd.DataFrame, column: str = "rating_mean") -> np.ndarray:
    return pd.to_numeric(papers[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def confidence_means(papers: pd.DataFrame) -> np.ndarray:
    """Each paper's mean confidence (NaN without confidences)."""
    if "confidences" not in papers.columns:
        return np.full(len(papers), np.nan)
    values, lengths = _flat(papers["confidences"])
    return _row_reduce(np.add, values, lengths, np.nan) / np.where(lengths > 0, lengths, 1)


def _flat(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A list column's numbers in one flat array, and each row's length (0 for a missing value).

    One pass in C over the lists: a loop of NumPy calls per paper took seconds at 100,000 papers.
    """
    cells = column.to_numpy(dtype=object)
    lengths = np.fromiter((len(c) if _is_list(c) else 0 for c in cells), dtype=np.int64, count=len(cells))
    values = np.fromiter(
        itertools.chain.from_iterable(c for c in cells if _is_list(c)), dtype=float, count=int(lengths.sum())
    )
    return values, lengths


def _row_reduce(ufunc: Any, values: np.ndarray, lengths: np.ndarray, empty: float) -> np.ndarray:
    """``ufunc`` (np.add, np.minimum, ...) over each row's slice of the flat ``values``; ``empty`` for an
    empty row."""
    out = np.full(len(lengths), empty, dtype=float)
    filled = lengths > 0
    if filled.any():
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])[filled]
        out[filled] = ufunc.reduceat(values, starts)
    return out


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple, np.ndarray))


# --------------------------------------------------------------------------------------- scales


def scale_keys(papers: pd.DataFrame) -> np.ndarray:
    """Per paper, the scale its scores are on: the stated ``rating_scale`` (``scale 1-10``), else its venue
    and year (``ICLR 2017``), since one venue's year keeps one scale."""
    n = len(papers)
    stated = _texts(papers, "rating_scale")
    venues = _texts(papers, "venue")
    venues = np.where(venues == "", NO_VENUE, venues).astype(object)
    years = (
        pd.to_numeric(papers["year"], errors="coerce")
        if "year" in papers.columns
        else pd.Series(np.nan, range(n))
    )
    year_text = np.where(years.isna(), "", " " + years.fillna(0).astype("int64").astype("str")).astype(object)
    return np.where(stated != "", "scale " + stated, venues + year_text).astype(object)


def _texts(papers: pd.DataFrame, column: str) -> np.ndarray:
    if column not in papers.columns:
        return np.full(len(papers), "", dtype=object)
    return papers[column].astype("str").fillna("").to_numpy(dtype=object)


def scales(papers: pd.DataFrame, mask: Any = None) -> pd.DataFrame:
    """The scales the rated papers in view are on: ``scale, stated, papers, lowest, highest`` (the
    lowest and highest single score seen), most papers first."""
    rated = rated_mask(papers, mask)
    columns = ["scale", "stated", "papers", "lowest", "highest"]
    if not rated.any():
        return pd.DataFrame(columns=columns)
    values, lengths = _flat(papers["ratings"])
    per_paper = pd.DataFrame(
        {
            "scale": scale_keys(papers)[rated],
            "stated": _texts(papers, "rating_scale")[rated],
            "lowest": _row_reduce(np.minimum, values, lengths, np.nan)[rated],
            "highest": _row_reduce(np.maximum, values, lengths, np.nan)[rated],
        }
    )
    table = per_paper.groupby("scale", sort=False).agg(
        stated=("stated", "first"),
        papers=("stated", "size"),
        lowest=("lowest", "min"),
        highest=("highest", "max"),
    )
    table = table.reset_index()[columns]
    return table.sort_values(["papers", "scale"], ascending=[False, True], ignore_index=True)


def mixed_scales(papers: pd.DataFrame, mask: Any = None) -> str:
    """A warning when the rated papers in view are on more than one scale (``""`` when on one).

    Several venues or years whose scales are not stated, or stated and different, are "not known to
    match": their scores are not averaged together without this being said.
    """
    table = scales(papers, mask)
    if len(table) <= 1:
        return ""
    stated = set(table["stated"])
    if "" not in stated and len(stated) == 1:
        return ""
    parts = [
        f"{row.scale} ({row.papers:,} papers, scores {row.lowest:g}-{row.highest:g}"
        + (f" on a stated {row.stated}" if row.stated else "")
        + ")"
        for row in table.itertuples()
    ]
    return (
        f"These scores come from {len(table)} venues or years whose scales are not known to match: "
        + "; ".join(parts)
        + ". Figures that pool them mix their scales; the per-venue figures keep them apart."
    )


# --------------------------------------------------------------------------------------- tables


def tier_scores(papers: pd.DataFrame, mask: Any = None) -> pd.DataFrame:
    """Per decision tier (`schema.DECISION_TIERS` order) with rated papers: ``tier, papers, rated,
    rating_mean, rating_median, accepted`` (``accepted``: the tier counts as accepted)."""
    keep = _as_mask(papers, mask)
    rated = rated_mask(papers, keep)
    tiers, means = _tiers(papers), _means(papers) if "rating_mean" in papers.columns else None
    rows = []
    for tier in DECISION_TIERS:
        in_tier = keep & (tiers == tier)
        n_rated = int((in_tier & rated).sum())
        if not n_rated or means is None:
            continue
        values = means[in_tier & rated]
        rows.append(
            (
                tier,
                int(in_tier.sum()),
                n_rated,
                float(values.mean()),
                float(np.median(values)),
                tier in ACCEPTED_TIERS,
            )
        )
    return pd.DataFrame(rows, columns=["tier", "papers", "rated", "rating_mean", "rating_median", "accepted"])


def bin_width(means: np.ndarray) -> float:
    """The narrowest of `BIN_WIDTHS` that cuts the scores' range into at most `MAX_BINS` bins."""
    values = means[~np.isnan(means)]
    if not len(values):
        return 1.0
    span = float(values.max() - values.min())
    return next((w for w in BIN_WIDTHS if span / w < MAX_BINS), BIN_WIDTHS[-1])


def score_bins(papers: pd.DataFrame, mask: Any = None, width: float | None = None) -> pd.DataFrame:
    """Acceptance per bin of mean score: ``low, high, rating, papers, decided, accepted, share``.

    Bins are ``[low, low + width)`` of the mean score at two decimals (as the ``rating`` filter compares
    it); ``rating`` is the filter's ``MIN-MAX`` that selects exactly the bin (``5-5.49``). ``share``
    is accepted / decided, NaN in a bin without decided papers.
    """
    rated = rated_mask(papers, mask)
    columns = ["low", "high", "rating", "papers", "decided", "accepted", "share"]
    if not rated.any():
        return pd.DataFrame(columns=columns)
    means = np.round(_means(papers), 2)
    width = width or bin_width(means[rated])
    accepted, decided = _accepted_decided(papers)
    bins = np.floor(means[rated] / width + 1e-9).astype(np.int64)
    first, last = int(bins.min()), int(bins.max())
    counts = np.bincount(bins - first, minlength=last - first + 1)
    n_decided = np.bincount(bins - first, weights=decided[rated], minlength=last - first + 1)
    n_accepted = np.bincount(bins - first, weights=(accepted & decided)[rated], minlength=last - first + 1)
    lows = np.round(np.arange(first, last + 1) * width, 6)
    table = pd.DataFrame(
        {
            "low": lows,
            "high": np.round(lows + width, 6),
            "rating": [f"{_two(low)}-{_two(low + width - 0.01)}" for low in lows],
            "papers": counts.astype("int64"),
            "decided": n_decided.astype("int64"),
            "accepted": n_accepted.astype("int64"),
        }
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        table["share"] = np.where(table["decided"] > 0, table["accepted"] / table["decided"], np.nan)
    return table[columns]


def _two(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def acceptance_cut(papers: pd.DataFrame, mask: Any = None) -> float | None:
    """The mean score where accepted and rejected papers cross: the cut that misplaces fewest decided
    rated papers (accepted below it, not accepted at or above it); the lowest such cut, halfway between
    two neighbouring means. None without both accepted and not-accepted decided papers."""
    accepted, decided = _accepted_decided(papers)
    keep = rated_mask(papers, mask) & decided
    if not keep.any():
        return None
    means = np.round(_means(papers)[keep], 2)
    wins = accepted[keep]
    if wins.all() or not wins.any():
        return None
    values, where = np.unique(means, return_inverse=True)
    cuts = (values[:-1] + values[1:]) / 2
    if not len(cuts):
        return None
    # a cut between values[i] and values[i + 1]: accepted papers at or below values[i] fall below it,
    # rejected ones above values[i] stay above it
    accepted_upto = np.cumsum(np.bincount(where, weights=wins, minlength=len(values)))[:-1]
    rejected_upto = np.cumsum(np.bincount(where, weights=~wins, minlength=len(values)))[:-1]
    errors = accepted_upto + (int((~wins).sum()) - rejected_upto)
    return round(float(cuts[int(np.argmin(errors))]), 3)


def _paper_rows(papers: pd.DataFrame, positions: np.ndarray, *, text: bool = True) -> pd.DataFrame:
    """The papers at ``positions`` with their scores; ``text`` adds ``scores`` as text (`score_text`),
    which costs a Python call per paper: for the few listed, not for every rated paper."""
    rows = papers.iloc[positions]
    table = pd.DataFrame(
        {
            "position": positions,
            "id": rows["id"].astype("str").to_numpy(),
            "title": rows["title"].astype("str").to_numpy() if "title" in rows.columns else "",
            "decision": rows["decision"].astype("str").to_numpy() if "decision" in rows.columns else "",
            "tier": _tiers(rows),
            "ratings": rows["ratings"].to_numpy(dtype=object),
            "rating_mean": _means(rows),
            "rating_sd": _means(rows, "rating_sd"),
        }
    )
    if text:
        table["scores"] = [score_text(v) for v in table["ratings"]]
    return table


def score_text(values: Any) -> str:
    """A paper's scores as text, in review order: ``3, 6, 8``."""
    if not _is_list(values):
        return ""
    return ", ".join(f"{v:g}" for v in values)


def borderline(papers: pd.DataFrame, mask: Any = None, n: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(accepted papers with the lowest means below `acceptance_cut`, decided papers not accepted with the
    highest means at or above it), at most ``n`` each; both empty without a cut."""
    cut = acceptance_cut(papers, mask)
    empty = _paper_rows(papers, np.array([], dtype=np.int64))
    if cut is None:
        return empty, empty
    accepted, decided = _accepted_decided(papers)
    rated = rated_mask(papers, mask) & decided
    means = np.round(_means(papers), 2)
    low = np.flatnonzero(rated & accepted & (means < cut))
    high = np.flatnonzero(rated & ~accepted & (means >= cut))
    low = low[np.argsort(means[low], kind="stable")][:n]
    high = high[np.argsort(-means[high], kind="stable")][:n]
    return _paper_rows(papers, low), _paper_rows(papers, high)


def split_decisions(papers: pd.DataFrame, mask: Any = None, n: int = 20) -> pd.DataFrame:
    """The rated papers whose reviewers disagreed most: highest ``rating_sd`` first (then more reviews)."""
    keep = rated_mask(papers, mask)
    spread = _means(papers, "rating_sd")
    positions = np.flatnonzero(keep & ~np.isnan(spread))
    n_reviews = papers["n_reviews"].to_numpy()[positions]
    order = np.lexsort((positions, -n_reviews, -spread[positions]))
    return _paper_rows(papers, positions[order][:n])


def rated_papers(papers: pd.DataFrame, mask: Any = None) -> pd.DataFrame:
    """Every rated paper in view with its scores (the lists; `score_text` makes the text of those shown),
    mean, spread, mean confidence and scale (corpus order)."""
    positions = np.flatnonzero(rated_mask(papers, mask))
    table = _paper_rows(papers, positions, text=False)
    table["confidence_mean"] = confidence_means(papers)[positions]
    table["scale"] = scale_keys(papers)[positions]
    return table


def review_pairs(papers: pd.DataFrame, mask: Any = None) -> pd.DataFrame:
    """Every review with both a score and a confidence: ``position, rating, confidence``."""
    if "confidences" not in papers.columns:
        return pd.DataFrame(columns=["position", "rating", "confidence"])
    keep = rated_mask(papers, mask)
    ratings, n_ratings = _flat(papers["ratings"])
    confidences, n_confidences = _flat(papers["confidences"])
    paired = keep & (n_ratings == n_confidences) & (n_ratings > 0)
    # each review's paper, then the reviews of the paired papers only
    rating_rows = np.repeat(np.arange(len(papers)), n_ratings)
    confidence_rows = np.repeat(np.arange(len(papers)), n_confidences)
    return pd.DataFrame(
        {
            "position": rating_rows[paired[rating_rows]],
            "rating": ratings[paired[rating_rows]],
            "confidence": confidences[paired[confidence_rows]],
        }
    )


def correlation(pairs: pd.DataFrame) -> float | None:
    """Pearson's correlation of score and confidence over the reviews; None under three or without spread."""
    if len(pairs) < 3 or pairs["rating"].std() == 0 or pairs["confidence"].std() == 0:
        return None
    return float(np.corrcoef(pairs["rating"], pairs["confidence"])[0, 1])


def _group_values(
    papers: pd.DataFrame, by: str, labels: Mapping[int, str] | None
) -> tuple[list[tuple[Any, str]], np.ndarray, np.ndarray] | None:
    """(the groups as (filter value, name), and the (paper row, group index) pairs: one per paper, one per
    area of a paper for ``area``); None when the table lacks the column."""
    groups: list[tuple[Any, str]]
    n = len(papers)
    if by == "decision":
        tiers = _tiers(papers)
        index = {t: i for i, t in enumerate(DECISION_TIERS)}
        codes = np.fromiter((index.get(t, index["unknown"]) for t in tiers), dtype=np.int64, count=n)
        return [(t, t) for t in DECISION_TIERS], np.arange(n), codes
    if by == "area":
        if "areas" not in papers.columns:
            return None
        cells = papers["areas"].to_numpy(dtype=object)
        lists = [list(dict.fromkeys(c)) if _is_list(c) else [] for c in cells]
        names = sorted({a for items in lists for a in items})
        position = {a: i for i, a in enumerate(names)}
        rows = np.repeat(np.arange(n), [len(items) for items in lists])
        codes = np.fromiter((position[a] for items in lists for a in items), dtype=np.int64, count=len(rows))
        return [(a, a) for a in names], rows, codes
    column = {"topic": "topic", "venue": "venue", "year": "year"}[by]
    if column not in papers.columns:
        return None
    values = papers[column]
    if by == "venue":
        values = values.astype("str").fillna("").replace("", NO_VENUE)
    codes, uniques = pd.factorize(values, sort=True)
    if by == "topic":
        groups = [(int(t), (labels or {}).get(int(t), str(t))) for t in uniques]
    elif by == "year":
        groups = [(int(v), str(int(v))) for v in uniques]
    else:
        groups = [(v, str(v)) for v in uniques]
    known = codes >= 0
    return groups, np.arange(n)[known], codes[known].astype(np.int64)


def group_scores(
    papers: pd.DataFrame,
    by: str,
    mask: Any = None,
    *,
    labels: Mapping[int, str] | None = None,
    per_year: bool = False,
) -> pd.DataFrame:
    """One row per group of ``by`` (`GROUPINGS`) with papers in view: `GROUP_COLUMNS`, plus ``key`` (the
    group's filter value) and, with ``per_year``, ``year`` (one row per group and year).

    ``rating_mean`` is the mean over the group's rated papers of each paper's mean score and
    ``rating_sd`` their population standard deviation; ``confidence_mean`` likewise of each paper's mean
    confidence; ``accept_share`` is accepted / decided (NaN without decided papers). Decision groups
    follow `schema.DECISION_TIERS`; a paper in several areas counts in each.
    """
    found = _group_values(papers, by, labels)
    base = ["key", *(["year"] if per_year else []), *GROUP_COLUMNS]
    if found is None:
        return pd.DataFrame(columns=base)
    groups, rows, codes = found
    keep = _as_mask(papers, mask)[rows]
    rows, codes = rows[keep], codes[keep]
    rated = rated_mask(papers)[rows]
    accepted, decided = _accepted_decided(papers)
    n_reviews = (
        pd.to_numeric(papers["n_reviews"], errors="coerce").fillna(0).to_numpy()
        if ("n_reviews" in papers.columns)
        else np.zeros(len(papers))
    )
    means = _means(papers) if "rating_mean" in papers.columns else np.full(len(papers), np.nan)
    pairs = pd.DataFrame(
        {
            "code": codes,
            "rated": rated,
            "reviews": np.where(rated, n_reviews[rows], 0),
            "mean": np.where(rated, means[rows], np.nan),
            "confidence": np.where(rated, confidence_means(papers)[rows], np.nan),
            "accepted": (accepted & decided)[rows],
            "decided": decided[rows],
        }
    )
    keys = ["code"]
    if per_year:
        years = (
            pd.to_numeric(papers["year"], errors="coerce").to_numpy()[rows]
            if "year" in papers.columns
            else (np.full(len(rows), np.nan))
        )
        pairs["year"] = years
        pairs = pairs[~np.isnan(years)]
        keys.append("year")
    summed = pairs.groupby(keys).agg(
        papers=("rated", "size"),
        rated=("rated", "sum"),
        reviews=("reviews", "sum"),
        rating_mean=("mean", "mean"),
        rating_sd=("mean", lambda v: float(np.nanstd(v)) if v.notna().any() else np.nan),
        confidence_mean=("confidence", "mean"),
        accepted=("accepted", "sum"),
        decided=("decided", "sum"),
    )
    table = summed.reset_index()
    table["key"] = [groups[int(c)][0] for c in table["code"]]
    table["group"] = [groups[int(c)][1] for c in table["code"]]
    if per_year:
        table["year"] = table["year"].astype("int64")
    with np.errstate(invalid="ignore", divide="ignore"):
        table["accept_share"] = np.where(table["decided"] > 0, table["accepted"] / table["decided"], np.nan)
    table = table.astype({"papers": "int64", "rated": "int64", "reviews": "int64"})
    return table[base].reset_index(drop=True)


def score_bounds(papers: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """The ends of the score filters' sliders, per URL key (``rating``, ``spread``, ``reviews``): the
    whole numbers around the rated papers' values; ``{}`` without scores. A key whose values are all the
    same is left out (a slider needs two ends)."""
    if not has_scores(papers):
        return {}
    rated = rated_mask(papers)
    bounds: dict[str, tuple[float, float]] = {}
    for key, column in (("rating", "rating_mean"), ("spread", "rating_sd"), ("reviews", "n_reviews")):
        values = _means(papers, column)[rated]
        values = values[~np.isnan(values)]
        if not len(values):
            continue
        low = 0.0 if key == "spread" else float(math.floor(values.min()))
        high = float(math.ceil(values.max()))
        if high > low:
            bounds[key] = (low, high)
    return bounds


def scores_line(paper: Mapping[str, Any]) -> str:
    """One paper's scores in words, for its card: ``Review scores 3, 6, 8 (mean 5.67, sd 2.05; scale
    1-10) · confidence 4, 3, 5``."""
    ratings: Any = paper.get("ratings")
    if not _is_list(ratings) or not len(ratings):
        return ""
    mean, spread = float(np.mean(ratings)), paper.get("rating_sd")
    details = [f"mean {mean:.2f}"]
    if spread is not None and not pd.isna(spread):
        details.append(f"sd {float(spread):.2f}")
    scale = paper.get("rating_scale")
    line = (
        f"Review scores {score_text(ratings)} ({', '.join(details)}"
        + (f"; scale {scale}" if scale else "")
        + ")"
    )
    confidences: Any = paper.get("confidences")
    if _is_list(confidences) and len(confidences):
        line += f" · confidence {score_text(confidences)}"
    return line

"""Review scores: a record's ``ratings``/``confidences``/``rating_scale`` fields -> numbers, or a report.

Sources write scores several ways, all read here once the field map (`readers.fields`) has named them:

- Paper Copilot: ``"4;5;6"`` (the reviewers' scores joined by ``;`` in review order);
- OpenReview API v1 replies: ``"6: marginally above the acceptance threshold"`` (the number leads);
- OpenReview API v2 replies: ``{"value": 6}`` or ``{"value": "6: ..."}``;
- our own exports and other tables: a JSON list ``[6.0, 7.0]``, a number, or numbers joined by ``|``/``,``.

A score that does not parse (``"strong accept"``, an empty entry in ``"4;;6"``) is never guessed: the
paper keeps no scores at all (a mean of the others would be a mean of a different set of reviews) and
the load report names the file, the record and the text. The scale is taken only where the record
states it (``rating_scale: "1-10"``): a venue's scale is not inferred from the scores it happens to hold.

    >>> score_list("6: marginally above the acceptance threshold")
    ([6.0], [])
    >>> score_list("4;x;6")
    ([4.0, 6.0], ['x'])
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dashboard.readers.fields import _unwrap
from dashboard.readers.load_report import FileLog

REVIEW_FIELDS = ("ratings", "confidences", "rating_scale")
# A score's number leads its text: "6", "6.5", "6: marginally above ...", "8 - accept", "3/5".
_LEADING_NUMBER = re.compile(r"\s*([+-]?\d+(?:\.\d+)?)(.*)", re.S)
_PLAIN_NUMBER = re.compile(r"\s*[+-]?\d+(?:\.\d+)?\s*")
_SCALE = re.compile(r"\s*([+-]?\d+(?:\.\d+)?)\s*(?:-|–|—|\.\.|to|,)\s*([+-]?\d+(?:\.\d+)?)\s*", re.I)
_SHOWN_CHARS = 60


@dataclass(frozen=True)
class ReviewScores:
    """One paper's scores in review order, its reviewers' confidences (``[]`` or one per score) and the
    scale the source states (``""`` when it states none)."""

    ratings: list[float]
    confidences: list[float]
    scale: str


def parse_score(value: Any) -> float | None:
    """One score as a number, or None when it is not one.

    >>> [parse_score(v) for v in (6, "8: accept", {"value": "3"}, "3/5", "strong accept", "", True)]
    [6.0, 8.0, 3.0, 3.0, None, None, None]
    """
    value = _unwrap(value)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None
    if not isinstance(value, str):
        return None
    match = _LEADING_NUMBER.match(value)
    if not match:
        return None
    rest = match.group(2)
    # "6th", "6x" and "6.5.1" are not a score followed by its description
    if rest.strip() and not (rest[0].isspace() or rest[0] in ":/(-–—"):
        return None
    number = float(match.group(1))
    return number if math.isfinite(number) else None


def score_list(value: Any) -> tuple[list[float], list[str]]:
    """(the scores in order, the entries that do not parse) of one field's value.

    A list (each entry a score), JSON list text, text joined by ``;`` or ``|`` (or ``,`` when every part
    is a plain number: a v1 description such as "8: Top 50% of accepted papers, clear accept" holds a
    comma), or one score.
    """
    value = _unwrap(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return [], []
    items: list[Any]
    if isinstance(value, (list, tuple, np.ndarray)):
        items = list(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            return [], []
        items = [text]
        if text.startswith("[") and text.endswith("]"):
            try:
                parsed = json.loads(text)
            except (json.JSONDecodeError, RecursionError):
                parsed = None
            if isinstance(parsed, list):
                items = parsed
        elif ";" in text or "|" in text:
            items = [part.strip() for part in re.split(r"[;|]", text)]
        elif "," in text and all(_PLAIN_NUMBER.fullmatch(part) for part in text.split(",")):
            items = text.split(",")
    else:
        items = [value]
    scores: list[float] = []
    bad: list[str] = []
    for item in items:
        number = parse_score(item)
        if number is None:
            bad.append(_shown(item))
        else:
            scores.append(number)
    return scores, bad


def scale_text(value: Any) -> str | None:
    """A stated scale as ``low-high`` (``"1-10"``), ``""`` when none is stated, None when it does not parse.

    >>> scale_text("1 to 10"), scale_text([1, 5]), scale_text(""), scale_text("ten")
    ('1-10', '1-5', '', None)
    """
    value = _unwrap(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        return ""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        low, high = parse_score(value[0]), parse_score(value[1])
    elif isinstance(value, str):
        match = _SCALE.fullmatch(value.strip().strip("[]()"))
        if not match:
            return None
        low, high = float(match.group(1)), float(match.group(2))
    else:
        return None
    if low is None or high is None or low >= high:
        return None
    return f"{low:g}-{high:g}"


def review_scores(fields: dict[str, Any], place: str, log: FileLog) -> ReviewScores | None:
    """The review scores of one record's canonical fields; None when it has no review field at all.

    Problems go to ``log`` at ``place``: an unparseable score (the paper keeps no scores), confidences
    that do not parse or are not one per score (the paper keeps its scores, no confidences), a scale
    that does not parse (kept as unstated).
    """
    if not any(name in fields for name in REVIEW_FIELDS):
        return None
    ratings, bad = score_list(fields.get("ratings"))
    if bad:
        n = len(ratings) + len(bad)
        log.warn(
            place,
            f"review score {bad[0]!r} is not a number: the paper's {n} score{'s' * (n != 1)} are left "
            "out (it counts as not rated)",
        )
        ratings = []
    confidences: list[float] = []
    if ratings:
        confidences, bad = score_list(fields.get("confidences"))
        if bad:
            log.warn(
                place, f"review confidence {bad[0]!r} is not a number: the paper's confidences are left out"
            )
            confidences = []
        elif confidences and len(confidences) != len(ratings):
            log.warn(
                place,
                f"{len(confidences)} confidences for {len(ratings)} scores: the confidences are left out "
                "(which belongs to which score is unknown)",
            )
            confidences = []
    scale = scale_text(fields.get("rating_scale"))
    if scale is None:
        log.warn(
            place, f"rating scale {_shown(fields.get('rating_scale'))!r} is not a range such as 1-10: ignored"
        )
        scale = ""
    return ReviewScores(ratings, confidences, scale)


def review_columns(scores: dict[int, ReviewScores], n_rows: int) -> dict[str, pd.Series]:
    """The review columns of `dashboard.schema` (``ratings`` ... ``rating_scale``) for ``n_rows`` papers,
    from the scores found per row (rows without any get ``[]``, 0, NaN and ``""``)."""
    empty = ReviewScores([], [], "")
    rows = [scores.get(i, empty) for i in range(n_rows)]
    means = np.full(n_rows, np.nan)
    spreads = np.full(n_rows, np.nan)
    for i, row in enumerate(rows):
        if row.ratings:
            values = np.asarray(row.ratings, dtype=float)
            means[i] = float(values.mean())
            if len(values) >= 2:
                spreads[i] = float(values.std())
    return {
        "ratings": pd.Series([list(r.ratings) for r in rows], dtype="object"),
        "confidences": pd.Series([list(r.confidences) for r in rows], dtype="object"),
        "n_reviews": pd.Series([len(r.ratings) for r in rows], dtype="int64"),
        "rating_mean": pd.Series(means, dtype="float64"),
        "rating_sd": pd.Series(spreads, dtype="float64"),
        "rating_scale": pd.Series([r.scale for r in rows], dtype="str"),
    }


def _shown(value: Any) -> str:
    value = _unwrap(value)
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"

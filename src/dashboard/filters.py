"""The one selection model: a frozen `Filters` value parsed from the URL, applied as a boolean mask.

Every page and every download reads the same `Filters`, so what a user sees is what they export, and
a link reproduces the view. Parsing is forgiving: a bad URL value falls back to the default and
yields a short notice, never an exception.

    >>> f, notices = Filters.from_query({"q": 'diffusion -"video"', "code": "released", "year": "2024"})
    >>> f.to_query()
    {'q': 'diffusion -"video"', 'year': ['2024'], 'code': ['released']}

URL keys: ``q`` search, ``topic``, ``area``, ``venue``, ``year``, ``source``, ``code``, ``link``,
``dataset``, ``list`` (reading lists of the library), ``author``, ``institution``, ``country``,
``decision`` (a decision tier), ``repo`` (repository state, `dashboard.schema.REPO_STATES`), ``words``
(``MIN-MAX``, either side may be empty), ``rating`` (``MIN-MAX`` on a paper's mean review score,
compared at two decimals), ``spread`` (``MIN-MAX`` on the standard deviation of its scores), ``reviews``
(``MIN-MAX`` on its number of scored reviews; a paper without scores passes none of these three),
``id`` (papers picked on the map), ``box``
(``X0,X1,Y0,Y1``: a box drawn on the map, so a selection of thousands stays a short URL) and ``k``,
the number of topics the ``topic`` numbers refer to (``auto`` by default): a cut of the fitted topics'
tree (`dashboard.analytics.hierarchy`), or with ``refit=1`` a model refitted at that number. ``like`` (a paper
id) and ``liketext`` (a free text, at most `MAX_LIKE_CHARS` characters) ask for papers like that
paper or text (:mod:`dashboard.search.like`): they order the Papers table, they do not filter, so like
``k`` they are settings that `is_empty`, `active_keys` and `mask` leave out.

Institutions and countries are filters of their own (``institution``, ``country``) rather than a
search for their names: a click on the Overview's institution or country chart then selects exactly
the papers that chart counted, and the URL says what was picked. Author, institution and country
names match exactly as the corpus spells them (the sidebar resolves a typed name to that spelling).
"""

from __future__ import annotations

import builtins
import hashlib
import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dashboard.schema import CODE_STATUSES, DECISION_TIERS, LINK_KINDS, REPO_STATES

# Bounds that keep a hostile or mangled URL cheap to parse and apply.
MAX_QUERY_CHARS = 500
MAX_LIKE_CHARS = 2_000  # a paragraph or an abstract; longer texts are cut (and the notice says so)
MAX_ID_CHARS = 200
MAX_VALUES_PER_KEY = 500
MIN_YEAR, MAX_YEAR = 1900, 2100
MAX_TOPICS = 200

QueryParams = Mapping[str, "str | Iterable[str]"]

_LIST_KEYS: tuple[str, ...] = (
    "topic",
    "area",
    "venue",
    "year",
    "source",
    "code",
    "link",
    "dataset",
    "author",
    "institution",
    "country",
    "decision",
    "repo",
    "list",
    "id",
)
# Filters on people's and places' names: a typed name matches whatever its case and spacing.
NAME_KEYS: tuple[str, ...] = ("author", "institution", "country")
# Keys that count papers per value in `facet_counts` (the id filter offers no options).
# Repository states are left out: they change with every check, so the page counts them itself
# (`dashboard.ui.data.repo_state_counts`) rather than once per corpus.
# Reading lists are left out too: they live in the library (`dashboard.ui.library`).
FACET_KEYS: tuple[str, ...] = tuple(key for key in _LIST_KEYS[:-1] if key not in ("repo", "list"))
# Ranges of the review scores (`dashboard.schema.REVIEW_COLUMNS`): mean score, its spread, reviews.
SCORE_KEYS: tuple[str, ...] = ("rating", "spread", "reviews")
FILTER_KEYS: tuple[str, ...] = ("q", *_LIST_KEYS[:-1], "words", *SCORE_KEYS, "id", "box")
SETTING_KEYS: tuple[str, ...] = ("k", "refit", "like", "liketext")
URL_KEYS: tuple[str, ...] = (*FILTER_KEYS, *SETTING_KEYS)

# How each key is named to a user, in notices and in describe().
KEY_NAMES: dict[str, str] = {
    "q": "search",
    "topic": "topic",
    "area": "area",
    "venue": "venue",
    "year": "year",
    "source": "source file",
    "code": "code status",
    "link": "link kind",
    "dataset": "dataset",
    "author": "author",
    "institution": "institution",
    "country": "country",
    "decision": "decision",
    "repo": "repository",
    "list": "reading list",
    "words": "words",
    "rating": "mean score",
    "spread": "score spread",
    "reviews": "reviews",
    "id": "picked papers",
    "box": "box on the map",
    "k": "number of topics",
    "refit": "refit",
    "like": "papers like",
    "liketext": "papers like this text",
}


def _unique_sorted(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(sorted(set(values)))


@dataclass(frozen=True)
class Filters:
    """What the user has narrowed the papers down to. Empty fields mean "no restriction".

    List fields are stored sorted and de-duplicated, so two filters that select the same thing are
    equal and have the same URL.

        >>> Filters(code=("released", "promised", "released")).code
        ('promised', 'released')
    """

    q: str = ""
    topic: tuple[int, ...] = ()
    area: tuple[str, ...] = ()
    venue: tuple[str, ...] = ()
    year: tuple[int, ...] = ()
    source: tuple[str, ...] = ()
    code: tuple[str, ...] = ()
    link: tuple[str, ...] = ()
    dataset: tuple[str, ...] = ()
    author: tuple[str, ...] = ()
    institution: tuple[str, ...] = ()
    country: tuple[str, ...] = ()
    decision: tuple[str, ...] = ()
    repo: tuple[str, ...] = ()
    list: tuple[str, ...] = ()  # a field named like the URL key; `builtins.list` in annotations below
    words: tuple[int | None, int | None] = (None, None)
    rating: tuple[float | None, float | None] = (None, None)  # mean review score, at two decimals
    spread: tuple[float | None, float | None] = (None, None)  # standard deviation of the scores
    reviews: tuple[int | None, int | None] = (None, None)  # number of scored reviews
    id: tuple[str, ...] = ()
    box: tuple[float, ...] = ()  # (x0, x1, y0, y1) on the map, or () for none
    k: int | None = field(default=None)
    refit: bool = False  # with k: topics refitted at k instead of the tree's cut (ignored without k)
    like: str = ""  # a paper id: order by similarity to that paper
    liketext: str = ""  # a free text: order by similarity to it

    def __post_init__(self) -> None:
        # Normalise once here so equality, URLs and cache keys never depend on order or spacing.
        set_ = object.__setattr__
        set_(self, "q", " ".join(self.q.split())[:MAX_QUERY_CHARS])
        set_(self, "like", self.like.strip()[:MAX_ID_CHARS])
        set_(self, "liketext", " ".join(self.liketext.split())[:MAX_LIKE_CHARS])
        for key in _LIST_KEYS:
            values = getattr(self, key)
            if key not in ("topic", "year"):
                # Blank names select nothing and cannot survive a URL round trip: drop them.
                values = (v for v in values if v.strip())
            set_(self, key, _unique_sorted(values))
        low, high = self.words
        if low is not None and high is not None and low > high:
            low, high = high, low
        set_(self, "words", (low, high))
        for key in SCORE_KEYS:
            set_(self, key, _normal_range(getattr(self, key), whole=key == "reviews"))
        set_(self, "box", _normal_box(self.box))
        set_(self, "refit", bool(self.refit) and self.k is not None)

    # ----------------------------------------------------------------- URL round trip

    @classmethod
    def from_query(cls, params: QueryParams) -> tuple[Filters, builtins.list[str]]:
        """Parse URL query parameters; bad values are dropped with a notice, never raised.

        >>> f, notices = Filters.from_query({"year": ["2024", "soon"]})
        >>> f.year, notices
        ((2024,), ['year: ignored "soon" (not a year)'])
        """
        notices: list[str] = []
        values: dict[str, Any] = {}
        q = _values(params, "q")
        if q:
            text = q[-1]
            if len(" ".join(text.split())) > MAX_QUERY_CHARS:
                notices.append(f"search: shortened to its first {MAX_QUERY_CHARS} characters")
            values["q"] = text
        for key in _LIST_KEYS:
            raw = _values(params, key)
            if len(raw) > MAX_VALUES_PER_KEY:
                notices.append(f"{KEY_NAMES[key]}: kept the first {MAX_VALUES_PER_KEY} of {len(raw)} values")
                raw = raw[:MAX_VALUES_PER_KEY]
            parsed = []
            for value in raw:
                ok, result, why = _parse_list_value(key, value)
                if ok:
                    parsed.append(result)
                elif value.strip():
                    notices.append(f'{KEY_NAMES[key]}: ignored "{_short(value)}" ({why})')
            values[key] = tuple(parsed)
        words = _values(params, "words")
        if words and words[-1].strip():
            parsed_words = _parse_words(words[-1])
            if parsed_words is None:
                notices.append(f'words: ignored "{_short(words[-1])}" (expected MIN-MAX, e.g. 100-250)')
            else:
                values["words"] = parsed_words
        for key in SCORE_KEYS:
            given = _values(params, key)
            if given and given[-1].strip():
                parsed_range = _parse_range(given[-1], whole=key == "reviews")
                if parsed_range is None:
                    example = "3-" if key == "reviews" else "5-6.5" if key == "rating" else "1.5-"
                    notices.append(
                        f'{KEY_NAMES[key]}: ignored "{_short(given[-1])}" (expected MIN-MAX, e.g. {example})'
                    )
                else:
                    values[key] = parsed_range
        box = _values(params, "box")
        if box and box[-1].strip():
            parsed_box = _parse_box(box[-1])
            if parsed_box is None:
                notices.append(f'box on the map: ignored "{_short(box[-1])}" (expected X0,X1,Y0,Y1)')
            else:
                values["box"] = parsed_box
        like = _values(params, "like")
        if like and like[-1].strip():
            values["like"] = like[-1]
        liketext = _values(params, "liketext")
        if liketext and liketext[-1].strip():
            if len(" ".join(liketext[-1].split())) > MAX_LIKE_CHARS:
                notices.append(f"papers like this text: shortened to its first {MAX_LIKE_CHARS:,} characters")
            values["liketext"] = liketext[-1]
        k = _values(params, "k")
        if k and k[-1].strip() and k[-1].strip().lower() != "auto":
            try:
                n_topics = int(k[-1].strip())
            except ValueError:
                n_topics = 0
            if 2 <= n_topics <= MAX_TOPICS:
                values["k"] = n_topics
            else:
                why = f"expected auto or 2-{MAX_TOPICS}"
                notices.append(f'number of topics: ignored "{_short(k[-1])}" ({why}); using auto')
        refit = _values(params, "refit")
        if refit and refit[-1].strip().lower() in ("1", "true", "yes"):
            values["refit"] = True
        return cls(**values), notices

    def to_query(self) -> dict[str, str | builtins.list[str]]:
        """The URL query parameters for this selection; defaults are left out to keep links short."""
        query: dict[str, str | list[str]] = {}
        if self.q:
            query["q"] = self.q
        for key in _LIST_KEYS:
            values = getattr(self, key)
            if values:
                query[key] = [str(v) for v in values]
        if self.words != (None, None):
            low, high = self.words
            query["words"] = f"{'' if low is None else low}-{'' if high is None else high}"
        for key in SCORE_KEYS:
            if getattr(self, key) != (None, None):
                query[key] = _range_text(getattr(self, key))
        if self.box:
            query["box"] = ",".join(_box_number(v) for v in self.box)
        if self.k is not None:
            query["k"] = str(self.k)
        if self.refit:
            query["refit"] = "1"
        if self.like:
            query["like"] = self.like
        if self.liketext:
            query["liketext"] = self.liketext
        return query

    @property
    def model(self) -> str:
        """Which topic model the topic numbers refer to, for cache keys: ``auto``, ``12`` (the tree's
        cut at 12) or ``12-refit``."""
        if self.k is None:
            return "auto"
        return f"{self.k}-refit" if self.refit else str(self.k)

    # ----------------------------------------------------------------- working with the data

    @property
    def is_empty(self) -> bool:
        """True when no filter restricts the papers (the number of topics is a setting, not a filter).

        "Papers like" restricts them: its papers are the ones every page counts and a download holds.
        """
        return replace(self, k=None, refit=False) == Filters()

    def active_keys(self) -> builtins.list[str]:
        """URL keys of the filters that restrict something, in URL order."""
        default = Filters()
        return [key for key in FILTER_KEYS if getattr(self, key) != getattr(default, key)]

    def cleared(self) -> Filters:
        """The same view with every filter removed, "papers like" too (the number of topics stays)."""
        return Filters(k=self.k, refit=self.refit)

    def without(self, *keys: str) -> Filters:
        """This selection with the given filters removed, e.g. for counts beside a topic list."""
        default = Filters()
        return replace(self, **{key: getattr(default, key) for key in keys})

    def restrict(self, available: Mapping[str, Collection[Any]]) -> tuple[Filters, builtins.list[str]]:
        """Drop values that this corpus does not have (e.g. a topic number from another model).

        >>> f, notices = Filters(venue=("ICML", "NIPS")).restrict({"venue": {"ICML"}})
        >>> f.venue, notices
        (('ICML',), ['venue: no "NIPS" in this corpus; ignored'])

        A name typed in another case or spacing (``author``, ``institution``, ``country``) becomes the
        corpus's spelling: ``ada  LOVELACE`` selects "Ada Lovelace".
        """
        notices: list[str] = []
        changes: dict[str, Any] = {}
        for key, allowed in available.items():
            current = getattr(self, key)
            if key in NAME_KEYS and any(v not in allowed for v in current):
                current = _spelled_as_in(current, allowed)
                changes[key] = current
            kept = tuple(v for v in current if v in allowed)
            if len(kept) != len(current):
                for value in current:
                    if value not in allowed:
                        notices.append(f'{KEY_NAMES[key]}: no "{_short(str(value))}" in this corpus; ignored')
                changes[key] = kept
        return (replace(self, **changes) if changes else self), notices

    def mask(
        self,
        papers: pd.DataFrame,
        *,
        ignore: Collection[str] = (),
        text: pd.Series | None = None,
        members: np.ndarray | None = None,
    ) -> pd.Series:
        """Boolean Series (same index as ``papers``): True for papers that pass every filter.

        A filter whose column the table lacks (e.g. ``topic`` before analysis) restricts nothing.
        ``ignore`` leaves out some filters, e.g. to count papers per topic beside a topic filter.
        ``text`` is `search_text(papers)` if the caller keeps it (building it costs more than a search).
        ``members`` says which rows are in the chosen reading lists (the library lives outside the
        table, so the caller finds them: `dashboard.library.store.member_mask`); without it ``list``
        restricts nothing.
        """
        keep = np.ones(len(papers), dtype=bool)
        active = [key for key in self.active_keys() if key not in ignore]
        for key in active:
            if key == "list":
                if members is not None:
                    keep &= members
                continue
            column = _COLUMN_OF[key]
            if column is not None and column not in papers.columns:
                continue
            if key == "q":
                keep &= search_mask(search_text(papers) if text is None else text, self.q)
                continue
            keep &= _MASKERS[key](self, papers)
            if not keep.any():
                break
        return pd.Series(keep, index=papers.index, name="selected")

    # ----------------------------------------------------------------- words for people and files

    def describe(self, topic_labels: Mapping[int, str] | None = None) -> str:
        """One short line of what is filtered, e.g. ``search "graph" · code: released · 2024``."""
        parts: list[str] = []
        if self.q:
            parts.append(f"search {self.q}" if '"' in self.q else f'search "{self.q}"')
        if self.topic:
            labels = topic_labels or {}
            names = [labels.get(t, "outliers" if t == -1 else f"topic {t}") for t in self.topic]
            parts.append("topic: " + ", ".join(names))
        for key in ("area", "venue", "source", "code", "link", "dataset", "author", "institution", "country",
                    "repo", "list"):  # fmt: skip
            values = getattr(self, key)
            if values:
                shown = (
                    [v.replace("_", " ") for v in values] if key in ("code", "link", "repo") else list(values)
                )
                parts.append(f"{KEY_NAMES[key]}: " + ", ".join(shown))
        if self.decision:
            parts.append("decision: " + ", ".join(self.decision))
        if self.year:
            parts.append("year: " + ", ".join(str(y) for y in self.year))
        if self.words != (None, None):
            low, high = self.words
            if low is None:
                parts.append(f"≤ {high} words")
            elif high is None:
                parts.append(f"≥ {low} words")
            else:
                parts.append(f"{low}-{high} words")
        for key in SCORE_KEYS:
            low, high = getattr(self, key)
            if (low, high) == (None, None):
                continue
            name = KEY_NAMES[key]
            if low is None:
                parts.append(f"{name} ≤ {_range_number(high)}")
            elif high is None:
                parts.append(f"{name} ≥ {_range_number(low)}")
            else:
                parts.append(f"{name} {_range_text((low, high))}")
        if self.id:
            parts.append(f"{len(self.id)} picked papers")
        if self.box:
            parts.append("a box on the map")
        if self.like:
            parts.append(f"papers like {self.like}")
        elif self.liketext:
            start = self.liketext if len(self.liketext) <= 40 else self.liketext[:39] + "…"
            parts.append(f'papers like "{start}"')
        return " · ".join(parts) if parts else "no filters"

    def slug(self, max_length: int = 80) -> str:
        """A file-name-safe summary, e.g. ``q-graph_code-released`` (``all`` when nothing is filtered).

        Long selections are cut and end in a short hash, so different selections keep different names.
        """
        parts: list[str] = []
        if self.q:
            query = parse_search(self.q)
            terms = [_slugify(t) for t in query.include] + ["not-" + _slugify(t) for t in query.exclude]
            parts.append("q-" + "-".join(terms))
        for key in _LIST_KEYS:
            values = getattr(self, key)
            if values and key != "id":
                names = ["outlier" if key == "topic" and v == -1 else _slugify(str(v)) for v in values]
                parts.append(key + "-" + "+".join(names))
        if self.words != (None, None):
            low, high = self.words
            parts.append(f"words-{'' if low is None else low}-{'' if high is None else high}")
        for key in SCORE_KEYS:
            if getattr(self, key) != (None, None):
                parts.append(f"{key}-" + _range_text(getattr(self, key)))
        if self.id:
            parts.append(f"{len(self.id)}-picked")
        if self.box:
            parts.append("box-" + hashlib.sha256(repr(self.box).encode()).hexdigest()[:6])
        if self.topic and self.k is not None:
            parts.append(f"k-{self.k}" + ("-refit" if self.refit else ""))
        if self.like:
            parts.append("like-" + _slugify(self.like))
        if self.liketext:
            parts.append("liketext-" + hashlib.sha256(self.liketext.encode()).hexdigest()[:6])
        slug = "_".join(p for p in parts if p) or "all"
        if len(slug) > max_length:
            digest = hashlib.sha256(repr(self).encode()).hexdigest()[:8]
            slug = slug[: max_length - 9].rstrip("-_+") + "-" + digest
        return slug


# --------------------------------------------------------------------- what a corpus offers


def facet_counts(papers: pd.DataFrame) -> dict[str, pd.Series]:
    """Papers per value of each list filter, most frequent first: the options a user can pick.

    Keys are URL keys (``topic``, ``area``, ``venue``...); a filter whose column is missing (e.g.
    ``topic`` before analysis) is left out. Link kinds count papers, not links.

        >>> facet_counts(pd.DataFrame({"venue": ["ICML", "ICLR", "ICML"]}))["venue"].to_dict()
        {'ICML': 2, 'ICLR': 1}
    """
    counts: dict[str, pd.Series] = {}
    for key in FACET_KEYS:
        column = _COLUMN_OF[key]
        if column is None or column not in papers.columns:
            continue
        values = papers[column]
        if column in _LIST_COLUMNS:
            rows = pd.Series(values.to_numpy(), index=np.arange(len(papers))).explode().dropna()
            if key == "link":
                rows = rows.map(lambda d: d.get("kind") if isinstance(d, dict) else None).dropna()
            # One count per paper even when a paper lists a value twice.
            pairs = pd.DataFrame({"row": rows.index, "value": rows.to_numpy()}).drop_duplicates()
            # str, as an index stores it: also when every list is empty (authors of a corpus without any)
            values = pairs["value"].astype("str")
        values = values.dropna()
        if key not in ("topic", "year"):
            values = values[values.astype("str") != ""]
        result = values.value_counts()
        result.index.name = key
        counts[key] = result.rename("papers")
    return counts


# --------------------------------------------------------------------- search


@dataclass(frozen=True)
class SearchQuery:
    """A parsed search: every term and phrase must occur, no excluded one may.

    >>> parse_search('graph "message passing" -molecule')
    SearchQuery(include=('graph', 'message passing'), exclude=('molecule',))
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


_SEARCH_TOKEN = re.compile(r'(-?)"([^"]*)"?|(-?)([^\s"]+)')
_REGEX_SPECIALS = frozenset("\\.^$|?*+()[]{}")


def parse_search(q: str) -> SearchQuery:
    """Split a search string into terms and "quoted phrases" to include and ``-terms`` to exclude.

    Matching ignores case; an unclosed quote runs to the end of the text.
    """
    include: list[str] = []
    exclude: list[str] = []
    for match in _SEARCH_TOKEN.finditer(q):
        negated = bool(match.group(1) or match.group(3))
        term = match.group(2) if match.group(2) is not None else match.group(4)
        term = " ".join(term.lower().split())
        if not term or term == "-":
            continue
        (exclude if negated else include).append(term)
    return SearchQuery(tuple(dict.fromkeys(include)), tuple(dict.fromkeys(exclude)))


def term_pattern(term: str) -> str:
    """Regular expression for one search term: matches at a word start; inner spaces match hyphens too.

    Works with both Python ``re`` and RE2 (pyarrow string columns), so it avoids look-behind.

        >>> term_pattern("graph net")
        '\\\\bgraph[\\\\s-]+net'
    """
    words = term.split()
    escaped = r"[\s-]+".join("".join("\\" + c if c in _REGEX_SPECIALS else c for c in w) for w in words)
    # A word boundary only means something before an ASCII letter or digit in RE2; elsewhere (CJK,
    # symbols) plain substring search is what a user expects.
    first = words[0][0] if words else ""
    return (r"\b" + escaped) if first.isascii() and first.isalnum() else escaped


def search_text(papers: pd.DataFrame) -> pd.Series:
    """The text search looks in: title, cleaned abstract, method names and authors (where present)."""
    text = papers["title"].astype("str") + "\n" + papers["abstract_clean"].astype("str")
    if "method_names" in papers.columns:
        names = papers["method_names"].map(lambda ns: " ".join(ns) if isinstance(ns, list | tuple) else "")
        text = text + "\n" + names.astype("str")
    if "authors" in papers.columns:
        text = text + "\n" + papers["authors"].map(_joined_names).astype("str")
    return text


def _joined_names(names: Any) -> str:
    # "; " between names: a quoted phrase (its spaces match spaces and hyphens) never runs from one
    # author's name into the next one's.
    if isinstance(names, str):
        return names
    try:
        return "; ".join(str(n) for n in names)
    except TypeError:  # a missing value (NaN, None)
        return ""


def search_mask(text: pd.Series, q: str) -> np.ndarray:
    """Boolean array: which texts match the search ``q`` (all terms, no excluded term).

    Runs in Arrow's RE2 engine (tens of milliseconds per term over 27k abstracts, against hundreds
    through `Series.str.contains`); `term_pattern` keeps the patterns valid in both engines.
    """
    query = parse_search(q)
    keep = np.ones(len(text), dtype=bool)
    if not (query.include or query.exclude) or len(text) == 0:
        return keep
    values = pa.array(text.astype("str"), type=pa.large_string())
    for term, wanted in [(t, True) for t in query.include] + [(t, False) for t in query.exclude]:
        hits = pc.match_substring_regex(values, term_pattern(term), ignore_case=True).fill_null(False)
        found = hits.to_numpy(zero_copy_only=False).astype(bool)
        keep &= found if wanted else ~found
    return keep


def highlight_spans(text: str, q: str) -> list[tuple[int, int]]:
    """Character spans of the included search terms in ``text``, sorted and merged.

    >>> highlight_spans("Graph nets on graphs", "graph")
    [(0, 5), (14, 19)]
    """
    spans: list[tuple[int, int]] = []
    for term in parse_search(q).include:
        spans.extend(m.span() for m in re.finditer(term_pattern(term), text, flags=re.IGNORECASE))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


# --------------------------------------------------------------------- masks per key


def _isin(column: str, key: str) -> Any:
    def mask(f: Filters, papers: pd.DataFrame) -> np.ndarray:
        return papers[column].isin(list(getattr(f, key))).to_numpy(dtype=bool)

    return mask


def _any_of_list(column: str, key: str, item: str | None = None) -> Any:
    """Mask for a list column: the paper's list holds at least one wanted value."""

    def mask(f: Filters, papers: pd.DataFrame) -> np.ndarray:
        # Positions, not index labels, so a table with a non-unique index still works.
        exploded = pd.Series(papers[column].to_numpy(), index=np.arange(len(papers))).explode()
        if item is not None:
            exploded = exploded.map(lambda d: d.get(item) if isinstance(d, dict) else None)
        hit = exploded.isin(list(getattr(f, key))).to_numpy(dtype=bool)
        rows = np.zeros(len(papers), dtype=bool)
        rows[exploded.index.to_numpy()[hit]] = True
        return rows

    return mask


def _words_mask(f: Filters, papers: pd.DataFrame) -> np.ndarray:
    low, high = f.words
    n_words = pd.to_numeric(papers["n_words"], errors="coerce")
    keep = n_words.notna().to_numpy(dtype=bool, copy=True)
    if low is not None:
        keep &= (n_words >= low).fillna(False).to_numpy(dtype=bool)
    if high is not None:
        keep &= (n_words <= high).fillna(False).to_numpy(dtype=bool)
    return keep


def _range_mask(column: str, key: str, decimals: int | None = None) -> Any:
    """Mask of a ``MIN-MAX`` range on a numeric column, both ends included; a missing value fails."""

    def mask(f: Filters, papers: pd.DataFrame) -> np.ndarray:
        low, high = getattr(f, key)
        values = pd.to_numeric(papers[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        if decimals is not None:
            values = np.round(values, decimals)
        keep = ~np.isnan(values)
        if low is not None:
            keep &= values >= low
        if high is not None:
            keep &= values <= high
        if key == "reviews" and low is None:
            keep &= values > 0  # "at most 2 reviews" means papers with scores, not the unscored ones
        return keep

    return mask


def _box_mask(f: Filters, papers: pd.DataFrame) -> np.ndarray:
    x0, x1, y0, y1 = f.box
    x, y = papers["x"].to_numpy(dtype=float), papers["y"].to_numpy(dtype=float)
    return (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)


def _year_mask(f: Filters, papers: pd.DataFrame) -> np.ndarray:
    return papers["year"].isin(list(f.year)).fillna(False).to_numpy(dtype=bool)


_MASKERS: dict[str, Any] = {
    "topic": _isin("topic", "topic"),
    "area": _any_of_list("areas", "area"),
    "venue": _isin("venue", "venue"),
    "year": _year_mask,
    "source": _isin("source", "source"),
    "code": _isin("code_status", "code"),
    "link": _any_of_list("links", "link", item="kind"),
    "dataset": _any_of_list("datasets", "dataset"),
    "author": _any_of_list("authors", "author"),
    "institution": _any_of_list("affiliations", "institution"),
    "country": _any_of_list("countries", "country"),
    "decision": _isin("decision_tier", "decision"),
    "repo": _isin("repo_state", "repo"),
    "words": _words_mask,
    "rating": _range_mask("rating_mean", "rating", decimals=2),
    "spread": _range_mask("rating_sd", "spread"),
    "reviews": _range_mask("n_reviews", "reviews"),
    "id": _isin("id", "id"),
    "box": _box_mask,
}  # "list" is applied in `Filters.mask` from the ``members`` it is given

# The table column each filter reads (None: several columns, always present).
_COLUMN_OF: dict[str, str | None] = {
    "q": "abstract_clean",
    "topic": "topic",
    "area": "areas",
    "venue": "venue",
    "year": "year",
    "source": "source",
    "code": "code_status",
    "link": "links",
    "dataset": "datasets",
    "author": "authors",
    "institution": "affiliations",
    "country": "countries",
    "decision": "decision_tier",
    "repo": "repo_state",
    "words": "n_words",
    "rating": "rating_mean",
    "spread": "rating_sd",
    "reviews": "n_reviews",
    "list": None,
    "id": "id",
    "box": "x",
}
_LIST_COLUMNS: frozenset[str] = frozenset(
    {"areas", "datasets", "links", "authors", "affiliations", "countries"}
)


# --------------------------------------------------------------------- parsing helpers


def _name_key(name: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def _spelled_as_in(names: Iterable[str], allowed: Collection[Any]) -> tuple[str, ...]:
    """``names`` with each one the corpus lacks replaced by the corpus's spelling of it, if any."""
    spelling: dict[str, str] | None = None
    result = []
    for name in names:
        if name not in allowed:
            if spelling is None:
                spelling = {}
                for known in allowed:  # most papers first: the commonest spelling wins a tie
                    spelling.setdefault(_name_key(str(known)), str(known))
            name = spelling.get(_name_key(name), name)
        result.append(name)
    return _unique_sorted(result)


def _values(params: QueryParams, key: str) -> list[str]:
    value = params.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _parse_list_value(key: str, value: str) -> tuple[bool, Any, str]:
    """(ok, parsed value, why not) for one value of a list key."""
    text = value.strip()
    if not text:
        return False, None, "empty"
    if key == "topic":
        try:
            topic = int(text)
        except ValueError:
            return False, None, "not a topic number"
        return (topic >= -1, topic, "not a topic number")
    if key == "year":
        try:
            year = int(text)
        except ValueError:
            return False, None, "not a year"
        return (MIN_YEAR <= year <= MAX_YEAR, year, "not a year")
    if key == "code":
        return (text in CODE_STATUSES, text, "expected one of " + ", ".join(CODE_STATUSES))
    if key == "link":
        return (text in LINK_KINDS, text, "expected one of " + ", ".join(LINK_KINDS))
    if key == "decision":
        return (text in DECISION_TIERS, text, "expected one of " + ", ".join(DECISION_TIERS))
    if key == "repo":
        return (text in REPO_STATES, text, "expected one of " + ", ".join(REPO_STATES))
    # Free text (venue, source, area, dataset, author, institution, country, id) is kept verbatim:
    # names may have any spacing.
    return True, value, ""


_WORDS = re.compile(r"^\s*(\d{0,7})\s*-\s*(\d{0,7})\s*$")


def _parse_words(value: str) -> tuple[int | None, int | None] | None:
    match = _WORDS.match(value)
    if not match or not (match.group(1) or match.group(2)):
        return None
    low = int(match.group(1)) if match.group(1) else None
    high = int(match.group(2)) if match.group(2) else None
    return low, high


_RANGE = re.compile(r"^\s*(\d{0,7}(?:\.\d{0,6})?)\s*-\s*(\d{0,7}(?:\.\d{0,6})?)\s*$")


def _parse_range(value: str, *, whole: bool = False) -> tuple[float | int | None, float | int | None] | None:
    """``MIN-MAX`` (either side may be empty) of non-negative numbers (``whole``: whole numbers)."""
    match = _RANGE.match(value)
    if not match or not (match.group(1).strip(".") or match.group(2).strip(".")):
        return None
    bounds: list[float | int | None] = []
    for text in (match.group(1), match.group(2)):
        if not text.strip("."):
            if text:
                return None
            bounds.append(None)
            continue
        number = float(text)
        if whole and not number.is_integer():
            return None
        bounds.append(int(number) if whole else number)
    return bounds[0], bounds[1]


def _normal_range(bounds: tuple[Any, Any], *, whole: bool) -> tuple[Any, Any]:
    """A range in order, rounded as the URL writes it (whole numbers, or two decimals)."""
    low, high = (None if b is None else (int(b) if whole else round(float(b), 2)) for b in bounds)
    if low is not None and high is not None and low > high:
        low, high = high, low
    return low, high


def _range_text(bounds: tuple[Any, Any]) -> str:
    low, high = bounds
    return f"{_range_number(low)}-{_range_number(high)}"


def _range_number(value: float | int | None) -> str:
    """A bound as the URL writes it: ``6``, ``5.5``, ``5.33`` (never an exponent); ``""`` for None."""
    if value is None:
        return ""
    return str(value) if isinstance(value, int) else f"{value:.2f}".rstrip("0").rstrip(".")


def _box_number(value: float) -> str:
    """A map coordinate as the URL writes it: 5 significant digits (a box needs no more)."""
    return f"{value:.5g}"


def _normal_box(box: Iterable[float]) -> tuple[float, ...]:
    """(x0, x1, y0, y1) with each pair in order and rounded as the URL rounds; () if not 4 finite numbers."""
    values = [float(_box_number(float(v))) for v in box]
    if len(values) != 4 or not all(np.isfinite(values)):
        return ()
    x0, x1, y0, y1 = values
    return (min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1))


def _parse_box(value: str) -> tuple[float, ...] | None:
    try:
        box = _normal_box(float(v) for v in value.split(","))
    except ValueError:
        return None
    return box or None


def _short(value: str, limit: int = 40) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _slugify(text: str) -> str:
    """ASCII letters, digits and dashes; text in other scripts becomes a short stable hash."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if not slug or len(ascii_text.strip()) < len(text.strip()) // 2:
        slug = (slug + "-" if slug else "") + hashlib.sha256(text.encode()).hexdigest()[:6]
    return slug

"""Research areas: an editable taxonomy (TOML) of machine-learning areas with keyword rules.

Topics are learned from each corpus; areas are fixed, named groups that mean the same on 57 abstracts as
on 27,000. The default taxonomy ships as ``dashboard/data/areas.toml`` (its header explains the rules);
a user can point to their own file with the same layout.

>>> taxonomy = load_taxonomy()
>>> assign_areas(["We train a graph neural network for molecule property prediction."], taxonomy)
[['Graphs & geometric learning', 'Science & engineering applications']]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dashboard.text.tokens import scan

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI (tomli)
    import tomli as tomllib

DEFAULT_TAXONOMY_NAME = "areas.toml"
KEYWORD_WEIGHT = 1.0
STRONG_WEIGHT = 2.0
MAX_MENTIONS_COUNTED = 3  # one phrase repeated cannot decide an area on its own


class TaxonomyError(ValueError):
    """A taxonomy file that cannot be used; the message names the file and the line."""


@dataclass(frozen=True)
class Area:
    """One research area and its keyword rules (phrases as normalised term tuples)."""

    name: str
    phrases: tuple[tuple[tuple[str, ...], float], ...]
    exclude: tuple[tuple[str, ...], ...] = ()
    description: str = ""


@dataclass(frozen=True)
class Taxonomy:
    """The areas and the thresholds that turn keyword scores into a paper's areas."""

    areas: tuple[Area, ...]
    min_score: float = 2.0
    max_areas: int = 3
    relative_cut: float = 0.4
    source: str = DEFAULT_TAXONOMY_NAME

    @property
    def names(self) -> list[str]:
        """The area names in file order."""
        return [area.name for area in self.areas]


def _phrase_terms(phrase: str) -> tuple[str, ...]:
    """A keyword phrase as the terms it matches; hyphenated words match with or without the hyphen."""
    return tuple(part for term in scan(phrase) if term for part in term.split("-") if part)


def _line_of_area(text: str, index: int) -> int:
    """1-based line of the ``index``-th ``[[area]]`` header (0-based index), for error messages."""
    headers = [m.start() for m in re.finditer(r"^[ \t]*\[\[[ \t]*area[ \t]*\]\]", text, re.MULTILINE)]
    if index >= len(headers):
        return 1
    return text.count("\n", 0, headers[index]) + 1


def _string_list(value: Any, what: str, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TaxonomyError(f'{where}: \'{what}\' must be a list of strings, e.g. {what} = ["graph", "node"]')
    return value


def _number(settings: dict[str, Any], key: str, default: float, where: str) -> float:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise TaxonomyError(f"{where}: setting '{key}' must be a non-negative number, got {value!r}")
    return float(value)


def parse_taxonomy(text: str, source: str = "<taxonomy>") -> Taxonomy:
    """Build a taxonomy from TOML text; :class:`TaxonomyError` names ``source`` and the line on a problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        # tomllib's message ends with "(at line N, column M)".
        raise TaxonomyError(f"{source}: not valid TOML: {error}") from None
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        raise TaxonomyError(f"{source}: [settings] must be a table")
    raw_areas = data.get("area")
    if not isinstance(raw_areas, list) or not raw_areas:
        raise TaxonomyError(f"{source}: no areas found; each area starts with a line [[area]] and has a name")
    areas: list[Area] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_areas):
        where = f"{source}: line {_line_of_area(text, index)} (area {index + 1})"
        name = raw.get("name") if isinstance(raw, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise TaxonomyError(f'{where}: the area has no name; add name = "..."')
        if name in seen:
            raise TaxonomyError(f"{where}: the area name {name!r} is used twice")
        seen.add(name)
        unknown = set(raw) - {"name", "keywords", "strong", "exclude", "description"}
        if unknown:
            raise TaxonomyError(f"{where}: unknown key(s) {sorted(unknown)} in area {name!r}")
        weighted = [(p, KEYWORD_WEIGHT) for p in _string_list(raw.get("keywords"), "keywords", where)]
        weighted += [(p, STRONG_WEIGHT) for p in _string_list(raw.get("strong"), "strong", where)]
        phrases: dict[tuple[str, ...], float] = {}
        for phrase, weight in weighted:
            terms = _phrase_terms(phrase)
            if terms:
                phrases[terms] = max(weight, phrases.get(terms, 0.0))
        if not phrases:
            raise TaxonomyError(f"{where}: area {name!r} has no keywords or strong phrases")
        exclude = tuple(
            t for t in map(_phrase_terms, _string_list(raw.get("exclude"), "exclude", where)) if t
        )
        description = raw.get("description", "")
        areas.append(Area(name.strip(), tuple(phrases.items()), exclude, str(description)))
    return Taxonomy(
        areas=tuple(areas),
        min_score=_number(settings, "min_score", 2.0, source),
        max_areas=max(1, int(_number(settings, "max_areas", 3, source))),
        relative_cut=_number(settings, "relative_cut", 0.4, source),
        source=source,
    )


def load_taxonomy(path: Path | str | None = None) -> Taxonomy:
    """The taxonomy in ``path``, or the one shipped with the package when ``path`` is None."""
    if path is None:
        text = (
            resources.files("dashboard").joinpath("data", DEFAULT_TAXONOMY_NAME).read_text(encoding="utf-8")
        )
        return parse_taxonomy(text, DEFAULT_TAXONOMY_NAME)
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise TaxonomyError(f"{path}: cannot read the taxonomy file: {error}") from None
    return parse_taxonomy(text, str(path))


class _PhraseIndex:
    """Every area's phrases as a trie over term ids, so a batch of texts is matched with array operations.

    A text's terms are those of `scan`, hyphenated words split in parts (as `_phrase_terms` splits the
    phrases). A phrase counts each time its terms appear in a row; per text, a phrase adds its weight
    times its count (at most `MAX_MENTIONS_COUNTED`) to its area, and an exclusion phrase found sets its
    area to zero.
    """

    def __init__(self, taxonomy: Taxonomy) -> None:
        self.n_areas = len(taxonomy.areas)
        term_ids: dict[str, int] = {}  # a phrase term's id, from 1 (0: any term no phrase has)
        children: dict[tuple[int, int], int] = {}  # (node, term id) -> node; node 0 is the root
        # (the node that ends the phrase, its area, its weight, whether it excludes)
        entries: list[tuple[int, int, float, bool]] = []
        self.longest = 0

        def add(phrase: tuple[str, ...], column: int, weight: float, exclusion: bool) -> None:
            node = 0
            for term in phrase:
                term_id = term_ids.setdefault(term, len(term_ids) + 1)
                node = children.setdefault((node, term_id), len(children) + 1)
            entries.append((node, column, weight, exclusion))
            self.longest = max(self.longest, len(phrase))

        for column, area in enumerate(taxonomy.areas):
            for terms, weight in area.phrases:
                add(terms, column, weight, False)
            for terms in area.exclude:
                add(terms, column, 0.0, True)
        self.terms = pa.array(list(term_ids), pa.large_string())
        self.base = len(term_ids) + 1
        edges = np.array([node * self.base + term for node, term in children], dtype=np.int64)
        order = np.argsort(edges)
        self.edges = edges[order]
        self.child = np.array(list(children.values()), dtype=np.int64)[order]
        entries.sort(key=lambda entry: entry[0])
        ends = np.array([entry[0] for entry in entries], dtype=np.int64)
        self.first_entry = np.searchsorted(ends, np.arange(len(children) + 2))
        self.entry_area = np.array([entry[1] for entry in entries], dtype=np.int64)
        self.entry_weight = np.array([entry[2] for entry in entries], dtype=np.float64)
        self.entry_excludes = np.array([entry[3] for entry in entries], dtype=bool)
        self.n_nodes = len(children) + 1

    def scores(self, scanned: Sequence[Sequence[str]] | pa.ListArray) -> np.ndarray:
        """The texts x areas scores of already scanned texts (lists of terms, or an Arrow list array)."""
        out = np.zeros((len(scanned), self.n_areas), dtype=np.float32)
        if not len(scanned) or not self.longest:
            return out
        # Each text's terms joined by NUL (no term holds one), a NUL after each: an empty term with id 0
        # ends every text, so no phrase runs from one text into the next.
        if isinstance(scanned, pa.Array):
            nul = pa.scalar("\0", pa.large_string())
            joined = pc.binary_join_element_wise(
                pc.binary_join(scanned, nul), nul, pa.scalar("", pa.large_string())
            )
        else:
            joined = pa.array(["\0".join(terms) + "\0" for terms in scanned], pa.large_string())
        words = pc.split_pattern(pc.replace_substring(joined, "-", "\0"), "\0")
        found = pc.index_in(pc.list_flatten(words), value_set=self.terms).fill_null(-1)
        ids = np.asarray(found, dtype=np.int64) + 1
        starts = np.asarray(words.offsets, dtype=np.int64)[:-1]
        ids = np.concatenate([ids, np.zeros(self.longest, dtype=np.int64)])
        # Walk the trie from every position at once, one term further per step, keeping live windows.
        where = np.flatnonzero(ids)
        node = np.zeros(len(where), dtype=np.int64)
        found_at, found_node = [], []
        for step in range(self.longest):
            key = node * self.base + ids[where + step]
            slot = np.minimum(np.searchsorted(self.edges, key), len(self.edges) - 1)
            live = self.edges[slot] == key
            where, node = where[live], self.child[slot[live]]
            ending = self.first_entry[node + 1] > self.first_entry[node]
            found_at.append(where[ending])
            found_node.append(node[ending])
        text = np.searchsorted(starts, np.concatenate(found_at), side="right") - 1
        pairs, counts = np.unique(text * self.n_nodes + np.concatenate(found_node), return_counts=True)
        text, node = pairs // self.n_nodes, pairs % self.n_nodes
        # Each (text, phrase) found, once per entry of that phrase (the same phrase may serve two areas).
        per_node = self.first_entry[node + 1] - self.first_entry[node]
        first = np.repeat(self.first_entry[node] - np.cumsum(per_node) + per_node, per_node)
        entry = first + np.arange(len(first))
        rows = np.repeat(text, per_node)
        counted = np.minimum(np.repeat(counts, per_node), MAX_MENTIONS_COUNTED)
        excludes = self.entry_excludes[entry]
        kept = ~excludes
        np.add.at(
            out,
            (rows[kept], self.entry_area[entry[kept]]),
            (self.entry_weight[entry[kept]] * counted[kept]).astype(np.float32),
        )
        out[rows[excludes], self.entry_area[entry[excludes]]] = 0.0
        return out


_SCORED_AT_ONCE = 5_000  # texts per batch: their terms as Arrow strings stay a few tens of MB


def area_scores(texts: Iterable[str | Sequence[str]] | pa.ListArray, taxonomy: Taxonomy) -> np.ndarray:
    """A papers x areas matrix of keyword scores (columns in ``taxonomy.names`` order).

    A text may be given already scanned (:func:`dashboard.text.tokens.scan`); the texts may also be an
    Arrow list array of scanned terms (large_string), as the index build's count step has them, which
    then builds no Python list per text.
    """
    index = _PhraseIndex(taxonomy)
    blocks = [np.zeros((0, len(taxonomy.areas)), dtype=np.float32)]
    if isinstance(texts, pa.Array):
        for start in range(0, len(texts), _SCORED_AT_ONCE):
            blocks.append(index.scores(texts.slice(start, _SCORED_AT_ONCE)))
        return np.vstack(blocks)
    batch: list[Sequence[str]] = []
    for text in texts:
        batch.append(scan(text) if isinstance(text, str) else text)
        if len(batch) == _SCORED_AT_ONCE:
            blocks.append(index.scores(batch))
            batch = []
    blocks.append(index.scores(batch))
    return np.vstack(blocks)


def spread(scores: np.ndarray) -> float:
    """How widely a corpus spans the taxonomy: the entropy of its papers' best areas, divided by the
    entropy of an even spread over every area (0: one area holds every paper; 1: all equally full).
    Papers no area rule fires on are not counted; 0 when none has an area or there is one area.

    >>> spread(np.eye(4)), spread(np.array([[1.0, 0.0], [2.0, 0.0]]))
    (1.0, 0.0)
    """
    scores = np.asarray(scores)
    if scores.ndim != 2 or scores.shape[1] < 2:
        return 0.0
    best = scores.argmax(axis=1)[scores.max(axis=1) > 0]
    if not len(best):
        return 0.0
    shares = np.bincount(best, minlength=scores.shape[1]) / len(best)
    shares = shares[shares > 0]
    return float(max(0.0, -(shares * np.log(shares)).sum()) / np.log(scores.shape[1]))


def areas_from_scores(scores: np.ndarray, taxonomy: Taxonomy) -> list[list[str]]:
    """Each paper's areas, best first: score >= min_score and >= relative_cut x the paper's best."""
    names = np.asarray(taxonomy.names, dtype=object)
    scores = np.asarray(scores)
    if scores.ndim != 2 or scores.shape[1] == 0:
        return [[] for _ in range(len(scores))]
    best = scores.max(axis=1)
    cut = np.maximum(taxonomy.min_score, taxonomy.relative_cut * best)
    # Every row sorted at once (best first, ties in file order), then the kept columns row by row.
    order = np.argsort(-scores, axis=1, kind="stable")[:, : taxonomy.max_areas]
    kept = (np.take_along_axis(scores, order, axis=1) >= cut[:, None]) & (best >= taxonomy.min_score)[:, None]
    return [names[row[keep]].tolist() for row, keep in zip(order, kept, strict=True)]


def assign_areas(texts: Iterable[str], taxonomy: Taxonomy | None = None) -> list[list[str]]:
    """The research areas of every text (multi-label, best first; ``[]`` when no rule fires)."""
    taxonomy = taxonomy or load_taxonomy()
    return areas_from_scores(area_scores(texts, taxonomy), taxonomy)


def primary_area(areas: Sequence[str]) -> str:
    """A paper's best area, ``""`` when it has none."""
    return areas[0] if areas else ""

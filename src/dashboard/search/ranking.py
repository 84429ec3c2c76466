"""Ranked search: BM25 over the app's inverted index, a fallback for typos and plurals, matched sentences.

The search ``q`` keeps its filter semantics (:func:`dashboard.filters.parse_search`: every word and
"phrase" must occur, no ``-excluded`` one may); this module orders the papers that pass by relevance.

**Scoring.** Okapi BM25 (``k1 = 1.2``, ``b = 0.75``) over the words of `filters.search_text` (title,
abstract, method names, authors), read from :class:`dashboard.search.wordindex.WordIndex`: each posting
carries the word's count in the paper, a title word counting `wordindex.TITLE_WEIGHT` (3) times
(a BM25F-style field weight), so a paper titled "Gaussian Processes for Regression" outranks one
that mentions Gaussian processes once. A search word matches at a word start, as the filter does
("graph" finds "graphs"): words that only start with it count half. Each word of a phrase scores
as a word. An index built before term frequencies were stored has every count 1 and no lengths:
the ranking is then by the rarity of the words matched (idf), and `SearchResult.notes` says so.

**Fallback.** When no paper passes, `search` tries, in order: a query word no paper has replaced by
its singular (``transformers`` -> ``transformer``) or the closest word of the vocabulary (same first
letter, `difflib` ratio >= 0.75, the commonest such word: ``tranformer`` -> ``transformer``); every
plural made singular; then any paper holding some of the search's terms (a whole word or phrase
each: ``zzzz-no-such-word`` is one term, and finds nothing), ranked by BM25 (``mode="any"``).
Each step used is said in ``notes`` for the page to show.

>>> import pandas as pd
>>> from dashboard.search.wordindex import WordIndex
>>> index = WordIndex.build(pd.Series(["Graph networks\\nWe study graphs.", "Diffusion\\nA graph, once."]))
>>> search(index, "graph").rows.tolist()
[0, 1]
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dashboard.filters import highlight_spans, parse_search, term_pattern
from dashboard.search.wordindex import WordIndex, pieces

K1 = 1.2
B = 0.75
PREFIX_WEIGHT = 0.5  # a word that only starts with the search word ("graphene" for "graph")
CLOSE_CUTOFF = 0.75
OLD_INDEX_NOTE = (
    "This index was built before search kept word counts: results are ranked by how rare the matched "
    "words are, without BM25's counts or the title weight. Rebuild the index for full ranking."
)


@dataclass(frozen=True)
class SearchResult:
    """Papers found for a search, best first: their rows, BM25 scores, and how they were found.

    ``query`` is the search actually run (after a typo or plural fallback); ``mode`` is ``"all"``
    (every word, the filter's semantics) or ``"any"`` (no paper had them all: papers with some);
    ``notes`` are sentences for the user about any fallback used.
    """

    rows: np.ndarray
    scores: np.ndarray
    query: str
    mode: str = "all"
    notes: tuple[str, ...] = field(default=())


def _word_frequencies(index: WordIndex, piece: str) -> tuple[np.ndarray, np.ndarray]:
    """(rows, weighted term frequency) of the papers holding a word starting with ``piece``."""
    low, high = index.prefix_range(piece)
    start, end = int(index.indptr[low]), int(index.indptr[high])
    rows = np.asarray(index.indices[start:end])
    if len(rows) == 0:
        return rows, np.zeros(0)
    counts = (
        np.asarray(index.tf[start:end], dtype=np.float64)
        if index.tf is not None
        else np.ones(len(rows), dtype=np.float64)
    )
    if high > low and index.word_at(low) != piece:
        counts *= PREFIX_WEIGHT  # no exact word: every word here only starts with the piece
    elif high > low + 1:
        counts[int(index.indptr[low + 1]) - start :] *= PREFIX_WEIGHT
    totals = np.bincount(rows, weights=counts, minlength=index.n_papers)
    found = np.flatnonzero(totals)
    return found, totals[found]


def query_words(q: str) -> list[str]:
    """The index words a search scores: each word of each included term, once, in order.

    >>> query_words('graph "message passing" -molecule graph')
    ['graph', 'message', 'passing']
    """
    words: list[str] = []
    for term in parse_search(q).include:
        words.extend(pieces(term))
    return list(dict.fromkeys(words))


def bm25(index: WordIndex, words: list[str]) -> np.ndarray:
    """BM25 score of every paper for these index words (0 for papers holding none of them)."""
    n = index.n_papers
    scores = np.zeros(n, dtype=np.float64)
    if n == 0:
        return scores
    lengths = np.asarray(index.lengths, dtype=np.float64) if index.lengths is not None else None
    average = float(lengths.mean()) if lengths is not None and lengths.mean() > 0 else 1.0
    for word in words:
        rows, tf = _word_frequencies(index, word)
        if len(rows) == 0:
            continue
        idf = np.log(1.0 + (n - len(rows) + 0.5) / (len(rows) + 0.5))
        norm = K1 * (1 - B + B * lengths[rows] / average) if lengths is not None else K1
        scores[rows] += idf * tf * (K1 + 1) / (tf + norm)
    return scores


def best_first(scores: np.ndarray) -> np.ndarray:
    """The positions of ``scores`` (non-negative), highest first, equal scores in position order.

    The same order as ``np.lexsort((positions, -scores))``, from one sort of 64-bit keys: each key is a
    score's float bits less the few lowest (as many as a position needs), inverted, then the position.
    Half a million hits of a common word at a million papers: 3 ms, against 40 ms for `np.lexsort`.
    Scores that differ only in those lowest bits (one part in 10^9) would come out of order; the sorted
    scores are checked and such a rare set is sorted by `np.lexsort` instead.
    """
    scores = np.asarray(scores, dtype=np.float64) + 0.0  # -0.0 as 0.0: its sign bit would be the key's
    n = len(scores)
    if n < 2 or not (scores >= 0).all():
        return np.lexsort((np.arange(n), -scores))
    shift = max(1, (n - 1).bit_length())
    bits = scores.view(np.int64) >> shift  # a non-negative float's bits grow with its value
    keys = ((int(bits.max()) - bits) << shift) | np.arange(n, dtype=np.int64)
    keys.sort()
    order = keys & ((1 << shift) - 1)
    ordered = scores[order]
    if (ordered[1:] > ordered[:-1]).any():
        return np.lexsort((np.arange(n), -scores))
    return order


def rank(index: WordIndex, q: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` (positions of papers, ascending) ordered by BM25 for ``q``, best first; ties keep
    corpus order."""
    rows = np.asarray(rows, dtype=np.int64)
    scores = bm25(index, query_words(q))[rows]
    order = best_first(scores)
    return rows[order], scores[order]


def _singular(word: str) -> str:
    """A plain singular: ``processes`` -> ``process``, ``studies`` -> ``study``, ``models`` -> ``model``."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _present(index: WordIndex, piece: str) -> bool:
    low, high = index.prefix_range(piece)
    return high > low


def close_word(index: WordIndex, word: str) -> str | None:
    """The vocabulary word closest to ``word`` (same first letter), or None when nothing is close.

    >>> import pandas as pd
    >>> close_word(WordIndex.build(pd.Series(["transformer models", "transformer"])), "tranformer")
    'transformer'
    """
    if not word or not _present(index, word[0]):
        return None
    low, high = index.prefix_range(word[0])
    slice_ = index.words.slice(low, high - low)
    lengths = np.asarray(pc.utf8_length(slice_), dtype=np.int64)
    frequency = np.diff(np.asarray(index.indptr[low : high + 1], dtype=np.int64))
    keep = np.abs(lengths - len(word)) <= 2
    if index.n_papers >= 1_000:  # a word in one paper of thousands is most often a typo itself
        keep &= frequency >= 2
    positions = np.flatnonzero(keep)
    if len(positions) == 0:
        return None
    candidates = slice_.take(pa.array(positions)).to_pylist()
    close = difflib.get_close_matches(word, candidates, n=5, cutoff=CLOSE_CUTOFF)
    if not close:
        return None
    df = dict(zip(candidates, frequency[positions].tolist(), strict=True))
    return max(close, key=lambda w: (difflib.SequenceMatcher(None, word, w).ratio(), df[w]))


def _replace_words(q: str, replacements: dict[str, str]) -> str:
    """``q`` with whole words replaced (case-insensitive), its quotes and exclusions kept."""
    if not replacements:
        return q
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in replacements) + r")\b", re.IGNORECASE)
    return pattern.sub(lambda m: replacements[m.group(0).lower()], q)


def corrected(index: WordIndex, q: str) -> tuple[str, list[str]]:
    """``q`` with each included word no paper holds replaced by its singular or closest word.

    Returns the new search and a note per change (the search unchanged, no notes, when none).
    """
    changes: dict[str, str] = {}
    for word in query_words(q):
        if _present(index, word) or not word.isascii():
            continue
        singular = _singular(word)
        if singular != word and _present(index, singular):
            changes[word] = singular
            continue
        close = close_word(index, word)
        if close is not None:
            changes[word] = close
    notes = [f'No paper contains "{w}": searched for "{c}" instead.' for w, c in changes.items()]
    return _replace_words(q, changes), notes


def search(index: WordIndex, q: str, allowed: np.ndarray | None = None) -> SearchResult:
    """The papers matching ``q`` (among ``allowed``, a boolean array), ranked by BM25, with fallbacks.

    An empty search gives every allowed paper in corpus order (scores 0).
    """
    allowed = np.ones(index.n_papers, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    notes: list[str] = [] if index.has_frequencies or not query_words(q) else [OLD_INDEX_NOTE]
    query = parse_search(q)
    if not (query.include or query.exclude):
        rows = np.flatnonzero(allowed)
        return SearchResult(rows, np.zeros(len(rows)), q, "all", tuple(notes))
    found = index.mask(q) & allowed
    used = q
    if not found.any() and query.include:
        fixed, fixes = corrected(index, q)
        if fixed != q:
            fixed_found = index.mask(fixed) & allowed
            if fixed_found.any():
                found, used, notes = fixed_found, fixed, [*notes, *fixes]
        if not found.any():
            plurals = {w: _singular(w) for w in query_words(used) if _singular(w) != w}
            singular = _replace_words(used, plurals)
            if singular != used:
                singular_found = index.mask(singular) & allowed
                if singular_found.any():
                    found, used = singular_found, singular
                    notes.append(
                        "No paper has every word as written: plurals were searched as singulars ("
                        + ", ".join(f'"{w}" as "{s}"' for w, s in plurals.items())
                        + ")."
                    )
    if found.any():
        rows, scores = rank(index, used, np.flatnonzero(found))
        return SearchResult(rows, scores, used, "all", tuple(notes))
    if not query.include:
        return SearchResult(np.zeros(0, dtype=np.int64), np.zeros(0), used, "all", tuple(notes))
    # No paper has every term: papers with at least one whole term (and no excluded one), best first.
    some = np.zeros(index.n_papers, dtype=bool)
    for term in parse_search(used).include:
        some |= index.term_mask(term)
    for term in query.exclude:
        some &= ~index.term_mask(term)
    rows = np.flatnonzero(some & allowed)
    if len(rows) == 0:
        return SearchResult(rows, np.zeros(0), used, "all", tuple(notes))
    scores = bm25(index, query_words(used))[rows]
    order = best_first(scores)  # rows ascending: ties in corpus order
    notes.append("No paper has every word of the search: these papers have some of them, best first.")
    return SearchResult(rows[order], scores[order], used, "any", tuple(notes))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


@functools.lru_cache(maxsize=64)
def _terms_pattern(q: str) -> re.Pattern[str] | None:
    """One regular expression finding any included term, the term's number as the group name."""
    terms = parse_search(q).include
    if not terms:
        return None
    return re.compile("|".join(f"(?P<t{i}>{term_pattern(t)})" for i, t in enumerate(terms)), re.IGNORECASE)


def matched_sentence(text: str, q: str, limit: int = 300) -> tuple[str, list[tuple[int, int]]]:
    """The sentence of ``text`` holding the most search words, and the spans to highlight in it.

    Long sentences are cut to about ``limit`` characters around the first match. ``("", [])`` when no
    sentence matches (the match was in the title or the authors). Two passes over the text (the
    matches, the sentence ends), so a page of 1,000 hits costs milliseconds.

    >>> matched_sentence("We study trees. Graph networks are graphs.", "graph")
    ('Graph networks are graphs.', [(0, 5), (19, 24)])
    """
    pattern = _terms_pattern(q)
    if pattern is None or not text:
        return "", []
    matches = [(m.start(), m.lastgroup) for m in pattern.finditer(text)]
    if not matches:
        return "", []
    ends = [m.start() for m in _SENTENCE_END.finditer(text)] + [len(text)]
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(text)]
    terms_in: dict[int, set[str | None]] = {}
    sentence = 0
    for position, group in matches:
        while position >= ends[sentence]:
            sentence += 1
        terms_in.setdefault(sentence, set()).add(group)
    best_sentence = max(terms_in, key=lambda n: (len(terms_in[n]), -n))
    best = text[starts[best_sentence] : ends[best_sentence]]
    spans = highlight_spans(best, q)
    if len(best) > limit and spans:
        start = max(0, spans[0][0] - limit // 3)
        end = min(len(best), start + limit)
        best = ("…" if start > 0 else "") + best[start:end] + ("…" if end < len(best) else "")
        spans = highlight_spans(best, q)
    return best, spans

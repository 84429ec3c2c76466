"""Many texts scanned and cut into n-grams at once, as arrays of term ids.

:func:`dashboard.text.tokens.scan` and :func:`~dashboard.text.tokens.ngrams_of_scan` read one text at a
time: right for a page, but in the index build's count step the Python loop over every term of a million
abstracts (a string per n-gram, a dictionary lookup per n-gram) was the largest share of the build. Here
the regular expression still finds each text's pieces, but each distinct piece is turned into a term
once, the texts become one array of term ids, and the n-grams are found with array operations: a
string is made once per distinct n-gram, not once per occurrence.

The terms and n-grams are exactly those of ``scan`` and ``ngrams_of_scan``:

>>> batch = scan_many(["Graph neural networks, see https://x.org.", "Large language models."])
>>> [batch.terms[i] for i in batch.text_ids(0)]
['graph', 'neural', 'network', '', 'see', '']
>>> grams = ngram_table(batch.ids, batch.terms, 2)
>>> sorted(grams.vocabulary().to_pylist())  # "neural", "network": generic words; "see": a stop word
['graph', 'graph neural', 'language', 'language model', 'large', 'large language']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dashboard.text.tokens import GENERIC_TERMS, PHRASE_BREAKERS, _piece_re, _piece_terms

BREAK = 0  # the id of the empty term that ends a phrase (and every text of a batch)


class _TermIds(dict[str, int]):
    """Term -> id, numbered as first seen; id 0 is the phrase break."""

    def __init__(self) -> None:
        super().__init__({"": BREAK})
        self.terms: list[str] = [""]

    def __missing__(self, term: str) -> int:
        self[term] = number = len(self.terms)
        self.terms.append(term)
        return number


class _PieceIds(dict[str, int]):
    """Scanned piece -> its term's id, or ``-(k + 1)`` for a piece of several terms (``several[k]``: a CJK
    run), each piece turned into terms once (`tokens._piece_terms`)."""

    def __init__(self, term_ids: _TermIds) -> None:
        super().__init__()
        self.term_ids = term_ids
        self.several: list[list[int]] = []

    def __missing__(self, piece: str) -> int:
        parts = _piece_terms(piece)
        if len(parts) == 1:
            number = self.term_ids[parts[0][0]]
        else:
            self.several.append([self.term_ids[term] for term, _, _ in parts])
            number = -len(self.several)
        self[piece] = number
        return number


@dataclass(frozen=True)
class ScannedBatch:
    """Texts scanned into one array: text ``i`` is ``ids[starts[i] : starts[i + 1] - 1]``, and a break
    (id 0) follows every text, so that no phrase runs from one text into the next."""

    ids: np.ndarray  # int64 term ids
    starts: np.ndarray  # int64, one more than the texts
    terms: list[str]  # the term of each id (shared by every batch scanned with the same `Vocabulary`)

    def text_ids(self, i: int) -> np.ndarray:
        """The term ids of text ``i`` (`tokens.scan` of it, as ids)."""
        return self.ids[self.starts[i] : self.starts[i + 1] - 1]

    def lengths(self) -> np.ndarray:
        """The number of terms of each text (without its closing break)."""
        return np.diff(self.starts) - 1


class Vocabulary:
    """The term ids that several batches share (`scan_many` of titles and abstracts of the same papers)."""

    def __init__(self) -> None:
        self.term_ids = _TermIds()
        self.pieces = _PieceIds(self.term_ids)

    @property
    def terms(self) -> list[str]:
        return self.term_ids.terms


def scan_many(texts: Sequence[str], vocabulary: Vocabulary | None = None) -> ScannedBatch:
    """`tokens.scan` of every text, as one array of term ids (see `ScannedBatch`)."""
    vocabulary = vocabulary if vocabulary is not None else Vocabulary()
    found = [_piece_re(text).findall(text) for text in texts]
    counts = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
    pieces = list(chain.from_iterable(found))
    del found
    ids = np.fromiter(map(vocabulary.pieces.__getitem__, pieces), dtype=np.int64, count=len(pieces))
    del pieces
    several = np.flatnonzero(ids < 0)
    if len(several):  # a piece of several terms: make room for them, then put them in
        sizes = np.ones(len(ids), dtype=np.int64)
        sizes[several] = [len(vocabulary.pieces.several[-k - 1]) for k in ids[several]]
        text_of_piece = np.repeat(np.arange(len(texts)), counts)
        counts = np.bincount(text_of_piece, weights=sizes, minlength=len(texts)).astype(np.int64)
        at = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        expanded = np.repeat(ids, sizes)
        for position, code in zip(at[several], ids[several], strict=True):
            terms = vocabulary.pieces.several[-code - 1]
            expanded[position : position + len(terms)] = terms
        ids = expanded
    # One break after each text: every term moves on by the number of texts before it.
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(counts + 1, out=starts[1:])
    out = np.zeros(int(starts[-1]), dtype=np.int64)
    out[np.arange(len(ids)) + np.repeat(np.arange(len(texts)), counts)] = ids
    return ScannedBatch(out, starts, vocabulary.terms)


@dataclass(frozen=True)
class NgramTable:
    """The n-grams (1 to ``n``) kept in a stream of term ids, as `tokens.ngrams_of_scan` keeps them.

    ``position`` and ``column`` list every occurrence (where it starts in the stream; its column in
    `vocabulary`), in the order ``ngrams_of_scan`` gives them text by text: phrase by phrase, within a
    phrase the single words, then the pairs, then the triples. Columns number the distinct n-grams of
    the stream: single words first, then pairs, then triples, each in order of their term ids.
    """

    position: np.ndarray
    column: np.ndarray
    terms: pa.Array  # large_string, one per term id
    codes: tuple[np.ndarray, ...]  # per n, the distinct n-grams' codes (see `_codes`)
    triple_pairs: np.ndarray  # the triples' distinct leading pairs, by rank (see `_codes`)
    n_terms: int

    def vocabulary(self) -> pa.Array:
        """Each column's n-gram, words joined by one space (large_string)."""
        parts = []
        for n, codes in enumerate(self.codes, start=1):
            words = [self.terms.take(pa.array(ids)) for ids in self._decode(codes, n)]
            parts.append(
                words[0] if n == 1 else pc.binary_join_element_wise(*words, pa.scalar(" ", pa.large_string()))
            )
        return pa.concat_arrays([part.cast(pa.large_string()) for part in parts])

    def _decode(self, codes: np.ndarray, n: int) -> list[np.ndarray]:
        """The term ids of each code of length ``n`` (see `_codes`)."""
        if n == 1:
            return [codes]
        if n == 2:
            return [codes // self.n_terms, codes % self.n_terms]
        pairs = self.triple_pairs[codes // self.n_terms]
        return [pairs // self.n_terms, pairs % self.n_terms, codes % self.n_terms]


def ngram_table(ids: np.ndarray, terms: Sequence[str], n: int) -> NgramTable:
    """The 1- to ``n``-grams of a stream of term ids (phrases end at a break or a phrase-breaking word;
    a single generic word, or an n-gram of generic words only, is left out: `tokens.ngrams_of_scan`)."""
    if not 1 <= n <= 3:
        raise ValueError(f"n-grams of 1 to 3 words, not {n}")
    n_terms = len(terms)
    breaker = np.fromiter((t in PHRASE_BREAKERS or t == "" for t in terms), dtype=bool, count=n_terms)
    generic = np.fromiter((t in GENERIC_TERMS for t in terms), dtype=bool, count=n_terms)
    stream_breaks = breaker[ids]
    stream_generic = generic[ids]
    run = np.cumsum(stream_breaks)  # a phrase's terms share a run number (a break starts the next)
    size = len(ids)
    kept = []
    for length in range(1, n + 1):
        starts = np.arange(max(size - length + 1, 0))
        inside = ~stream_breaks[starts]
        all_generic = stream_generic[starts].copy()
        for step in range(1, length):
            inside &= ~stream_breaks[starts + step]
            all_generic &= stream_generic[starts + step]
        kept.append(starts[inside & ~all_generic])
    codes, triple_pairs, columns = _codes(ids, kept, n_terms)
    order = _emission_order(kept, run)
    position = np.empty(sum(len(k) for k in kept), dtype=np.int64)
    column = np.empty(len(position), dtype=np.int64)
    for starts, cols, at in zip(kept, columns, order, strict=True):
        position[at] = starts
        column[at] = cols
    return NgramTable(position, column, pa.array(terms, pa.large_string()), codes, triple_pairs, n_terms)


def _codes(
    ids: np.ndarray, kept: list[np.ndarray], n_terms: int
) -> tuple[tuple[np.ndarray, ...], np.ndarray, list[np.ndarray]]:
    """Each n's distinct codes and every occurrence's column. A word's code is its id, a pair's
    ``first * n_terms + second``, a triple's ``pair rank * n_terms + third`` (the pair's rank among the
    triples' distinct leading pairs): no code outgrows 64 bits, however many terms a batch has."""
    distinct: list[np.ndarray] = []
    columns: list[np.ndarray] = []
    offset = 0
    pairs_of_triples = np.zeros(0, dtype=np.int64)
    for length, starts in enumerate(kept, start=1):
        if length == 1:
            code = ids[starts]
        elif length == 2:
            code = ids[starts] * n_terms + ids[starts + 1]
        else:
            leading = ids[starts] * n_terms + ids[starts + 1]
            pairs_of_triples, rank = np.unique(leading, return_inverse=True)
            code = rank.reshape(-1) * n_terms + ids[starts + 2]
        values, inverse = np.unique(code, return_inverse=True)
        distinct.append(values)
        columns.append(inverse.reshape(-1) + offset)
        offset += len(values)
    return tuple(distinct), pairs_of_triples, columns


def _emission_order(kept: list[np.ndarray], run: np.ndarray) -> list[np.ndarray]:
    """Where each kept n-gram comes in ``ngrams_of_scan``'s order (phrase by phrase; within a phrase
    by length, then by position): counted, not sorted."""
    if not len(run):
        return [np.zeros(0, dtype=np.int64) for _ in kept]
    n_runs = int(run[-1]) + 1
    per_run = [np.bincount(run[starts], minlength=n_runs) for starts in kept]
    start_of_run = np.zeros(n_runs, dtype=np.int64)
    np.cumsum(np.sum(per_run, axis=0)[:-1], out=start_of_run[1:])
    order = []
    for starts, counts in zip(kept, per_run, strict=True):
        runs = run[starts]
        before = np.zeros(n_runs, dtype=np.int64)  # this length's n-grams in earlier phrases
        np.cumsum(counts[:-1], out=before[1:])
        order.append(start_of_run[runs] + np.arange(len(starts)) - before[runs])
        start_of_run += counts  # the next length comes after this one, phrase by phrase
    return order

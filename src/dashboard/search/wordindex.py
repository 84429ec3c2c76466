"""An inverted index of the words papers contain, so a search costs milliseconds on a million papers.

The dashboard's search (:func:`dashboard.filters.search_mask`) runs a regular expression over every
paper's text: tens of milliseconds for 27k papers, seconds for a million. This index answers the same
question from posting lists: which papers contain a word starting with ``graph``. It agrees exactly
with the regular-expression search (a property test checks it), because it follows the same rules:

- a search term matches at a word start (RE2's ASCII ``\\b``): a *word* here is a run of ASCII letters,
  digits and underscores, lower-cased, so ``graph`` is a prefix of the words ``graph``, ``graphs``,
  ``graphene``, found as one contiguous slice of the sorted vocabulary;
- a term of several words or with punctuation (``message passing``, ``gpt-4``) narrows the papers
  to those holding every word piece, then the regular expression confirms the few candidates;
- a term that does not start with an ASCII letter or digit (CJK, symbols) has no word start to look
  up, so it falls back to scanning every text, as the regular-expression search does;
- the two non-ASCII characters RE2 folds onto ASCII letters (the Kelvin sign and the long s) are not
  word characters for ``\\b`` but match ``k`` and ``s``: papers containing them are re-checked.

For ranking (:mod:`dashboard.search.ranking`, BM25) each posting also carries how often the word occurs in
the paper (``tf``, capped at 255) and each paper its length in words (``lengths``). The first line of
a text is its title (`filters.search_text` puts it there): a title word counts `TITLE_WEIGHT` times,
in ``tf`` and in the length, so a title match outranks a passing mention. An index written before
these existed has ``tf``/``lengths`` None: ranking then falls back to the words matched (and says so).

>>> texts = pd.Series(["Graph networks", "Diffusion models", "graphene sheets"])
>>> index = WordIndex.build(texts)
>>> index.mask("graph").tolist(), index.mask('"graph networks"').tolist()
([True, False, True], [True, False, False])
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from dashboard.filters import parse_search, term_pattern

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_WORD = re.compile(r"[0-9a-z_]+")
# Each byte as an index word reads it (`_WORD` after `_ASCII_LOWER`), any other byte a space.
_WORD_BYTES = np.array(
    [ord(c) if _WORD.fullmatch(c := chr(byte).translate(_ASCII_LOWER)) else ord(" ") for byte in range(256)],
    dtype=np.uint8,
)
# Characters RE2's case-insensitive matching folds onto ASCII letters (U+212A -> k, U+017F -> s).
_ODD_CHARACTERS = re.compile("[\u212a\u017f]")
_PAST_ASCII = "\x7f"  # sorts after every ASCII word character: the end of a prefix range

TextsOf = Callable[[np.ndarray], pd.Series]
TITLE_WEIGHT = (
    3  # a title word counts as three mentions (BM25F-style field weight, see dashboard.search.ranking)
)
MAX_TF = 255  # term frequencies are stored as uint8


def words_of(text: str) -> set[str]:
    """The distinct index words of a text: runs of ASCII letters, digits and ``_``, lower-cased.

    >>> sorted(words_of("GPT-4 beats naïve BERT_base"))
    ['4', 'beats', 'bert_base', 'gpt', 'na', 've']
    """
    return set(_WORD.findall(text.translate(_ASCII_LOWER)))


def postings_matrix(
    word_ids: np.ndarray,
    papers: np.ndarray,
    n_words: int,
    n_papers: int,
    n_title_pairs: int = 0,
    title_weight: int = 1,
) -> sp.csr_matrix:
    """Words x papers posting lists from (word, paper) pairs; repeated pairs are summed.

    The last ``n_title_pairs`` pairs are title words, each pair one of the others too (the title is
    part of the text): they add ``title_weight - 1`` each. The data are the counts capped at
    `MAX_TF`, as uint8: the term frequencies BM25 reads.
    """
    n = max(n_papers, 1)
    keys = word_ids.astype(np.int64) * n + papers
    split = len(keys) - n_title_pairs
    unique, counts = _counted(np.sort(keys[:split]))
    if n_title_pairs and title_weight > 1:
        title_keys, title_counts = _counted(np.sort(keys[split:]))
        counts[np.searchsorted(unique, title_keys)] += (title_weight - 1) * title_counts
    word_of_key, paper_of_key = np.divmod(unique, n)
    indptr = np.zeros(n_words + 1, dtype=np.int64)
    np.cumsum(np.bincount(word_of_key, minlength=n_words), out=indptr[1:])
    index_type = np.int32 if len(unique) < 2**31 else np.int64
    return sp.csr_matrix(
        (
            np.clip(counts, 0, MAX_TF).astype(np.uint8),
            paper_of_key.astype(index_type),
            indptr.astype(index_type),
        ),
        shape=(n_words, n_papers),
    )


def _counted(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of a sorted array and how often each occurs."""
    if len(sorted_keys) == 0:
        return sorted_keys, np.zeros(0, dtype=np.int64)
    new = np.empty(len(sorted_keys), dtype=bool)
    new[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    return sorted_keys[starts], np.diff(np.append(starts, len(sorted_keys))).astype(np.int64)


def _words_and_papers(values: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """Every word (lower-cased ASCII runs) of every text, flat, and the row each came from."""
    # Each UTF-8 byte through one table (upper case to lower, every byte of anything else to a space),
    # then a split at runs of spaces: 2.8x faster than RE2's replacement of the separators, the same
    # words (a byte of a multi-byte character is never an ASCII letter, digit or "_").
    values = values.cast(pa.large_string()).fill_null("")
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64)[
        values.offset : values.offset + len(values) + 1
    ]
    data = np.frombuffer(values.buffers()[2] or b"", dtype=np.uint8)[offsets[0] : offsets[-1]]
    spaced = pa.LargeStringArray.from_buffers(
        len(values), pa.py_buffer(offsets - offsets[0]), pa.py_buffer(_WORD_BYTES[data])
    )
    words = pc.ascii_split_whitespace(spaced)
    flat = pc.list_flatten(words)
    papers = np.asarray(pc.list_parent_indices(words), dtype=np.int64)
    keep = pc.greater(pc.binary_length(flat), 0)
    return flat.filter(keep), papers[keep.to_numpy(zero_copy_only=False)]


def pieces(term: str) -> list[str]:
    """The index words of a search term (one word, or each word of a phrase), in order.

    >>> pieces("gpt-4 models")
    ['gpt', '4', 'models']
    """
    return _pieces(term.lower())


def _pieces(term: str) -> list[str]:
    """The word pieces of a (lower-cased) search term, in order."""
    return _WORD.findall(term.translate(_ASCII_LOWER))


class _Sorted(Sequence[str]):
    """Random access to a sorted Arrow string array, for `bisect` (no conversion of the whole array)."""

    def __init__(self, array: pa.Array) -> None:
        self.array = array

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        return self.array[i].as_py()


@dataclass(frozen=True)
class WordIndex:
    """Sorted vocabulary and, for each word, the sorted rows (papers) containing it.

    ``words`` is a sorted Arrow string array (memory-mappable); the papers holding word ``w`` are
    ``indices[indptr[w]:indptr[w + 1]]`` (sorted), so the papers holding any word of a prefix range
    are one contiguous slice of ``indices``. ``texts_of(rows)`` returns the search text of those
    rows (to confirm phrase matches).
    """

    words: pa.Array
    indptr: np.ndarray
    indices: np.ndarray
    odd_rows: np.ndarray  # papers containing the Kelvin sign or the long s
    n_papers: int
    texts_of: TextsOf
    tf: np.ndarray | None = None  # per posting (aligned with ``indices``): weighted count, uint8
    lengths: np.ndarray | None = None  # per paper: weighted number of words (title words count thrice)

    @classmethod
    def build(
        cls,
        texts: pd.Series | Iterable[str],
        texts_of: TextsOf | None = None,
        *,
        title_weight: int = TITLE_WEIGHT,
    ) -> WordIndex:
        """Index the words of every text (row ``i`` is the ``i``-th text), vectorised in Arrow.

        ``texts_of(rows)`` gives the texts of some rows back (default: kept from ``texts``). Words of
        a text's first line (its title) count ``title_weight`` times in ``tf`` and ``lengths``.
        """
        series = texts if isinstance(texts, pd.Series) else pd.Series(list(texts), dtype="str")
        values = pa.array(series.astype("str").to_numpy(), type=pa.large_string())
        n_papers = len(values)
        flat, papers = _words_and_papers(values)
        n_title_pairs = 0
        if title_weight > 1 and n_papers:
            first_lines = pc.list_element(pc.split_pattern(values, "\n", max_splits=1), 0)
            title_flat, title_papers = _words_and_papers(first_lines)
            flat = pa.concat_arrays([flat, title_flat])
            n_title_pairs = len(title_papers)
            lengths = np.bincount(papers, minlength=n_papers).astype(np.float32)
            lengths += (title_weight - 1) * np.bincount(title_papers, minlength=n_papers)
            papers = np.concatenate([papers, title_papers])
        else:
            lengths = np.bincount(papers, minlength=n_papers).astype(np.float32)
        encoded = pc.dictionary_encode(flat)
        order = np.asarray(pc.sort_indices(encoded.dictionary), dtype=np.int64)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        word_ids = rank[np.asarray(encoded.indices, dtype=np.int64)]
        postings = postings_matrix(word_ids, papers, len(order), n_papers, n_title_pairs, title_weight)
        odd = pc.match_substring_regex(values, _ODD_CHARACTERS.pattern).to_numpy(zero_copy_only=False)
        if texts_of is None:
            kept = series.reset_index(drop=True)

            def texts_of(rows: np.ndarray) -> pd.Series:
                return kept.iloc[rows]

        vocabulary = encoded.dictionary.take(pa.array(order)).cast(pa.large_string())
        return cls(
            vocabulary,
            postings.indptr,
            postings.indices,
            np.flatnonzero(odd),
            n_papers,
            texts_of,
            tf=postings.data,
            lengths=lengths,
        )

    @property
    def has_frequencies(self) -> bool:
        """True when term frequencies and lengths are there (False: an index built before them)."""
        return self.tf is not None and self.lengths is not None

    def prefix_range(self, prefix: str) -> tuple[int, int]:
        """The vocabulary positions ``[low, high)`` of the words starting with ``prefix``."""
        words = _Sorted(self.words)
        low = bisect.bisect_left(words, prefix)
        return low, bisect.bisect_left(words, prefix + _PAST_ASCII, lo=low)

    def word_at(self, position: int) -> str:
        """The vocabulary word at ``position``."""
        return str(self.words[position].as_py())

    # ------------------------------------------------------------------ queries

    def _prefix_rows(self, prefix: str) -> np.ndarray:
        """Rows of the papers holding a word that starts with ``prefix`` (may repeat a row)."""
        low, high = self.prefix_range(prefix)
        return np.asarray(self.indices[self.indptr[low] : self.indptr[high]])

    def _regex(self, term: str, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` match ``term`` by the regular-expression search (booleans, same order)."""
        if len(rows) == 0:
            return np.zeros(0, dtype=bool)
        values = pa.array(self.texts_of(rows).astype("str"), type=pa.large_string())
        hits = pc.match_substring_regex(values, term_pattern(term), ignore_case=True).fill_null(False)
        return hits.to_numpy(zero_copy_only=False).astype(bool)

    def term_mask(self, term: str) -> np.ndarray:
        """Which papers contain the search term (one word or phrase, already lower-cased)."""
        found = np.zeros(self.n_papers, dtype=bool)
        pieces = _pieces(term)
        first = term[:1]
        if not pieces or not (first.isascii() and first.isalnum()):
            # No word start to look up: scan every text, as the regular-expression search does.
            found[:] = self._regex(term, np.arange(self.n_papers))
            return found
        candidates = np.zeros(self.n_papers, dtype=bool)
        candidates[self._prefix_rows(pieces[0])] = True
        for piece in pieces[1:]:
            holding = np.zeros(self.n_papers, dtype=bool)
            holding[self._prefix_rows(piece)] = True
            candidates &= holding
        exact = len(pieces) == 1 and pieces[0] == term
        if exact:
            found = candidates
        else:
            rows = np.flatnonzero(candidates)
            found[rows[self._regex(term, rows)]] = True
        if len(self.odd_rows):
            found[self.odd_rows] = self._regex(term, self.odd_rows)
        return found

    def mask(self, q: str) -> np.ndarray:
        """Boolean array: which papers match the search ``q`` (same rules as `filters.search_mask`)."""
        query = parse_search(q)
        keep = np.ones(self.n_papers, dtype=bool)
        for term in query.include:
            keep &= self.term_mask(term)
        for term in query.exclude:
            keep &= ~self.term_mask(term)
        return keep

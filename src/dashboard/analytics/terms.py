"""Term frequencies, distinctive terms and keyword in context, fast on any subset of papers.

The count matrix is built once per (n-gram size, stop words kept or not); a subset of papers is then a
boolean mask and its counts one sparse vector-matrix product, so every filter change is cheap even on a
large corpus.

>>> counts = TermCounts.build(["Graph neural networks.", "Graph kernels.", "Diffusion models."])
>>> counts.term_frequencies(np.array([True, True, False]))["term"].tolist()
['graph', 'kernel']
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, cached_property, partial
from typing import NamedTuple, TypeVar

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dashboard.system.cores import usable_cores
from dashboard.text.tokens import make_vectorizer

DEFAULT_PRIOR_STRENGTH = 1_000.0
KWIC_LIMIT = 500
RECENT_SUBSETS = 4  # subsets whose counts are kept (the Terms page asks for one twice)
SUM_CHUNK = 10_000  # papers whose rows are copied and summed at a time (`TermCounts._sum_rows`)
T = TypeVar("T")
R = TypeVar("R")
SUM_THREADS = min(4, usable_cores())  # threads a large sum is shared among (`TermCounts._sum_rows`)
# Above this share of the corpus, a subset's occurrences are one product of every paper's row with the
# subset's 0/1 vector (`TermCounts._sum_where`) instead of a copy of its rows: copying a row costs
# about three times what the product spends on each paper of the corpus, so the product wins above
# about 30% and reads every row in place (the figures: docs/development/history.md).
PRODUCT_SHARE = 0.3


@cache
def _sum_pool() -> ThreadPoolExecutor:
    """The threads of `TermCounts._sum_rows`, made once per process (a sum is too short to start them)."""
    return ThreadPoolExecutor(max_workers=SUM_THREADS, thread_name_prefix="term-sums")


def _shared(step: Callable[[T], R], parts: Sequence[T]) -> list[R]:
    """``step`` of each of ``parts``: in this thread when there is one, else in `_sum_pool`'s threads."""
    if len(parts) == 1:
        return [step(parts[0])]
    return list(_sum_pool().map(step, parts))


def _abstracts(papers: pd.DataFrame | Sequence[str]) -> list[str]:
    """Abstract texts: ``abstract_clean`` (or ``abstract``) of a paper table, or the texts as given."""
    if isinstance(papers, pd.DataFrame):
        column = "abstract_clean" if "abstract_clean" in papers.columns else "abstract"
        texts = papers[column].fillna("").astype(str).tolist()
        if "has_abstract" in papers.columns:  # placeholder abstracts count no terms
            keep = papers["has_abstract"].fillna(True).astype(bool).tolist()
            texts = [text if kept else "" for text, kept in zip(texts, keep, strict=True)]
        return texts
    return [str(text) for text in papers]


def log_odds_z(
    counts_in: np.ndarray,
    counts_out: np.ndarray,
    prior: np.ndarray,
    prior_total: float | None = None,
    totals: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """z-scores of weighted log-odds ratios with an informative Dirichlet prior (Monroe et al. 2008).

    ``counts_in`` / ``counts_out``: term counts of the two groups (the last axis is the vocabulary);
    ``prior``: pseudo-counts per term (typically the corpus's term shares times a prior strength). A
    positive z means the term is used more inside than outside, beyond what chance explains.
    ``prior_total``: the prior's sum over the whole vocabulary when only some of its terms are given;
    ``totals``: the two groups' counts of all terms when only some terms are given (one per entry).
    """
    counts_in = np.asarray(counts_in, dtype=np.float64)
    counts_out = np.asarray(counts_out, dtype=np.float64)
    prior = np.asarray(prior, dtype=np.float64)
    if totals is None:
        total_in = counts_in.sum(axis=-1, keepdims=True)
        total_out = counts_out.sum(axis=-1, keepdims=True)
    else:
        total_in, total_out = (np.asarray(t, dtype=np.float64) for t in totals)
    prior_total = prior.sum() if prior_total is None else prior_total
    with np.errstate(divide="ignore", invalid="ignore"):
        log_odds_in = np.log(counts_in + prior) - np.log(total_in + prior_total - counts_in - prior)
        log_odds_out = np.log(counts_out + prior) - np.log(total_out + prior_total - counts_out - prior)
        variance = 1.0 / (counts_in + prior) + 1.0 / (counts_out + prior)
        z = (log_odds_in - log_odds_out) / np.sqrt(variance)
    return np.nan_to_num(z, nan=0.0, posinf=0.0, neginf=0.0)


class Subset(NamedTuple):
    """Papers (a mask over the corpus) and their term counts: occurrences and papers using each term."""

    mask: np.ndarray
    counts: np.ndarray
    papers: np.ndarray


@dataclass(frozen=True)
class TermCounts:
    """Counts of every term in every paper (papers x terms), built once; subsets are masks."""

    terms: np.ndarray  # vocabulary, sorted
    counts: sp.csr_matrix  # papers x terms, occurrences
    ngram: int
    keep_stop_words: bool

    @classmethod
    def build(
        cls,
        papers: pd.DataFrame | Sequence[str],
        *,
        ngram: int = 1,
        keep_stop_words: bool = False,
    ) -> TermCounts:
        """Count the ``ngram``-word terms (1, 2 or 3) of every abstract.

        ``keep_stop_words`` counts function words and abstract boilerplate like any word.
        """
        if ngram not in (1, 2, 3):
            raise ValueError(f"ngram must be 1, 2 or 3, got {ngram!r}")
        texts = _abstracts(papers)
        # On a large corpus a term seen once is mostly noise, and the bulk of a 3-gram vocabulary.
        min_df = 2 if len(texts) >= 5_000 else 1
        vectorizer = make_vectorizer(
            "count", ngram_range=(ngram, ngram), stop_words=not keep_stop_words, min_df=min_df
        )
        try:
            counts = sp.csr_matrix(vectorizer.fit_transform(texts), dtype=np.int32)
            terms = vectorizer.get_feature_names_out().astype(object)
        except ValueError:  # no term at all (empty corpus, or nothing but stop words)
            counts = sp.csr_matrix((len(texts), 0), dtype=np.int32)
            terms = np.array([], dtype=object)
        return cls(terms, counts, ngram, keep_stop_words)

    @property
    def n_papers(self) -> int:
        """Papers counted."""
        return self.counts.shape[0]

    def _inside(self, mask: np.ndarray | pd.Series | None) -> np.ndarray:
        """``mask`` as a boolean array of one entry per paper (every paper when None)."""
        if mask is None:
            return np.ones(self.n_papers, dtype=bool)
        inside = np.asarray(mask, dtype=bool)
        if inside.shape != (self.n_papers,):
            raise ValueError(f"mask has {inside.shape} entries; expected one per paper ({self.n_papers})")
        return inside

    @cached_property
    def term_rank(self) -> np.ndarray:
        """Each term's place in string order: the tie-break of every ranking."""
        rank = np.empty(len(self.terms), dtype=np.int64)
        rank[np.argsort(self.terms.astype(str), kind="stable")] = np.arange(len(self.terms))
        return rank

    def _sum_rows(self, rows: np.ndarray, *, papers: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """(occurrences, papers using it) of every term over the papers ``rows``, reading only theirs.

        ``papers=False`` leaves the second out (None): a third of the time of both.
        """
        # Below PRODUCT_SHARE of the corpus a product with a 0/1 vector over all papers (`_sum_where`) reads
        # more entries than these rows hold. The rows are copied and summed SUM_CHUNK at a time: a copy of a
        # large share of a million papers' rows at once is hundreds of MB of fresh memory, paid for in page
        # faults, while chunks of a few MB are served again from the same memory. A server hands its free
        # memory back between runs (`heap.release`, protobuf's trims), so each chunk is fresh memory again
        # on the next new filter: small chunks fault fewer pages. The int32 sums skip a conversion of every
        # entry to float (no term is used 2**31 times). Above one chunk, the chunks are shared among
        # SUM_THREADS threads: scipy copies and multiplies the rows without the GIL.
        starts = range(0, len(rows), SUM_CHUNK)
        shares = [starts[i::SUM_THREADS] for i in range(min(SUM_THREADS, len(starts)))] or [starts]
        (counts, users), *rest = _shared(partial(self._sum_chunks, rows, papers=papers), shares)
        for more_counts, more_users in rest:  # whole numbers in float64: exact in any order
            counts += more_counts
            if users is not None and more_users is not None:
                users += more_users
        return counts, users

    def _sum_chunks(
        self, rows: np.ndarray, starts: Iterable[int], *, papers: bool = True
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """`_sum_rows` of the chunks of ``rows`` that begin at ``starts``."""
        counts = np.zeros(len(self.terms))
        users = np.zeros(len(self.terms)) if papers else None
        for start in starts:
            block = self.counts[rows[start : start + SUM_CHUNK]]
            ones = np.ones(block.shape[0], dtype=np.int32)
            counts += block.T @ ones
            if users is not None:
                block.data[:] = 1  # the block is a copy; now it says which terms each paper uses
                users += block.T @ ones
        return counts, users

    def _sum_where(self, inside: np.ndarray) -> np.ndarray:
        """Occurrences of every term over the papers of the boolean ``inside``: the product of every
        row with the 0/1 vector, read in place (no copy), in SUM_THREADS contiguous ranges of papers
        at once (scipy multiplies without the GIL)."""
        weights = inside.astype(self.counts.dtype)
        bounds = np.linspace(0, self.n_papers, min(SUM_THREADS, max(1, self.n_papers)) + 1).astype(np.int64)
        ranges = list(zip(bounds[:-1], bounds[1:], strict=True))
        first, *rest = _shared(partial(self._range_product, weights), ranges)
        for more in rest:  # whole numbers in float64: exact in any order
            first += more
        return first

    def _range_product(self, weights: np.ndarray, bounds: tuple[int, int]) -> np.ndarray:
        """`_sum_where` over the papers ``bounds[0]`` to ``bounds[1]``: a view of their rows, no copy."""
        first, last = int(bounds[0]), int(bounds[1])
        return np.asarray(_columns_of_rows(self.counts, first, last) @ weights[first:last], dtype=np.float64)

    @cached_property
    def _totals(self) -> tuple[np.ndarray, np.ndarray]:
        counts, papers = self._sum_rows(np.arange(self.n_papers))
        assert papers is not None
        return counts, papers

    def _group_sums(self, rows: np.ndarray, group_index: np.ndarray, n_groups: int) -> np.ndarray:
        """Occurrences of every term in each group (groups x terms): one read of the rows' entries."""
        by_group = np.argsort(group_index, kind="stable")
        block = self.counts[rows[by_group]]
        bounds = np.searchsorted(group_index[by_group], np.arange(n_groups + 1))
        # whole numbers in int32, as the rows (no term is used 2**31 times): half the memory of float64
        sums = np.zeros((n_groups, len(self.terms)), dtype=np.int32)
        for g in range(n_groups):
            first, last = bounds[g], bounds[g + 1]
            sums[g] = _columns_of_rows(block, first, last) @ np.ones(last - first, dtype=np.int32)
        return sums

    @cached_property
    def _recent(self) -> dict[bytes, tuple[np.ndarray, np.ndarray | None]]:
        """The last few subsets' counts, by a hash of their mask (a page asks twice for one filter);
        the papers using each term are None where only the occurrences were asked for."""
        return {}

    def subset_counts(
        self, mask: np.ndarray | pd.Series | None = None, *, within: Subset | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(occurrences, papers using it) of every term within the papers of ``mask`` (all when None).

        The rows read are the fewest of: the papers of ``mask``, the corpus less them (from the
        totals), or ``within`` less them, where ``within`` is a `Subset` holding every paper of
        ``mask`` (a year's papers, when ``mask`` is a filter within that year). The arrays are
        read-only: the same ones are handed out again for the same mask.
        """
        counts, papers = self._subset(mask, within, papers=True)
        assert papers is not None
        return counts, papers

    def occurrences(self, mask: np.ndarray | pd.Series | None = None) -> np.ndarray:
        """`subset_counts`'s occurrences alone: the Terms page's counts and comparisons need no more,
        and leaving the papers using each term out of the sum is a third less work."""
        return self._subset(mask, None, papers=False)[0]

    def _subset(
        self, mask: np.ndarray | pd.Series | None, within: Subset | None, *, papers: bool
    ) -> tuple[np.ndarray, np.ndarray | None]:
        if mask is None:
            return self._totals
        inside = self._inside(mask)
        key = hashlib.blake2b(np.packbits(inside).tobytes(), digest_size=16).digest()
        recent = self._recent.get(key)
        if recent is not None and (recent[1] is not None or not papers):
            return recent
        n_inside = int(inside.sum())
        if within is not None and (inside & ~within.mask).any():
            raise ValueError("within must hold every paper of the mask")
        outer_rest = int(within.mask.sum()) - n_inside if within is not None else self.n_papers
        fewer = min(n_inside, self.n_papers - n_inside)  # the rows read without ``within``, at least
        if within is not None and outer_rest < fewer:
            counts_out, users_out = self._sum_rows(np.flatnonzero(within.mask & ~inside), papers=papers)
            counts, users = within.counts - counts_out, _less(within.papers, users_out)
        elif not papers and fewer > PRODUCT_SHARE * self.n_papers:
            counts, users = self._sum_where(inside), None
        elif n_inside <= self.n_papers // 2:
            counts, users = self._sum_rows(np.flatnonzero(inside), papers=papers)
        else:  # more than half the papers: the corpus totals less the papers left out read fewer entries
            counts_out, users_out = self._sum_rows(np.flatnonzero(~inside), papers=papers)
            counts, users = self._totals[0] - counts_out, _less(self._totals[1], users_out)
        counts.setflags(write=False)
        if users is not None:
            users.setflags(write=False)
        self._recent.pop(key, None)  # an entry without the papers is replaced by one with them
        for old in list(self._recent)[: max(0, len(self._recent) - RECENT_SUBSETS + 1)]:  # oldest first
            self._recent.pop(old, None)  # (another session may have popped it already)
        self._recent[key] = (counts, users)
        return counts, users

    def _best(
        self, scores: np.ndarray, candidates: np.ndarray, k: int | None, terms: np.ndarray | None = None
    ) -> np.ndarray:
        """The ``k`` candidates with the highest scores, highest first, ties in term order.

        ``terms``: the term of each position of ``scores`` when they cover only some terms.
        """
        if k is not None and k <= 0:
            return candidates[:0]
        if k is not None and len(candidates) > k:
            # Only the candidates at or above the k-th highest score can be among the first k.
            kth = np.partition(scores[candidates], len(candidates) - k)[len(candidates) - k]
            candidates = candidates[scores[candidates] >= kth]
        rank = self.term_rank[candidates if terms is None else terms[candidates]]
        ranked = candidates[np.lexsort((rank, -scores[candidates]))]
        return ranked if k is None else ranked[:k]

    def term_frequencies(
        self, mask: np.ndarray | pd.Series | None = None, top: int | None = None, *, doc_freq: bool = True
    ) -> pd.DataFrame:
        """The terms of the masked papers, most frequent first: term, count, doc_freq (papers using it;
        left out when ``doc_freq`` is False, which saves a third of counting a new subset)."""
        if doc_freq:
            counts, papers = self.subset_counts(mask)
        else:
            counts, papers = self.occurrences(mask), None
        order = self._best(counts, np.flatnonzero(counts > 0), top)
        frame = pd.DataFrame(
            {"term": pd.Series(self.terms[order], dtype="str"), "count": counts[order].astype("int64")}
        )
        if papers is not None:
            frame["doc_freq"] = papers[order].astype("int64")
        return frame

    def word_cloud(self, mask: np.ndarray | pd.Series | None = None, top: int = 150) -> dict[str, int]:
        """``{term: count}`` of the most frequent terms of the masked papers, for a word cloud."""
        frame = self.term_frequencies(mask, top=top)
        return dict(zip(frame["term"], frame["count"].astype(int), strict=True))

    def keywords(
        self,
        mask: np.ndarray | pd.Series | None = None,
        *,
        groups: pd.Series | Sequence[object] | None = None,
        sample: np.ndarray | pd.Series | None = None,
        top: int = 150,
        per_group: int = 8,
        prior_strength: float = DEFAULT_PRIOR_STRENGTH,
    ) -> pd.DataFrame:
        """The terms that set the masked papers apart, for a word cloud: term, weight (a z-score > 0).

        With a ``mask`` that leaves papers out: the masked papers against the rest of the corpus
        (`distinctive_terms`, weighted log-odds with the corpus as the prior), so a cloud of a
        filter shows what the filter's papers say that the others do not, not the words every
        abstract uses. With no mask, or one keeping every paper, there is no rest: each of ``groups``
        (topics) against the others, its ``per_group`` best terms, a term weighted by its best group,
        so the cloud shows what the corpus's parts are about (compared on the papers of ``sample``
        where given: a seeded sample of a large corpus). Empty when neither can be worked out.

        >>> counts = TermCounts.build(["graph kernel", "graph kernel", "protein folding", "protein fold"])
        >>> counts.keywords(np.array([True, True, False, False]), prior_strength=1)["term"].tolist()
        ['graph', 'kernel']
        """
        inside = self._inside(mask)
        columns = {"term": "str", "weight": "float64"}
        if 0 < int(inside.sum()) < self.n_papers:
            found = self.distinctive_terms(inside, top=top, under=0, prior_strength=prior_strength)
            found = found[found["z"] > 0]
            return pd.DataFrame({"term": found["term"], "weight": found["z"]}).astype(columns)
        if groups is None:
            return pd.DataFrame(columns=list(columns)).astype(columns)
        compared = inside if sample is None else self._inside(sample)
        by_group = self.group_distinctive_terms(
            groups, mask=compared, top=per_group, prior_strength=prior_strength
        )
        if by_group.empty:
            return pd.DataFrame(columns=list(columns)).astype(columns)
        best = by_group.groupby("term", sort=False)["z"].max().sort_values(ascending=False, kind="stable")
        best = best[best > 0].head(top)
        return pd.DataFrame({"term": best.index.astype(str), "weight": best.to_numpy()}).astype(columns)

    def _prior(self, total_counts: np.ndarray, strength: float) -> np.ndarray:
        # The corpus's own term shares as the informative prior, worth ``strength`` pseudo-occurrences,
        # plus a floor so a term the prior never saw still has a finite variance.
        shares = total_counts / max(total_counts.sum(), 1.0)
        return strength * shares + 0.01

    def distinctive_terms(
        self,
        mask: np.ndarray | pd.Series,
        *,
        within: np.ndarray | pd.Series | None = None,
        top: int = 20,
        under: int = 10,
        prior_strength: float = DEFAULT_PRIOR_STRENGTH,
    ) -> pd.DataFrame:
        """Terms that set the masked papers apart from the rest: term, z, count_in, count_out.

        The ``top`` most over-used terms (z > 0, largest first) then the ``under`` most under-used
        (z < 0). ``within`` limits "the rest" to a subset (default: all other papers).
        """
        inside = self._inside(mask)
        scope = self._inside(within) if within is not None else None
        counts_in = self.occurrences(inside if scope is None else inside & scope)
        counts_all = self.occurrences(scope)
        counts_out = counts_all - counts_in
        columns = ["term", "z", "count_in", "count_out"]
        if counts_in.sum() == 0 or counts_out.sum() == 0:
            return pd.DataFrame(columns=columns).astype({"term": "str", "z": "float64"})
        z = log_odds_z(counts_in, counts_out, self._prior(counts_in + counts_out, prior_strength))
        over = self._best(z, np.flatnonzero((z > 0) & (counts_in > 0)), top)
        below = self._best(-z, np.flatnonzero(z < 0), under)
        chosen = np.concatenate([over, below[::-1]]).astype(int)
        return pd.DataFrame(
            {
                "term": pd.Series(self.terms[chosen], dtype="str"),
                "z": np.round(z[chosen], 3),
                "count_in": counts_in[chosen].astype("int64"),
                "count_out": counts_out[chosen].astype("int64"),
            }
        )

    def group_distinctive_terms(
        self,
        groups: pd.Series | Sequence[object],
        *,
        mask: np.ndarray | pd.Series | None = None,
        top: int = 10,
        prior_strength: float = DEFAULT_PRIOR_STRENGTH,
    ) -> pd.DataFrame:
        """Each group's most distinctive terms against the other groups: group, term, z, count_in, count_out.

        ``groups`` holds one value per paper (a topic, venue, source...) or a list of values (areas: a
        paper counts in each). Empty values are no group. Only the masked papers take part. Fewer than
        two groups give an empty table.
        """
        keep = self._inside(mask)
        rows, group_index, labels = _memberships(groups, keep, self.n_papers)
        columns = ["group", "term", "z", "count_in", "count_out"]
        if len(labels) < 2:
            return pd.DataFrame(columns=columns).astype({"group": "str", "term": "str", "z": "float64"})
        # Not a sparse group-by-paper product: that costs several times one read of the entries.
        counts_in = self._group_sums(rows, group_index, len(labels))
        # rows come sorted (`_memberships`): distinct when no two neighbours are equal (np.unique of
        # 50,000 rows to tell the same was a fifth of this comparison's time)
        if len(rows) == int(keep.sum()) and not np.any(rows[1:] == rows[:-1]):
            total = counts_in.sum(axis=0)  # every paper in exactly one group: no second read of them
        else:
            total = self.occurrences(keep)
        prior = self._prior(total, prior_strength)
        # Only a term a group uses can be distinctive of it: the z-scores of those (group, term) pairs
        # alone, about one in twelve of the table on a sample of a million papers' 47 topics; the
        # counts outside a group are worked out for those pairs only, not for the whole table.
        # by group, then term; one flat scan of a boolean table (several times faster than np.nonzero of
        # the 2-D counts)
        group_of, term_of = np.divmod(np.flatnonzero(counts_in != 0), counts_in.shape[1])
        pair_in = counts_in[group_of, term_of]
        pair_out = np.clip(total[term_of] - pair_in, 0, None)
        total_in = counts_in.sum(axis=1)
        total_out = np.clip(total.sum() - total_in, 0, None)  # a group's papers are among the papers
        z = log_odds_z(
            pair_in,
            pair_out,
            prior[term_of],
            prior_total=float(prior.sum()),
            totals=(total_in[group_of], total_out[group_of]),
        )
        bounds = np.searchsorted(group_of, np.arange(len(labels) + 1))
        # One table from every group's best terms (a frame per group cost more than the counting).
        best = [
            first + self._best(z[first:last], np.flatnonzero(z[first:last] > 0), top, term_of[first:last])
            for first, last in zip(bounds[:-1], bounds[1:], strict=True)
        ]
        pairs = np.concatenate(best).astype(np.int64)
        group_of, term_of = group_of[pairs], term_of[pairs]
        table = pd.DataFrame(
            {
                "group": np.asarray(labels, dtype=object)[group_of],
                "term": self.terms[term_of],
                "z": np.round(z[pairs], 3),
                "count_in": pair_in[pairs].astype("int64"),
                "count_out": pair_out[pairs].astype("int64"),
            },
            columns=columns,
        )
        return table.astype({"group": "str", "term": "str"})


def _columns_of_rows(matrix: sp.csr_matrix, first: int, last: int) -> sp.csc_matrix:
    """The rows ``first`` to ``last`` of ``matrix``, transposed (terms x papers), as a view: no copy.

    The arrays are set after the constructor: given to it, a view of less than half of the arrays it
    comes from is copied (scipy's ``prune``), 0.4 s for half the rows of a million papers.
    """
    start, end = matrix.indptr[first], matrix.indptr[last]
    view = sp.csc_matrix((matrix.shape[1], last - first), dtype=matrix.dtype)
    view.indptr = matrix.indptr[first : last + 1] - start
    view.indices = matrix.indices[start:end]
    view.data = matrix.data[start:end]
    return view


def _memberships(
    groups: pd.Series | Sequence[object], keep: np.ndarray, n_papers: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(paper, group) pairs of the kept papers: rows (ascending), group numbers, and the group names, sorted.

    A value may be a list (a paper in several groups); empty values (None, NaN, "") are no group, and
    a paper listed twice in one group is in it once.
    """
    values = groups if isinstance(groups, pd.Series) else pd.Series(list(groups), dtype=object)
    if len(values) != n_papers:
        raise ValueError(f"groups has {len(values)} entries; expected one per paper ({n_papers})")
    values = values.reset_index(drop=True)[keep]
    listed = values.dtype == object
    if listed:
        values = values.explode()  # the index keeps each member's paper
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    names = np.array([str(u) for u in uniques], dtype=object)
    named = np.flatnonzero(names != "")
    labels, renumber = np.unique(names[named].astype(str), return_inverse=True)
    group_of_code = np.full(len(names) + 1, -1, dtype=np.int64)  # the last entry: no group (code -1)
    group_of_code[named] = renumber
    group_index = group_of_code[codes]
    rows = values.index.to_numpy(dtype=np.int64)[group_index >= 0]
    group_index = group_index[group_index >= 0]
    if listed:
        pairs = np.unique(rows * len(labels) + group_index)
        rows, group_index = pairs // len(labels), pairs % len(labels)
    return rows, group_index, labels.astype(object)


def _literal_start(term: str) -> str:
    """Lower-case ASCII text that every match of `term_pattern` (``term``) holds, in any case ("" if none
    such): the first word less a final "y" (its plural is "ies")."""
    words = [w for w in re.split(r"[\s\-]+", term.strip()) if w]
    if not words:
        return ""
    first = words[0][:-1] if len(words[0]) > 2 and words[0].endswith("y") else words[0]
    return first.lower() if first.isascii() else ""


def _word_pattern(word: str, *, word_start: bool = False) -> str:
    """A word with its plural forms ("study" matches "studies", "model" matches "models").

    ``word_start``: only where no word character comes before it. That is checked after the word's
    first letters, not before them: a pattern that begins with a look-behind is tried at every position
    of a text, and one that begins with letters is looked for (keyword in context: 2.9x faster).
    """
    stem, ending = (word[:-1], "(?:y|ies)") if len(word) > 2 and word.endswith("y") else (word, "(?:s|es)?")
    literal = re.escape(stem)
    return literal + (rf"(?<!\w{literal})" if word_start else "") + ending


def term_pattern(term: str) -> re.Pattern[str]:
    """A case-insensitive pattern finding ``term`` in running text, singular or plural, hyphen or space.

    >>> bool(term_pattern("graph neural network").search("Graph-Neural Networks rock"))
    True
    >>> [m.group() for m in term_pattern("model").finditer("Models, submodels and a model-based model")]
    ['Models', 'model', 'model']
    """
    words = [w for w in re.split(r"[\s\-]+", term.strip()) if w]
    if not words:
        return re.compile(r"(?!x)x")  # matches nothing
    # Word boundaries only where the term starts/ends with a word character (CJK has no spaces).
    start = bool(re.match(r"\w", words[0])) and not _is_cjk(words[0][0])
    body = r"[\s\-]+".join(_word_pattern(w, word_start=start and n == 0) for n, w in enumerate(words))
    end = r"(?!\w)" if re.search(r"\w$", words[-1]) and not _is_cjk(words[-1][-1]) else ""
    return re.compile(body + end, re.IGNORECASE)


def _is_cjk(char: str) -> bool:
    return "\u3040" <= char <= "\u30ff" or "\u3400" <= char <= "\u9fff" or "\uac00" <= char <= "\ud7af"


def texts_at(
    column: pd.Series, mask: np.ndarray | pd.Series, chunk: int = 256
) -> Iterator[tuple[int, object]]:
    """(position, text) of the masked rows of ``column``, in order, read a growing chunk at a time.

    A reader that stops early (`keyword_in_context` at its limit) never copies the other rows.
    """
    positions = np.flatnonzero(np.asarray(mask, dtype=bool))
    start = 0
    while start < len(positions):
        part = positions[start : start + chunk]
        yield from zip(part.tolist(), column.iloc[part].tolist(), strict=True)
        start += chunk
        chunk = min(chunk * 2, 65_536)


def texts_where(column: pd.Series, mask: np.ndarray) -> Iterator[object]:
    """One item per row of ``column``, in order: its text where ``mask`` holds, else None. Only the
    masked rows are read (`texts_at`), a chunk at a time."""
    upto = 0
    for position, text in texts_at(column, mask):
        yield from itertools.repeat(None, position - upto)
        yield text
        upto = position + 1
    yield from itertools.repeat(None, len(column) - upto)


def keyword_in_context(
    texts: pd.Series | Iterable[tuple[object, object]], term: str, width: int = 60, limit: int = KWIC_LIMIT
) -> pd.DataFrame:
    """Every occurrence of ``term`` with ``width`` characters either side: id, left, match, right.

    ``texts`` is indexed by paper id, or (id, text) pairs (`texts_at`); the scan stops at ``limit``
    occurrences, so it returns the first ``limit`` in corpus order.
    """
    pattern = term_pattern(term)
    # An ASCII abstract without the term's first letters in any case cannot match: one `in` of its
    # lower-case copy instead of the pattern's scan (a rare term would read most abstracts to find few lines).
    # Other abstracts are scanned whole: case folding beyond ASCII can change what matches.
    literal = _literal_start(term)
    pairs = texts.items() if isinstance(texts, pd.Series) else texts
    rows: list[tuple[object, str, str, str]] = []
    for paper_id, text in pairs:
        if not isinstance(text, str) or (literal and text.isascii() and literal not in text.lower()):
            continue
        for match in pattern.finditer(text):
            start, end = match.span()
            window = text[max(0, start - width) : start]
            if start > width and not text[start - width - 1].isspace():
                window = window.split(None, 1)[-1] if window.strip().count(" ") else window  # no half word
            left = " ".join(window.split())
            right = " ".join(text[end : end + width].split())
            if start > width:
                left = "…" + left
            if end + width < len(text):
                right = right + "…"
            rows.append((paper_id, left, match.group(), right))
            if len(rows) >= limit:
                break
        if len(rows) >= limit:
            break
    columns = ["id", "left", "match", "right"]
    return pd.DataFrame(rows, columns=columns).astype({c: "str" for c in columns[1:]})


# Character widths (in em) of the table's font, Source Sans at 14 px, measured in Chromium; a character
# not listed counts as 1 em (CJK is 1 em; most other letters are narrower), so a fitted text never
# overflows its cell. Keyword in context fits its Before and After columns with them: a Before text
# cut to 36 characters overflowed its right-aligned cell into the Paper column when its letters
# were wide ("coast and on a controlled advection–").
_EM_WIDTHS: dict[str, float] = {
    **dict.fromkeys("'", 0.18), **dict.fromkeys("|", 0.2), **dict.fromkeys(" ,.", 0.25),
    **dict.fromkeys("/:;\\ijlt", 0.28), **dict.fromkeys("!()-I[]`fr", 0.33), **dict.fromkeys("Js", 0.39),
    **dict.fromkeys('"', 0.41), **dict.fromkeys("?acez", 0.44), **dict.fromkeys("^{}", 0.48),
    **dict.fromkeys("0123456789#$*_bdghknopquvxy–", 0.5), **dict.fromkeys("~", 0.54),
    **dict.fromkeys("+<=>FPS", 0.56), **dict.fromkeys("ELTZ", 0.61), **dict.fromkeys("BCR", 0.67),
    **dict.fromkeys("ADGHKNOQUVXYw", 0.72), **dict.fromkeys("&m", 0.78), **dict.fromkeys("%", 0.83),
    **dict.fromkeys("M", 0.89), **dict.fromkeys("@", 0.92), **dict.fromkeys("W", 0.94),
}  # fmt: skip
ELLIPSIS = "…"


def text_width_px(text: str, font_px: float = 14.0) -> float:
    """About how wide ``text`` is drawn in the tables' font (Source Sans) at ``font_px``, never less.

    >>> text_width_px("mill"), text_width_px("漢")
    (22.7, 14.0)
    """
    return round(sum(_EM_WIDTHS.get(char, 1.0) for char in text) * font_px, 1)


def fit_width(text: str, width_px: float, *, keep: str = "start", font_px: float = 14.0) -> str:
    """``text`` cut at a word to fit ``width_px`` (`text_width_px`), with an ellipsis where it was cut.

    ``keep="start"`` keeps the beginning (an After column, a title); ``keep="end"`` keeps the end (a
    Before column, which ends at the term). A word longer than the whole width is cut inside.

    >>> fit_width("models are often computationally prohibitive", 120)
    'models are often…'
    >>> fit_width("…spatial fields using a controlled advection", 140, keep="end")
    '…a controlled advection'
    """
    text = " ".join(text.split())
    if text_width_px(text, font_px) <= width_px:
        return text
    bare = text.strip(ELLIPSIS + " ")
    words = bare.split(" ")
    room = width_px - text_width_px(ELLIPSIS, font_px)
    kept: list[str] = []
    used = 0.0
    for word in words if keep == "start" else reversed(words):
        more = text_width_px((" " if kept else "") + word, font_px)
        if used + more > room:
            break
        kept.append(word)
        used += more
    if not kept:  # one word wider than the cell: cut inside it
        word = words[0] if keep == "start" else words[-1]
        chars = word if keep == "start" else word[::-1]
        for char in chars:
            more = text_width_px(char, font_px)
            if used + more > room:
                break
            kept.append(char)
            used += more
        piece = "".join(kept) if keep == "start" else "".join(reversed(kept))
        return piece + ELLIPSIS if keep == "start" else ELLIPSIS + piece
    if keep == "start":
        return " ".join(kept) + ELLIPSIS
    return ELLIPSIS + " ".join(reversed(kept))


KWIC_ORDERS = ("corpus", "before", "after")


def _next_word(text: str, *, last: bool) -> str:
    words = text.strip("… ").split()
    word = (words[-1] if last else words[0]) if words else ""
    return word.strip(".,;:()[]{}\"'").lower()


def kwic_sorted(lines: pd.DataFrame, by: str) -> pd.DataFrame:
    """Lines of `keyword_in_context` in corpus order, or by the word just before or after the term.

    Ties keep corpus order; lines with no word on that side come last.

    >>> lines = pd.DataFrame({"left": ["…we use", "a"], "match": ["x", "x"], "right": ["b", "c"]})
    >>> kwic_sorted(lines, "before")["left"].tolist()
    ['a', '…we use']
    """
    if by not in ("before", "after") or lines.empty:
        return lines
    column = lines["left"] if by == "before" else lines["right"]
    words = column.map(lambda text: _next_word(str(text), last=by == "before"))
    order = sorted(range(len(lines)), key=lambda n: (words.iloc[n] == "", words.iloc[n]))
    return lines.iloc[order]


def _less(total: np.ndarray | None, part: np.ndarray | None) -> np.ndarray | None:
    """``total - part``, or None when either is (the papers using each term, when not counted)."""
    return None if total is None or part is None else total - part

"""Term frequencies, distinctive terms and keyword in context, fast on any subset of papers.

The count matrix is built once per (n-gram size, stop words kept or not); a subset of papers is then a
boolean mask and its counts one sparse vector-matrix product, so every filter change is cheap even on a
large corpus.

>>> counts = TermCounts.build(["Graph neural networks.", "Graph kernels.", "Diffusion models."])
>>> counts.term_frequencies(np.array([True, True, False]))["term"].tolist()
['graph', 'kernel']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dashboard.tokens import make_vectorizer

DEFAULT_PRIOR_STRENGTH = 1_000.0
KWIC_LIMIT = 5_000


def _abstracts(papers: pd.DataFrame | Sequence[str]) -> list[str]:
    """Abstract texts: ``abstract_clean`` (or ``abstract``) of a paper table, or the texts as given."""
    if isinstance(papers, pd.DataFrame):
        column = "abstract_clean" if "abstract_clean" in papers.columns else "abstract"
        return papers[column].fillna("").astype(str).tolist()
    return [str(text) for text in papers]


def log_odds_z(counts_in: np.ndarray, counts_out: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """z-scores of weighted log-odds ratios with an informative Dirichlet prior (Monroe et al. 2008).

    ``counts_in`` / ``counts_out``: term counts of the two groups (the last axis is the vocabulary);
    ``prior``: pseudo-counts per term (typically the corpus's term shares times a prior strength). A
    positive z means the term is used more inside than outside, beyond what chance explains.
    """
    counts_in = np.asarray(counts_in, dtype=np.float64)
    counts_out = np.asarray(counts_out, dtype=np.float64)
    prior = np.asarray(prior, dtype=np.float64)
    total_in = counts_in.sum(axis=-1, keepdims=True)
    total_out = counts_out.sum(axis=-1, keepdims=True)
    prior_total = prior.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        log_odds_in = np.log(counts_in + prior) - np.log(total_in + prior_total - counts_in - prior)
        log_odds_out = np.log(counts_out + prior) - np.log(total_out + prior_total - counts_out - prior)
        variance = 1.0 / (counts_in + prior) + 1.0 / (counts_out + prior)
        z = (log_odds_in - log_odds_out) / np.sqrt(variance)
    return np.nan_to_num(z, nan=0.0, posinf=0.0, neginf=0.0)


@dataclass(frozen=True)
class TermCounts:
    """Counts of every term in every paper (papers x terms), built once; subsets are masks."""

    terms: np.ndarray  # vocabulary, sorted
    counts: sp.csr_matrix  # papers x terms, occurrences
    present: sp.csr_matrix  # papers x terms, 1 where the paper uses the term
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
        present = counts.copy()
        present.data[:] = 1
        return cls(terms, counts, present, ngram, keep_stop_words)

    @property
    def n_papers(self) -> int:
        """Papers counted."""
        return self.counts.shape[0]

    def _weights(self, mask: np.ndarray | pd.Series | None) -> np.ndarray:
        if mask is None:
            return np.ones(self.n_papers, dtype=np.float32)
        weights = np.asarray(mask, dtype=bool)
        if weights.shape != (self.n_papers,):
            raise ValueError(f"mask has {weights.shape} entries; expected one per paper ({self.n_papers})")
        return weights.astype(np.float32)

    def subset_counts(self, mask: np.ndarray | pd.Series | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(occurrences, papers using it) of every term within the papers of ``mask`` (all when None)."""
        weights = self._weights(mask)
        counts = np.asarray(weights @ self.counts, dtype=np.float64).ravel()
        papers = np.asarray(weights @ self.present, dtype=np.float64).ravel()
        return counts, papers

    def term_frequencies(
        self, mask: np.ndarray | pd.Series | None = None, top: int | None = None
    ) -> pd.DataFrame:
        """The terms of the masked papers, most frequent first: term, count, doc_freq (papers using it)."""
        counts, papers = self.subset_counts(mask)
        used = np.flatnonzero(counts > 0)
        order = used[np.lexsort((self.terms[used].astype(str), -counts[used]))]
        if top is not None:
            order = order[:top]
        return pd.DataFrame(
            {
                "term": pd.Series(self.terms[order], dtype="str"),
                "count": counts[order].astype("int64"),
                "doc_freq": papers[order].astype("int64"),
            }
        )

    def word_cloud(self, mask: np.ndarray | pd.Series | None = None, top: int = 150) -> dict[str, int]:
        """``{term: count}`` of the most frequent terms of the masked papers, for a word cloud."""
        frame = self.term_frequencies(mask, top=top)
        return dict(zip(frame["term"], frame["count"].astype(int), strict=True))

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
        inside = self._weights(mask).astype(bool)
        scope = self._weights(within).astype(bool) if within is not None else np.ones_like(inside)
        counts_in, _ = self.subset_counts(inside & scope)
        counts_out, _ = self.subset_counts(~inside & scope)
        columns = ["term", "z", "count_in", "count_out"]
        if counts_in.sum() == 0 or counts_out.sum() == 0:
            return pd.DataFrame(columns=columns).astype({"term": "str", "z": "float64"})
        z = log_odds_z(counts_in, counts_out, self._prior(counts_in + counts_out, prior_strength))
        over = [i for i in np.lexsort((self.terms.astype(str), -z)) if z[i] > 0 and counts_in[i] > 0][:top]
        below = [i for i in np.lexsort((self.terms.astype(str), z)) if z[i] < 0][:under]
        chosen = np.array(over + below[::-1], dtype=int)
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
        values = list(groups)
        if len(values) != self.n_papers:
            raise ValueError(f"groups has {len(values)} entries; expected one per paper ({self.n_papers})")
        keep = self._weights(mask).astype(bool)
        rows: list[int] = []
        names: list[str] = []
        for paper, value in enumerate(values):
            if not keep[paper]:
                continue
            members = value if isinstance(value, list | tuple | np.ndarray) else [value]
            for member in members:
                if member is None or (isinstance(member, float) and np.isnan(member)) or str(member) == "":
                    continue
                rows.append(paper)
                names.append(str(member))
        labels, group_index = np.unique(np.array(names, dtype=object), return_inverse=True)
        columns = ["group", "term", "z", "count_in", "count_out"]
        if len(labels) < 2:
            return pd.DataFrame(columns=columns).astype({"group": "str", "term": "str", "z": "float64"})
        membership = sp.csr_matrix(
            (np.ones(len(rows), dtype=np.float32), (group_index, np.array(rows))),
            shape=(len(labels), self.n_papers),
        )
        membership.data[:] = 1  # a paper listed twice in one group counts once
        counts_in = np.asarray((membership @ self.counts).todense(), dtype=np.float64)
        total, _ = self.subset_counts(keep)
        counts_out = np.clip(total[None, :] - counts_in, 0, None)
        z = log_odds_z(counts_in, counts_out, self._prior(total, prior_strength))
        frames = []
        for g, label in enumerate(labels):
            ranked = np.lexsort((self.terms.astype(str), -z[g]))
            best = np.array([i for i in ranked if z[g, i] > 0 and counts_in[g, i] > 0][:top], dtype=int)
            frames.append(
                pd.DataFrame(
                    {
                        "group": label,
                        "term": self.terms[best],
                        "z": np.round(z[g, best], 3),
                        "count_in": counts_in[g, best].astype("int64"),
                        "count_out": counts_out[g, best].astype("int64"),
                    }
                )
            )
        table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
        return table.astype({"group": "str", "term": "str"})


def _word_pattern(word: str) -> str:
    """A word with its plural forms ("study" matches "studies", "model" matches "models")."""
    escaped = re.escape(word)
    if len(word) > 2 and word.endswith("y"):
        return re.escape(word[:-1]) + "(?:y|ies)"
    return escaped + "(?:s|es)?"


def term_pattern(term: str) -> re.Pattern[str]:
    """A case-insensitive pattern finding ``term`` in running text, singular or plural, hyphen or space.

    >>> bool(term_pattern("graph neural network").search("Graph-Neural Networks rock"))
    True
    """
    words = [w for w in re.split(r"[\s\-]+", term.strip()) if w]
    if not words:
        return re.compile(r"(?!x)x")  # matches nothing
    body = r"[\s\-]+".join(_word_pattern(w) for w in words)
    # Word boundaries only where the term starts/ends with a word character (CJK has no spaces).
    start = r"(?<!\w)" if re.match(r"\w", words[0]) and not _is_cjk(words[0][0]) else ""
    end = r"(?!\w)" if re.search(r"\w$", words[-1]) and not _is_cjk(words[-1][-1]) else ""
    return re.compile(start + body + end, re.IGNORECASE)


def _is_cjk(char: str) -> bool:
    return "\u3040" <= char <= "\u30ff" or "\u3400" <= char <= "\u9fff" or "\uac00" <= char <= "\ud7af"


def keyword_in_context(texts: pd.Series, term: str, width: int = 60, limit: int = KWIC_LIMIT) -> pd.DataFrame:
    """Every occurrence of ``term`` with ``width`` characters either side: id, left, match, right.

    ``texts`` is indexed by paper id. At most ``limit`` occurrences are returned, in corpus order.
    """
    pattern = term_pattern(term)
    rows: list[tuple[str, str, str, str]] = []
    for paper_id, text in texts.items():
        if not isinstance(text, str):
            continue
        for match in pattern.finditer(text):
            start, end = match.span()
            left = " ".join(text[max(0, start - width) : start].split())
            right = " ".join(text[end : end + width].split())
            if start > width:
                left = "…" + left
            if end + width < len(text):
                right = right + "…"
            rows.append((str(paper_id), left, match.group(), right))
            if len(rows) >= limit:
                break
        if len(rows) >= limit:
            break
    return pd.DataFrame(rows, columns=["id", "left", "match", "right"]).astype("str")

"""Where a corpus comes from, behind one seam: raw files, uploaded files, or a prebuilt index.

A `CorpusSource` answers what every page and command asks of a corpus: its papers and load report,
its topics at a number of topics, the topic tree, which papers pass a set of filters, the term counts,
the method names per meaning, the search's word index. `FilesSource` computes each from the paper
table; `IndexSource` reads what a prebuilt index stored (memory-mapped, nothing recomputed) and falls
back to the computation where an older index lacks a part or a part is damaged; `UploadSource` reads
and fits uploaded files in a worker process under the upload limits. `open_source` picks the source
for paths given on a command line or to the app.

The app caches the answers per corpus digest (`dashboard.ui.data`); the CLI asks once. Neither
decides how a corpus is read: adding a kind of source is one class here.

    >>> source = open_source(["seeds"])
    >>> papers = source.load().papers
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from dashboard import corpus, filters
from dashboard import index as paper_index
from dashboard.analytics import terms

if TYPE_CHECKING:
    from dashboard.analytics.analysis import Analysis
    from dashboard.analytics.hierarchy import TopicTree
    from dashboard.search.wordindex import WordIndex
    from dashboard.server.uploads import Prepared, SessionTotals

LOG = logging.getLogger(__name__)
T = TypeVar("T")


class CorpusSource:
    """A corpus's answers, computed from its paper table (the base every source falls back to)."""

    kind = "files"
    is_index = False

    def load(self) -> corpus.LoadResult:
        """The paper table and the load report."""
        raise NotImplementedError

    def analysis(self, papers: pd.DataFrame, n_topics: int | str = "auto", **options: Any) -> Analysis:
        """Topics, research areas and the map at ``n_topics`` (``"auto"``: the corpus's own number), in
        the default space (`dashboard.search.topicspace`; its vectors kept on disk for the next start)."""
        from dashboard.search.topicspace import fit_topics

        return fit_topics(papers, n_topics, store=True, **options)

    def topic_tree(self, fitted: Analysis) -> TopicTree:
        """The merge tree over the fitted (``auto``) topics."""
        from dashboard.analytics.analysis import topic_tree

        return topic_tree(fitted)

    def mask(
        self, selection: filters.Filters, papers: pd.DataFrame, text: Callable[[], pd.Series] | None = None
    ) -> pd.Series:
        """Which papers pass ``selection``; ``text`` gives the search text (kept by the caller), asked
        for only when there is a search."""
        return selection.mask(papers, text=text() if text is not None and selection.q else None)

    def term_counts(self, papers: pd.DataFrame, ngram: int, keep_stop_words: bool) -> terms.TermCounts:
        """Counts of n-grams per paper, for sums over any subset."""
        return terms.TermCounts.build(papers, ngram=ngram, keep_stop_words=keep_stop_words)

    def method_meanings(self, papers: pd.DataFrame) -> list[list[str]]:
        """Each paper's method names, one per meaning (`dashboard.text.extract.name_meanings`)."""
        return paper_index.method_meanings(papers)

    def stored_facets(self, model: str) -> dict[str, pd.Series] | None:
        """The sidebar's facet counts when the source keeps them for topic model ``model``; else None."""
        return None

    def stored_word_index(self) -> WordIndex | None:
        """The search's inverted index when the source keeps one; else None (built from the text)."""
        return None

    @property
    def predates_map(self) -> bool:
        """True for an index built before the paper map (its ``x, y`` are one disc per topic)."""
        return False


class FilesSource(CorpusSource):
    """Raw files on disk (or fsspec-free local paths): read with `corpus.load`, everything computed."""

    def __init__(self, paths: Sequence[str | Path]) -> None:
        self.paths = tuple(str(p) for p in paths)

    def load(self) -> corpus.LoadResult:
        return corpus.load(self.paths)


class IndexSource(CorpusSource):
    """A prebuilt index (``paper-dashboard index``): what it stored is read, not recomputed.

    A part an older index lacks, or a damaged part, is computed from the papers instead and logged,
    so one broken file costs time, never the page. An index that cannot be opened at all loads as no
    papers with a report that says why, naming the file.
    """

    kind = "index"
    is_index = True

    def __init__(
        self, path: str | Path, opened: paper_index.PaperIndex | None = None, problem: str = ""
    ) -> None:
        self.path = str(path)
        self.opened = opened
        self.problem = problem

    @classmethod
    def open(cls, path: str | Path) -> IndexSource:
        """Open the index at ``path``; a damaged one gives a source whose `problem` says why."""
        try:
            return cls(path, paper_index.open_index(path))
        except paper_index.IndexFormatError as error:
            LOG.warning("cannot open index %s: %s", path, error)
            return cls(path, None, str(error))

    def load(self) -> corpus.LoadResult:
        if self.opened is not None:
            return corpus.LoadResult(papers=self.opened.papers, report=self.opened.report)
        name = Path(self.path).name or self.path
        report = corpus.FileReport(name, "index", None, 0, skipped=[corpus.Problem(name, "", self.problem)])
        return corpus.LoadResult(papers=pd.DataFrame(), report=corpus.LoadReport([report]))

    def _stored(self, read: Callable[[paper_index.PaperIndex], T | None], instead: str) -> T | None:
        if self.opened is None:
            return None
        try:
            return read(self.opened)
        except paper_index.IndexFormatError as error:
            LOG.warning("%s; %s instead", error, instead)
            return None

    def analysis(self, papers: pd.DataFrame, n_topics: int | str = "auto", **options: Any) -> Analysis:
        """The index's analysis; another number of topics refits on the sample it was fitted on."""
        opened = self.opened
        if opened is None:
            return super().analysis(papers, n_topics, **options)
        # The index was fitted with its own taxonomy and seed: ``options`` apply only where it is refitted
        # from scratch (an index that cannot be opened).
        if n_topics == "auto" or int(n_topics) == int(opened.manifest["topics"]):
            return opened.analysis
        refitted = self._stored(lambda index: paper_index.refit(index, int(n_topics)), "fitting the papers")
        return refitted if refitted is not None else super().analysis(papers, n_topics)

    def topic_tree(self, fitted: Analysis) -> TopicTree:
        stored = self._stored(paper_index.read_tree, "computing the topic tree")
        return stored if stored is not None else super().topic_tree(fitted)

    def mask(
        self, selection: filters.Filters, papers: pd.DataFrame, text: Callable[[], pd.Series] | None = None
    ) -> pd.Series:
        """The filters' mask with the search answered by the index's inverted index."""
        if self.opened is None:
            return super().mask(selection, papers, text)
        keep = selection.without("q").mask(papers)
        if selection.q:
            keep = keep & self.opened.search(selection.q)
        return keep

    def term_counts(self, papers: pd.DataFrame, ngram: int, keep_stop_words: bool) -> terms.TermCounts:
        stored = None
        if not keep_stop_words:  # the index keeps the counts without stop words
            stored = self._stored(lambda index: index.term_counts(ngram), "counting the terms")
        return stored if stored is not None else super().term_counts(papers, ngram, keep_stop_words)

    def method_meanings(self, papers: pd.DataFrame) -> list[list[str]]:
        stored = self._stored(paper_index.read_meanings, "reading the abstracts")
        return stored if stored is not None else super().method_meanings(papers)

    def stored_facets(self, model: str) -> dict[str, pd.Series] | None:
        opened = self.opened
        if opened is None or opened.facets is None or model not in ("auto", str(opened.manifest["topics"])):
            return None
        return opened.facets

    def stored_word_index(self) -> WordIndex | None:
        return self.opened.words if self.opened is not None else None

    def search(self, q: str) -> np.ndarray | None:
        """Which papers match ``q`` by the index's inverted index (None when it could not be opened)."""
        return self.opened.search(q) if self.opened is not None else None

    @property
    def predates_map(self) -> bool:
        return self.opened is not None and not paper_index.has_map(self.opened.manifest)


class UploadSource(CorpusSource):
    """Uploaded files, read and first fitted in a worker process under the upload limits
    (`dashboard.server.uploads`: time, memory, papers), so a hostile file cannot stall the server."""

    kind = "upload"

    def __init__(
        self, files: list[tuple[str, bytes]], new: Sequence[int] = (), imported: SessionTotals | None = None
    ) -> None:
        self.files = files
        self.new = tuple(new)
        self.imported = imported  # what the session imported into the library: the same session limits

    def prepare(self, n_topics: int | str = "auto") -> tuple[Prepared, int]:
        """Read the files and fit the first topics in the worker: (what it gave, its size in bytes).

        Raises `dashboard.server.worker.WorkerError` when the worker passes a limit.
        """
        from dashboard.search.topicspace import configured
        from dashboard.server import uploads, worker

        prepared: Prepared
        prepared, size = worker.run(
            uploads.prepare,
            self.files,
            self.new,
            n_topics,
            uploads.current_settings(),
            self.imported,
            configured(),
            timeout=uploads.PARSE_TIMEOUT_SECONDS,
            memory_bytes=uploads.PARSE_MEMORY_BYTES,
        )
        return prepared, size

    def load(self) -> corpus.LoadResult:
        return self.prepare()[0].result

    def analysis(self, papers: pd.DataFrame, n_topics: int | str = "auto", **options: Any) -> Analysis:
        """Fitted in the worker too (raises `dashboard.server.worker.WorkerError` past a limit)."""
        return self.fit_in_worker(papers, n_topics)[0]

    @staticmethod
    def fit_in_worker(
        papers: pd.DataFrame, n_topics: int | str, vectors: np.ndarray | None = None
    ) -> tuple[Analysis, int]:
        """Topics fitted in the worker process: (the analysis, its size in bytes). ``vectors`` are the
        papers' embeddings from their first fit (`Analysis.model.semantic_`), so a refit does not encode
        them again."""
        from dashboard.search.topicspace import configured
        from dashboard.server import uploads, worker

        fitted: Analysis
        fitted, size = worker.run(
            uploads.fit,
            papers,
            n_topics,
            configured(),  # the server's setting, not the worker's environment
            vectors,
            timeout=uploads.PARSE_TIMEOUT_SECONDS,
            memory_bytes=uploads.PARSE_MEMORY_BYTES,
        )
        return fitted, size


def open_source(paths: Sequence[str | Path]) -> CorpusSource:
    """The source for ``paths``: one prebuilt index directory is an `IndexSource`, anything else raw
    files (`FilesSource`; a folder is read file by file)."""
    if len(paths) == 1 and paper_index.is_index(paths[0]):
        return IndexSource.open(paths[0])
    return FilesSource(paths)

"""The map phase of a build: read the files into partitions, count each partition, assign its topics,
and with ``--semantic`` encode its texts.

A build is maps and a fit (`dashboard.index.build`): these are the maps, as pure functions of one
partition, run by `LocalMaps` in this machine's processes or by `dashboard.index.distributed.DaskMaps`
on a cluster; either gives the same files.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import itertools
import multiprocessing
import os
import pickle
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import pyarrow as pa
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from dashboard import corpus
from dashboard.analytics.areas import (
    parse_taxonomy,
)
from dashboard.index.format import _STR, IndexBuildError, arrow_to_table, read_arrow, table_to_arrow
from dashboard.system.lifetime import end_with

T = TypeVar("T")
F = TypeVar("F")


@dataclass(frozen=True)
class Part:
    """One partition of the paper table, as the count step left it on disk (the client's copy)."""

    directory: Path
    rows: int
    source: str = ""  # the input file it was cut from
    first_row: int = 0  # its first paper's row in that file (0-based)

    @property
    def where(self) -> str:
        """How an error names it: ``partition 00002-0001 (papers 50,001-100,000 of abstracts.jsonl)``."""
        return partition_name(self.directory.name, self.source, self.first_row, self.rows)


def partition_name(name: str, source: str, first_row: int, rows: int) -> str:
    """A partition as messages name it: its folder name, its papers and the file they came from."""
    return f"partition {name} (papers {first_row + 1:,}-{first_row + rows:,} of {source})"


def read_partitions(
    source: str, partition_size: int, pieces: int = 1
) -> tuple[dict[str, Any], list[tuple[bytes, int]]]:
    """Map step 0 for one file (a path or fsspec URL): load it, cut its table into partitions.

    Partitions hold at most ``partition_size`` papers, and the file is cut into at least ``pieces`` of
    them (so that a build of one file keeps every worker counting). Returns the file's load report (as a
    dict) and each partition's paper table as Arrow IPC bytes with its number of papers.
    """
    from dashboard.index import locations

    try:
        with locations.local_copy(source) as path:
            result = corpus.load([path])
        report = dataclasses.asdict(result.report.files[0]) if result.report.files else {}
        papers = result.papers
        size = max(1, min(partition_size, -(-len(papers) // max(1, pieces))))
        starts = range(0, len(papers), size)
        chunks = (papers.iloc[start : start + size] for start in starts)
        tables = [(_arrow_bytes(table_to_arrow(chunk)), len(chunk)) for chunk in chunks]
    except Exception as error:
        raise IndexBuildError(f"reading {source} failed: {type(error).__name__}: {error}") from error
    return report, tables


def _read_file(task: tuple[str, int, str, int, int]) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    """Map step 0 in a local worker process: `read_partitions`, each partition written to its folder."""
    path, number, work, partition_size, pieces = task
    report, tables = read_partitions(path, partition_size, pieces)
    parts = []
    for chunk, (table, rows) in enumerate(tables):
        directory = Path(work) / f"{number:05d}-{chunk:04d}"
        directory.mkdir(parents=True)
        (directory / "papers.arrow").write_bytes(table)
        parts.append((str(directory), rows))
    return report, parts


# has_abstract: placeholder abstracts count no terms (absent from tables written before it existed)
COUNT_COLUMNS = ["title", "title_is_derived", "abstract_clean", "method_names", "has_abstract"]


def _count_columns(papers_arrow: bytes) -> Any:
    table = pa.ipc.open_file(pa.BufferReader(papers_arrow)).read_all()
    return arrow_to_table(table.select([c for c in COUNT_COLUMNS if c in table.column_names]))


def count_files(
    papers_arrow: bytes, taxonomy_text: str, taxonomy_name: str, where: str, words: bool = True
) -> dict[str, bytes]:
    """Map step 1 for one partition (its paper table as Arrow IPC bytes): the files of what it learnt.

    The same bytes whoever runs it (a local worker process writes them to the partition's folder, a
    Dask worker returns them); a failure names the partition (``where``). ``words=False`` leaves out
    the search words' files (`word_files` makes them).
    """
    from dashboard.index import steps as indexing  # scikit-learn only when building

    try:
        papers = _count_columns(papers_arrow)
        counts = indexing.count_partition(papers, parse_taxonomy(taxonomy_text, taxonomy_name), words=words)
        files = {
            "vocabulary.arrow": _arrow_bytes(pa.table({"term": counts.vocabulary.cast(_STR)})),
            "abstract_counts.npz": _npz_bytes(counts.abstract_counts),
            "topic_counts.npz": _npz_bytes(counts.topic_counts),
            "area_scores.npy": _npy_bytes(counts.area_scores),
        }
        if counts.words is not None:
            files.update(_word_index_files(counts.words))
        return files
    except Exception as error:
        raise IndexBuildError(f"counting {where} failed: {type(error).__name__}: {error}") from error


def word_files(papers_arrow: bytes, where: str) -> dict[str, bytes]:
    """The search words' files of one partition (the part of `count_files` that ``words=False`` skips)."""
    from dashboard.filters import search_text
    from dashboard.search.wordindex import WordIndex

    try:
        return _word_index_files(WordIndex.build(search_text(_count_columns(papers_arrow))))
    except Exception as error:
        raise IndexBuildError(
            f"indexing the words of {where} failed: {type(error).__name__}: {error}"
        ) from error


def _word_index_files(words: Any) -> dict[str, bytes]:
    return {
        "words.arrow": _arrow_bytes(pa.table({"word": words.words})),
        "postings.npz": _npy_bytes(
            indptr=words.indptr,
            indices=words.indices,
            tf=np.asarray(words.tf),
            lengths=np.asarray(words.lengths),
        ),
        "odd_rows.npy": _npy_bytes(words.odd_rows),
    }


def _warm() -> None:
    """Import what the count step needs (a second or two per worker process, better spent early)."""
    from dashboard.index import steps  # noqa: F401


def _count_part(task: tuple[str, str, str, str], words: bool = True) -> None:
    """Map step 1 in a local worker process: `count_files` of one partition, written to its folder."""
    directory = Path(task[0])
    files = count_files((directory / "papers.arrow").read_bytes(), task[1], task[2], task[3], words)
    for name, data in files.items():
        (directory / name).write_bytes(data)


def _words_part(task: tuple[str, str, str, str]) -> None:
    """`word_files` of one partition in a local worker process, written to its folder."""
    directory = Path(task[0])
    for name, data in word_files((directory / "papers.arrow").read_bytes(), task[3]).items():
        (directory / name).write_bytes(data)


@functools.lru_cache(maxsize=1)
def _shared_inputs(path: Path) -> AssignInputs:
    """The assign step's shared inputs, read once per worker process."""
    return cast(AssignInputs, pickle.loads(path.read_bytes()))


def _assign_part(counts: Mapping[str, Any], shared_file: Path, where: str) -> dict[str, Any]:
    """`assign_part` in a local worker process, with the shared inputs from their file."""
    return assign_part(counts, _shared_inputs(shared_file), where)


def _arrow_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue())


def _npz_bytes(matrix: sp.csr_matrix) -> bytes:
    buffer = io.BytesIO()
    sp.save_npz(buffer, sp.csr_matrix(matrix), compressed=False)
    return buffer.getvalue()


def _npy_bytes(array: np.ndarray | None = None, **arrays: np.ndarray) -> bytes:
    """One array as .npy bytes, or keyword arrays as .npz bytes."""
    buffer = io.BytesIO()
    if array is not None:
        np.save(buffer, array)
    else:
        np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


@dataclass(frozen=True)
class AssignInputs:
    """What every assign task needs besides its partition: the vocabularies and the fitted model's parts.

    ``transform`` is None when the model was fitted on every paper (then only term counts are remapped:
    the model's own TF-IDF rows and topics are kept).
    """

    vocabularies: dict[int, pa.Array]
    terms: np.ndarray
    idf: np.ndarray
    transform: Any  # indexing.TopicTransform | None (indexing is imported only when building)


def one_thread() -> threadpool_limits:
    """Every float computation of the build runs inside this: one BLAS and one OpenMP thread.

    A sum split over threads rounds differently with their number, and the client, a pool worker and a
    Dask worker each have their own, so the index would depend on where it was built (at 27k papers
    lsa.npy, the topics and the map differed between the local and the Dask build). One thread makes it
    the same from one machine or a cluster, whatever their cores. The numeric libraries are loaded first:
    threadpoolctl can only limit a library that is loaded (scikit-learn's OpenMP and SciPy's BLAS load
    with `dashboard.analytics.topics`, which the build imports late).
    """
    import dashboard.analytics.topics  # noqa: F401

    return threadpool_limits(limits=1)


def assign_part(
    counts: Mapping[str, Any], shared: AssignInputs, where: str, vectors: np.ndarray | None = None
) -> dict[str, Any]:
    """Map step 3 for one partition: Terms-page counts over the joint vocabularies, TF-IDF rows, topics.

    ``counts`` maps the names of `count_files` to the files' bytes or paths. Returns ``terms/N`` (CSR
    blocks), and unless the model saw every paper, ``tfidf`` and the arrays of `TopicTransform.assign`
    (``vectors``: the papers' embeddings, for a model fitted in a space that clusters them).
    """
    from dashboard.index import steps as indexing

    def source(name: str) -> Any:
        value = counts[name]
        return io.BytesIO(value) if isinstance(value, bytes) else value

    try:
        with one_thread():
            vocabulary_file = counts["vocabulary.arrow"]
            vocabulary_table = (
                pa.ipc.open_file(pa.BufferReader(vocabulary_file)).read_all()
                if isinstance(vocabulary_file, bytes)
                else read_arrow(vocabulary_file)
            )
            # As Arrow strings: each lookup below hashes them in C (a Python list of them was converted
            # back to Arrow for every vocabulary).
            vocabulary = vocabulary_table.column("term").combine_chunks()
            abstract_counts = sp.csr_matrix(sp.load_npz(source("abstract_counts.npz")))
            out: dict[str, Any] = {}
            for n in indexing.TERM_NGRAMS:
                mapping = indexing.column_mapping(vocabulary, shared.vocabularies[n])
                out[f"terms/{n}"] = indexing.remap_columns(
                    abstract_counts, mapping, len(shared.vocabularies[n])
                )
            if shared.transform is not None:
                counts_matrix = indexing.remap_columns(
                    sp.csr_matrix(sp.load_npz(source("topic_counts.npz"))),
                    indexing.column_mapping(vocabulary, shared.terms),
                    len(shared.terms),
                )
                tfidf = indexing.tfidf_rows(counts_matrix, shared.idf)
                out["tfidf"] = tfidf
                out["assigned"] = shared.transform.assign(tfidf, np.load(source("area_scores.npy")), vectors)
            return out
    except Exception as error:
        raise IndexBuildError(f"assigning {where} failed: {type(error).__name__}: {error}") from error


TEXT_COLUMNS = ["title", "title_is_derived", "abstract_clean", "has_abstract"]  # what `paper_texts` reads


@functools.lru_cache(maxsize=2)
def _encoder(threads: int) -> Any:
    """The sentence encoder, loaded once per process (its model takes a second to load)."""
    from dashboard.search import semantic

    return semantic.Encoder(threads=threads)


def encode_part(papers_arrow: bytes | Path, where: str, threads: int = 1) -> np.ndarray:
    """The ``--semantic`` map for one partition: every paper's sentence embedding (float32, unit rows;
    zeros for a paper without text), from the partition's table (Arrow IPC bytes or its file).

    One thread by default: the workers are one per core. The embedding of a text does not depend on the
    threads or on the other texts of its batch, so a pool worker, a Dask worker and this process give
    the same bytes. `semantic.SemanticUnavailable` (how to install the model) passes through as it is.
    """
    from dashboard.analytics.analysis import paper_texts
    from dashboard.search.semantic import SemanticUnavailable

    try:
        table = (
            pa.ipc.open_file(pa.BufferReader(papers_arrow)).read_all()
            if isinstance(papers_arrow, bytes)
            else read_arrow(papers_arrow)
        )
        return cast(
            np.ndarray, _encoder(threads).encode(paper_texts(arrow_to_table(table.select(TEXT_COLUMNS))))
        )
    except SemanticUnavailable:
        raise
    except Exception as error:
        raise IndexBuildError(f"encoding {where} failed: {type(error).__name__}: {error}") from error


def kept_vectors(parts: Sequence[Part]) -> np.ndarray | None:
    """Every paper's embedding, in partition order, where the corpus is one the app encodes (up to
    `representations.EMBEDDED_PAPERS` papers) and this process or the embedding store keeps its
    vectors (`topicspace.kept`: keyed by the texts, as the app's process stored them); else None."""
    from dashboard.analytics import representations
    from dashboard.analytics.analysis import paper_texts
    from dashboard.search import topicspace

    if sum(part.rows for part in parts) > representations.EMBEDDED_PAPERS:
        return None
    texts: list[str] = []
    for part in parts:
        table = read_arrow(part.directory / "papers.arrow").select(TEXT_COLUMNS)
        texts += paper_texts(arrow_to_table(table))
    return topicspace.kept(texts)


def submitted_ahead(submit: Callable[[T], F], items: Iterable[T], ahead: int) -> Iterator[tuple[T, F]]:
    """Each item with what ``submit(item)`` returned (a future), in order, with at most ``ahead`` items
    submitted and not yet taken: each result may be a partition's worth of memory."""
    queued = iter(items)
    pending: deque[tuple[T, F]] = deque()
    while True:
        pending.extend((item, submit(item)) for item in itertools.islice(queued, ahead - len(pending)))
        if not pending:
            return
        yield pending.popleft()


def _spawn_pool(workers: int) -> ProcessPoolExecutor:
    # spawn, not fork: a forked child of a process holding Arrow/BLAS thread pools can deadlock.
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        # A killed build (a first start's, when its server stops) must not leave its workers.
        initializer=end_with,
        initargs=(os.getpid(),),
    )


class LocalMaps:
    """The maps in this machine's processes: a spawn pool of ``workers``, or this process alone."""

    def __init__(self, workers: int) -> None:
        self.pool = _spawn_pool(workers) if workers > 1 else None
        self.workers = workers
        self.counting: list[Any] = []
        self.indexing: list[Any] = []
        self.warming: list[Any] = []
        self.tasks: list[tuple[str, str, str, str]] = []

    def read(
        self, items: Sequence[Any], work: Path, partition_size: int
    ) -> tuple[corpus.LoadReport, list[Part]]:
        """Step 0 for every file: the load report and the partitions, written under ``work``."""
        files = [item for item in items if not isinstance(item, corpus.FileReport)]
        # Fewer files than workers: cut each into a partition per worker, so all of them count.
        pieces = self.workers if len(files) < self.workers else 1
        tasks = [
            (str(item), number, str(work), partition_size, pieces)
            for number, item in enumerate(items)
            if not isinstance(item, corpus.FileReport)
        ]
        if self.pool is not None and len(tasks) > 1:
            results = list(self.pool.map(_read_file, tasks))
        else:
            if self.pool is not None:  # the workers start (and import the count step) while this reads
                self.warming = [self.pool.submit(_warm) for _ in range(self.workers)]
            results = [_read_file(task) for task in tasks]
        found = [[(Path(directory), rows) for directory, rows in item_parts] for _, item_parts in results]
        return collect_reads(items, [report for report, _ in results], found)

    def start_counting(self, parts: list[Part], taxonomy_text: str, taxonomy_name: str) -> None:
        """Step 1 starts in the workers: the counts the fit needs first, then the search words (indexed
        while this process fits)."""
        self.tasks = [(str(p.directory), taxonomy_text, taxonomy_name, p.where) for p in parts]
        if self.pool is not None:
            self.counting = [self.pool.submit(_count_part, task, False) for task in self.tasks]
            self.indexing = [self.pool.submit(_words_part, task) for task in self.tasks]

    def finish_counting(self) -> None:
        """Step 1's counts done: every partition's term counts and area scores are in its folder."""
        if self.pool is None:
            for task in self.tasks:
                _count_part(task)
        for future in self.counting:
            future.result()
        self.counting = []

    def finish_words(self) -> None:
        """Step 1 done: the search words' files are in each partition's folder too."""
        for future in self.indexing:
            future.result()
        self.indexing = []

    def assign(self, parts: list[Part], shared: AssignInputs) -> Iterator[dict[str, Any]]:
        """Step 3 for each partition, in order, in the workers; then the workers are stopped.

        The inputs every partition shares go to each worker once, as a file. A few partitions are
        assigned ahead of the one yielded, no more (each result is a partition's matrices). Everything
        after this runs in this process: a worker left idle kept the memory of its last partition
        through the map and the writes, where the build's peak is.
        """
        names = ["vocabulary.arrow", "abstract_counts.npz", "topic_counts.npz", "area_scores.npy"]
        tasks = [({name: part.directory / name for name in names}, part.where) for part in parts]
        if self.pool is None:
            for counts, where in tasks:
                yield assign_part(counts, shared, where)
            return
        shared_file = parts[0].directory.parent / "assign-inputs.pickle"
        shared_file.write_bytes(pickle.dumps(shared, protocol=pickle.HIGHEST_PROTOCOL))
        pool = self.pool
        try:
            for _, future in submitted_ahead(
                lambda task: pool.submit(_assign_part, task[0], shared_file, task[1]), tasks, 2 * self.workers
            ):
                yield future.result()
        finally:
            self.close()
            shared_file.unlink(missing_ok=True)

    def encode(self, parts: list[Part]) -> Iterator[np.ndarray]:
        """The ``--semantic`` map: each partition's embeddings, in order, in a new pool of the workers
        (the assign step stopped the first; each worker loads the model once). One partition, or one
        worker: in this process, on every core. A corpus whose vectors this process or the embedding
        store already has (`kept_vectors`) is not encoded."""
        kept = kept_vectors(parts)
        if kept is not None:
            start = 0
            for part in parts:
                yield kept[start : start + part.rows]
                start += part.rows
            return
        if self.workers < 2 or len(parts) < 2:
            for part in parts:
                yield encode_part(part.directory / "papers.arrow", part.where, threads=0)
            return
        with _spawn_pool(self.workers) as pool:
            for _, future in submitted_ahead(
                lambda part: pool.submit(encode_part, part.directory / "papers.arrow", part.where),
                parts,
                2 * self.workers,
            ):
                yield future.result()

    def close(self) -> None:
        """Stop the worker processes (again: nothing)."""
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None


def collect_reads(
    items: Sequence[Any], reports: list[dict[str, Any]], found: list[list[tuple[Path, int]]]
) -> tuple[corpus.LoadReport, list[Part]]:
    """The load report and partitions, in input order, from each read file's report and partitions."""
    by_item = iter(zip(reports, found, strict=True))
    files: list[corpus.FileReport] = []
    parts: list[Part] = []
    for item in items:
        if isinstance(item, corpus.FileReport):
            files.append(item)
            continue
        report, item_parts = next(by_item)
        source = str(report.get("source") or item)
        if report:
            report["skipped"] = [corpus.Problem(**p) for p in report["skipped"]]
            report["warnings"] = [corpus.Problem(**p) for p in report["warnings"]]
            files.append(corpus.FileReport(**report))
        first = 0
        for directory, rows in item_parts:
            parts.append(Part(directory, rows, source, first))
            first += rows
    return corpus.LoadReport(files), parts

"""A prebuilt index: the dashboard's heavy work done once, so the app opens any corpus in seconds.

    paper-dashboard index papers/ --out papers.index        # build (file by file, see dashboard.indexing)
    streamlit run app.py -- --corpus papers.index           # the app opens it instead of the raw files

An index is a directory. Everything in it is plain data (Arrow, Parquet, NumPy ``.npy``, JSON, TOML):
nothing is pickled, so opening an index never runs code from it. Arrays and the paper table are
memory-mapped, so opening costs milliseconds per gigabyte and pages are read only when used.

Format 1 (``manifest.json`` says which; a reader refuses any other version with a clear message)::

    manifest.json          format, version, package version, corpus digest, sizes, build time, settings,
                           every file's size and SHA-256, ``digest`` (the cache key of the index) and
                           ``map`` (how the papers' ``x, y`` were laid out, `dashboard.papermap`; absent
                           in an index built before the map, whose ``x, y`` are one disc per topic)
    papers.arrow           the paper table with the analysis columns (Arrow IPC file, uncompressed:
                           memory-mapped; list columns as Arrow lists, links as list<struct<url, kind>>)
    topics.parquet         topic, label, size, top_terms (list<struct<term, weight>>), representative_ids
    report.json            the load report (per file: papers read, records skipped and warnings)
    taxonomy.toml          the research-area taxonomy the areas were assigned with
    tfidf/                 TF-IDF matrix (CSR: data.npy float32, indices.npy, indptr.npy) and terms.parquet
                           (term, idf): the similarity structure behind "most similar papers"
    lsa.npy, embedding.npy per paper, the LSA vector and the topic model's embedding (float32)
    area_scores.npy        per paper, the research-area keyword scores
    fit_rows.npy           the papers the topic model was fitted on (all of them up to ``fit_size``)
    topic_tree.npz         the merge tree over the topics (dashboard.hierarchy: linkage, per-topic term
                           mass, sizes, centroids), so any smaller number of topics is a cut; optional:
                           an index built without it gets the same tree computed when it is opened
    method_meanings.arrow  per paper, its method names with the long form its abstract gives
                           (`extract.name_meanings`: a corpus-wide reading of every named paper's
                           abstract); optional: an index built without it gets them when opened
    terms/1, terms/2, terms/3   counts of 1-, 2- and 3-word terms per paper (CSR int32) and terms.arrow:
                           the Terms page's counts (stop words removed)
    search/                the search's inverted index: words.arrow (sorted), indptr.npy, indices.npy
                           (papers per word), odd_rows.npy (see dashboard.wordindex); for ranking,
                           tf.npy (uint8 per posting: weighted count) and lengths.npy (float32 per
                           paper). Both optional: an index built before them opens, and search ranks
                           by the words matched instead of BM25 (dashboard.ranking says so)

An index is read as untrusted data: with ``allow_pickle=False`` and Arrow readers, and checked when
opened (the parts read later, such as the Terms page's counts, when read), so a damaged or crafted
index is an IndexFormatError naming the file, never a crash:

- the manifest is bounded (`MAX_MANIFEST_BYTES`, nesting) and its fields are checked before use;
- every file it names stays inside the index (`member`: no absolute or ``..`` name is even looked
  at, no link may lead out), and has the size the manifest says;
- every array has the shape and dtype the manifest implies, and every sparse one a sound structure
  (`check_sparse`: positions in range, pointers that never decrease), one pass each, because SciPy's
  compiled code trusts them (a column past the end was a SIGSEGV);
- the paper table's text and list offsets lie inside their data (`check_arrow`: Arrow trusts them);
- the SHA-256 checksums the manifest keeps are compared only with ``verify=True`` (the disk cache
  does): hashing every file costs far more than the structural checks and grows with the index.

An index whose manifest has no checksums opens the same way.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import mmap
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from dashboard import __version__, corpus, extract, papermap, similarity
from dashboard.analysis import Analysis, analyze, paper_texts, topics_table
from dashboard.areas import DEFAULT_TAXONOMY_NAME, Taxonomy, TaxonomyError, areas_from_scores, parse_taxonomy
from dashboard.cores import usable_cores
from dashboard.filters import facet_counts, search_text
from dashboard.hierarchy import TopicTree, build_tree
from dashboard.schema import ANALYSIS_COLUMNS, CORE_COLUMNS, OPTIONAL_COLUMNS, OUTLIER_LABEL, OUTLIER_TOPIC
from dashboard.terms import TermCounts, texts_where
from dashboard.wordindex import WordIndex

if TYPE_CHECKING:  # building needs scikit-learn; opening an index does not (a faster app start)
    from dashboard.topics import TopicModel

FORMAT = "paper-dashboard-index"
# 2: code statuses as authors write links ("stated", shortened links) and method names per meaning;
# an index of version 1 holds the old ones, so it is refused with "rebuild it" (and the disk cache,
# keyed on this version, builds anew).
FORMAT_VERSION = 2
MANIFEST = "manifest.json"
TREE_FILE = "topic_tree.npz"
MEANINGS_FILE = "method_meanings.arrow"
DEFAULT_FIT_SIZE = 30_000
DEFAULT_PARTITION_SIZE = 50_000
SMALL_CORPUS_BYTES = 8 << 20  # below this much input, one process builds the index (no worker start-up)

Progress = Callable[[str], None]
T = TypeVar("T")


class IndexFormatError(Exception):
    """An index that cannot be opened; the message names the file and says what to do."""


class IndexBuildError(Exception):
    """An index that cannot be built from these inputs (too few papers)."""


class IndexOutputError(IndexBuildError):
    """The output directory exists and is not an index: it is not ours to replace."""


# ------------------------------------------------------------------------------------------ the table

_STR = pa.large_string()
_STR_LIST = pa.list_(pa.large_string())
_LINKS = pa.list_(pa.struct([("url", _STR), ("kind", _STR)]))
# Arrow types of the known columns: explicit, so a partition where every list is empty still has the
# same schema as the others (Arrow would infer list<null>).
COLUMN_TYPES: dict[str, pa.DataType] = {
    **{name: _STR for name in ("id", "source", "venue", "title", "abstract", "abstract_clean", "code_url")},
    **{name: _STR for name in ("github_repo", "code_status", "url", "pdf_url", "primary_area", "decision")},
    **{name: _STR for name in ("decision_tier", "track", "tldr", "project_url", "paper_url", "session")},
    "citations": pa.int64(),
    "has_abstract": pa.bool_(),
    "topic_label": _STR,
    **{name: pa.int64() for name in ("position", "year", "n_words", "topic")},
    "title_is_derived": pa.bool_(),
    "is_outlier": pa.bool_(),
    **{name: pa.float64() for name in ("topic_weight", "x", "y")},
    **{name: _STR_LIST for name in ("method_names", "datasets", "authors", "keywords", "areas")},
    **{name: _STR_LIST for name in ("affiliations", "countries")},
    "links": _LINKS,
}
_LIST_DEFAULT_COLUMNS = {name for name, kind in COLUMN_TYPES.items() if pa.types.is_list(kind)}


def _arrow_column(values: pd.Series) -> pa.Array:
    kind = COLUMN_TYPES.get(str(values.name))
    if kind is None:
        return pa.Array.from_pandas(values)
    return pa.array(values.to_numpy(dtype=object), type=kind, from_pandas=True)


def table_to_arrow(papers: pd.DataFrame, columns: Sequence[str] | None = None) -> pa.Table:
    """The paper table as Arrow with the index's column types; ``columns`` adds missing ones as defaults."""
    names = list(columns) if columns is not None else list(papers.columns)
    arrays = []
    for name in names:
        if name in papers.columns:
            arrays.append(_arrow_column(papers[name]))
            continue
        kind = COLUMN_TYPES.get(name, pa.null())
        # What corpus.load gives rows of a file that lacks an optional column: "" or an empty list.
        default: Any = [] if name in _LIST_DEFAULT_COLUMNS else ("" if kind == _STR else None)
        arrays.append(pa.array([default] * len(papers), type=kind))
    return pa.table(arrays, names=names)


def _python_lists(column: pa.ChunkedArray) -> np.ndarray:
    """A list column as an object array of Python lists (dicts for structs), fast at a million rows.

    The flat values become Python objects in one call; each row is then a slice of a Python list
    (about 0.1 microseconds, against 2 for slicing a NumPy array and converting it). Text values are
    made once per distinct value (`_shared_strings`) and shared by every row that holds them.
    """
    out = np.empty(len(column), dtype=object)
    start = 0
    seen: dict[str, str] = {}  # the one object of each distinct text value, across the chunks
    for chunk in column.chunks:
        offsets = np.asarray(chunk.offsets).tolist()
        flat = chunk.values
        if pa.types.is_struct(flat.type):
            fields = [f.name for f in flat.type]
            parts = [flat.field(i).to_numpy(zero_copy_only=False).tolist() for i in range(len(fields))]
            items: list[Any] = [dict(zip(fields, row, strict=True)) for row in zip(*parts, strict=True)]
        elif pa.types.is_string(flat.type) or pa.types.is_large_string(flat.type):
            items = _shared_strings(flat, seen)
        else:
            items = flat.to_numpy(zero_copy_only=False).tolist()
        block = np.empty(len(chunk), dtype=object)
        block[:] = [items[a:b] for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
        if chunk.null_count:
            block[~np.asarray(chunk.is_valid())] = None
        out[start : start + len(chunk)] = block
        start += len(chunk)
    return out


def _shared_strings(values: pa.Array, seen: dict[str, str]) -> list[str | None]:
    """``values`` as Python strings, one object per distinct value shared by every place it occurs
    (``seen``: the objects made so far, by value; updated).

    List columns repeat their values (an author on many papers, an area or a country on thousands): a
    string object per occurrence made a million papers' lists 1.1 GB of the app's memory; the distinct
    values alone take a fraction of that, made in about the same time (a dictionary encoding and one
    take of an object array).
    """
    encoded = pc.dictionary_encode(values)
    distinct = encoded.dictionary.to_pylist()
    objects = np.empty(len(distinct) + 1, dtype=object)  # the last one: a missing value
    objects[: len(distinct)] = [seen.setdefault(value, value) for value in distinct]
    codes = encoded.indices.fill_null(len(distinct)).to_numpy(zero_copy_only=False)
    return cast("list[str | None]", objects[codes].tolist())


def arrow_to_table(table: pa.Table) -> pd.DataFrame:
    """The paper table from Arrow: text columns stay Arrow-backed (zero copy), lists become Python lists."""
    list_names = [f.name for f in table.schema if pa.types.is_list(f.type)]
    frame = table.drop_columns(list_names).to_pandas()
    for name in list_names:
        frame[name] = pd.Series(_python_lists(table.column(name)), index=frame.index, dtype=object)
    for name in ("year", "citations"):
        if name in frame.columns:
            frame[name] = frame[name].astype("Int64")
    return frame[table.column_names]


def _column_order(names: Sequence[str]) -> list[str]:
    """Schema order (core, optional, then the others as first seen, analysis columns last)."""
    known = [c for c in (*CORE_COLUMNS, *OPTIONAL_COLUMNS) if c in names]
    return known + [c for c in names if c not in known]


# ------------------------------------------------------------------------------------------ arrays


def _save_csr_npz(path: Path, matrix: sp.csr_matrix) -> None:
    sp.save_npz(path, sp.csr_matrix(matrix), compressed=False)


def _load_npz(path: Path) -> sp.csr_matrix:
    return sp.csr_matrix(sp.load_npz(path))


class _CsrWriter:
    """Writes a CSR matrix row block by row block (``data``/``indices`` streamed to disk)."""

    def __init__(self, directory: Path, n_columns: int, dtype: type) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.n_columns = n_columns
        self.dtype = np.dtype(dtype)
        self.data = open(directory / "data.raw", "wb")  # noqa: SIM115 (closed in finish)
        self.indices = open(directory / "indices.raw", "wb")  # noqa: SIM115
        self.row_lengths: list[np.ndarray] = []
        self.nnz = 0

    def append(self, block: sp.csr_matrix) -> None:
        block = sp.csr_matrix(block)
        block.sort_indices()
        self.data.write(np.ascontiguousarray(block.data, dtype=self.dtype).tobytes())
        self.indices.write(np.ascontiguousarray(block.indices, dtype=np.int32).tobytes())
        self.row_lengths.append(np.diff(block.indptr))
        self.nnz += block.nnz

    def finish(self) -> dict[str, Any]:
        self.data.close()
        self.indices.close()
        index_type = np.int32 if self.nnz < 2**31 else np.int64
        lengths = np.concatenate(self.row_lengths) if self.row_lengths else np.zeros(0, dtype=np.int64)
        indptr = np.zeros(len(lengths) + 1, dtype=index_type)
        np.cumsum(lengths, out=indptr[1:])
        np.save(self.directory / "indptr.npy", indptr)
        _raw_to_npy(self.directory / "data.raw", self.directory / "data.npy", self.dtype, self.nnz)
        _raw_to_npy(
            self.directory / "indices.raw", self.directory / "indices.npy", np.dtype(np.int32), self.nnz
        )
        return {"shape": [len(lengths), self.n_columns], "nnz": int(self.nnz)}


def _raw_to_npy(raw: Path, target: Path, dtype: np.dtype, length: int) -> None:
    """Prefix raw array bytes with a .npy header (one sequential copy)."""
    with open(target, "wb") as out:
        np.lib.format.write_array_header_1_0(
            out, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (length,)}
        )
        with open(raw, "rb") as source:
            shutil.copyfileobj(source, out, 1 << 24)
    raw.unlink()


def _load_csr(directory: Path, shape: Sequence[int], data_kinds: str = "f") -> sp.csr_matrix:
    """The CSR matrix stored in ``directory`` (``data``, ``indices``, ``indptr``), its structure checked
    (`check_sparse`); ``data_kinds``: the NumPy kinds its values may have ("f" floats, "i" integers)."""
    data, indices, indptr = (_load_npy(directory / f"{name}.npy") for name in ("data", "indices", "indptr"))
    rows, columns = (int(n) for n in shape)
    check_sparse(directory / "indptr.npy", indptr, directory / "indices.npy", indices, rows, columns)
    _check_dense(directory / "data.npy", data, (len(indices),), data_kinds)
    return sp.csr_matrix((data, indices, indptr), shape=(rows, columns), copy=False)


def _load_npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as error:
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None


# What the index's position arrays may be: native integers, as the build writes them.
_INDEX_TYPES = (np.dtype(np.int32), np.dtype(np.int64))


def check_sparse(
    indptr_path: Path,
    indptr: np.ndarray,
    indices_path: Path,
    indices: np.ndarray,
    rows: int,
    columns: int,
    what: str = "columns",
) -> None:
    """Raise IndexFormatError naming the file unless ``indptr``/``indices`` are a sound CSR structure
    of ``rows`` x ``columns``: ``indptr`` starts at 0, never decreases and ends at the number of
    ``indices``, and every index is one of the ``columns`` (``what`` they are, for the message).

    SciPy's compiled routines and the search trust these: an index past the last column made opening
    a paper end the server with SIGSEGV, an ``indptr`` past the end with SIGBUS. One pass over each
    array (the indices read as unsigned, so a negative one is a huge one and a single maximum tests
    both ends), much less than hashing the files.
    """
    _check_dense(indptr_path, indptr, (rows + 1,), "i")
    _check_dense(indices_path, indices, (None,), "i")
    if indptr.dtype not in _INDEX_TYPES:
        raise IndexFormatError(
            f"{indptr_path}: positions of type {indptr.dtype}, not int32 or int64; rebuild the index"
        )
    if indices.dtype not in _INDEX_TYPES:
        raise IndexFormatError(
            f"{indices_path}: positions of type {indices.dtype}, not int32 or int64; rebuild the index"
        )
    first, last = int(indptr[0]), int(indptr[-1])
    if first != 0 or last != len(indices):
        raise IndexFormatError(
            f"{indptr_path}: runs from {first:,} to {last:,} over {len(indices):,} entries of "
            f"{indices_path.name}: the index is damaged; rebuild it"
        )
    if rows and bool((indptr[1:] < indptr[:-1]).any()):
        row = int(np.flatnonzero(indptr[1:] < indptr[:-1])[0])
        raise IndexFormatError(
            f"{indptr_path}: decreases after row {row:,}: the index is damaged; rebuild it"
        )
    _check_positions(indices_path, indices, columns, what)


def _check_positions(path: Path, positions: np.ndarray, bound: int, what: str) -> None:
    """Every value of ``positions`` (native int32 or int64) is in ``[0, bound)``; else IndexFormatError."""
    if positions.dtype not in _INDEX_TYPES:
        raise IndexFormatError(
            f"{path}: positions of type {positions.dtype}, not int32 or int64; rebuild the index"
        )
    if not len(positions):
        return
    unsigned: np.ndarray = positions.view(np.uint32 if positions.dtype.itemsize == 4 else np.uint64)
    if int(unsigned.max()) >= bound:
        bad = int(np.flatnonzero(unsigned >= bound)[0])
        raise IndexFormatError(
            f"{path}: entry {bad:,} is {int(positions[bad]):,}, outside the {bound:,} {what}: "
            "the index is damaged; rebuild it"
        )


def _check_dense(path: Path, array: np.ndarray, shape: Sequence[int | None], kinds: str) -> None:
    """``array`` has ``shape`` (None: any length there) and a native dtype of one of ``kinds``."""
    if array.ndim != len(shape) or any(
        n is not None and n != found for n, found in zip(shape, array.shape, strict=True)
    ):
        wanted = " x ".join("any" if n is None else f"{n:,}" for n in shape)
        raise IndexFormatError(
            f"{path}: shape {' x '.join(f'{n:,}' for n in array.shape) or 'scalar'} where the index needs "
            f"{wanted}: the index is damaged; rebuild it"
        )
    if array.dtype.kind not in kinds or not array.dtype.isnative:
        raise IndexFormatError(f"{path}: values of type {array.dtype}, not what the index holds; rebuild it")


def _write_arrow(table: pa.Table, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _read_arrow(path: Path) -> pa.Table:
    """An Arrow IPC file, memory-mapped: pages are read when used, without read-ahead.

    Papers picked by a filter are scattered over the file; the kernel's read-ahead would make every
    neighbouring page resident too (the whole text of a million abstracts after one search).
    """
    try:
        with open(path, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if path.stat().st_size else b""
        if isinstance(mapped, mmap.mmap) and hasattr(mmap, "MADV_RANDOM"):
            mapped.madvise(mmap.MADV_RANDOM)
        return pa.ipc.open_file(pa.BufferReader(pa.py_buffer(mapped))).read_all()
    except (OSError, ValueError, pa.ArrowInvalid) as error:
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None


def check_arrow(path: Path, table: pa.Table) -> None:
    """Raise IndexFormatError naming ``path`` unless every variable-length value of ``table`` (text,
    lists, at any depth) lies inside its data: offsets from 0 up, never decreasing, within bounds.

    Arrow's readers trust the offsets of a file they map: a value overwritten in papers.arrow's
    offsets ended the server with SIGSEGV. Arrow's own full validation also decodes every text as
    UTF-8 (the whole file read at open); the offsets alone are 8 bytes per value, checked with NumPy.
    """
    try:
        table.validate()  # buffer sizes: every offsets buffer is long enough to be read below
        for column in table.columns:
            for chunk in column.chunks:
                _check_offsets(chunk)
    except (pa.ArrowInvalid, ValueError) as error:
        raise IndexFormatError(f"{path}: {error}: the index is damaged; rebuild it") from None


def _check_offsets(array: pa.Array) -> None:
    """`check_arrow` of one array (and its children); ValueError says which column is unsound."""
    kind = array.type
    if pa.types.is_struct(kind):
        for number in range(kind.num_fields):
            _check_offsets(array.field(number))
        return
    text = pa.types.is_string(kind) or pa.types.is_binary(kind)
    large_text = pa.types.is_large_string(kind) or pa.types.is_large_binary(kind)
    listed = pa.types.is_list(kind) or pa.types.is_large_list(kind)
    if not (text or large_text or listed):
        return
    buffers = array.buffers()
    if buffers[1] is None:  # no values at all (`validate` saw that the length allows it)
        return
    wide = large_text or pa.types.is_large_list(kind)
    offsets: np.ndarray = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32)
    offsets = offsets[array.offset : array.offset + len(array) + 1]
    if listed:
        children = array.values
        limit = len(children)
    else:
        limit = buffers[2].size if buffers[2] is not None else 0
    if len(offsets) and (offsets[0] < 0 or offsets[-1] > limit or bool((offsets[1:] < offsets[:-1]).any())):
        raise ValueError(f"the offsets of a {kind} column are out of order or past its data")
    if listed:
        _check_offsets(children)


def _read_checked(path: Path, column: str) -> pa.ChunkedArray:
    """One column of the index's Arrow file at ``path``, its offsets checked (`check_arrow`)."""
    table = _read_arrow(path)
    if column not in table.column_names:
        raise IndexFormatError(f"{path}: has no column {column!r}; rebuild the index")
    table = table.select([column])
    check_arrow(path, table)
    return table.column(column)


PREWARM_SHARE = 0.5  # of the memory available now: an index larger than that is not read ahead


def prewarm(path: str | Path, budget: int | None = None) -> int:
    """Read every file of the index at ``path`` once, smallest first, so that the system's page cache
    holds them; the bytes read (0 when the files come to more than ``budget``, by default
    `PREWARM_SHARE` of the memory available now).

    The pages map the index's files and read them when used (`_read_arrow`: no read-ahead, so only
    the rows a filter picks become resident in the server). On a cold cache, the first search for a
    common word read the titles and abstracts of the rows it lists from the disk: at a million papers
    the Papers page's first try took 0.35 s, against 0.12 s with the file cached. Read here with
    ``sendfile`` to ``/dev/null`` (or `read` where that is refused), the files fill the page cache
    without being mapped into this process, so its resident memory does not grow; the kernel's hint
    for this (``posix_fadvise(WILLNEED)``) did nothing on the benchmark machine's overlay filesystem.
    Never raises: a file that cannot be read is skipped.
    """
    try:
        files = sorted((p.stat().st_size, p) for p in Path(path).rglob("*") if p.is_file())
    except OSError:
        return 0
    total = sum(size for size, _ in files)
    if total > (budget if budget is not None else int(PREWARM_SHARE * _available_memory())):
        return 0
    done = 0
    with open(os.devnull, "wb") as sink:
        for _, file in files:
            try:
                done += _read_through(file, sink)
            except OSError:
                continue
    return done


def _read_through(path: Path, sink: Any, step: int = 8 << 20) -> int:
    with open(path, "rb") as handle:
        size, offset = os.fstat(handle.fileno()).st_size, 0
        try:
            while offset < size:
                sent = os.sendfile(sink.fileno(), handle.fileno(), offset, min(step, size - offset))
                if sent == 0:
                    break
                offset += sent
        except OSError:  # no sendfile from this file: plain reads into one buffer
            buffer = bytearray(step)
            handle.seek(offset)
            while read := handle.readinto(buffer):
                offset += read
    return offset


def _available_memory() -> int:
    """Bytes of memory available to new work (Linux's ``MemAvailable``; else the free pages)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 0


# ------------------------------------------------------------------------------------------ manifest


def is_index(path: str | Path) -> bool:
    """True when ``path`` is a directory holding an index manifest (of any version)."""
    manifest = Path(path) / MANIFEST
    if not manifest.is_file():
        return False
    try:
        return _parse_manifest(manifest).get("format") == FORMAT
    except (IndexFormatError, OSError, ValueError, AttributeError):
        return False


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The manifest of the index at ``path``; IndexFormatError when missing, unreadable or another version."""
    file = Path(path) / MANIFEST
    try:
        manifest = _parse_manifest(file)
    except FileNotFoundError:
        raise IndexFormatError(
            f"{file}: missing: {path} is not an index (build one with `paper-dashboard index`)"
        ) from None
    except (OSError, ValueError) as error:
        raise IndexFormatError(f"{file}: unreadable ({error}); rebuild the index") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise IndexFormatError(f"{file}: not a paper-dashboard index manifest")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise IndexFormatError(
            f"{file}: index format {version!r}, but this paper-dashboard ({__version__}) reads format "
            f"{FORMAT_VERSION}: rebuild it with `paper-dashboard index ... --out {path}`"
        )
    problem = _manifest_problem(manifest)
    if problem:
        raise IndexFormatError(f"{file}: {problem}: the index is damaged; rebuild it")
    return manifest


MAX_MANIFEST_BYTES = 16 << 20  # a manifest lists files and settings: kilobytes; more is not one of ours


def _parse_manifest(file: Path) -> Any:
    """The manifest's JSON, bounded in size and nesting so that a hostile one fails cleanly.

    Python's JSON reader recurses once per level: 100,000 nested brackets raised RecursionError out
    of the app, which is a clean error here.
    """
    with open(file, "rb") as handle:
        raw = handle.read(MAX_MANIFEST_BYTES + 1)
    if len(raw) > MAX_MANIFEST_BYTES:
        raise IndexFormatError(
            f"{file}: over {MAX_MANIFEST_BYTES >> 20} MB, not an index manifest; rebuild the index"
        )
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise IndexFormatError(
            f"{file}: nested too deeply, not an index manifest; rebuild the index"
        ) from None


def _is_count(value: Any) -> bool:
    """A non-negative whole number (JSON's true and false are not counts)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _manifest_problem(manifest: Mapping[str, Any]) -> str | None:
    """What is wrong with the manifest's structure (None: nothing): the opener trusts these fields."""
    files = manifest.get("files")
    if not isinstance(files, dict):
        return "'files' is not a table of files"
    for name, facts in files.items():
        if not isinstance(facts, dict) or not _is_count(facts.get("bytes")):
            return f"file {name!r} has no size in bytes"
        if not isinstance(facts.get("sha256", ""), str):
            return f"file {name!r} has a checksum that is not text"
    for key in ("papers", "topics", "fit_papers"):
        if not _is_count(manifest.get(key)):
            return f"{key!r} is {manifest.get(key)!r}, not a count"
    if not isinstance(manifest.get("taxonomy", ""), str):
        return "'taxonomy' is not a name"
    arrays = manifest.get("arrays")
    if not isinstance(arrays, dict):
        return "'arrays' is not a table of arrays"
    for name in ("tfidf", "terms/1", "terms/2", "terms/3"):
        if name not in arrays:
            return f"the array {name!r} is not listed"
    for name, facts in arrays.items():
        shape = facts.get("shape") if isinstance(facts, dict) else None
        if not (isinstance(shape, list) and len(shape) == 2 and all(map(_is_count, shape))):
            return f"the array {name!r} has the shape {shape!r}, not two counts"
        if name != "search" and shape[0] != manifest["papers"]:
            return f"the array {name!r} has {shape[0]:,} rows for {manifest['papers']:,} papers"
        if name == "search" and shape[1] != manifest["papers"]:
            return f"the array 'search' has {shape[1]:,} columns for {manifest['papers']:,} papers"
    return None


def has_map(manifest: Mapping[str, Any]) -> bool:
    """True when the index's ``x, y`` are the paper map (`dashboard.papermap`); False for an index built
    before it, whose ``x, y`` are one disc per topic (rebuild it for the map)."""
    return isinstance(manifest.get("map"), dict)


def _manifest_digest(manifest: Mapping[str, Any]) -> str:
    body = {key: value for key, value in manifest.items() if key != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 24), b""):
            digest.update(chunk)
    return digest.hexdigest()


def member(root: Path, name: str) -> Path:
    """The file ``name`` of the manifest of the index at ``root``, which must stay inside the index.

    A name that is absolute or climbs out (``..``) is refused before anything touches the file system,
    so nothing outside is read and not even its size is said; a file that is a link to outside the
    index is refused too. IndexFormatError otherwise.
    """
    manifest_file = root / MANIFEST
    plain = isinstance(name, str) and name and "\x00" not in name
    if not plain or Path(name).is_absolute() or ".." in Path(name).parts:
        raise IndexFormatError(
            f"{manifest_file}: lists {name!r}, outside the index: refused (rebuild the index)"
        )
    file = root / name
    try:
        inside = file.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a loop of links
        inside = False
    if not inside:
        raise IndexFormatError(f"{file}: a link to outside the index: refused (rebuild the index)")
    return file


def check_files(path: str | Path, manifest: Mapping[str, Any], *, verify: bool = False) -> None:
    """Every file the manifest lists is inside the index (`member`) and there with its size (and,
    with ``verify``, its SHA-256)."""
    root = Path(path)
    for name, facts in manifest.get("files", {}).items():
        file = member(root, name)
        if not file.is_file():
            raise IndexFormatError(f"{file}: missing from the index; rebuild it")
        size = file.stat().st_size
        if size != facts.get("bytes"):
            raise IndexFormatError(
                f"{file}: {size:,} bytes where the manifest says {facts.get('bytes'):,}: "
                "the index is damaged; rebuild it"
            )
        if verify and not facts.get("sha256"):
            raise IndexFormatError(f"{file}: the manifest has no checksum to verify it by; rebuild the index")
        if verify and _file_sha256(file) != facts.get("sha256"):
            raise IndexFormatError(f"{file}: content differs from the manifest's checksum; rebuild the index")


# ------------------------------------------------------------------------------------------ opening


class _Positions(Mapping[str, int]):
    """Paper id -> row, backed by a pandas Index (a dict of a million ids costs seconds and 100 MB)."""

    def __init__(self, ids: pd.Series) -> None:
        self.index = pd.Index(ids.astype("str").to_numpy(dtype=object))

    def __getitem__(self, paper_id: str) -> int:
        position = self.index.get_loc(paper_id)
        if not isinstance(position, int | np.integer):
            raise KeyError(paper_id)
        return int(position)

    def __iter__(self) -> Iterator[str]:
        return iter(self.index)

    def __len__(self) -> int:
        return len(self.index)


@dataclass(frozen=True)
class StoredModel:
    """What an index keeps of the fitted topic model: what `Analysis` similarity queries read."""

    tfidf_: sp.csr_matrix
    lsa_: np.ndarray
    embedding_: np.ndarray
    terms_: np.ndarray
    idf_: np.ndarray
    n_topics_: int
    topic_labels_: list[str]
    semantic_: np.ndarray | None = None  # sentence embeddings, when built with ``semantic=True``


@dataclass(frozen=True)
class PaperIndex:
    """An opened index: the paper table, its load report and analysis, search and term counts."""

    path: Path
    manifest: dict[str, Any]
    papers: pd.DataFrame
    report: corpus.LoadReport
    analysis: Analysis
    words: WordIndex
    facets: dict[str, pd.Series] | None = None  # the sidebar's counts per value, for the stored topics
    _term_counts: dict[int, TermCounts] = field(default_factory=dict, repr=False, compare=False)

    @property
    def digest(self) -> str:
        """The index's cache key: changes whenever the corpus or any file of the index does."""
        return str(self.manifest["digest"])

    def search(self, q: str) -> np.ndarray:
        """Which papers match the search ``q`` (same rules as `filters.search_mask`), from the index."""
        return self.words.mask(q)

    def term_counts(self, ngram: int) -> TermCounts:
        """The Terms page's counts of ``ngram``-word terms (stop words removed), memory-mapped."""
        if ngram not in self._term_counts:
            facts = self.manifest["arrays"][f"terms/{ngram}"]
            directory = self.path / "terms" / str(ngram)
            names = ("data.npy", "indices.npy", "indptr.npy", "terms.arrow")
            _listed(self.path, self.manifest, [f"terms/{ngram}/{name}" for name in names])
            terms = _read_table(
                directory / "terms.arrow", lambda p: _read_checked(p, "term").to_numpy().astype(object)
            )
            if len(terms) != facts["shape"][1]:
                raise IndexFormatError(
                    f"{directory / 'terms.arrow'}: {len(terms):,} terms for {facts['shape'][1]:,} columns: "
                    "the index is damaged; rebuild it"
                )
            counts = _load_csr(directory, facts["shape"], "iu")
            self._term_counts[ngram] = TermCounts(terms, counts, ngram, False)
        return self._term_counts[ngram]


def _read_topics(path: Path) -> pd.DataFrame:
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as error:
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None
    frame = table.to_pandas()
    frame["top_terms"] = [
        [(str(t["term"]), float(t["weight"])) for t in terms] for terms in frame["top_terms"]
    ]
    frame["representative_ids"] = [[str(i) for i in ids] for ids in frame["representative_ids"]]
    frame["label"] = frame["label"].astype("str")
    return frame.astype({"topic": "int64", "size": "int64"})


def read_report(path: str | Path) -> corpus.LoadReport:
    """The load report kept in an index (``report.json`` of the directory ``path``, a path or URL)."""
    from dashboard import locations

    if locations.is_url(str(path)):
        text = locations.read_text(str(path), "report.json")
        return _read_report(f"{str(path).rstrip('/')}/report.json", text)
    return _read_report(Path(path) / "report.json")


def _read_report(path: Path | str, text: str | None = None) -> corpus.LoadReport:
    try:
        if text is None:
            text = Path(path).read_text(encoding="utf-8")
        files = json.loads(text)["files"]
        return corpus.LoadReport(
            [
                corpus.FileReport(
                    **{
                        **entry,
                        "skipped": [corpus.Problem(**p) for p in entry["skipped"]],
                        "warnings": [corpus.Problem(**p) for p in entry["warnings"]],
                    }
                )
                for entry in files
            ]
        )
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as error:
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None


# The files `open_index` reads: each must be listed in the manifest (so its size is checked and it is
# inside the index). The others are optional, or read later (`PaperIndex.term_counts`, `refit`).
OPENED_FILES = (
    "papers.arrow",
    "topics.parquet",
    "report.json",
    "taxonomy.toml",
    "tfidf/data.npy",
    "tfidf/indices.npy",
    "tfidf/indptr.npy",
    "tfidf/terms.parquet",
    "lsa.npy",
    "embedding.npy",
    "search/words.arrow",
    "search/indptr.npy",
    "search/indices.npy",
    "search/odd_rows.npy",
)


def _listed(root: Path, manifest: Mapping[str, Any], names: Sequence[str]) -> None:
    """Each of ``names`` is listed in the manifest (and so was checked by `check_files`)."""
    for name in names:
        if name not in manifest["files"]:
            raise IndexFormatError(
                f"{root / MANIFEST}: does not list {name}, which the index needs: "
                "the index is damaged; rebuild it"
            )


def _rows(path: Path, n_papers: int, kinds: str = "f") -> np.ndarray:
    """The per-paper array at ``path`` (one row per paper, two dimensions), memory-mapped and checked."""
    array = _load_npy(path)
    _check_dense(path, array, (n_papers, array.shape[1] if array.ndim == 2 else -1), kinds)
    return array


def _read_table(path: Path, read: Callable[[Path], T]) -> T:
    """``read(path)`` with what any reader of a damaged file raises turned into IndexFormatError."""
    try:
        return read(path)
    except IndexFormatError:
        raise
    except (OSError, ValueError, KeyError, TypeError, IndexError, pa.ArrowException) as error:
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None


def open_index(path: str | Path, *, verify: bool = False) -> PaperIndex:
    """Open the index at ``path`` (memory-mapped: seconds whatever its size).

    Raises IndexFormatError naming the file when the index is of another format version, a file is
    missing, truncated, outside the index or (with ``verify``) altered, or an array's structure is
    unsound (positions out of range, pointers that decrease, shapes that disagree): its arrays are
    checked in one pass each at open (`check_sparse`), not hashed, so a damaged file is refused
    whether or not ``verify`` is asked, and an index whose manifest has no checksums opens too.
    """
    root = Path(path)
    manifest = read_manifest(root)
    check_files(root, manifest, verify=verify)
    _listed(root, manifest, OPENED_FILES)
    n_papers = int(manifest["papers"])
    try:
        table = _read_arrow(root / "papers.arrow")
        check_arrow(root / "papers.arrow", table)
        papers = arrow_to_table(table)
        del table
    except (pa.ArrowException, ValueError, KeyError, TypeError, IndexError) as error:
        raise IndexFormatError(
            f"{root / 'papers.arrow'}: cannot be read ({error}); rebuild the index"
        ) from None
    if len(papers) != n_papers or "id" not in papers.columns:
        raise IndexFormatError(
            f"{root / 'papers.arrow'}: {len(papers):,} papers where the manifest says {n_papers:,}: "
            "the index is damaged; rebuild it"
        )
    arrays = manifest["arrays"]
    terms = _read_table(root / "tfidf" / "terms.parquet", pq.read_table)
    term_names = _read_table(root / "tfidf" / "terms.parquet", lambda _: terms.column("term").to_numpy())
    idf = _read_table(root / "tfidf" / "terms.parquet", lambda _: terms.column("idf").to_numpy())
    tfidf_shape = arrays["tfidf"]["shape"]
    if tfidf_shape[1] != len(term_names):
        raise IndexFormatError(
            f"{root / 'tfidf' / 'terms.parquet'}: {len(term_names):,} terms for {tfidf_shape[1]:,} "
            "TF-IDF columns: the index is damaged; rebuild it"
        )
    tfidf = _load_csr(root / "tfidf", tfidf_shape)
    topics = _read_table(root / "topics.parquet", _read_topics)
    taxonomy_file = root / "taxonomy.toml"
    try:
        taxonomy = parse_taxonomy(taxonomy_file.read_text(encoding="utf-8"), manifest["taxonomy"])
    except (OSError, ValueError, TaxonomyError) as error:
        raise IndexFormatError(f"{taxonomy_file}: cannot be read ({error}); rebuild the index") from None
    model = StoredModel(
        tfidf_=tfidf,
        lsa_=_rows(root / "lsa.npy", n_papers),
        embedding_=_rows(root / "embedding.npy", n_papers),
        terms_=term_names.astype(object),
        idf_=idf,
        n_topics_=int(manifest["topics"]),
        topic_labels_=[str(label) for label in topics.loc[topics["topic"] != OUTLIER_TOPIC, "label"]],
        semantic_=_rows(root / "semantic.npy", n_papers) if "semantic.npy" in manifest["files"] else None,
    )
    positions = _Positions(papers["id"])
    analysis = Analysis(papers, topics, model, taxonomy, positions)  # type: ignore[arg-type]
    words = _open_words(root, manifest, papers)
    facets = read_facets(root) if "facets.json" in manifest["files"] else None
    return PaperIndex(root, manifest, papers, _read_report(root / "report.json"), analysis, words, facets)


def _open_words(root: Path, manifest: Mapping[str, Any], papers: pd.DataFrame) -> WordIndex:
    """The index's search (`dashboard.wordindex`), its posting lists checked (`check_sparse`)."""
    search = root / "search"
    n_papers = len(papers)
    # The columns `search_text` reads (authors where the corpus has them), so phrase checks see them too.
    columns = [c for c in ("title", "abstract_clean", "method_names", "authors") if c in papers.columns]

    def texts_of(rows: np.ndarray) -> pd.Series:
        return search_text(papers.iloc[rows][columns])

    vocabulary = _read_table(search / "words.arrow", lambda p: _read_checked(p, "word").combine_chunks())
    indptr, indices = _load_npy(search / "indptr.npy"), _load_npy(search / "indices.npy")
    check_sparse(
        search / "indptr.npy", indptr, search / "indices.npy", indices, len(vocabulary), n_papers, "papers"
    )
    odd_rows = np.asarray(_load_npy(search / "odd_rows.npy"))
    _check_dense(search / "odd_rows.npy", odd_rows, (None,), "i")
    _check_positions(search / "odd_rows.npy", odd_rows, n_papers, "papers")
    # Term frequencies and lengths (for BM25) are absent from an index built before them.
    ranked = all(f"search/{name}.npy" in manifest["files"] for name in ("tf", "lengths"))
    tf = lengths = None
    if ranked:
        tf, lengths = _load_npy(search / "tf.npy"), np.asarray(_load_npy(search / "lengths.npy"))
        _check_dense(search / "tf.npy", tf, (len(indices),), "u")
        _check_dense(search / "lengths.npy", lengths, (n_papers,), "f")
    return WordIndex(
        words=vocabulary,
        indptr=indptr,
        indices=indices,
        odd_rows=odd_rows,
        n_papers=n_papers,
        texts_of=texts_of,
        tf=tf,
        lengths=lengths,
    )


# ------------------------------------------------------------------------------------------ building


def _taxonomy_text(taxonomy: str | Path | None) -> tuple[str, str]:
    if taxonomy is None:
        text = (
            resources.files("dashboard").joinpath("data", DEFAULT_TAXONOMY_NAME).read_text(encoding="utf-8")
        )
        return text, DEFAULT_TAXONOMY_NAME
    path = Path(taxonomy)
    return path.read_text(encoding="utf-8-sig"), str(path)


@dataclass(frozen=True)
class _Part:
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


def read_partitions(source: str, partition_size: int) -> tuple[dict[str, Any], list[tuple[bytes, int]]]:
    """Map step 0 for one file (a path or fsspec URL): load it, cut its table into partitions.

    Returns the file's load report (as a dict) and each partition's paper table as Arrow IPC bytes with
    its number of papers.
    """
    from dashboard import locations

    try:
        with locations.local_copy(source) as path:
            result = corpus.load([path])
        report = dataclasses.asdict(result.report.files[0]) if result.report.files else {}
        papers = result.papers
        starts = range(0, len(papers), partition_size)
        chunks = (papers.iloc[start : start + partition_size] for start in starts)
        tables = [(_arrow_bytes(table_to_arrow(chunk)), len(chunk)) for chunk in chunks]
    except Exception as error:
        raise IndexBuildError(f"reading {source} failed: {type(error).__name__}: {error}") from error
    return report, tables


def _read_file(task: tuple[str, int, str, int]) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    """Map step 0 in a local worker process: `read_partitions`, each partition written to its folder."""
    path, number, work, partition_size = task
    report, tables = read_partitions(path, partition_size)
    parts = []
    for chunk, (table, rows) in enumerate(tables):
        directory = Path(work) / f"{number:05d}-{chunk:04d}"
        directory.mkdir(parents=True)
        (directory / "papers.arrow").write_bytes(table)
        parts.append((str(directory), rows))
    return report, parts


# has_abstract: placeholder abstracts count no terms (absent from tables written before it existed)
COUNT_COLUMNS = ["title", "title_is_derived", "abstract_clean", "method_names", "has_abstract"]


def count_files(papers_arrow: bytes, taxonomy_text: str, taxonomy_name: str, where: str) -> dict[str, bytes]:
    """Map step 1 for one partition (its paper table as Arrow IPC bytes): the files of what it learnt.

    The same bytes whoever runs it (a local worker process writes them to the partition's folder, a
    Dask worker returns them); a failure names the partition (``where``).
    """
    from dashboard import indexing  # scikit-learn only when building

    try:
        table = pa.ipc.open_file(pa.BufferReader(papers_arrow)).read_all()
        papers = arrow_to_table(table.select([c for c in COUNT_COLUMNS if c in table.column_names]))
        counts = indexing.count_partition(papers, parse_taxonomy(taxonomy_text, taxonomy_name))
        return {
            "vocabulary.arrow": _arrow_bytes(pa.table({"term": pa.array(counts.vocabulary, type=_STR)})),
            "abstract_counts.npz": _npz_bytes(counts.abstract_counts),
            "topic_counts.npz": _npz_bytes(counts.topic_counts),
            "area_scores.npy": _npy_bytes(counts.area_scores),
            "words.arrow": _arrow_bytes(pa.table({"word": counts.words.words})),
            "postings.npz": _npy_bytes(
                indptr=counts.words.indptr,
                indices=counts.words.indices,
                tf=np.asarray(counts.words.tf),
                lengths=np.asarray(counts.words.lengths),
            ),
            "odd_rows.npy": _npy_bytes(counts.words.odd_rows),
        }
    except Exception as error:
        raise IndexBuildError(f"counting {where} failed: {type(error).__name__}: {error}") from error


def _count_part(task: tuple[str, str, str, str]) -> None:
    """Map step 1 in a local worker process: `count_files` of one partition, written to its folder."""
    directory = Path(task[0])
    files = count_files((directory / "papers.arrow").read_bytes(), task[1], task[2], task[3])
    for name, data in files.items():
        (directory / name).write_bytes(data)


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
    with `dashboard.topics`, which the build imports late).
    """
    import dashboard.topics  # noqa: F401

    return threadpool_limits(limits=1)


def assign_part(counts: Mapping[str, Any], shared: AssignInputs, where: str) -> dict[str, Any]:
    """Map step 3 for one partition: Terms-page counts over the joint vocabularies, TF-IDF rows, topics.

    ``counts`` maps the names of `count_files` to the files' bytes or paths. Returns ``terms/N`` (CSR
    blocks), and unless the model saw every paper, ``tfidf`` and the arrays of `TopicTransform.assign`.
    """
    from dashboard import indexing

    def source(name: str) -> Any:
        value = counts[name]
        return io.BytesIO(value) if isinstance(value, bytes) else value

    try:
        with one_thread():
            vocabulary_file = counts["vocabulary.arrow"]
            vocabulary_table = (
                pa.ipc.open_file(pa.BufferReader(vocabulary_file)).read_all()
                if isinstance(vocabulary_file, bytes)
                else _read_arrow(vocabulary_file)
            )
            vocabulary = vocabulary_table.column("term").to_pylist()
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
                out["assigned"] = shared.transform.assign(tfidf, np.load(source("area_scores.npy")))
            return out
    except Exception as error:
        raise IndexBuildError(f"assigning {where} failed: {type(error).__name__}: {error}") from error


class _LocalMaps:
    """The maps in this machine's processes: a spawn pool of ``workers``, or this process alone."""

    def __init__(self, workers: int) -> None:
        # spawn, not fork: a forked child of a process holding Arrow/BLAS thread pools can deadlock.
        self.pool = (
            ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
            if workers > 1
            else None
        )
        self.counting: list[Any] = []
        self.tasks: list[tuple[str, str, str, str]] = []

    def read(
        self, items: Sequence[Any], work: Path, partition_size: int
    ) -> tuple[corpus.LoadReport, list[_Part]]:
        """Step 0 for every file: the load report and the partitions, written under ``work``."""
        tasks = [
            (str(item), number, str(work), partition_size)
            for number, item in enumerate(items)
            if not isinstance(item, corpus.FileReport)
        ]
        if self.pool is not None and len(tasks) > 1:
            results = list(self.pool.map(_read_file, tasks))
        else:
            results = [_read_file(task) for task in tasks]
        found = [[(Path(directory), rows) for directory, rows in item_parts] for _, item_parts in results]
        return _collect_reads(items, [report for report, _ in results], found)

    def start_counting(self, parts: list[_Part], taxonomy_text: str, taxonomy_name: str) -> None:
        """Step 1 starts in the workers (so this process can fit meanwhile)."""
        self.tasks = [(str(p.directory), taxonomy_text, taxonomy_name, p.where) for p in parts]
        if self.pool is not None:
            self.counting = [self.pool.submit(_count_part, task) for task in self.tasks]

    def finish_counting(self) -> None:
        """Step 1 done: every partition's count files are in its folder."""
        if self.pool is None:
            for task in self.tasks:
                _count_part(task)
        for future in self.counting:
            future.result()

    def assign(self, parts: list[_Part], shared: AssignInputs) -> Iterator[dict[str, Any]]:
        """Step 3 for each partition in order (in this process: it is matrix products on loaded data)."""
        for part in parts:
            names = ["vocabulary.arrow", "abstract_counts.npz", "topic_counts.npz", "area_scores.npy"]
            yield assign_part({name: part.directory / name for name in names}, shared, part.where)

    def close(self) -> None:
        """Stop the worker processes."""
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def _collect_reads(
    items: Sequence[Any], reports: list[dict[str, Any]], found: list[list[tuple[Path, int]]]
) -> tuple[corpus.LoadReport, list[_Part]]:
    """The load report and partitions, in input order, from each read file's report and partitions."""
    by_item = iter(zip(reports, found, strict=True))
    files: list[corpus.FileReport] = []
    parts: list[_Part] = []
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
            parts.append(_Part(directory, rows, source, first))
            first += rows
    return corpus.LoadReport(files), parts


def _report_duplicate_abstracts(parts: list[_Part], report: corpus.LoadReport) -> None:
    """Warn of abstracts repeated across files, by the rule one `corpus.load` of all files uses
    (`readers.table.abstract_key`); each file's load already warned of repeats inside it."""
    from dashboard.readers.table import abstract_key

    first: dict[bytes, tuple[str, int]] = {}
    reports = {f.source: f for f in report.files}
    row = 0
    for part in parts:
        table = _read_arrow(part.directory / "papers.arrow").select(["abstract", "source"])
        abstracts = table.column("abstract").to_pylist()
        sources = table.column("source").to_pylist()
        for abstract, source in zip(abstracts, sources, strict=True):
            row += 1
            if not abstract:
                continue
            key = abstract_key(abstract)
            seen = first.setdefault(key, (str(source), row))
            if seen[0] == source or seen[1] == row:
                continue
            file = reports.get(str(source))
            if file is not None:
                if len(file.warnings) < corpus.MAX_PROBLEMS_PER_FILE:
                    message = f"same abstract as {seen[0]} paper {seen[1]} (both kept)"
                    file.warnings.append(corpus.Problem(file.source, f"paper {row}", message))
                file.n_warnings += 1


def _unique_ids(parts: list[_Part], report: corpus.LoadReport) -> np.ndarray:
    """Paper ids unique across files, as one `corpus.load` of all files makes them (``x``, ``x-2``...)."""
    ids = np.concatenate(
        [_read_arrow(p.directory / "papers.arrow").column("id").to_numpy(zero_copy_only=False) for p in parts]
    ).astype(object)
    duplicated = pd.Index(ids).duplicated(keep="first")
    if not duplicated.any():
        return ids
    seen = set(ids.tolist())
    sources = np.concatenate(
        [
            _read_arrow(p.directory / "papers.arrow").column("source").to_numpy(zero_copy_only=False)
            for p in parts
        ]
    )
    reports = {f.source: f for f in report.files}
    for row in np.flatnonzero(duplicated):
        n = 2
        while f"{ids[row]}-{n}" in seen:
            n += 1
        unique = f"{ids[row]}-{n}"
        seen.add(unique)
        file = reports.get(str(sources[row]))
        if file is not None:
            if len(file.warnings) < corpus.MAX_PROBLEMS_PER_FILE:
                message = f"id {ids[row]!r} already used in another file: this paper is {unique!r}"
                file.warnings.append(corpus.Problem(file.source, f"paper {row + 1}", message))
            file.n_warnings += 1
        ids[row] = unique
    return ids


def _read_rows(parts: list[_Part], rows: np.ndarray, columns: list[str]) -> pd.DataFrame:
    """The given global rows (sorted) of some columns, read partition by partition."""
    frames = []
    start = 0
    for part in parts:
        local = rows[(rows >= start) & (rows < start + part.rows)] - start
        if len(local):
            table = _read_arrow(part.directory / "papers.arrow").select(columns).take(pa.array(local))
            frames.append(arrow_to_table(table))
        start += part.rows
    return pd.concat(frames, ignore_index=True)


def _write_semantic(work: Path, parts: list[_Part], say: Callable[..., None]) -> dict[str, Any]:
    """``semantic.npy``: every paper's sentence embedding (float32, unit rows), partition by partition."""
    from dashboard import semantic

    encoder = semantic.Encoder()  # raises SemanticUnavailable (with how to install it) without the extra
    started = time.perf_counter()
    out = _new_dense(work / "semantic.npy", (sum(p.rows for p in parts), semantic.DIMENSIONS))
    start = 0
    for number, part in enumerate(parts, 1):
        frame = arrow_to_table(_read_arrow(part.directory / "papers.arrow").select(_TEXT_COLUMNS))
        out[start : start + part.rows] = encoder.encode(paper_texts(frame))
        start += part.rows
        say(f"encoded {number}/{len(parts)} partitions")
    out.flush()
    del out
    return {"model": semantic.MODEL_ID, "dimensions": semantic.DIMENSIONS,
            "seconds": round(time.perf_counter() - started, 2)}  # fmt: skip


_TEXT_COLUMNS = ["title", "title_is_derived", "abstract_clean", "has_abstract"]  # what `paper_texts` reads


def _vocabularies(parts: list[_Part], n_papers: int) -> dict[int, pa.Array]:
    """The Terms page's vocabularies: terms of 1, 2 and 3 words in at least min_df abstracts (reduce)."""
    from dashboard import indexing

    tables = []
    for part in parts:
        counts = _load_npz(part.directory / "abstract_counts.npz")
        frequency = np.bincount(counts.indices, minlength=counts.shape[1])
        terms = _read_arrow(part.directory / "vocabulary.arrow").column("term")
        used = np.flatnonzero(frequency > 0)
        tables.append(
            pa.table({"term": terms.take(pa.array(used)), "df": pa.array(frequency[used], pa.int64())})
        )
    total = pa.concat_tables(tables).group_by("term").aggregate([("df", "sum")])
    terms = total.column("term")
    spaces = np.asarray(pc.count_substring(terms, " "))
    frequency = np.asarray(total.column("df_sum"))
    min_df = indexing.term_counts_min_df(n_papers)
    return {
        n: indexing.select_vocabulary(
            terms.filter(pa.array(spaces == n - 1)), frequency[spaces == n - 1], min_df
        )
        for n in indexing.TERM_NGRAMS
    }


def _fit(
    parts: list[_Part], n_papers: int, settings: dict[str, Any], taxonomy: Taxonomy
) -> tuple[TopicModel, np.ndarray]:
    """Step 2: the topic model on a seeded sample (all papers up to fit_size), as `analyze` fits it."""
    from dashboard.topics import TopicModel

    fit_size = int(settings["fit_size"])
    if n_papers <= fit_size:
        rows = np.arange(n_papers)
    else:
        rng = np.random.default_rng(settings["random_state"])
        rows = np.sort(rng.choice(n_papers, fit_size, replace=False))
    sample = _read_rows(parts, rows, _TEXT_COLUMNS)
    model = TopicModel(
        n_topics=settings["n_topics"],
        method="kmeans",
        random_state=settings["random_state"],
        taxonomy=taxonomy,
    ).fit(paper_texts(sample))
    return model, rows


def _write_topics(topics: pd.DataFrame, path: Path) -> None:
    term = pa.struct([("term", _STR), ("weight", pa.float64())])
    table = pa.table(
        {
            "topic": pa.array(topics["topic"], pa.int64()),
            "label": pa.array(topics["label"], _STR),
            "size": pa.array(topics["size"], pa.int64()),
            "top_terms": pa.array(
                [[{"term": t, "weight": w} for t, w in terms] for terms in topics["top_terms"]],
                pa.list_(term),
            ),
            "representative_ids": pa.array(list(topics["representative_ids"]), _STR_LIST),
        }
    )
    pq.write_table(table, path)


def _merge_words(parts: list[_Part], out: Path) -> dict[str, Any]:
    """Reduce: one inverted index from the partitions': a sorted union of words, posting lists joined.

    Each word's papers are placed partition after partition (rows grow), so nothing is sorted again
    and memory stays at the output plus one partition.
    """
    vocabularies = [_read_arrow(p.directory / "words.arrow").column("word").combine_chunks() for p in parts]
    words = pc.unique(pa.chunked_array(vocabularies, type=_STR).combine_chunks())
    words = words.take(pc.sort_indices(words))
    global_words = [np.asarray(pc.index_in(v, value_set=words), dtype=np.int64) for v in vocabularies]
    lengths = np.zeros(len(words), dtype=np.int64)
    for part, mapped in zip(parts, global_words, strict=True):
        with np.load(part.directory / "postings.npz", allow_pickle=False) as postings:
            lengths[mapped] += np.diff(postings["indptr"])
    nnz = int(lengths.sum())
    index_type = np.int32 if nnz < 2**31 else np.int64
    indptr = np.zeros(len(words) + 1, dtype=index_type)
    np.cumsum(lengths, out=indptr[1:])
    directory = out / "search"
    directory.mkdir()
    indices = _new_dense(directory / "indices.npy", (nnz,), np.int32)
    frequencies = _new_dense(directory / "tf.npy", (nnz,), np.uint8)
    lengths_out = _new_dense(directory / "lengths.npy", (sum(p.rows for p in parts),), np.float32)
    cursor = indptr[:-1].astype(np.int64)
    start = 0
    odd = []
    for part, mapped in zip(parts, global_words, strict=True):
        with np.load(part.directory / "postings.npz", allow_pickle=False) as postings:
            local_indptr, local_indices = postings["indptr"], postings["indices"]
            local_tf, local_lengths = postings["tf"], postings["lengths"]
        counts = np.diff(local_indptr)
        entry_word = np.repeat(mapped, counts)
        within = np.arange(len(local_indices)) - np.repeat(local_indptr[:-1], counts)
        indices[cursor[entry_word] + within] = local_indices + start
        frequencies[cursor[entry_word] + within] = local_tf
        lengths_out[start : start + part.rows] = local_lengths
        cursor[mapped] += counts
        odd.append(np.load(part.directory / "odd_rows.npy") + start)
        start += part.rows
    for written in (indices, frequencies, lengths_out):
        written.flush()
    del indices, frequencies, lengths_out
    _write_arrow(pa.table({"word": words}), directory / "words.arrow")
    np.save(directory / "indptr.npy", indptr)
    np.save(directory / "odd_rows.npy", np.concatenate(odd).astype(np.int64))
    return {"shape": [len(words), start], "nnz": nnz}


def _new_dense(path: Path, shape: tuple[int, ...], dtype: type = np.float32) -> np.memmap:
    """A new .npy file of ``shape``, written through a memory map (rows filled in as they come)."""
    return np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)


def build_index(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    n_topics: int | str = "auto",
    taxonomy: str | Path | None = None,
    random_state: int = 0,
    fit_size: int = DEFAULT_FIT_SIZE,
    partition_size: int = DEFAULT_PARTITION_SIZE,
    workers: int | None = None,
    dask: str | None = None,
    semantic: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Build an index of the corpus at ``paths`` into the directory ``out``; returns its manifest.

    With ``semantic`` the index also holds every paper's sentence embedding (``semantic.npy``, the
    ``[semantic]`` extra's model: `dashboard.semantic`), encoded once here, so "papers like this" in
    that space (``search --like --space minilm``) reads it instead of encoding the corpus again.

    Files are counted in parallel (``workers``, default: the CPUs, one for a corpus under 8 MB), the
    topic model is fitted on at most ``fit_size`` papers and every other paper is assigned to its
    topics. With ``dask`` (a scheduler address ``tcp://host:8786``, or ``local:N`` for a LocalCluster of
    N worker processes) the read, count and assign maps run as tasks of that cluster instead
    (:mod:`dashboard.daskbuild`); the index is the same file for file. ``paths`` and ``out`` may be
    fsspec URLs (:mod:`dashboard.locations`). ``out`` is replaced only when it is an index already (or
    absent/empty); the new index is built in a temporary folder and appears there complete or not at
    all. Call it under ``if __name__ == "__main__":`` in a script: worker processes are started with
    ``spawn``.
    """
    from dashboard import locations

    started = time.perf_counter()
    phases: dict[str, float] = {}
    clock = [started]

    def say(message: str, finished: str | None = None) -> None:
        now = time.perf_counter()
        if finished:  # the seconds each step took go in the manifest
            phases[finished] = round(now - clock[0], 2)
            clock[0] = now
        if progress is not None:
            progress(f"{now - started:7.1f} s  {message}")

    remote_out = locations.is_url(str(out))
    target: str | Path = str(out) if remote_out else Path(out)
    _check_output(target)
    remote_in = any(locations.is_url(str(p)) for p in paths)
    sources: list[str | Path] = [str(p) if locations.is_url(str(p)) else Path(p) for p in paths]
    items = locations.input_files(sources) if remote_in else corpus.input_files(sources)
    if workers is None:
        # Starting a worker process costs about two seconds: worth it only for a corpus of some size.
        size = sum(item.stat().st_size for item in items if isinstance(item, Path) and item.is_file())
        workers = min(usable_cores(), 4) if size >= SMALL_CORPUS_BYTES else 1
    tax_text, tax_name = _taxonomy_text(taxonomy)
    tax = parse_taxonomy(tax_text, tax_name)
    settings = {"n_topics": n_topics, "random_state": random_state, "fit_size": fit_size}
    if isinstance(target, Path):  # next to the target: the final rename stays on one filesystem
        work = target.with_name(f".{target.name}.partial-{os.getpid()}")
        shutil.rmtree(work, ignore_errors=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="paper-dashboard-index-")) / "index"
    (work / "parts").mkdir(parents=True)
    maps: Any = None
    try:
        if dask:
            from dashboard.daskbuild import DaskMaps

            maps = DaskMaps(dask, say)
        else:
            maps = _LocalMaps(workers)
        say("reading files")
        report, parts = maps.read(items, work / "parts", partition_size)
        n_papers = sum(p.rows for p in parts)
        if n_papers < 2:
            raise IndexBuildError(f"{n_papers} papers read ({report.summary()}): an index needs at least two")
        ids = _unique_ids(parts, report)
        _report_duplicate_abstracts(parts, report)
        # The count map runs in the workers while this process fits the topic model.
        maps.start_counting(parts, tax_text, tax_name)
        say(
            f"counting terms of {n_papers:,} papers; fitting topics on {min(n_papers, fit_size):,} of them",
            finished="read",
        )
        with one_thread():
            model, fit_rows = _fit(parts, n_papers, settings, tax)
        maps.finish_counting()
        say("assigning topics, writing the table, term counts and search index", finished="count and fit")
        with one_thread():
            manifest = _write_index(work, parts, ids, model, fit_rows, tax, report, maps, random_state)
        maps.close()
        maps = None
        if semantic:
            say("encoding every paper's text with the sentence-embedding model")
            manifest["semantic"] = _write_semantic(work, parts, say)
        manifest.update(
            {
                "corpus_digest": locations.digest(items) if remote_in else corpus.digest_paths(sources),
                "sources": [str(p) for p in sources],
                "taxonomy": tax_name,
                "settings": settings,
                "report_summary": report.summary(),
                "skipped": sum(f.n_skipped for f in report.files),
            }
        )
        shutil.rmtree(work / "parts")
        (work / "taxonomy.toml").write_text(tax_text, encoding="utf-8")
        say("checksums", finished="assign and write")
        manifest["files"] = {
            str(file.relative_to(work)): {"bytes": file.stat().st_size, "sha256": _file_sha256(file)}
            for file in sorted(work.rglob("*"))
            if file.is_file()
        }
        say("done", finished="checksums")
        manifest["phases"] = phases
        manifest["build_seconds"] = round(time.perf_counter() - started, 2)
        manifest["built_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        manifest["built_with"] = f"dask {dask}" if dask else f"{workers} local process{'es' * (workers > 1)}"
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "package_version": __version__,
            **manifest,
        }
        manifest["digest"] = _manifest_digest(manifest)
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=False), encoding="utf-8")
        if isinstance(target, Path):
            locations.replace_directory(work, target)
        else:
            say(f"uploading to {target}")
            locations.publish(work, target, MANIFEST)
            shutil.rmtree(work.parent, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work if isinstance(target, Path) else work.parent, ignore_errors=True)
        raise
    finally:
        if maps is not None:
            maps.close()
    say(f"index written to {target}")
    return manifest


def _check_output(target: str | Path) -> None:
    """IndexOutputError when ``target`` exists and is neither an index nor an empty folder."""
    from dashboard import locations

    if isinstance(target, Path):
        if target.exists() and not is_index(target) and (not target.is_dir() or any(target.iterdir())):
            raise IndexOutputError(f"{target}: exists and is not an index; choose another --out or remove it")
        return
    if not locations.exists(target):
        return
    try:
        is_ours = json.loads(locations.read_text(target, MANIFEST)).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        is_ours = False
    if not is_ours:
        raise IndexOutputError(f"{target}: exists and is not an index; choose another --out or remove it")


def _write_index(
    work: Path,
    parts: list[_Part],
    ids: np.ndarray,
    model: TopicModel,
    fit_rows: np.ndarray,
    taxonomy: Taxonomy,
    report: corpus.LoadReport,
    maps: Any,
    random_state: int = 0,
) -> dict[str, Any]:
    """Step 3 and the writes: assign every partition (``maps.assign``), then the map, the table and the
    reductions."""
    from dashboard import indexing

    n_papers = len(ids)
    whole = len(fit_rows) == n_papers  # the model saw every paper: take its results as they are
    transform = None if whole else indexing.TopicTransform.from_model(model)
    terms = model.terms_
    idf = model.vectorizer_.idf_ if model.vectorizer_ is not None else np.ones(len(terms))
    vocabularies = _vocabularies(parts, n_papers)
    lsa = _new_dense(work / "lsa.npy", (n_papers, model.lsa_.shape[1]))
    embedding = _new_dense(work / "embedding.npy", (n_papers, model.embedding_.shape[1]))
    scores = _new_dense(work / "area_scores.npy", (n_papers, len(taxonomy.areas)))
    doc_topic = np.zeros((n_papers, model.doc_topic_.shape[1]), dtype=np.float64)
    topic = np.zeros(n_papers, dtype=np.int64)
    weight = np.zeros(n_papers, dtype=np.float64)
    outlier = np.zeros(n_papers, dtype=bool)
    tfidf_writer = _CsrWriter(work / "tfidf", len(terms), np.float32)
    term_writers = {
        n: _CsrWriter(work / "terms" / str(n), len(vocabularies[n]), np.int32) for n in indexing.TERM_NGRAMS
    }
    in_sample = np.zeros(n_papers, dtype=bool)
    in_sample[fit_rows] = True
    sample_position = np.full(n_papers, -1, dtype=np.int64)
    sample_position[fit_rows] = np.arange(len(fit_rows))
    shared = AssignInputs(vocabularies, np.asarray(terms, dtype=object), np.asarray(idf), transform)
    start = 0
    for part, blocks in zip(parts, maps.assign(parts, shared), strict=True):
        rows = np.arange(start, start + part.rows)
        for n in indexing.TERM_NGRAMS:
            term_writers[n].append(blocks[f"terms/{n}"])
        scores[rows] = np.load(part.directory / "area_scores.npy")
        if whole:
            tfidf_writer.append(model.tfidf_[rows])
        else:
            tfidf_writer.append(blocks["tfidf"])
            assigned = blocks["assigned"]
            lsa[rows] = assigned["lsa"]
            embedding[rows] = assigned["embedding"]
            doc_topic[rows] = assigned["doc_topic"]
            topic[rows] = assigned["topic"]
            weight[rows] = assigned["topic_weight"]
            outlier[rows] = assigned["is_outlier"]
        start += part.rows
    # The fitted papers keep exactly what the model found for them.
    lsa[fit_rows] = model.lsa_
    embedding[fit_rows] = model.embedding_
    doc_topic[fit_rows] = model.doc_topic_
    topic[fit_rows] = model.labels_
    weight[fit_rows] = model.weights_
    outlier[fit_rows] = model.is_outlier_
    if model.area_scores_ is not None:
        scores[fit_rows] = model.area_scores_
    np.save(work / "fit_rows.npy", fit_rows.astype(np.int64))
    # The map of the LSA vectors (`dashboard.papermap`): for a corpus that fits, what `analyze` draws.
    map_started = time.perf_counter()
    coords = papermap.layout(lsa, random_state=random_state)
    map_facts = {
        "method": papermap.METHOD,
        "random_state": random_state,
        "fit_papers": int(min(papermap.DEFAULT_FIT_SIZE, int(np.isfinite(coords[:, 0]).sum()))),
        "seconds": round(time.perf_counter() - map_started, 2),
    }
    # Let go of what the rest does not need before the table is joined (gigabytes at a million papers).
    for array in (lsa, embedding):
        array.flush()
    del lsa, embedding, doc_topic
    topics = topics_table(model, ids[fit_rows], topic)
    _write_topics(topics, work / "topics.parquet")
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    arrays = {"tfidf": tfidf_writer.finish()}
    arrays.update({f"terms/{n}": writer.finish() for n, writer in term_writers.items()})
    tree = build_tree(
        topic,
        _load_csr(work / "tfidf", arrays["tfidf"]["shape"]),
        _load_npy(work / "embedding.npy"),
        int(model.n_topics_),
        np.asarray(terms, dtype=object),
    )
    _write_tree(tree, work / TREE_FILE)
    for n in indexing.TERM_NGRAMS:
        _write_arrow(pa.table({"term": vocabularies[n]}), work / "terms" / str(n) / "terms.arrow")
    pq.write_table(
        pa.table({"term": pa.array(terms.astype(str), _STR), "idf": pa.array(idf, pa.float64())}),
        work / "tfidf" / "terms.parquet",
    )
    facets = _write_papers(
        work / "papers.arrow", parts, ids, taxonomy, scores, topic, labels, weight, outlier, coords
    )
    _write_facets(facets, work / "facets.json")
    _write_meanings(work / "papers.arrow", work / MEANINGS_FILE)
    arrays["search"] = _merge_words(parts, work)
    scores.flush()
    report_json = {"files": [dataclasses.asdict(f) for f in report.files]}
    (work / "report.json").write_text(json.dumps(report_json, ensure_ascii=False, indent=1), encoding="utf-8")
    return {
        "papers": n_papers,
        "topics": int(model.n_topics_),
        "fit_papers": len(fit_rows),
        "tfidf_terms": len(terms),
        "arrays": arrays,
        "map": map_facts,
    }


def method_meanings(papers: pd.DataFrame) -> list[list[str]]:
    """Each paper's method names per meaning (`extract.name_meanings`), reading the abstracts a chunk
    at a time (all of a million at once were 1.5 GB): every abstract, for the widely shared names
    (BERT, ResNet) it uses."""
    names = papers["method_names"]
    every = np.ones(len(names), dtype=bool)
    return extract.name_meanings(texts_where(papers["abstract_clean"], every), names)


def _write_meanings(papers_path: Path, path: Path) -> None:
    """`method_meanings` of the written paper table, stored: an app opening a large index then reads
    no abstract to count its method names (at a million papers, 5 s and most of the abstracts' pages)."""
    papers = arrow_to_table(_read_arrow(papers_path).select(["abstract_clean", "method_names"]))
    meanings = pa.array(method_meanings(papers), type=pa.list_(_STR))
    _write_arrow(pa.table({"method_meanings": meanings}), path)


def read_meanings(opened: PaperIndex) -> list[list[str]] | None:
    """The stored `method_meanings` of the index's papers; None for an index built before they were."""
    if MEANINGS_FILE not in opened.manifest["files"]:
        return None
    path = opened.path / MEANINGS_FILE
    column = _read_checked(path, "method_meanings")
    if len(column) != len(opened.papers) or not pa.types.is_list(column.type):
        found = f"{len(column):,} rows of {column.type} for {len(opened.papers):,} papers"
        raise IndexFormatError(f"{path}: {found}; rebuild the index")
    try:
        return cast("list[list[str]]", _python_lists(column).tolist())
    except (ValueError, pa.ArrowException) as error:  # text that is not UTF-8
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None


def _write_tree(tree: TopicTree, path: Path) -> None:
    """The topic tree's arrays (its terms are the TF-IDF terms, kept in tfidf/terms.parquet)."""
    np.savez(
        path,
        linkage=tree.linkage,
        mass=tree.mass.astype(np.float32),
        sizes=tree.sizes,
        centroids=tree.centroids.astype(np.float32),
    )


def read_tree(opened: PaperIndex) -> TopicTree | None:
    """The topic tree stored in the index; None for an index built before trees were stored.

    (`dashboard.analysis.topic_tree` computes the same tree from what any index holds.)
    """
    if TREE_FILE not in opened.manifest["files"]:
        return None
    path = opened.path / TREE_FILE
    terms = np.asarray(opened.analysis.model.terms_, dtype=object)
    try:
        with np.load(path, allow_pickle=False) as stored:
            tree = TopicTree(
                linkage=stored["linkage"],
                mass=stored["mass"].astype(np.float64),
                sizes=stored["sizes"],
                centroids=stored["centroids"].astype(np.float64),
                terms=terms,
            )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise IndexFormatError(f"{path}: cannot be read ({error}); rebuild the index") from None
    problem = _tree_problem(tree, len(terms))
    if problem:
        raise IndexFormatError(f"{path}: {problem}: the index is damaged; rebuild it")
    return tree


def _tree_problem(tree: TopicTree, n_terms: int) -> str | None:
    """What is unsound in a stored topic tree (None: nothing): its parts must agree on the number of
    topics, and each merge must join two groups that exist by then (SciPy's linkage format)."""
    n = len(tree.sizes)
    if tree.sizes.ndim != 1 or tree.sizes.dtype.kind not in "iu":
        return "the topic sizes are not one count per topic"
    if tree.mass.shape != (n, n_terms):
        return f"term mass of shape {tree.mass.shape} for {n} topics and {n_terms:,} terms"
    if tree.centroids.ndim != 2 or len(tree.centroids) != n:
        return f"{len(tree.centroids)} centroids for {n} topics"
    if tree.linkage.shape != (max(n - 1, 0), 4) or tree.linkage.dtype.kind != "f":
        return f"a linkage of shape {tree.linkage.shape} for {n} topics"
    if len(tree.linkage):
        children = tree.linkage[:, :2]
        step = np.arange(len(tree.linkage))[:, None]
        if not (np.isfinite(children).all() and (children >= 0).all() and (children < n + step).all()):
            return "a merge of groups that do not exist"
    return None


def _write_facets(facets: Mapping[str, Mapping[Any, int]], path: Path) -> None:
    """Facet counts as JSON: per key, [value, papers] pairs, most papers first (ties by value)."""
    ordered = {
        key: sorted(([_plain(v), n] for v, n in counts.items()), key=lambda pair: (-pair[1], str(pair[0])))
        for key, counts in facets.items()
    }
    path.write_text(json.dumps(ordered, ensure_ascii=False), encoding="utf-8")


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def read_facets(path: str | Path) -> dict[str, pd.Series]:
    """The sidebar's facet counts kept in an index, as `filters.facet_counts` returns them."""
    file = Path(path) / "facets.json"
    try:
        stored = json.loads(file.read_text(encoding="utf-8"))
        facets = {}
        for key, pairs in stored.items():
            values = [value for value, _ in pairs]
            dtype = {"topic": "int64", "year": "Int64"}.get(key, "str")
            index = pd.Index(values, name=key, dtype=dtype)
            facets[key] = pd.Series([n for _, n in pairs], index=index, name="papers", dtype="int64")
    except (OSError, ValueError, TypeError, AttributeError, OverflowError, RecursionError) as error:
        raise IndexFormatError(f"{file}: cannot be read ({error}); rebuild the index") from None
    return facets


def _write_single_batch(pieces: list[Path], path: Path) -> None:
    """Join Arrow files of the same schema into one file of one record batch, a column at a time.

    One chunk per column matters when reading: Arrow's ``take`` on a chunked string column first
    concatenates the chunks (gigabytes at a million papers, on every filter); on one chunk it copies
    just the rows taken. Each column is concatenated alone and kept memory-mapped, so memory holds
    one column at a time.
    """
    schema = _read_arrow(pieces[0]).schema
    folder = path.parent / f".{path.name}.columns"
    folder.mkdir()
    files = []
    for number, field_ in enumerate(schema):
        # Each piece is mapped again per column and let go after: only this column's pages are resident.
        chunks = [chunk for piece in pieces for chunk in _read_arrow(piece).column(number).chunks]
        joined = pa.concat_arrays(chunks)
        del chunks
        files.append(folder / f"{number:04d}.arrow")
        _write_arrow(pa.table([joined], schema=pa.schema([field_])), files[-1])
        del joined
    columns = [_read_arrow(file).column(0) for file in files]
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
        writer.write_table(pa.table(columns, schema=schema))
    del columns
    shutil.rmtree(folder)


def _write_papers(
    path: Path,
    parts: list[_Part],
    ids: np.ndarray,
    taxonomy: Taxonomy,
    scores: np.ndarray,
    topic: np.ndarray,
    labels: Mapping[int, str],
    weight: np.ndarray,
    outlier: np.ndarray,
    coords: np.ndarray,
) -> dict[str, dict[Any, int]]:
    """The paper table with the analysis columns, written partition by partition (one schema for all).

    Returns the sidebar's facet counts, summed over the partitions (each counts a paper once).
    """
    facets: dict[str, dict[Any, int]] = {}
    names: list[str] = []
    for part in parts:
        schema = pa.ipc.open_file(pa.memory_map(str(part.directory / "papers.arrow"))).schema
        names.extend(n for n in schema.names if n not in names)
    analysis_columns = ["topic", "topic_label", "topic_weight", "is_outlier", "areas", "x", "y"]
    columns = _column_order([n for n in names if n not in analysis_columns])
    start = 0
    for part in parts:
        rows = slice(start, start + part.rows)
        papers = arrow_to_table(_read_arrow(part.directory / "papers.arrow"))
        papers["id"] = pd.Series(ids[rows], dtype="str")
        papers = papers.assign(
            topic=topic[rows],
            topic_label=pd.Series([labels.get(int(t), OUTLIER_LABEL) for t in topic[rows]], dtype="str"),
            topic_weight=weight[rows],
            is_outlier=outlier[rows],
            areas=pd.Series(areas_from_scores(np.asarray(scores[rows]), taxonomy), dtype=object),
            x=np.round(coords[rows, 0], 4),
            y=np.round(coords[rows, 1], 4),
        )
        for key, counts in facet_counts(papers).items():
            total = facets.setdefault(key, {})
            for value, count in counts.items():
                total[value] = total.get(value, 0) + int(count)
        _write_arrow(table_to_arrow(papers, [*columns, *analysis_columns]), part.directory / "table.arrow")
        start += part.rows
    _write_single_batch([p.directory / "table.arrow" for p in parts], path)
    return facets


# ------------------------------------------------------------------------------------------ refitting


def refit(opened: PaperIndex, n_topics: int, *, chunk: int = 100_000) -> Analysis:
    """The index's papers under another number of topics, without rereading the corpus.

    Up to ``fit_size`` papers this is `analysis.analyze` itself. Beyond, the model is refitted on the
    index's sample and every paper is assigned from the stored TF-IDF rows and area scores (the same
    vocabulary: the same sample and settings give the same vectoriser), as the build does.
    """
    from dashboard import indexing
    from dashboard.topics import TopicModel

    settings = opened.manifest["settings"]
    taxonomy = opened.analysis.taxonomy
    papers = opened.papers
    base_columns = [c for c in papers.columns if c not in ANALYSIS_COLUMNS]
    # The map does not depend on the number of topics: an index with one keeps it (`has_map`).
    kept = papers[["x", "y"]].to_numpy(dtype=np.float64) if has_map(opened.manifest) else None
    if int(opened.manifest["fit_papers"]) == len(papers):
        return analyze(
            papers[base_columns],
            n_topics=n_topics,
            taxonomy=taxonomy,
            random_state=settings["random_state"],
            coordinates=kept,
        )
    _listed(opened.path, opened.manifest, ["fit_rows.npy", "area_scores.npy"])
    fit_rows = np.asarray(_load_npy(opened.path / "fit_rows.npy"))
    _check_dense(opened.path / "fit_rows.npy", fit_rows, (None,), "i")
    _check_positions(opened.path / "fit_rows.npy", fit_rows, len(papers), "papers")
    sample = papers.iloc[fit_rows]
    model = TopicModel(
        n_topics=n_topics, method="kmeans", random_state=settings["random_state"], taxonomy=taxonomy
    )
    model.fit(paper_texts(sample))
    stored = cast(StoredModel, opened.analysis.model)  # an opened index holds a StoredModel
    if not np.array_equal(np.asarray(model.terms_, dtype=object), np.asarray(stored.terms_, dtype=object)):
        raise RuntimeError(
            "the refitted vocabulary differs from the index's: rebuild the index with --topics"
        )
    transform = indexing.TopicTransform.from_model(model)
    scores = _rows(opened.path / "area_scores.npy", len(papers))
    n_papers = len(papers)
    embedding = np.zeros((n_papers, model.embedding_.shape[1]), dtype=np.float32)
    doc_topic = np.zeros((n_papers, model.doc_topic_.shape[1]), dtype=np.float64)
    topic = np.zeros(n_papers, dtype=np.int64)
    weight = np.zeros(n_papers, dtype=np.float64)
    outlier = np.zeros(n_papers, dtype=bool)
    for start in range(0, n_papers, chunk):
        rows = slice(start, start + chunk)
        assigned = transform.assign(stored.tfidf_[rows], np.asarray(scores[rows]))
        embedding[rows], doc_topic[rows] = assigned["embedding"], assigned["doc_topic"]
        topic[rows], weight[rows], outlier[rows] = (
            assigned["topic"],
            assigned["topic_weight"],
            assigned["is_outlier"],
        )
    embedding[fit_rows], doc_topic[fit_rows] = model.embedding_, model.doc_topic_
    topic[fit_rows], weight[fit_rows], outlier[fit_rows] = model.labels_, model.weights_, model.is_outlier_
    coords = kept if kept is not None else similarity.paper_map(embedding, topic, doc_topic)
    ids = papers["id"].astype("str").to_numpy(dtype=object)
    topics = topics_table(model, ids[fit_rows], topic)
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    table = papers.assign(
        topic=topic,
        topic_label=pd.Series(
            [labels.get(int(t), OUTLIER_LABEL) for t in topic], index=papers.index, dtype="str"
        ),
        topic_weight=weight,
        is_outlier=outlier,
        x=np.round(coords[:, 0], 4),
        y=np.round(coords[:, 1], 4),
    )
    refitted = StoredModel(
        tfidf_=stored.tfidf_,
        lsa_=stored.lsa_,
        embedding_=embedding,
        terms_=stored.terms_,
        idf_=stored.idf_,
        n_topics_=model.n_topics_,
        topic_labels_=list(model.topic_labels_),
    )
    return Analysis(table, topics, refitted, taxonomy, opened.analysis.positions)  # type: ignore[arg-type]

"""The index's files: what each one holds, how it is written, checked and opened.

An index is a folder: ``manifest.json`` (what the folder holds, with each file's size and digest), the
paper table as Arrow, the term counts and topic weights as sparse matrices, the map and the vectors as
NumPy arrays. `open_index` checks every file it reads against the manifest and the shapes it expects,
and says which file and what is wrong (`IndexFormatError`) instead of failing inside a page.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import scipy.sparse as sp

from dashboard import __version__, corpus
from dashboard.analytics.analysis import Analysis
from dashboard.analytics.areas import (
    TaxonomyError,
    parse_taxonomy,
)
from dashboard.analytics.terms import TermCounts, texts_where
from dashboard.filters import search_text
from dashboard.schema import CORE_COLUMNS, OPTIONAL_COLUMNS, OUTLIER_TOPIC, rows_of
from dashboard.search.wordindex import WordIndex
from dashboard.text import extract

FORMAT = "paper-dashboard-index"
# 2: code statuses as authors write links ("stated", shortened links) and method names per meaning;
# an index of version 1 holds the old ones, so it is refused with "rebuild it" (and the disk cache,
# keyed on this version, builds anew).
FORMAT_VERSION = 2
# The analysis an index holds: raised when the same corpus would get other topics, another map or other
# derived columns (3: k-means started from Ward's tree on an exact SVD, so a seed gives the same topics
# each run; 4: a workshop decision tier, where such papers were "unknown"; 5: the topics of a corpus of
# up to 2,000 papers found in the sentence embedding, `dashboard.search.topicspace`).
# The disk cache keys on it, so a server upgraded past such a change analyses its corpora anew; a
# prebuilt index of an older analysis still opens as it is.
ANALYSIS_VERSION = 5
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
    made once per distinct value (`_shared_strings`) and shared by every row that holds them, and so is
    one empty list by every row without values: 4.2 million empty lists were 235 MB of a million
    papers' table (most papers name no dataset, link or affiliation). The table is read-only: a list
    in it is never changed in place.
    """
    out = np.empty(len(column), dtype=object)
    start = 0
    seen: dict[str, str] = {}  # the one object of each distinct text value, across the chunks
    empty: list[Any] = []
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
        block[:] = [items[a:b] if b > a else empty for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
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


def load_csr(directory: Path, shape: Sequence[int], data_kinds: str = "f") -> sp.csr_matrix:
    """The CSR matrix stored in ``directory`` (``data``, ``indices``, ``indptr``), its structure checked
    (`check_sparse`); ``data_kinds``: the NumPy kinds its values may have ("f" floats, "i" integers)."""
    data, indices, indptr = (load_npy(directory / f"{name}.npy") for name in ("data", "indices", "indptr"))
    rows, columns = (int(n) for n in shape)
    check_sparse(directory / "indptr.npy", indptr, directory / "indices.npy", indices, rows, columns)
    _check_dense(directory / "data.npy", data, (len(indices),), data_kinds)
    return sp.csr_matrix((data, indices, indptr), shape=(rows, columns), copy=False)


def load_npy(path: Path) -> np.ndarray:
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
    unsigned_type = np.uint32 if positions.dtype.itemsize == 4 else np.uint64
    if _largest(positions, unsigned_type) >= bound:
        unsigned: np.ndarray = positions.view(unsigned_type)
        bad = int(np.flatnonzero(unsigned >= bound)[0])
        raise IndexFormatError(
            f"{path}: entry {bad:,} is {int(positions[bad]):,}, outside the {bound:,} {what}: "
            "the index is damaged; rebuild it"
        )


CHECK_STEP = 1 << 22  # values read at a time by `_largest` (16-32 MB)


def _largest(positions: np.ndarray, as_type: type) -> int:
    """The largest of ``positions`` read as ``as_type`` (their unsigned twin).

    A memory-mapped array is read from its file a step at a time instead of through its mapping: the
    check reads every value once, and through the mapping each page it read stayed in the server's
    resident memory for good (at a million papers, 0.65 GB of posting lists that a search reads a few
    lists of). The file's pages stay in the system's cache either way.
    """
    # Only the array `load_npy` mapped (its base the mapping): a view of it keeps its parent's offset.
    if isinstance(positions, np.memmap) and isinstance(positions.base, mmap.mmap) and positions.filename:
        largest = 0
        with open(positions.filename, "rb") as handle:
            handle.seek(positions.offset)
            left = positions.size
            while left:
                chunk = np.fromfile(handle, dtype=positions.dtype, count=min(CHECK_STEP, left))
                if not len(chunk):
                    break
                largest = max(largest, int(chunk.view(as_type).max()))
                left -= len(chunk)
        return largest
    return int(positions.view(as_type).max())


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


def write_arrow(table: pa.Table, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def read_arrow(path: Path) -> pa.Table:
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
    lists, at any depth) lies inside its data: offsets from 0 up, never decreasing, within bounds; and
    every text is UTF-8 (the message names the column and the row).

    Arrow's readers trust the offsets of a file they map: a value overwritten in papers.arrow's
    offsets ended the server with SIGSEGV. The offsets alone are 8 bytes per value, checked with
    NumPy first, so that the UTF-8 pass after them reads inside the data; a byte that is not UTF-8
    otherwise raised a raw Arrow error on whichever page first read that text.
    """
    try:
        table.validate()  # buffer sizes: every offsets buffer is long enough to be read below
        for column in table.columns:
            for chunk in column.chunks:
                _check_offsets(chunk)
        with open(path, "rb") as handle:
            for name, column in zip(table.column_names, table.columns, strict=True):
                start = 0
                for chunk in column.chunks:
                    if not _is_utf8(chunk, handle):
                        row = start + _first_bad_row(chunk, handle)
                        raise ValueError(f"column {name!r}, row {row:,}: text that is not UTF-8")
                    start += len(chunk)
    except (pa.ArrowInvalid, ValueError, OSError) as error:
        raise IndexFormatError(f"{path}: {error}: the index is damaged; rebuild it") from None


UTF8_BLOCK = 8 << 20  # bytes of text read and checked at a time


def _is_utf8(array: pa.Array, handle: BinaryIO) -> bool:
    """Whether every text value in ``array`` (and in its lists and structs) is UTF-8; offsets checked.

    The text is read from the file (``handle``, the file ``array`` maps) a block at a time, not
    through the map: checking it there made every page of the text resident in the server (what
    `read_arrow` avoids: gigabytes at a million papers), and a read has the kernel's read-ahead,
    where the map's pages came from a cold disk one at a time.
    """
    kind = array.type
    if pa.types.is_struct(kind):
        return all(_is_utf8(array.field(number), handle) for number in range(kind.num_fields))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _is_utf8(array.flatten(), handle)  # only the values the rows hold, as a slice
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)) or not len(array):
        return True
    offsets_buffer, data = array.buffers()[1:3]
    file = data
    while getattr(file, "parent", None) is not None:  # the buffer of the whole mapped file
        file = file.parent
    dtype = np.int64 if pa.types.is_large_string(kind) else np.int32
    stored = np.frombuffer(offsets_buffer, dtype=dtype)[array.offset : array.offset + len(array) + 1]
    offsets = stored.astype(np.int64)
    if file is data or file.size != os.fstat(handle.fileno()).st_size:  # not the file's map: in place
        blocks = [(0, len(array))]
        read = None
    else:
        ends = np.searchsorted(offsets, offsets[:-1] + UTF8_BLOCK, side="right") - 1
        blocks, first = [], 0
        while first < len(array):
            last = max(int(ends[first]), first + 1)
            blocks.append((first, last))
            first = last
        read = data.address - file.address
    for first, last in blocks:
        if read is None:
            part = array.slice(first, last - first)
        else:
            size = int(offsets[last] - offsets[first])
            text = os.pread(handle.fileno(), size, read + int(offsets[first]))
            if len(text) != size:
                raise ValueError(f"the text of a {kind} column is past the end of the file")
            part = pa.Array.from_buffers(
                kind,
                last - first,
                [
                    None,
                    pa.py_buffer((offsets[first : last + 1] - offsets[first]).astype(dtype)),
                    pa.py_buffer(text),
                ],
            )
        try:
            part.validate(full=True)
        except pa.ArrowInvalid:
            return False
    return True


def _first_bad_row(array: pa.Array, handle: BinaryIO) -> int:
    """The first row of ``array`` holding text that is not UTF-8 (halving: on a damaged file only)."""
    low, high = 0, len(array)  # the rows low..high-1 hold one
    while high - low > 1:
        middle = (low + high) // 2
        if _is_utf8(array.slice(low, middle - low), handle):
            low = middle
        else:
            high = middle
    return low


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
    table = read_arrow(path)
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

    The pages map the index's files and read them when used (`read_arrow`: no read-ahead, so only
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
    if total > (budget if budget is not None else int(PREWARM_SHARE * available_memory())):
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


def available_memory() -> int:
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
    """True when the index's ``x, y`` are the paper map (`dashboard.analytics.papermap`); False for an
    index built
    before it, whose ``x, y`` are one disc per topic (rebuild it for the map)."""
    return isinstance(manifest.get("map"), dict)


def manifest_digest(manifest: Mapping[str, Any]) -> str:
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
    representation_: str = "lsa"  # the space the topics were found in (an index before it: LSA)


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
            counts = load_csr(directory, facts["shape"], "iu")
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
    from dashboard.index import locations

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


def stored_rows(path: Path, n_papers: int, kinds: str = "f") -> np.ndarray:
    """The per-paper array at ``path`` (one row per paper, two dimensions), memory-mapped and checked."""
    array = load_npy(path)
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
        table = read_arrow(root / "papers.arrow")
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
    tfidf = load_csr(root / "tfidf", tfidf_shape)
    topics = _read_table(root / "topics.parquet", _read_topics)
    taxonomy_file = root / "taxonomy.toml"
    try:
        taxonomy = parse_taxonomy(taxonomy_file.read_text(encoding="utf-8"), manifest["taxonomy"])
    except (OSError, ValueError, TaxonomyError) as error:
        raise IndexFormatError(f"{taxonomy_file}: cannot be read ({error}); rebuild the index") from None
    model = StoredModel(
        tfidf_=tfidf,
        lsa_=stored_rows(root / "lsa.npy", n_papers),
        embedding_=stored_rows(root / "embedding.npy", n_papers),
        terms_=term_names.astype(object),
        idf_=idf,
        n_topics_=int(manifest["topics"]),
        topic_labels_=[str(label) for label in topics.loc[topics["topic"] != OUTLIER_TOPIC, "label"]],
        semantic_=stored_rows(root / "semantic.npy", n_papers)
        if "semantic.npy" in manifest["files"]
        else None,
        representation_=str(manifest.get("representation", "lsa")),
    )
    positions = _Positions(papers["id"])
    analysis = Analysis(papers, topics, model, taxonomy, positions)  # type: ignore[arg-type]
    words = _open_words(root, manifest, papers)
    facets = read_facets(root) if "facets.json" in manifest["files"] else None
    return PaperIndex(root, manifest, papers, _read_report(root / "report.json"), analysis, words, facets)


def _open_words(root: Path, manifest: Mapping[str, Any], papers: pd.DataFrame) -> WordIndex:
    """The index's search (`dashboard.search.wordindex`), its posting lists checked (`check_sparse`)."""
    search = root / "search"
    n_papers = len(papers)
    # The columns `search_text` reads (authors where the corpus has them), so phrase checks see them too.
    columns = [c for c in ("title", "abstract_clean", "method_names", "authors") if c in papers.columns]

    def texts_of(rows: np.ndarray) -> pd.Series:
        return search_text(rows_of(papers, rows, columns))

    vocabulary = _read_table(search / "words.arrow", lambda p: _read_checked(p, "word").combine_chunks())
    indptr, indices = load_npy(search / "indptr.npy"), load_npy(search / "indices.npy")
    check_sparse(
        search / "indptr.npy", indptr, search / "indices.npy", indices, len(vocabulary), n_papers, "papers"
    )
    odd_rows = np.asarray(load_npy(search / "odd_rows.npy"))
    _check_dense(search / "odd_rows.npy", odd_rows, (None,), "i")
    _check_positions(search / "odd_rows.npy", odd_rows, n_papers, "papers")
    # Term frequencies and lengths (for BM25) are absent from an index built before them.
    ranked = all(f"search/{name}.npy" in manifest["files"] for name in ("tf", "lengths"))
    tf = lengths = None
    if ranked:
        tf, lengths = load_npy(search / "tf.npy"), np.asarray(load_npy(search / "lengths.npy"))
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


def write_topics(topics: pd.DataFrame, path: Path) -> None:
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


def method_meanings(papers: pd.DataFrame) -> list[list[str]]:
    """Each paper's method names per meaning (`extract.name_meanings`), reading the abstracts a chunk
    at a time (all of a million at once were 1.5 GB): every abstract, for the widely shared names
    (BERT, ResNet) it uses."""
    names = papers["method_names"]
    every = np.ones(len(names), dtype=bool)
    return extract.name_meanings(texts_where(papers["abstract_clean"], every), names)


def write_single_batch(pieces: list[Path], path: Path) -> None:
    """Join Arrow files of the same schema into one file of one record batch, a column at a time.

    One chunk per column matters when reading: Arrow's ``take`` on a chunked string column first
    concatenates the chunks (gigabytes at a million papers, on every filter); on one chunk it copies
    just the rows taken. Each column is concatenated alone and kept memory-mapped, so memory holds
    one column at a time.
    """
    schema = read_arrow(pieces[0]).schema
    folder = path.parent / f".{path.name}.columns"
    folder.mkdir()
    files = []
    for number, field_ in enumerate(schema):
        # Each piece is mapped again per column and let go after: only this column's pages are resident.
        chunks = [chunk for piece in pieces for chunk in read_arrow(piece).column(number).chunks]
        joined = pa.concat_arrays(chunks)
        del chunks
        files.append(folder / f"{number:04d}.arrow")
        write_arrow(pa.table([joined], schema=pa.schema([field_])), files[-1])
        del joined
    columns = [read_arrow(file).column(0) for file in files]
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
        writer.write_table(pa.table(columns, schema=schema))
    del columns
    shutil.rmtree(folder)

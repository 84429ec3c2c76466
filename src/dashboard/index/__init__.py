"""The prebuilt index: its file format, the build steps, the local and Dask map runners, the disk cache.

The names here are the index's public face (`open_index`, `build_index`, ...): callers import them
from ``dashboard.index``; the modules behind them are `format` (the files and opening them), `build`
(the build's order of steps), `maps` and `distributed` (the map phase, local or on Dask), `steps`
(the pure per-partition steps), `diskcache` and `locations`.
"""

from dashboard.index.build import build_index, read_meanings, read_tree, refit
from dashboard.index.format import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    MEANINGS_FILE,
    PREWARM_SHARE,
    TREE_FILE,
    IndexBuildError,
    IndexFormatError,
    IndexOutputError,
    PaperIndex,
    arrow_to_table,
    available_memory,
    check_arrow,
    check_files,
    check_sparse,
    has_map,
    is_index,
    load_csr,
    load_npy,
    manifest_digest,
    method_meanings,
    open_index,
    prewarm,
    read_arrow,
    read_manifest,
    read_report,
    stored_rows,
    table_to_arrow,
)
from dashboard.index.maps import count_files, one_thread, partition_name

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "IndexBuildError",
    "IndexFormatError",
    "IndexOutputError",
    "MANIFEST",
    "MEANINGS_FILE",
    "PREWARM_SHARE",
    "PaperIndex",
    "TREE_FILE",
    "load_csr",
    "manifest_digest",
    "stored_rows",
    "arrow_to_table",
    "available_memory",
    "check_arrow",
    "check_files",
    "check_sparse",
    "has_map",
    "is_index",
    "load_npy",
    "open_index",
    "prewarm",
    "read_arrow",
    "read_manifest",
    "read_report",
    "table_to_arrow",
    "build_index",
    "method_meanings",
    "read_meanings",
    "read_tree",
    "refit",
    "count_files",
    "one_thread",
    "partition_name",
]

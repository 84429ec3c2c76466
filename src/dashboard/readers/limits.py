"""Every limit of a load, in one place; read at call time, so a caller may raise one before a load.

``dashboard.corpus.MAX_INPUT_BYTES = ...`` sets the same value (`dashboard.corpus` forwards them here).

MAX_INPUT_BYTES        per file after decompression; larger files are refused
MAX_COMPRESSION_RATIO  gzip output/input ratio above which, past RATIO_CHECK_BYTES of output, a file is
                       refused as a decompression bomb (real corpora compress 3-10x)
MAX_JSON_DEPTH         deeper JSON nesting is refused before `json.loads` sees it
MAX_ABSTRACT_CHARS     a longer abstract is not an abstract (a whole paper, a log, a merged dump): the
                       record is SKIPPED with a message, never truncated, so it cannot swamp the topics
MAX_FIELD_CHARS        other text fields (title, URLs, venue...) are truncated to this, with a warning
MAX_LIST_ITEMS         authors/keywords lists are cut to this many items, with a warning
MAX_PROBLEMS_PER_FILE  each file lists at most this many skipped records and warnings, then a count
"""

from __future__ import annotations

MAX_INPUT_BYTES = 1 << 30
MAX_COMPRESSION_RATIO = 100
# 1 MiB: a few kB of gzip never become 16 MB of records to parse (real corpora compress 3-10x)
RATIO_CHECK_BYTES = 1 << 20
MAX_JSON_DEPTH = 64
MAX_ABSTRACT_CHARS = 100_000
MAX_FIELD_CHARS = 5_000
MAX_LIST_ITEMS = 5_000
MAX_PROBLEMS_PER_FILE = 100

NAMES: tuple[str, ...] = (
    "MAX_INPUT_BYTES",
    "MAX_COMPRESSION_RATIO",
    "RATIO_CHECK_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_ABSTRACT_CHARS",
    "MAX_FIELD_CHARS",
    "MAX_LIST_ITEMS",
    "MAX_PROBLEMS_PER_FILE",
)

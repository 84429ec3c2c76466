"""Hostile input: huge and malformed files, hostile names and paths, formula injection, hostile text.

The bad-file table of tests/readers/test_corpus.py (empty, binary, wrong encodings, truncated gzip, a 1.1 GiB
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

import csv
import gzip
import io
import json
import re
import socket
import sys
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from google.protobuf.json_format import MessageToDict
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest
from support.measured import in_child, measured

from dashboard import corpus, export
from dashboard.cli import common as cli_common
from dashboard.filters import Filters
from dashboard.ui import keys
from dashboard.ui.markup import STYLE

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

MiB = 1 << 20


def read(name: str, data: bytes, *, derive: bool = False) -> corpus.LoadResult:
    """Load one uploaded file (readers only unless `derive`)."""
    return corpus.load_uploads([(name, data)], derive=derive)


def problems(result: corpus.LoadResult) -> list[corpus.Problem]:
    return [*result.report.skipped, *result.report.warnings]


class AuditLog:
    """Sees what the process does while `watching`: file events naming a marker, and any network use.

    Built on `sys.addaudithook` (every open(), os.listdir, os.remove..., socket.connect raises an
    audit event); the hook cannot be removed, so it is installed once and idles outside `watching`.
    """

    NETWORK = ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "urllib.Request")

    def __init__(self) -> None:
        self.marker: str | None = None
        self.events: list[tuple[str, str]] = []
        self.network: list[tuple[str, str]] = []
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple) -> None:
        marker = self.marker
        if marker is None:
            return
        if event in self.NETWORK:
            self.network.append((event, repr(args)[:200]))
        elif event.startswith(("open", "os.", "shutil.", "glob.", "pathlib.")) and marker in repr(args):
            self.events.append((event, repr(args)[:200]))

    @contextmanager
    def watching(self, marker: str) -> Iterator[AuditLog]:
        self.events, self.network, self.marker = [], [], marker
        try:
            yield self
        finally:
            self.marker = None


_AUDIT: list[AuditLog] = []


@pytest.fixture
def audit() -> AuditLog:
    if not _AUDIT:
        _AUDIT.append(AuditLog())
    return _AUDIT[0]


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
@in_child
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


# --------------------------------------------------------------------------- huge files: time and memory


def _gzip_of_zeros(size: int) -> bytes:
    """One gzip stream (not concatenated members) of `size` zero bytes: ~1 MB for 1 GiB."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(MiB)
    return b"".join([*(compressor.compress(block) for _ in range(size // MiB)), compressor.flush()])


@pytest.fixture(scope="module")
def gigabyte_bomb() -> bytes:
    return _gzip_of_zeros(1 << 30)


GOOD_ABSTRACT = "A real abstract after the hostile part."

# (file name, maker, words of the message, allowed peak memory as a multiple of the file size).
# Multiples measured: text/JSON Lines 3.0, JSON 2.0, CSV/TSV 8.1 (the csv module builds each cell
# at 4 bytes a character, growing by doubling); the bound leaves headroom, a copy too many fails it.
HUGE_FILES = [
    pytest.param(
        "paragraph.txt",
        lambda: b"ICML 2026 Papers\n\n" + b"word " * (20 * MiB) + f"\n\n{GOOD_ABSTRACT}\n".encode(),
        "104,857,599 characters, more than the 100,000 an abstract may have",
        4,
        id="100MB-single-paragraph-txt",
    ),
    pytest.param(
        "paragraph.md",
        lambda: b"## A title\n\n" + b"word " * (20 * MiB) + f"\n\n{GOOD_ABSTRACT}\n".encode(),
        "more than the 100,000 an abstract may have",
        4,
        id="100MB-single-paragraph-markdown",
    ),
    pytest.param(
        "line.jsonl",
        lambda: (
            json.dumps({"abstract": "x " * (50 * MiB)}).encode()
            + f'\n{{"abstract": "{GOOD_ABSTRACT}"}}\n'.encode()
        ),
        "more than the 100,000 an abstract may have",
        4,
        id="100MB-single-jsonl-record",
    ),
    pytest.param(
        "record.json",
        lambda: json.dumps([{"abstract": "x " * (50 * MiB)}, {"abstract": GOOD_ABSTRACT}]).encode(),
        "more than the 100,000 an abstract may have",
        3,
        id="100MB-single-json-record",
    ),
    pytest.param(
        "cell.csv",
        lambda: b'title,abstract\nT,"' + b"y " * (50 * MiB) + f'"\nU,{GOOD_ABSTRACT}\n'.encode(),
        "more than the 100,000 an abstract may have",
        10,
        id="100MB-single-csv-cell",
    ),
    pytest.param(
        "cell.tsv",
        lambda: b"title\tabstract\nT\t" + b"y " * (50 * MiB) + f"\nU\t{GOOD_ABSTRACT}\n".encode(),
        "more than the 100,000 an abstract may have",
        10,
        id="100MB-single-tsv-cell",
    ),
]


@pytest.mark.slow
@pytest.mark.timeout(300)  # a hang guard, not a speed assertion
@pytest.mark.parametrize("name, make, words, multiple", HUGE_FILES)
@in_child
def test_huge_single_record_is_skipped_in_bounded_memory(
    name: str, make: Callable[[], bytes], words: str, multiple: int
) -> None:
    data = make()
    with measured() as cost:
        result = read(name, data)
    print(f"\n{name}: {len(data) / MiB:.0f} MiB, {cost.seconds:.2f} s, peak {cost.peak_bytes / MiB:.0f} MiB")
    assert any(words in p.message for p in result.report.skipped), problems(result)
    assert result.papers["abstract"].tolist() == [GOOD_ABSTRACT]  # the rest of the file still loads
    assert cost.peak_bytes < multiple * len(data)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "name", ["bomb.txt.gz", "bomb.json.gz", "bomb.jsonl.gz", "bomb.csv.gz", "bomb.tsv.gz", "bomb.txt", "bomb"]
)
@in_child
def test_gigabyte_gzip_bomb_is_refused_in_small_memory(name: str, gigabyte_bomb: bytes) -> None:
    # One 1 GiB stream, whatever the name says (gzip is recognised by its magic bytes, not the name).
    # tests/readers/test_corpus.py has a 1.1 GiB bomb made of concatenated members, the other code path.
    with measured() as cost:
        result = corpus.load_uploads(
            [(name, gigabyte_bomb), ("good.txt", GOOD_ABSTRACT.encode())], derive=False
        )
    print(
        f"\n{name}: {len(gigabyte_bomb) / MiB:.1f} MiB -> 1 GiB, {cost.seconds:.2f} s, "
        f"peak {cost.peak_bytes / MiB:.0f} MiB"
    )
    (problem,) = result.report.files[0].skipped
    assert "refused as a likely decompression bomb" in problem.message
    assert result.papers["abstract"].tolist() == [GOOD_ABSTRACT]
    assert cost.peak_bytes < 16 * MiB  # refused after ~2 MiB of output (6 MiB peak measured)


@in_child
def test_gzip_under_the_ratio_check_stops_at_the_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # A "bomb" that compresses only ~30:1 passes the ratio check: the decompressed size limit stops
    # it. Shown with a 16 MiB limit; the default (1 GiB) bounds memory the same way.
    monkeypatch.setattr(corpus, "MAX_INPUT_BYTES", 16 * MiB)
    block = b"".join(b'{"abstract": "Paper %d studies graphs."}\n' % i for i in range(200_000))  # ~8 MiB
    data = gzip.compress(block * 4)
    assert len(block * 4) / len(data) < corpus.MAX_COMPRESSION_RATIO
    with measured() as cost:
        result = read("big.jsonl.gz", data)
    assert "decompresses to more than the 16.0 MiB limit" in result.report.skipped[0].message
    assert cost.peak_bytes < 3 * 16 * MiB


def _xlsx_with_a_big_sheet(size: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/worksheets/sheet1.xml", b" " * size)
    return buffer.getvalue()


@in_child
def test_zip_bomb_in_an_xlsx_is_refused_before_unzipping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "MAX_INPUT_BYTES", 16 * MiB)
    data = _xlsx_with_a_big_sheet(64 * MiB)
    with measured() as cost:
        result = read("bomb.xlsx", data)
    assert "file is 64.0 MiB once unzipped, above the 16.0 MiB limit" in result.report.skipped[0].message
    assert cost.peak_bytes < 8 * MiB


def _parquet(columns: dict[str, pa.Array]) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns), buffer, compression="zstd")
    return buffer.getvalue()


def _repeated(text: str, n: int) -> pa.Array:
    """`text` in n rows, built compact (one dictionary entry), as a hostile writer would store it."""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([text]))


@in_child
def test_parquet_dictionary_bomb_is_refused_before_decoding() -> None:
    # One 1 MiB text referenced by 3,000 rows: an 847-byte file that decoded to 3 GB (found here;
    # the old check read only the file's own sizes). Refused from the dictionary lengths alone.
    data = _parquet({"title": _repeated("T", 3000), "abstract": _repeated("w " * (MiB // 2), 3000)})
    assert len(data) < 4096
    with measured() as cost:
        result = read("bomb.parquet", data)
    assert "file is 2.9 GiB once decoded, above the 1.0 GiB limit" in result.report.skipped[0].message
    assert cost.peak_bytes < 16 * MiB


def test_parquet_dictionary_bomb_in_a_list_column_is_refused() -> None:
    authors = pa.ListArray.from_arrays(
        pa.array(np.arange(0, 2001, 1000, dtype=np.int32)), _repeated("A" * MiB, 2000)
    )
    data = _parquet(
        {"title": _repeated("T", 2), "abstract": _repeated("An abstract.", 2), "authors": authors}
    )
    assert "once decoded, above the 1.0 GiB limit" in read("authors.parquet", data).report.skipped[0].message


@in_child
def test_parquet_with_millions_of_rows_in_a_few_bytes_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "MAX_INPUT_BYTES", 16 * MiB)
    data = _parquet({"title": _repeated("T", 2_000_000), "abstract": _repeated("An abstract.", 2_000_000)})
    with measured() as cost:
        result = read("rows.parquet", data)
    assert "once decoded (2,000,000 rows), above the 16.0 MiB limit" in result.report.skipped[0].message
    assert cost.peak_bytes < 8 * MiB


def test_parquet_bigger_than_the_limit_once_decompressed_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "MAX_INPUT_BYTES", 16 * MiB)
    texts = pa.array([f"paper {i} " + "same words " * 5_000 for i in range(500)])  # 27 MB, all different
    data = _parquet({"title": pa.array(["T"] * 500), "abstract": texts})
    assert len(data) < MiB
    result = read("big.parquet", data)
    assert "once decompressed, above the 16.0 MiB limit" in result.report.skipped[0].message


# Many small things: time grows linearly and the problem list stays capped (never a million lines).
MANY_THINGS = [
    pytest.param(
        "blank.jsonl", lambda: b"\n" * 200_000, "empty file: only blank lines", id="200k-blank-lines-jsonl"
    ),
    pytest.param(
        "blank.csv", lambda: b"\r\n" * 200_000, "empty file: only blank lines", id="200k-blank-lines-csv"
    ),
    pytest.param(
        "blank.json", lambda: b" \n" * 200_000, "empty file: only blank lines", id="200k-blank-lines-json"
    ),
    pytest.param(
        "blank.md", lambda: b"\t\n" * 200_000, "empty file: only blank lines", id="200k-blank-lines-md"
    ),
    pytest.param(
        "words.jsonl", lambda: b"word\n" * 1_000_000, "invalid JSON at column 1", id="1M-one-word-lines-jsonl"
    ),
    pytest.param(
        "words.csv", lambda: b"word\n" * 1_000_000, "no abstract column", id="1M-one-word-lines-csv"
    ),
    pytest.param(
        "nulls.json",
        lambda: b"[" + b"null," * 1_000_000 + b"null]",
        "not paper records",
        id="1M-nulls-json",
    ),
    pytest.param(
        "empty.json",
        lambda: b"[" + b"{}," * 1_000_000 + b"{}]",
        "no title or abstract",
        id="1M-empty-objects-json",
    ),
]


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("name, make, words", MANY_THINGS)
def test_many_small_bad_things_give_one_capped_report(
    name: str, make: Callable[[], bytes], words: str
) -> None:
    data = make()
    started = time.perf_counter()
    result = read(name, data)
    print(f"\n{name}: {len(data) / MiB:.1f} MiB in {time.perf_counter() - started:.2f} s")
    report = result.report.files[0]
    assert report.papers == 0
    assert words in report.skipped[0].message
    assert len(report.skipped) <= corpus.MAX_PROBLEMS_PER_FILE + 1  # the list, then "... and N more"


# --------------------------------------------------------------------------- deep and odd JSON in cells


DEEP = "[" * 100_000 + "]" * 100_000


def test_deep_json_in_a_csv_list_cell_is_plain_text() -> None:
    data = f'title,abstract,authors,keywords\nT,An abstract.,"{DEEP}","{DEEP}"\n'.encode()
    result = read("deep.csv", data)
    assert result.papers["abstract"].tolist() == ["An abstract."]


def test_deep_json_in_parquet_and_xlsx_cells_is_plain_text() -> None:
    table = pa.table({"title": ["T"], "abstract": ["An abstract."], "authors": [DEEP]})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    assert read("deep.parquet", buffer.getvalue()).papers["abstract"].tolist() == ["An abstract."]
    frame = pd.DataFrame({"title": ["T"], "abstract": ["An abstract."], "keywords": [DEEP[:30_000]]})
    data = export.to_bytes(frame, "xlsx")
    assert read("deep.xlsx", data).papers["abstract"].tolist() == ["An abstract."]


def test_deeply_nested_openreview_values_are_not_unwrapped_forever() -> None:
    value: object = "An abstract."
    for _ in range(60):
        value = {"value": value}
    data = json.dumps([{"content": {"title": {"value": "T"}, "abstract": value}, "forum": "f1"}]).encode()
    result = read("notes.json", data)
    assert result.papers["title"].tolist() == ["T"]


def test_csv_lines_split_exactly_like_stringio() -> None:
    # corpus reads CSV from its own line splitter (StringIO costs 4 bytes a character); same rows.
    text = 'a,b\r\n"x\ry",z\n"p\u2028q",\x0b\x0c\x1c\x1d\x1e\x85\u2029r\rlast,"open'
    assert list(csv.reader(corpus.csv_lines(text))) == list(csv.reader(io.StringIO(text, newline="")))


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list('ab,"\r\n\t\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029 ')), max_size=80),
    st.booleans(),
)
def test_csv_lines_split_exactly_like_stringio_on_any_text(text: str, plain: bool) -> None:
    if plain:  # the fast path (no other line breaks)
        text = "".join(c for c in text if c not in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
    try:
        expected = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error:
        with pytest.raises(csv.Error):
            list(csv.reader(corpus.csv_lines(text)))
        return
    assert list(csv.reader(corpus.csv_lines(text))) == expected


# --------------------------------------------------------------------------- XML and archive tricks


def _xlsx_with(
    sheet_prefix: bytes = b"", abstract: bytes = b"An abstract.", extra: dict[str, bytes] | None = None
) -> bytes:
    """One of our own .xlsx exports, its sheet XML given a DOCTYPE and the abstract cell replaced."""
    frame = pd.DataFrame({"title": ["T"], "abstract": ["ABSTRACT_HERE"]})
    source = zipfile.ZipFile(io.BytesIO(export.to_bytes(frame, "xlsx")))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml":
                data = sheet_prefix + data.replace(b"ABSTRACT_HERE", abstract)
            archive.writestr(info, data)
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE worksheet [<!ENTITY a "aaaaaaaaaa">'
    + b"".join(b'<!ENTITY %c "%s">' % (98 + i, b"&%c;" % (97 + i) * 10) for i in range(9))
    + b"]>"
)


@in_child
def test_billion_laughs_in_an_xlsx_is_refused() -> None:
    with measured() as cost:
        result = read("laughs.xlsx", _xlsx_with(LAUGHS, b"&j;"))
    assert "not a readable Excel .xlsx file" in result.report.skipped[0].message
    # refused at the <!DOCTYPE>, before a single entity is declared, let alone expanded
    assert "declares a document type" in result.report.skipped[0].message
    assert cost.peak_bytes < 8 * MiB


def test_xlsx_external_entities_are_never_read_or_fetched(audit: AuditLog, tmp_path: Path) -> None:
    secret = tmp_path / "secret-pd-marker.txt"
    secret.write_text("THE SECRET")
    file_entity = (
        b'<?xml version="1.0"?><!DOCTYPE worksheet [<!ENTITY x SYSTEM "file://%s">]>' % str(secret).encode()
    )
    # a parameter entity pointing at a local port: loading must not even try to connect
    network_entity = (
        b'<?xml version="1.0"?><!DOCTYPE worksheet '
        b'[<!ENTITY % p SYSTEM "http://127.0.0.1:9/pd-marker.dtd"> %p;]>'
    )
    with audit.watching("pd-marker"):
        by_file = read("xxe.xlsx", _xlsx_with(file_entity, b"We study &x; here."))
        by_network = read("xxe-param.xlsx", _xlsx_with(network_entity, b"We study graphs."))
    assert "THE SECRET" not in by_file.papers.to_string()
    for result in (by_file, by_network):  # an .xlsx never has a DTD: both are refused at it, named
        assert result.papers.empty
        assert "declares a document type" in result.report.skipped[0].message
    assert audit.events == []
    assert not audit.network


def test_xlsx_member_names_never_become_paths(audit: AuditLog, tmp_path: Path) -> None:
    evil = {f"../../../{tmp_path.name}/pd-marker-evil.txt": b"x", "/tmp/pd-marker-abs.txt": b"x"}
    with audit.watching("pd-marker"):
        result = read("members.xlsx", _xlsx_with(extra=evil))
    assert result.papers["abstract"].tolist() == ["An abstract."]
    assert audit.events == []
    assert not list(tmp_path.parent.glob("**/pd-marker-*"))


def test_the_audit_log_sees_file_and_network_use(audit: AuditLog, tmp_path: Path) -> None:
    with audit.watching("pd-marker"):
        (tmp_path / "pd-marker.txt").write_text("x")
        socket.getaddrinfo("127.0.0.1", 9)
    assert audit.events and audit.network


# --------------------------------------------------------------------------- names and paths

HOSTILE_NAMES = [
    "../../../../etc/pd-marker-passwd",
    "..\\..\\pd-marker-win.txt",
    "C:\\Windows\\pd-marker-sys.txt",
    "/etc/pd-marker-abs.json",
    "~/.ssh/pd-marker-key.csv",
    "pd-marker-nul\x00.txt",
    "pd-marker-newline\n.txt",
    "pd-marker-bidi\u202etxt.exe",
    "\\\\server\\share\\pd-marker-unc.txt",
    "file:///etc/pd-marker-url.txt",
    "pd-marker-" + "x" * 5000 + ".txt",
    "..",
    ".",
    "",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=range(len(HOSTILE_NAMES)))
def test_upload_names_are_only_labels(name: str, audit: AuditLog) -> None:
    with audit.watching("pd-marker"):
        result = corpus.load_uploads([(name, b"We study graphs.\n")], derive=False)
    assert audit.events == []  # nothing named after the upload was opened, listed or written
    label = result.report.files[0].source
    assert re.fullmatch(r"[^/\\\x00-\x1f\u202e]{1,200}", label), repr(label)
    assert label.strip(".")
    assert list(result.papers["source"]) == [label] * len(result.papers)


def test_slugs_of_hostile_filter_values_are_plain_file_names() -> None:
    # A download's file name carries the filters (source file, venue... from the corpus). The
    # property test in tests/test_filters.py covers random values; these are the classic ones.
    filters = Filters(source=tuple(HOSTILE_NAMES[:-3]), venue=("<script>", "$(rm -rf ~)"), q="../../x")
    assert re.fullmatch(r"[a-z0-9_+-]+", filters.slug())


# --------------------------------------------------------------------------- found by bench/fuzz.py


@pytest.mark.parametrize("position", ["1e308", "9223372036854775808", "-1", "nan", "inf", "1.5", "x", ""])
def test_a_hostile_position_in_our_own_export_is_ignored(position: str) -> None:
    # A CSV with our export's marker columns keeps its `position` column; 1e308 overflowed int64.
    header = "title,abstract,abstract_clean,title_is_derived,code_status,position"
    data = f"{header}\nT,A.,A.,false,none,{position}\n"
    result = read("own.csv", data.encode())
    assert result.papers["abstract"].tolist() == ["A."]
    assert result.papers["position"].tolist() == [1]


def test_xlsx_export_of_columns_named_with_control_characters() -> None:
    # The notes sheet named the raw column ("\x00"), which openpyxl refused: the export failed.
    frame = pd.DataFrame({"\x00": ["x"], "abstract": ["y\x01"]})
    book = openpyxl.load_workbook(io.BytesIO(export.to_bytes(frame, "xlsx")))
    assert [cell.value for cell in book["papers"][2]] == ["x", "y"]
    assert book["notes"].max_row == 3


def test_lone_surrogates_from_json_escapes_become_replacement_characters() -> None:
    # "\ud83d" alone (half an emoji, cut by a scraper) made pyarrow fail the whole load.
    data = (
        b'[{"title": "Cut \\ud83d", "abstract": "Whole \\ud83d\\ude00, half \\ude00.", '
        b'"authors": ["A \\ud800"]}]'
    )
    result = corpus.load_uploads([("s.json", data), ("name\ud800.txt", b"An abstract.")])
    first = result.papers.iloc[0]
    assert (first["title"], first["abstract"]) == ("Cut \ufffd", "Whole \U0001f600, half \ufffd.")
    assert first["authors"] == ["A \ufffd"]
    assert result.papers["source"].tolist() == ["s.json", "name .txt"]
    assert export.to_bytes(result.papers, "parquet")


# --------------------------------------------------------------------------- formula injection


TRIGGERS = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1:A9)", "\t=1+1", "\r=1+1"]


def _hostile_records() -> list[dict]:
    """Records whose every text field starts like a formula (and carries markup and bad URLs)."""
    return [
        {
            "id": f"p{n}",
            "title": trigger + f" title {n}",
            "abstract": f"{trigger} We propose FormulaNet{n} for graphs. Code: https://github.com/evil/repo{n}",
            "venue": trigger,
            "authors": [trigger, "@handle"],
            "keywords": ["-neg", "=kw"],
            "url": "javascript:alert(1)",
            "decision": trigger,
        }
        for n, trigger in enumerate(TRIGGERS)
    ]


def _assert_spreadsheet_safe(data: bytes, fmt: str) -> int:
    """No text cell starts with a formula trigger; returns the number of text cells checked."""
    cells: list[object] = []
    if fmt == "csv":
        cells = [
            cell for row in csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")) for cell in row
        ]
        # a CSV cell has no type: one that starts like a number must be a number (the numeric columns)
        risky = [c for c in cells if isinstance(c, str) and c and c[0] in "=+-@\t\r" and not _is_number(c)]
    else:
        book = openpyxl.load_workbook(io.BytesIO(data))
        typed = [cell for sheet in book.worksheets for row in sheet.iter_rows() for cell in row]
        assert not [cell.coordinate for cell in typed if cell.data_type == "f"], "formula cells"
        cells = [cell.value for cell in typed if cell.data_type == "s"]
        risky = [c for c in cells if isinstance(c, str) and c and c[0] in "=+-@\t\r"]
    assert not risky, risky[:5]
    return len(cells)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_every_cli_command_that_writes_a_table_neutralises_formulas(fmt: str, tmp_path: Path) -> None:
    """`parse`, `analyze` and any later command whose --out is the paper table, by default and with --raw."""
    from dashboard.cli import main as cli

    source = tmp_path / "hostile.json"
    source.write_text(json.dumps(_hostile_records()))
    parser = cli.build_parser()
    commands = [
        name
        for action in parser._subparsers._group_actions  # type: ignore[union-attr]
        for name, sub in action.choices.items()
        if any(option.dest == "out" and option.type is cli_common.output_path for option in sub._actions)
        and any(option.dest == "raw" for option in sub._actions)  # writes the paper table (`trends` does not)
    ]
    assert "parse" in commands
    for command in commands:
        quoted, raw = tmp_path / f"{command}.{fmt}", tmp_path / f"{command}-raw.{fmt}"
        assert cli.main([command, str(source), "--out", str(quoted)]) == 0
        assert _assert_spreadsheet_safe(quoted.read_bytes(), fmt) > 50
        assert cli.main([command, str(source), "--out", str(raw), "--raw"]) == 0
        reread = corpus.load([raw], derive=False).papers
        assert reread["title"].tolist() == [r["title"].strip() for r in _hostile_records()]
        assert corpus.load([quoted], derive=False).papers["title"].tolist() == reread["title"].tolist()


# --------------------------------------------------------------------------- the app (AppTest)

REPO = Path(__file__).resolve().parents[1]
PAGES = ("overview", "papers", "topics", "terms", "trends", "links", "compare")
MARKUP = (
    '<script>alert("pwn")</script> <img src=x onerror=alert(2)> :red[RED] :material/home: $x^2$ '
    "[click](javascript:alert(3)) [d](data:text/html,<b>x</b>) ![pixel](https://evil.example/p.png) "
    "&lt;b&gt; **bold**"
)
# Markdown-rendered widgets (captions, labels, buttons, headings) may carry these only backslash-escaped.
MARKDOWN_TOKENS = (
    "<script",
    "<img",
    ":red[",
    ":material/home",
    "$x^2$",
    "](javascript:",
    "](data:",
    "![",
    "**bold**",
    "&lt;",
)
ALLOWED_TAGS = {"div", "span", "mark", "a", "br", "i", "b", "style", "ul", "li", "p"}  # lists: the topic list
UPLOAD_NAME = "../../evil :red[x] <b>$y$.json"


def _hostile_upload() -> bytes:
    records = []
    for n, trigger in enumerate(TRIGGERS):
        records.append(
            {
                "id": f"p{n}" if n else '<img src=x onerror="alert(9)">',
                "title": f"{trigger} {MARKUP} title {n}",
                "abstract": f"We propose Hostile{n}Net for graph learning with diffusion. {MARKUP} "
                f"Code at https://github.com/evil/repo{n} and javascript:alert({n}).",
                "venue": f"Venue {MARKUP}",
                "year": 2026,
                "authors": [f"Author {MARKUP}"],
                "keywords": [MARKUP],
                "url": "javascript:alert(5)" if n % 2 else "https://example.org/p",
                "pdf_url": "data:text/html,<script>alert(6)</script>",
                "code_url": "javascript:alert(7)",
            }
        )
    return json.dumps(records).encode()


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bytes]]:
    """Every file the app hands out (downloads, images) as (file name, bytes)."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    files: list[tuple[str, bytes]] = []
    original = MemoryMediaFileStorage.load_and_get_id

    def spy(self, path_or_data, mimetype, kind, filename=None):  # type: ignore[no-untyped-def]
        if isinstance(path_or_data, bytes):
            files.append((filename or "", path_or_data))
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", spy)
    return files


@pytest.fixture
def bundled_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


def _app(page: str = "papers", query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page(f"src/dashboard/app_pages/{page}.py")
    return at.run()


def _upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    at.sidebar.get("file_uploader")[0].set_value(
        [(name, data, "application/octet-stream") for name, data in files]
    )
    return at.run()


def _elements(node: object) -> Iterator[object]:
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield child
            yield from _elements(child)


def _strings(value: object, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, k)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, key)
    elif isinstance(value, str):
        yield key, value


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._in_style = tag == "style"

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data


def _check_html(body: str) -> None:
    parser = _Tags()
    parser.feed(body)
    for tag, attributes in parser.tags:
        assert tag in ALLOWED_TAGS, (tag, body[:300])
        for name, value in attributes:
            assert not name.startswith("on"), (tag, name)
            if name == "href":
                assert (value or "").startswith(("http://", "https://")), value
            assert "javascript:" not in (value or "").lower()
    if parser.style:
        assert parser.style.strip() in STYLE, "a <style> that is not the app's own"


def _check_figure(spec: str) -> None:
    # customdata (paper ids, topic numbers) is never drawn: the charts' hover templates name other fields
    for key, text in _strings(json.loads(spec)):
        if key == "customdata":
            continue
        lowered = text.lower()
        assert "<script" not in lowered and "<img" not in lowered and "<a " not in lowered, text[:200]


def _check_table(element: object) -> None:
    proto = MessageToDict(element.proto)  # type: ignore[attr-defined]
    config = json.loads(proto.get("columns") or "{}")
    # a link column by its type (a help text may well say "link")
    links = [
        name for name, column in config.items() if (column.get("type_config") or {}).get("type") == "link"
    ]
    frame = element.value  # type: ignore[attr-defined]
    for name in links:
        if name in frame.columns:
            for url in frame[name].dropna():
                assert url == "" or str(url).startswith(("http://", "https://")), (name, url)


def check_rendered_as_text(at: AppTest) -> int:
    """Every element of the page: markdown carries hostile text only escaped, HTML only our tags."""
    assert not at.exception, [e.value for e in at.exception]
    checked = 0
    for element in _elements(at._tree):
        proto = getattr(element, "proto", None)
        if proto is None:
            continue
        kind = type(element).__name__
        if kind == "Dataframe":
            _check_table(element)
            continue
        fields = MessageToDict(proto)
        assert not fields.get("unsafeAllowJavascript"), fields  # the app sends no script of its own
        for key, text in _strings(fields):
            if kind == "Html" and key == "body":
                _check_html(text)
            elif key == "spec":
                _check_figure(text)
            elif key in ("body", "label", "help"):
                leaked = [
                    token for token in MARKDOWN_TOKENS if re.search(r"(?<!\\)" + re.escape(token), text)
                ]
                assert not leaked, (kind, leaked, text[:300])
            checked += 1
    return checked


@pytest.mark.slow
def test_hostile_corpus_text_is_shown_as_text_on_every_page(bundled_corpus: None, audit: AuditLog) -> None:
    """Titles, abstracts, venues, authors, URLs, ids and the file name, on every page and view.

    tests/ui/test_app.py does this for hostile abstracts in a text file, and tests/browser/test_browser.py
    checks in Chromium that nothing runs; this adds every other field and hostile URL values.
    """
    with audit.watching("evil :red"):
        at = _upload(_app("papers"), (UPLOAD_NAME, _hostile_upload()))
    assert audit.events == []  # the upload's name was never used as a path
    label = corpus.load_uploads([(UPLOAD_NAME, b"x")]).report.files[0].source
    ids = list(corpus.load_uploads([(UPLOAD_NAME, _hostile_upload())]).papers["id"])
    assert len(at.main.dataframe[0].value) == len(TRIGGERS)
    views = [
        {},
        {"paper": ids[0], "cmp": ids[:3], "term": "<script>", "q": '"<script>" :red[RED]'},
        {"paper": ids[1], "cmp": ids[1:3], "venue": f"Venue {MARKUP}", "source": label, "area": "<b>x</b>"},
    ]
    checked = 0
    for view in views:
        for page in PAGES:
            at.query_params.clear()
            for key, value in view.items():
                at.query_params[key] = value
            at.switch_page(f"src/dashboard/app_pages/{page}.py")
            at.run()
            checked += check_rendered_as_text(at)
    assert checked > 500


@pytest.mark.slow
def test_every_download_in_the_app_neutralises_formulas(
    bundled_corpus: None, served: list[tuple[str, bytes]]
) -> None:
    at = _upload(_app("papers"), ("hostile.json", json.dumps(_hostile_records()).encode()))
    pickers = (
        ("papers", keys.PAPERS_FORMAT),
        ("links", keys.LINKS_FORMAT),
        ("links", keys.LINKS_REPOS_FORMAT),
    )
    for page, key in pickers:
        at.switch_page(f"src/dashboard/app_pages/{page}.py")
        at.run()
        for label in ("CSV", "Excel"):
            at.segmented_control(key=key).set_value(label).run()
            assert not at.exception
    downloads = [(name, data) for name, data in served if name.endswith((".csv", ".xlsx"))]
    names = {name.split("_")[0] + "." + name.rsplit(".", 1)[1] for name, _ in downloads}
    assert names == {
        "papers.csv",
        "papers.xlsx",
        "links.csv",
        "links.xlsx",
        "repositories.csv",
        "repositories.xlsx",
    }
    for name, data in downloads:
        assert _assert_spreadsheet_safe(data, name.rsplit(".", 1)[1]) > 10, name


def _count_line(at: AppTest) -> tuple[int, int]:
    for element in at.sidebar.markdown:
        match = re.fullmatch(r"\*\*([\d,]+) of ([\d,]+) papers\*\*", element.value)
        if match:
            return int(match.group(1).replace(",", "")), int(match.group(2).replace(",", ""))
    raise AssertionError("no 'N of M papers' line")


def _paragraphs(tag: str, n: int) -> bytes:
    return (
        "\n\n".join(f"Paper {i} by {tag} studies graphs with method {tag}{i}Net." for i in range(n)) + "\n"
    ).encode()


@pytest.mark.slow
def test_one_sessions_upload_never_shows_in_another_session(bundled_corpus: None) -> None:
    # AppTest sessions in one process share Streamlit's caches, as the users of one server do.
    seeds = len(corpus.load([REPO / "seeds"]).papers)
    alice = _upload(_app("papers"), ("mine.txt", _paragraphs("alice", 3)))
    bob = _app("papers")
    carol = _upload(_app("papers"), ("mine.txt", _paragraphs("carol", 5)))  # same name, other content
    assert (_count_line(alice), _count_line(bob), _count_line(carol)) == ((3, 3), (seeds, seeds), (5, 5))
    alice.run()
    bob.run()
    assert _count_line(alice) == (3, 3) and _count_line(bob) == (seeds, seeds)
    titles = " ".join(alice.main.dataframe[0].value["title"])
    assert "alice" in titles.lower() and "carol" not in titles.lower()


@pytest.mark.parametrize("key", ["corpus", "path", "paths", "file", "data", "source", "upload"])
def test_a_corpus_path_in_the_url_is_never_opened(
    key: str, bundled_corpus: None, audit: AuditLog, tmp_path: Path
) -> None:
    # tests/ui/test_app.py checks the count stays the bundled one; this checks the path is not even opened
    target = tmp_path / "pd-marker-corpus"
    target.mkdir()
    (target / "papers.txt").write_text("An abstract that must not load.\n")
    with audit.watching("pd-marker-corpus"):
        at = _app("overview", {key: [str(target), str(target / "papers.txt"), "../../pd-marker-corpus"]})
    assert not at.exception
    assert audit.events == []


def test_upload_limit_is_set_and_shown_and_tracebacks_are_hidden(bundled_corpus: None) -> None:
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    limit_mb = config["server"]["maxUploadSize"]
    assert 0 < limit_mb * MiB <= corpus.MAX_INPUT_BYTES  # an accepted upload is never too big to read
    # A crash shows no traceback (the page itself: tests/test_hostile_misc.py).
    assert config["client"]["showErrorDetails"] == "none"
    assert config["client"]["showErrorLinks"] is False  # nor links carrying the error to outside hosts
    uploader = _app("overview").sidebar.get("file_uploader")[0]
    assert MessageToDict(uploader.proto)["maxUploadSizeMb"] == limit_mb  # Streamlit states and enforces it


# --------------------------------------------------------------------------- hostile text, every parser

HOSTILE_STRINGS = [
    MARKUP,
    '<a href="javascript:alert(1)">x</a> <iframe src="data:text/html,x"></iframe>',
    "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](data:text/html;base64,PHNj) [w](vbscript:x)",
    "see javascript://github.com/%0aalert(1) and file:///etc/passwd and ftp://x.org/y and //evil.org/x",
    'https://github.com/a/b"onmouseover="alert(1) https://github.com/a/b<script> https://x.org/\u202eexe.txt',
    '=HYPERLINK("http://evil") +1 -2+3 @SUM(A1) \t=1 \r=1',
    "\x00\x01\x08\x0b\x0c\x1b[31m\x7f\x85\u2028\u2029\ufeff\u200b\u202e\u2066\ufffe\uffff",
    "%s%n%x {0} {{x}} %{customdata} ${7*7} {{7*7}} #{7*7}",
    "$" * 999 + " \\" * 999 + " {" * 999 + " [" * 999 + " (" * 999,
    "**" * 5000 + "_" * 5000 + "`" * 5000 + "~" * 5000,
    "http://" * 2000 + "github.com/" * 2000 + "www." * 2000,
    "We propose " + "A" * 10_000 + " (" + "B" * 5_000 + ").",
    "\u0301" * 10_000 + "e\u0301" * 1000 + "\U0001f600" * 1000 + "\u202e" * 100,
    "ICML 2026 论文列表 " * 500 + "ا" * 1000,
]


@pytest.mark.timeout(300)  # a hang guard for catastrophic backtracking, not a speed assertion
@pytest.mark.parametrize("text", HOSTILE_STRINGS, ids=range(len(HOSTILE_STRINGS)))
def test_hostile_text_through_every_cleaner_and_extractor(text: str) -> None:
    """The derived columns of hostile text: nothing raises, links are http(s) from the text itself."""
    from dashboard.text import enrich, extract, links
    from dashboard.text.clean import clean_markup, count_words

    clean = clean_markup(text)
    assert isinstance(clean, str) and count_words(clean) >= 0
    found = links.extract_links(text)
    assert all(link["url"].startswith(("http://", "https://")) for link in found), found
    code_url, repo, status = links.code_release(found, text, record_code_url="javascript:alert(1)")
    assert code_url == "" or code_url.startswith(("http://", "https://"))
    assert isinstance(extract.method_names(text), list) and isinstance(extract.datasets(text), list)
    assert isinstance(extract.derived_title(clean, extract.method_names(text)), str)
    fields = enrich.derive_fields(text, title=text[:300], code_url="data:text/html,x")
    assert fields is not None


@pytest.mark.parametrize("text", HOSTILE_STRINGS, ids=range(len(HOSTILE_STRINGS)))
def test_hostile_text_in_every_url_key_never_breaks_the_filters(text: str) -> None:
    from dashboard.filters import URL_KEYS, highlight_spans, search_mask

    query = {key: [text, text[:50]] for key in URL_KEYS}
    filters, notices = Filters.from_query(query)
    papers = corpus.load_uploads(
        [("h.json", json.dumps([{"title": t, "abstract": t} for t in HOSTILE_STRINGS]).encode())]
    ).papers
    assert len(filters.mask(papers)) == len(papers)
    assert re.fullmatch(r"[a-z0-9_+-]+", filters.slug())
    assert isinstance(filters.describe(), str) and all(isinstance(n, str) for n in notices)
    search_mask(papers["abstract_clean"], text)
    highlight_spans(text, text)


@pytest.mark.parametrize("fmt", export.EXPORT_FORMATS)
def test_hostile_text_survives_every_export_and_reads_back(fmt: str) -> None:
    # The exporter is lossless for text it can hold (Excel drops XML-illegal characters and says so
    # on its notes sheet); the CSV-injection quote is removed again when our own export is read back.
    records = [{"id": f"h{n}", "title": t[:4000], "abstract": t} for n, t in enumerate(HOSTILE_STRINGS)]
    papers = corpus.load_uploads([("h.json", json.dumps(records).encode())]).papers
    back = corpus.load_uploads([(f"h.{fmt}", export.to_bytes(papers, fmt))]).papers
    assert back["id"].tolist() == papers["id"].tolist()
    if fmt != "xlsx":
        assert back["abstract"].tolist() == papers["abstract"].tolist()
        assert back["title"].tolist() == papers["title"].tolist()


def test_a_few_kilobytes_of_gzip_never_become_megabytes_of_records() -> None:
    # Found by bench/fuzz.py: 7.8 kB of gzip held 1.6 MB of empty CSV rows, 400,000 records, 3.6 s.
    # The ratio check now starts after 1 MiB of output (it was 16 MiB).
    data = gzip.compress(b"title,abstract\n" + b'\\"\n\n' * 400_000)
    assert len(data) < 16_000
    started = time.perf_counter()
    result = read("rows.csv.gz", data)
    print(f"\n{len(data):,} bytes of gzip refused in {time.perf_counter() - started:.3f} s")
    assert "refused as a likely decompression bomb" in result.report.skipped[0].message
    assert result.report.papers == 0


# --------------------------------------------------------------------------- every refusal says what to do

WHAT_TO_DO = re.compile(
    r"raise dashboard\.corpus\.|export|download it again|fix the file|save it again|write it again|"
    r"name one of|supported:|expected|split it|give it uncompressed|put the papers"
)
REFUSED_FILES = [
    ("binary.txt", bytes(range(256)) * 64),
    ("paper.txt", b"%PDF-1.7\n"),
    ("notgzip.json.gz", b"\x1f\x8b" + b"garbage" * 10),
    ("deep.json", b"[" * 100 + b"]" * 100),
    ("broken.json", b'[{"abstract": "x"}'),
    ("numbers.json", b"[1, 2, 3]"),
    ("object.json", b'{"count": 3}'),
    ("nocol.csv", b"title,body\nT,B\n"),
    ("corrupt.xlsx", b"PK\x03\x04" + b"\0" * 100),
    ("corrupt.parquet", b"PAR1" + b"\0" * 100),
    ("slides.pptx", b"PK\x03\x04"),
    ("bomb.txt.gz", gzip.compress(b" " * (4 << 20))),
]


@pytest.mark.parametrize("name, data", REFUSED_FILES, ids=[name for name, _ in REFUSED_FILES])
def test_every_refused_file_says_what_happened_and_what_to_do(name: str, data: bytes) -> None:
    (problem,) = read(name, data).report.skipped
    assert problem.source == name and problem.place == ""
    assert WHAT_TO_DO.search(problem.message), problem.message

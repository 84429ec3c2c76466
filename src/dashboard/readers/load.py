"""The loading entry points: paths and uploads -> format reader -> field map -> table + report."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from dashboard.readers import registry
from dashboard.readers.bounded import _GZIP_MAGIC, Content, _bounded_bytes, _gunzip, _read_file, _upload_name
from dashboard.readers.load_report import (
    FileLog,
    FileRefused,
    FileReport,
    LoadReport,
    LoadResult,
    Problem,
    Record,
)
from dashboard.readers.registry import SUPPORTED_SUFFIXES, format_of
from dashboard.readers.table import _Table
from dashboard.screen import visible_frame
from dashboard.text.enrich import add_derived_columns

_IGNORED_IN_FOLDERS = re.compile(r"^(?:readme|license|licence|changelog|notice|copying)\b", re.I)
# A file to read: (name shown as `source`, function returning its bytes); or a report made already.
_Source = tuple[str, Callable[[], bytes]] | FileReport


def load(paths: Iterable[str | Path] | str | Path, *, derive: bool = True) -> LoadResult:
    """Read corpus files and folders into one paper table; never raises for bad input.

    >>> result = load(["seeds/"])          # doctest: +SKIP
    >>> result.report.summary()            # doctest: +SKIP
    '57 papers from 3 files'

    Folders are read one level deep (sorted; hidden files and README/LICENSE files are passed over
    with a warning). `derive=False` returns the raw records without the derived columns of
    `dashboard.text.enrich` (used by the benchmark to time reading and enrichment apart).
    """
    sources: list[_Source] = []
    for path in _as_list(paths):
        sources.extend(_expand_path(Path(path)))
    return _load_sources(sources, derive)


def load_uploads(files: Iterable[tuple[str, bytes]], *, derive: bool = True) -> LoadResult:
    """Read uploaded files given as (file name, raw bytes); the name only labels and picks the format.

    >>> result = load_uploads([("icml.txt", b"ICML 2026 Papers\\n\\nWe study X.\\n")])  # doctest: +SKIP
    >>> result.papers["venue"].tolist()  # doctest: +SKIP
    ['ICML']
    """
    sources: list[_Source] = [
        (_upload_name(name, n), functools.partial(_bounded_bytes, data))
        for n, (name, data) in enumerate(files, start=1)
    ]
    return _load_sources(sources, derive)


def digest_paths(paths: Iterable[str | Path] | str | Path) -> str:
    """SHA-256 (hex) of the file names and contents a `load(paths)` would read, streamed; a cache key."""
    digest = hashlib.sha256()
    for path in _as_list(paths):
        for file in _files_of(Path(path)):
            digest.update(file.name.encode("utf-8", "surrogateescape") + b"\0")
            try:
                with file.open("rb") as handle:
                    for chunk in iter(functools.partial(handle.read, 1 << 20), b""):
                        digest.update(chunk)
            except OSError as error:
                digest.update(f"unreadable:{error.errno}".encode())
            digest.update(b"\0")
    return digest.hexdigest()


def input_files(paths: Iterable[str | Path] | str | Path) -> list[Path | FileReport]:
    """What `load(paths)` reads, in load order: each file's path, or the report of a folder's
    passed-over entries or of a missing path (so a reader can load file by file and keep the report).

    >>> input_files(["seeds/"])  # doctest: +SKIP
    [PosixPath('seeds/abstracts-a.txt'), ...]
    """
    items: list[Path | FileReport] = []
    for path in _as_list(paths):
        for source in _expand_path(Path(path)):
            if isinstance(source, FileReport):
                items.append(source)
            else:
                reader = source[1]  # _expand_path binds each file's path to _read_file
                assert isinstance(reader, functools.partial)
                items.append(reader.args[0])
    return items


def digest_uploads(files: Iterable[tuple[str, bytes]]) -> str:
    """SHA-256 (hex) of uploaded (name, bytes) pairs, in order; a cache key."""
    digest = hashlib.sha256()
    for name, data in files:
        digest.update(str(name).encode("utf-8", "surrogateescape") + b"\0")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def _as_list(paths: Iterable[str | Path] | str | Path) -> list[str | Path]:
    # A single path is a common slip for a list of paths; a str would otherwise iterate by character.
    if isinstance(paths, (str, Path)):
        return [paths]
    return list(paths)


def _files_of(path: Path) -> list[Path]:
    """The files `load` reads for one path argument (a folder: its supported files, sorted)."""
    if path.is_dir():
        return [p for p in sorted(path.iterdir()) if _wanted_in_folder(p) is None]
    return [path]


def _wanted_in_folder(path: Path) -> str | None:
    """None when a folder's entry should be read, else why it is passed over."""
    if path.name.startswith("."):
        return "hidden"
    if path.is_dir():
        return "a subfolder (folders are read one level deep; pass it as its own path to read it)"
    if not path.is_file():
        return "not a regular file"
    if format_of(path.name) is None:
        return f"unsupported file type (supported: {', '.join(SUPPORTED_SUFFIXES)})"
    if _IGNORED_IN_FOLDERS.match(path.name):
        return "looks like documentation, not abstracts (pass it as its own path to read it)"
    return None


def _printable_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (kept by Python as surrogates) shown as U+FFFD, so
    the name can go into the table, the report and an export."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _expand_path(path: Path) -> list[_Source]:
    """A path argument as the files to read, in order; a folder's or a missing path's report first."""
    name = _printable_name(path.name or str(path))
    if not path.exists():
        missing = FileLog(name)
        missing.skip("", f"no such file or folder: {path}")
        return [missing.report("missing", None, 0)]
    if not path.is_dir():
        return [(name, functools.partial(_read_file, path))]
    log = FileLog(name + "/")
    files: list[_Source] = []
    for entry in sorted(path.iterdir()):
        why = _wanted_in_folder(entry)
        shown = _printable_name(entry.name)
        if why is None:
            if shown != entry.name:
                log.warn(shown, "the file name is not UTF-8: read, under this name")
            files.append((shown, functools.partial(_read_file, entry)))
        elif why != "hidden":
            log.warn(shown, f"not read: {why}")
    if not files:
        log.warn("", f"no supported files in folder {path} (supported: {', '.join(SUPPORTED_SUFFIXES)})")
    return ([log.report("folder", None, 0)] if log.n_warnings else []) + files


def _load_sources(sources: list[_Source], derive: bool) -> LoadResult:
    table = _Table()
    reports: list[FileReport] = []
    link_files: list[int] = []  # reports of Papers with Code links files
    for source in sources:
        if isinstance(source, FileReport):  # a folder's or a missing path's report, nothing to read
            reports.append(source)
            continue
        name, read = source
        log = FileLog(name)
        fmt, encoding = format_of(name) or "unsupported", None
        before = table.n_rows
        try:
            if fmt == "unsupported":
                raise FileRefused(f"unsupported file type (supported: {', '.join(SUPPORTED_SUFFIXES)})")
            fmt, encoding, records, defaults = _parse(name, read, log)
            spreadsheet = registry.FORMATS[fmt.split(".")[0]].spreadsheet
            table.add_records(records, name, defaults, log, spreadsheet=spreadsheet)
            del records  # the parsed dicts: only the table's columns are kept
            if table.n_rows == before and not log.n_skipped and not log.n_links:
                log.skip("", "no papers found in the file")
        except FileRefused as refused:
            log.skip("", str(refused))
        if log.n_links:
            link_files.append(len(reports))
        reports.append(log.report(fmt, encoding, table.n_rows - before))
    _join_code_links(table, [reports[i] for i in link_files])
    # No bidi control or invisible character goes further than the reader: not into the derived
    # columns, the app's tables and charts, an index built from these files, nor a download.
    raw = visible_frame(table.frame(), strip=True)
    papers = add_derived_columns(raw) if derive else raw
    return LoadResult(papers=papers, report=LoadReport(reports))


def _parse(
    name: str, read: Callable[[], bytes], log: FileLog
) -> tuple[str, str | None, list[Record], dict[str, Any]]:
    """One file -> (format, encoding, records, defaults for every record), by its format's reader.

    The bytes are read here, gunzipped, and handed to the reader as a `Content`, which drops them
    once they are decoded, so a big file is held in memory once as bytes or once as text, not both
    while its records are parsed.
    """
    fmt = format_of(name) or "text"
    data: bytes | bytearray = read()
    zipped = data.startswith(_GZIP_MAGIC)
    if zipped:
        data = _gunzip(data, log)
    if not data or data.isspace():
        raise FileRefused("empty file: nothing to read" if not data else "empty file: only blank lines")
    content = Content(name, data, log)
    del data
    parsed = registry.FORMATS[fmt].read(content, log)
    label = (parsed.format or fmt) + (".gz" if zipped else "")
    return label, parsed.encoding or content.encoding, parsed.records, parsed.defaults


def _join_code_links(table: _Table, link_reports: list[FileReport]) -> None:
    """Join Papers with Code links to the papers of the whole load; say the outcome on the links file."""
    if not link_reports:
        return
    joined, unmatched = table.join_code_links()
    report = link_reports[0]
    if not joined:
        message = (
            "Papers with Code links file: no paper of this load matches its paper URLs or arXiv ids "
            "(load it together with papers-with-abstracts.json)"
        )
        report.skipped.append(Problem(report.source, "", message))
        report.n_skipped += 1
        return
    if unmatched:
        message = (
            f"{unmatched:,} code link{'s' * (unmatched != 1)} for papers that are not in this load (ignored)"
        )
        report.warnings.append(Problem(report.source, "", message))
        report.n_warnings += 1

"""One serialiser for the CLI and every download: a paper table as CSV, JSON, JSON Lines, Excel or Parquet.

>>> data = to_bytes(papers, "csv")          # doctest: +SKIP
>>> write(papers, Path("icml.xlsx"))         # doctest: +SKIP

List and dict cells (authors, links, method names...) become JSON text in CSV and Excel cells and stay
native in JSON, JSON Lines and Parquet; `dashboard.corpus.load` reads every one of these files back.

Spreadsheet safety (OWASP "CSV injection"): by default a CSV or Excel text cell that starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``, so a spreadsheet shows it
as text instead of running it as a formula (``=HYPERLINK(...)`` in an abstract would otherwise run when
the file is opened). A cell that already starts with quotes followed by one of those characters gets
one more quote, so the change is exactly reversible, and `dashboard.corpus` removes it again when it
reads one of our exports. To get the raw values: ``to_bytes(df, fmt, neutralise=False)`` /
``write(df, path, neutralise=False)``, or ``paper-dashboard parse ... --raw``. Even raw, Excel text
cells are stored as text, never as formulas. JSON, JSON Lines and Parquet are never changed.

Excel: characters XML cannot hold (control characters other than tab, newline, carriage return) are
removed, and text longer than Excel's 32,767-character cell limit is cut; both are listed on a
``notes`` sheet. CSV is written as UTF-8 with a byte order mark so Excel shows accents correctly.

Writing a file (`write`, `write_file`) goes through a temporary file in the same folder and a rename,
so it appears whole or not at all. `refused_output` says why an output must not be written where it is
asked to (one of the command's inputs, a SQLite library or cache, a file of an index); the CLI checks
every command's outputs with it before running, unless ``--force``.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import datetime as dt
import io
import json
import math
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from dashboard import screen

EXPORT_FORMATS: tuple[str, ...] = ("csv", "json", "jsonl", "xlsx", "parquet")
MIME_TYPES: dict[str, str] = {
    "csv": "text/csv",
    "json": "application/json",
    "jsonl": "application/x-ndjson",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "parquet": "application/vnd.apache.parquet",
}
SUFFIX_FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".xlsx": "xlsx",
    ".parquet": "parquet",
}
EXCEL_CELL_LIMIT = 32_767
EXCEL_SHEET = "papers"
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")

# Quotes are included so neutralising stays reversible: "'=x" becomes "''=x", never ambiguous.
_NEEDS_QUOTE = re.compile(r"'*[=+\-@\t\r]")
_FIRST_CHARS = frozenset("'=+-@\t\r")
_XML_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def neutralise_cell(text: str) -> str:
    """Quote text a spreadsheet would run as a formula (OWASP CSV injection); reversible.

    >>> neutralise_cell("=1+1"), neutralise_cell("-based"), neutralise_cell("plain")
    ("'=1+1", "'-based", 'plain')
    """
    if text and text[0] in _FIRST_CHARS and _NEEDS_QUOTE.match(text):
        return "'" + text
    return text


def format_of(path: str | Path) -> str:
    """The export format named by a file's extension; ValueError for any other extension.

    >>> format_of("out/icml.jsonl")
    'jsonl'
    """
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIX_FORMATS:
        known = ", ".join(SUFFIX_FORMATS)
        raise ValueError(f"cannot tell the format of {str(path)!r}: use one of the extensions {known}")
    return SUFFIX_FORMATS[suffix]


def to_bytes(df: pd.DataFrame, fmt: str, *, neutralise: bool = True) -> bytes:
    """The table as the bytes of a file in `fmt` (one of EXPORT_FORMATS).

    `neutralise` (CSV and Excel only) quotes cells that would run as formulas; pass False for raw values.
    """
    if fmt == "csv":
        return _csv(df, neutralise)
    if fmt == "json":
        return _json(df)
    if fmt == "jsonl":
        return _jsonl(df)
    if fmt == "xlsx":
        return _xlsx(df, neutralise)
    if fmt == "parquet":
        return _parquet(df)
    raise ValueError(f"unknown export format {fmt!r}: use one of {', '.join(EXPORT_FORMATS)}")


def write(df: pd.DataFrame, path: Path | str, *, neutralise: bool = True) -> None:
    """Write the table to `path`, the format given by its extension; the file appears whole or not at all."""
    path = Path(path)
    write_file(path, to_bytes(df, format_of(path), neutralise=neutralise))


def write_file(path: Path | str, data: bytes | str) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file and a rename: a reader, or a
    failure halfway, never sees half a file, and the old file stays until the new one is whole."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    directory = path.parent if str(path.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


SQLITE_MAGIC = b"SQLite format 3\x00"
INDEX_MANIFEST = "manifest.json"  # dashboard.index.build.MANIFEST (not imported: that module is heavy)


def refused_output(path: Path | str, inputs: Sequence[Path | str] = ()) -> str | None:
    """Why ``path`` must not be written over (None when it may): it is one of ``inputs``, a SQLite
    database (a library or a repository cache), or a file inside an index folder.

    A folder (an index rebuilt in place) is the index command's to judge; URLs are not checked.
    """
    target = Path(path)
    if "://" in str(path) or not target.exists():
        return None
    for given in inputs:
        if "://" in str(given):
            continue
        with contextlib.suppress(OSError):
            if os.path.samefile(target, given):
                return f"{path} is one of this command's inputs"
            if Path(given).is_dir() and target.resolve().is_relative_to(Path(given).resolve()):
                return f"{path} is a file of this command's input folder {given}"
    if target.is_dir():
        return None
    try:
        with open(target, "rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    except OSError:
        return None
    if head == SQLITE_MAGIC:
        return f"{path} is a SQLite database (a library or a repository cache?)"
    if (target.resolve().parent / INDEX_MANIFEST).is_file():
        return f"{path} is a file of the index in {target.resolve().parent}"
    return None


# ------------------------------------------------------------------------------- links and Markdown

_LINK_SAFE = ":/?#[]@!$&'()*+,;=%~-._"
# Every ASCII punctuation CommonMark lets a backslash escape and that can start markup inside a line.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#!|~])")
_INVISIBLE = screen.INVISIBLE  # controls, bidi overrides, zero-width characters: never in a link or line


def web_url(value: Any) -> str:
    """``value`` as a link a reader may follow: an http(s) URL with its spaces, quotes, angle brackets,
    controls and non-ASCII percent-encoded; ``""`` for anything else (``javascript:``, ``data:``...).

    >>> web_url("https://x.org/a b>c"), web_url(" JavaScript:alert(1)")
    ('https://x.org/a%20b%3Ec', '')
    """
    if not isinstance(value, str):
        return ""
    text = _INVISIBLE.sub("", value).strip()
    if not text.lower().startswith(("http://", "https://")) or len(text) <= len("https://"):
        return ""
    return quote(text, safe=_LINK_SAFE)


def markdown_text(value: Any) -> str:
    """Text as one line of Markdown that renders as itself: whitespace (newlines too) collapsed, every
    character that could start a heading, link, image, HTML or emphasis escaped.

    >>> print(markdown_text("# Title [x](javascript:y) <b>"))
    \\# Title \\[x\\]\\(javascript:y\\) \\<b\\>
    """
    text = "" if value is None or (not isinstance(value, str) and _is_missing(value)) else str(value)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(screen.visible(text).split()))


# ------------------------------------------------------------------------------------------- values


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _json_value(value: Any) -> Any:
    """A cell as a plain JSON-able Python value (lists stay lists, NA becomes None)."""
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        if type(value) is list and all(type(item) is str for item in value):
            return value  # the common case (authors, method names, datasets): nothing to convert
        return [_json_value(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _json_value(item) for key, item in value.items()}
    if _is_missing(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (dt.date, dt.datetime, pd.Timestamp)):
        return value.isoformat()
    return str(value)


def _flat_value(value: Any) -> Any:
    """A cell for CSV/Excel: lists and dicts as JSON text, missing as None, numbers and bools kept."""
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, (list, tuple, dict, np.ndarray)):
        return json.dumps(_json_value(value), ensure_ascii=False)
    return _json_value(value)


def _column_values(column: pd.Series, *, flat: bool) -> list[Any]:
    """One column as plain Python values, converted by dtype rather than cell by cell where possible."""
    values = column.tolist()
    dtype = column.dtype
    if isinstance(dtype, pd.StringDtype) or dtype.kind in "iub":
        # str, int64, Int64, bool: Python values already, with nan / pd.NA for missing
        return [
            None if value is pd.NA or (type(value) is float and value != value) else value for value in values
        ]
    if dtype.kind == "f":
        return [
            None if value is pd.NA or value != value or value in _INFINITIES else value for value in values
        ]
    convert = _flat_value if flat else _json_value
    return [convert(value) for value in values]


_INFINITIES = (math.inf, -math.inf)


def _flat_columns(df: pd.DataFrame, neutralise: bool) -> list[list[Any]]:
    columns = []
    for name in df.columns:
        values = _column_values(df[name], flat=True)
        if neutralise:
            values = [
                neutralise_cell(value) if type(value) is str and value and value[0] in _FIRST_CHARS else value
                for value in values
            ]
        columns.append(values)
    return columns


def _rows(df: pd.DataFrame, neutralise: bool) -> Iterator[tuple[Any, ...]]:
    yield tuple(str(name) for name in df.columns)
    yield from zip(*_flat_columns(df, neutralise), strict=True)


# ------------------------------------------------------------------------------------------ formats


def _csv(df: pd.DataFrame, neutralise: bool) -> bytes:
    # a byte order mark: Excel needs it to read UTF-8 (author names, CJK) correctly
    out = io.BytesIO()
    out.write(codecs.BOM_UTF8)
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    for number, row in enumerate(_rows(df, neutralise)):
        writer.writerow(row)
        if number % 2000 == 1999:  # encode as we go: one big str of all rows would be 4 bytes a character
            out.write(text.getvalue().encode("utf-8"))
            text.seek(0)
            text.truncate()
    out.write(text.getvalue().encode("utf-8"))
    return out.getvalue()


def _records(df: pd.DataFrame) -> Iterator[bytes]:
    names = [str(name) for name in df.columns]
    columns = [_column_values(df[name], flat=False) for name in df.columns]
    encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
    for row in zip(*columns, strict=True):
        yield encode(dict(zip(names, row, strict=True))).encode("utf-8")


def _json(df: pd.DataFrame) -> bytes:
    records = list(_records(df))
    if not records:
        return b"[]\n"
    return b"[\n" + b",\n".join(records) + b"\n]\n"


def _jsonl(df: pd.DataFrame) -> bytes:
    return b"".join(record + b"\n" for record in _records(df))


def _parquet(df: pd.DataFrame) -> bytes:
    import pyarrow as pa

    buffer = io.BytesIO()
    try:
        df.to_parquet(buffer, index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
        # a column pyarrow cannot type (mixed values in one object column): store it as JSON text
        fixed = df.copy()
        for name in fixed.columns:
            if fixed[name].dtype == object:
                try:
                    pa.array(fixed[name].tolist())
                except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError):
                    fixed[name] = [_flat_value(v) for v in fixed[name].tolist()]
        buffer = io.BytesIO()
        fixed.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _xlsx(df: pd.DataFrame, neutralise: bool) -> bytes:
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.cell.cell import ERROR_CODES

    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet(EXCEL_SHEET)
    notes: list[tuple[int, str, str]] = []
    # Column names as the notes sheet names them: cleaned like the cells (openpyxl refuses a control
    # character, and a name like "\x00" would otherwise fail the whole export when a note cites it)
    names = [_XML_ILLEGAL.sub("", str(name)) for name in df.columns]
    for row_number, row in enumerate(_rows(df, neutralise), start=1):
        cells: list[Any] = []
        for column, value in zip(names, row, strict=True):
            if isinstance(value, str):
                value = _excel_text(value, row_number, column, notes)
                if value.startswith("=") or value in ERROR_CODES:
                    # openpyxl would store these as a formula / an error value: keep them text
                    cell = WriteOnlyCell(sheet, value=value)
                    cell.data_type = "s"
                    value = cell
            cells.append(value)
        sheet.append(cells)
    if notes:
        notes_sheet = workbook.create_sheet("notes")
        notes_sheet.append(["row", "column", "note"])
        for note in notes:
            notes_sheet.append(list(note))
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _excel_text(text: str, row: int, column: str, notes: list[tuple[int, str, str]]) -> str:
    cleaned = _XML_ILLEGAL.sub("", text)
    if len(cleaned) != len(text):
        notes.append(
            (row, column, f"{len(text) - len(cleaned)} control characters removed (not allowed in Excel)")
        )
    if len(cleaned) > EXCEL_CELL_LIMIT:
        notes.append(
            (
                row,
                column,
                f"{len(cleaned):,} characters cut to {EXCEL_CELL_LIMIT:,} (Excel's cell limit); "
                "export CSV, JSON or Parquet for the full text",
            )
        )
        cleaned = cleaned[:EXCEL_CELL_LIMIT]
    return cleaned

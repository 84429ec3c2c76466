"""CSV and TSV with a header row; the delimiter is sniffed from the header line."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator

from dashboard.readers import limits
from dashboard.readers.bounded import Content
from dashboard.readers.fields import _with_abstract_column
from dashboard.readers.load_report import FileLog, FileRefused, Record
from dashboard.readers.registry import Parsed


def read_csv(content: Content, log: FileLog) -> Parsed:
    """The registry's reader for CSV (the delimiter sniffed from the header line)."""
    return Parsed(_delimited_records(content.text(), None, log))


def read_tsv(content: Content, log: FileLog) -> Parsed:
    """The registry's reader for TSV."""
    return Parsed(_delimited_records(content.text(), "\t", log))


def _delimited_records(text: str, delimiter: str | None, log: FileLog) -> list[Record]:
    """CSV/TSV with a header row; rows with more fields than the header are skipped.

    A quoted field with unescaped quotes inside (``"Our method is "zero-shot" in ..."``) is repaired
    where the row then has exactly the header's fields, with a warning naming the row; otherwise the
    row is skipped and reported. Text is never altered silently.
    """
    if delimiter is None:
        delimiter = _sniff_delimiter(text)
    _allow_big_csv_fields()
    raw_lines: list[str] = []
    reader = csv.reader(_recorded(csv_lines(text), raw_lines), delimiter=delimiter)
    header: list[str] | None = None
    rows: list[tuple[str, list[str]]] = []
    try:
        for row in reader:
            raw = "".join(raw_lines)
            raw_lines.clear()
            if not any(cell.strip() for cell in row):
                continue
            if header is None:
                header = [cell.strip().lstrip("\ufeff") for cell in row]
                continue
            place = f"line {reader.line_num}"
            if '"' in raw and any('"' in cell for cell in row):
                repaired = _repair_quotes(raw, delimiter)
                if repaired is None or len(repaired) > len(header):
                    log.skip(
                        place,
                        "unescaped quotes inside a quoted field, and where the field ends is ambiguous: "
                        'skipped (write inner quotes as "")',
                    )
                    continue
                if repaired != row:
                    log.warn(
                        place,
                        'unescaped quotes inside a quoted field: read as literal quotes (write them as "")',
                    )
                    row = repaired
            if len(row) > len(header):
                log.skip(
                    place,
                    f"{len(row)} fields but the header has {len(header)} (an unquoted "
                    f"{_delimiter_name(delimiter)} inside a field?)",
                )
                continue
            rows.append((place, row))
    except csv.Error as error:
        log.skip(f"line {reader.line_num}", f"unreadable CSV ({error}); the rest of the file was not read")
    if header is None:
        raise FileRefused("no header row: the file holds no data (export it again with a header)")
    header = _with_abstract_column(header, [row for _, row in rows], log)
    return [
        Record(place, position, dict(zip(header, row, strict=False)))
        for position, (place, row) in enumerate(rows, start=1)
    ]


def _recorded(lines: Iterable[str], seen: list[str]) -> Iterator[str]:
    """The lines, each also appended to `seen` (the raw text of the row being read)."""
    for line in lines:
        seen.append(line)
        yield line


def _repair_quotes(raw: str, delimiter: str) -> list[str] | None:
    """The fields of one raw row with quotes inside quoted fields taken literally.

    Inside a quoted field, ``""`` is a quote and a ``"`` followed by the delimiter or the row's end
    closes the field; any other ``"`` is an unescaped quote in the text. None when a quoted field is
    never closed.
    """
    text = raw.rstrip("\r\n")
    fields: list[str] = []
    i, size = 0, len(text)
    while True:
        if i < size and text[i] == '"':
            i += 1
            parts: list[str] = []
            while True:
                end = text.find('"', i)
                if end < 0:
                    return None  # never closed
                parts.append(text[i:end])
                following = text[end + 1 : end + 2]
                if following == '"':
                    parts.append('"')
                    i = end + 2
                elif following in (delimiter, ""):
                    i = end + 1
                    break
                else:
                    parts.append('"')
                    i = end + 1
            fields.append("".join(parts))
            if i >= size:
                break
            i += 1  # the delimiter
        else:
            end = text.find(delimiter, i)
            if end < 0:
                fields.append(text[i:])
                break
            fields.append(text[i:end])
            i = end + 1
    return fields


_LINES_WITH_ENDS = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# Line breaks of str.splitlines that are not line ends to the csv module (they may sit inside a cell).
_OTHER_LINE_BREAKS = re.compile(r"[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def csv_lines(text: str) -> Iterable[str]:
    """The lines of `text` with their ends, split where ``io.StringIO(text, newline="")`` splits.

    Not StringIO itself: it holds its text at 4 bytes a character, so a 100 MB CSV cost 400 MB
    more. ``splitlines`` is the fast path (faster than StringIO); it also splits at the line
    breaks above, so text that has one is split by a regular expression instead.
    """
    if _OTHER_LINE_BREAKS.search(text) is None:
        return text.splitlines(keepends=True)
    return (match.group() for match in _LINES_WITH_ENDS.finditer(text))


def _delimiter_name(delimiter: str) -> str:
    return {",": "comma", ";": "semicolon", "\t": "tab", "|": "bar"}.get(delimiter, repr(delimiter))


def _sniff_delimiter(text: str) -> str:
    first = next((line for line in text[: 1 << 16].splitlines() if line.strip()), "")
    counts = {d: first.count(d) for d in (",", ";", "\t", "|")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def _allow_big_csv_fields() -> None:
    # The csv module refuses fields over 128 KiB; let long cells through so the abstract-length check
    # can report them by row instead of the whole file failing.
    limit = max(limits.MAX_INPUT_BYTES, csv.field_size_limit())
    try:
        csv.field_size_limit(limit)
    except OverflowError:  # pragma: no cover - platforms with a 32-bit C long
        csv.field_size_limit(2**31 - 1)

"""Excel .xlsx read as a stream of cells, within limits, with no trust in what the file declares.

An .xlsx is a zip of XML parts. openpyxl builds every shared string as a Python object and pads
read-only rows to the sheet's *declared* dimension, so a 2.4 MB workbook of 60 million tiny strings
or a 1.7 KB one declaring ``A1:XFD1048576`` kept a server busy for minutes. This reader instead:

- checks every zip part it opens like the gzip reader checks a stream: its declared size against
  ``MAX_INPUT_BYTES`` and its ratio against ``MAX_COMPRESSION_RATIO`` before a byte is inflated, and
  the bytes really inflated as they come (a part that inflates past what it declared is cut there by
  zipfile; the count catches the rest);
- parses XML with the hardened expat setup of `dashboard.readers.safexml` (no document type
  declaration, which an .xlsx never has: a DTD is how entity expansion, "billion laughs", and
  external entities get in; no nesting deeper than ``MAX_XML_DEPTH``);
- reads the shared strings streaming, at most ``MAX_SHARED_STRINGS``;
- reads the sheet's cells where they are, one row at a time, never padded: a row is a dict of column
  number to value, and ``<dimension>`` is ignored; rows past ``MAX_ROWS`` or columns past
  ``MAX_COLUMNS`` (Excel's own maxima) are refused.
A refusal raises `Refused` with the reason, in the time it takes to read the part up to the point
where the limit is passed.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

from dashboard.readers import safexml

MAX_SHARED_STRINGS = 1_000_000
MAX_ROWS = 1_048_576  # Excel's own limits
MAX_COLUMNS = 16_384
CHUNK = 1 << 16

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PACKAGE_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_CELL_REF = re.compile(r"([A-Z]{1,3})([0-9]{1,7})$")


class Refused(Exception):
    """The workbook is not read; the message says why."""


class TooBig(Refused):
    """Refused for passing a limit (size, ratio, shared strings, rows, columns), not for its form."""


def _column_number(letters: str) -> int:
    number = 0
    for letter in letters:
        number = number * 26 + (ord(letter) - 64)
    return number


class Workbook:
    """An open .xlsx: its sheet names, and the rows of one sheet as sparse dicts."""

    def __init__(
        self,
        data: bytes | bytearray,
        *,
        max_bytes: int,
        max_ratio: float,
        size_text: Callable[[int], str],
    ) -> None:
        self.max_bytes = max_bytes
        self.max_ratio = max_ratio
        self._size_text = size_text
        try:
            self.archive = zipfile.ZipFile(io.BytesIO(data))
            self.infos = {info.filename: info for info in self.archive.infolist()}
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
            raise Refused(f"not a zip archive ({type(error).__name__}: {str(error)[:120]})") from None
        total = sum(info.file_size for info in self.infos.values())
        if total > max_bytes:
            raise TooBig(
                f"file is {size_text(total)} once unzipped, above the {size_text(max_bytes)} limit "
                "(split it, or raise dashboard.corpus.MAX_INPUT_BYTES)"
            )
        self.sheets = self._sheets()

    # ------------------------------------------------------------------ parts

    def _open(self, name: str) -> Iterator[bytes]:
        """The bytes of one part, 64 KiB at a time, within the size and ratio limits."""
        info = self.infos.get(name)
        if info is None:
            raise Refused(f"the workbook has no part {name}")
        if info.file_size > self.max_bytes:
            raise TooBig(
                f"part {name} is {self._size_text(info.file_size)} once unzipped, above the "
                f"{self._size_text(self.max_bytes)} limit (raise dashboard.corpus.MAX_INPUT_BYTES)"
            )
        self._check_ratio(name, info.file_size, info.compress_size)
        produced = 0
        try:
            with self.archive.open(info) as handle:
                while chunk := handle.read(CHUNK):
                    produced += len(chunk)
                    if produced > max(info.file_size, 0) or produced > self.max_bytes:
                        raise TooBig(f"part {name} unzips to more than it declares: refused")
                    if produced > (1 << 20):
                        self._check_ratio(name, produced, info.compress_size)
                    yield chunk
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as error:
            reason = f"{type(error).__name__}: {str(error)[:120]}"
            raise Refused(f"part {name} cannot be unzipped ({reason})") from None

    def _check_ratio(self, name: str, size: int, compressed: int) -> None:
        if size > (1 << 20) and size > self.max_ratio * max(compressed, 1):
            raise TooBig(
                f"part {name} has a compression ratio above {self.max_ratio:.0f}:1 "
                f"({self._size_text(size)} from {self._size_text(compressed)}): refused as a likely "
                "decompression bomb (raise dashboard.corpus.MAX_COMPRESSION_RATIO if the file is genuine)"
            )

    def _feed(
        self,
        name: str,
        start: Callable[[str, dict[str, str]], None],
        end: Callable[[str], None],
        text: Callable[[str], None] | None = None,
    ) -> Iterator[None]:
        """Feed one part to the hardened expat parser (see the module), one step per 64 KiB chunk."""

        def refuse(reason: str) -> Refused:
            return Refused(f"part {name} {reason}")

        parser = safexml.hardened_parser(
            start, end, text, refuse=refuse, doctype_note=", which no Excel file has"
        )
        yield from safexml.feed(parser, self._open(name), refuse)

    def _parse(
        self,
        name: str,
        start: Callable[[str, dict[str, str]], None],
        end: Callable[[str], None],
        text: Callable[[str], None] | None = None,
    ) -> None:
        for _ in self._feed(name, start, end, text):
            pass

    # ------------------------------------------------------------------ workbook structure

    def _sheets(self) -> dict[str, str]:
        """Sheet name -> part name, in workbook order."""
        targets: dict[str, str] = {}

        def rel(tag: str, attributes: dict[str, str]) -> None:
            if tag == f"{_PACKAGE_RELS}}}Relationship":
                targets[attributes.get("Id", "")] = attributes.get("Target", "")

        if "xl/_rels/workbook.xml.rels" in self.infos:
            self._parse("xl/_rels/workbook.xml.rels", rel, lambda tag: None)
        sheets: dict[str, str] = {}

        def sheet(tag: str, attributes: dict[str, str]) -> None:
            if tag == f"{_MAIN}}}sheet":
                target = targets.get(attributes.get(f"{_RELS}}}id", ""), "")
                if target:
                    absolute = target.startswith("/")
                    path = target.lstrip("/") if absolute else posixpath.normpath("xl/" + target)
                    sheets[attributes.get("name", f"Sheet{len(sheets) + 1}")] = path

        if "xl/workbook.xml" in self.infos:
            self._parse("xl/workbook.xml", sheet, lambda tag: None)
        if not sheets:
            found = sorted(n for n in self.infos if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n))
            sheets = {f"Sheet{i + 1}": n for i, n in enumerate(found)}
        if not sheets:
            raise Refused("the workbook has no sheets")
        return sheets

    def shared_strings(self) -> list[str]:
        """The shared strings, in order (rich text runs joined; phonetic guides left out)."""
        name = "xl/sharedStrings.xml"
        if name not in self.infos:
            return []
        strings: list[str] = []
        parts: list[str] = []
        state = {"in_t": False, "skip": 0}

        def too_many(n: int) -> str:
            return (
                f"{n:,} shared strings, more than the {MAX_SHARED_STRINGS:,} a workbook may have: refused "
                "(raise dashboard.readers.workbook.MAX_SHARED_STRINGS if the file is genuine)"
            )

        def start(tag: str, attributes: dict[str, str]) -> None:
            if tag == f"{_MAIN}}}sst":
                declared = attributes.get("uniqueCount", "")
                if declared.isdigit() and int(declared) > MAX_SHARED_STRINGS:
                    raise TooBig(too_many(int(declared)))
            elif tag == f"{_MAIN}}}si":
                parts.clear()
            elif tag in (f"{_MAIN}}}rPh", f"{_MAIN}}}phoneticPr"):
                state["skip"] += 1
            elif tag == f"{_MAIN}}}t" and not state["skip"]:
                state["in_t"] = True

        def end(tag: str) -> None:
            if tag == f"{_MAIN}}}si":
                if len(strings) >= MAX_SHARED_STRINGS:
                    raise TooBig(too_many(len(strings) + 1))
                strings.append("".join(parts))
            elif tag in (f"{_MAIN}}}rPh", f"{_MAIN}}}phoneticPr"):
                state["skip"] -= 1
            elif tag == f"{_MAIN}}}t":
                state["in_t"] = False

        def text(data: str) -> None:
            if state["in_t"]:
                parts.append(data)

        self._parse(name, start, end, text)
        return strings

    def rows(self, sheet: str, strings: list[str]) -> Iterator[tuple[int, dict[int, Any]]]:
        """(row number, {column number: value}) of every row with a cell, in file order.

        Values: str, int, float, bool, or None (a formula without a cached value, an error cell).
        Expat is fed one 64 KiB chunk at a time and the rows it finished are yielded in between, so a
        caller that stops reading stops the parse.
        """
        name = self.sheets[sheet]
        finished: list[tuple[int, dict[int, Any]]] = []
        row: dict[int, Any] = {}
        state: dict[str, Any] = {"row": 0, "col": 0, "type": "n", "in_v": False, "in_is_t": False}
        text_parts: list[str] = []

        def start(tag: str, attributes: dict[str, str]) -> None:
            local = tag.rpartition("}")[2]
            if local == "row":
                number = attributes.get("r")
                state["row"] = int(number) if number and number.isdigit() else state["row"] + 1
                state["col"] = 0
                if state["row"] > MAX_ROWS:
                    raise TooBig(f"row {state['row']:,} is past Excel's last row ({MAX_ROWS:,}): refused")
                row.clear()
            elif local == "c":
                reference = _CELL_REF.match(attributes.get("r", ""))
                state["col"] = _column_number(reference.group(1)) if reference else state["col"] + 1
                if state["col"] > MAX_COLUMNS:
                    raise TooBig(
                        f"column {state['col']:,} is past Excel's last column ({MAX_COLUMNS:,}): refused"
                    )
                state["type"] = attributes.get("t", "n")
                text_parts.clear()
            elif local == "v":
                state["in_v"] = True
            elif local == "t" and state["type"] == "inlineStr":
                state["in_is_t"] = True

        def end(tag: str) -> None:
            local = tag.rpartition("}")[2]
            if local == "v":
                state["in_v"] = False
            elif local == "t":
                state["in_is_t"] = False
            elif local == "c":
                value = _cell_value(state["type"], "".join(text_parts), strings)
                if value is not None:
                    row[state["col"]] = value
            elif local == "row":
                if row:
                    finished.append((state["row"], dict(row)))
                row.clear()

        def text(data: str) -> None:
            if state["in_v"] or state["in_is_t"]:
                text_parts.append(data)

        for _ in self._feed(name, start, end, text):
            if finished:
                yield from finished
                finished.clear()
        yield from finished


def _cell_value(kind: str, raw: str, strings: list[str]) -> Any:
    if kind == "s":
        try:
            return strings[int(raw)]
        except (ValueError, IndexError):
            return None
    if kind in ("inlineStr", "str"):
        return raw
    if kind == "b":
        return raw.strip() in ("1", "true")
    if kind == "e" or raw == "":
        return None
    if kind == "d":
        return raw
    try:
        number = float(raw)
    except ValueError:
        return raw
    return int(number) if number.is_integer() and abs(number) < 2**53 else number

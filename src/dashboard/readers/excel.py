"""Excel ``.xlsx`` workbooks: the sheet named ``papers``, else the first; formulas never evaluated.

The workbook is read by `dashboard.readers.workbook`, a streaming reader that trusts nothing the file declares
(zip part sizes and ratios checked before inflating, no DTDs, a cap on shared strings, rows never padded
to a declared dimension), so a hostile workbook is refused in the time it takes to reach the limit it
passes, and the other files of the load are read as usual. A formula cell gives its cached value.
"""

from __future__ import annotations

from dashboard.readers import limits, workbook
from dashboard.readers.bounded import Content, _size
from dashboard.readers.fields import _require_abstract_column
from dashboard.readers.load_report import FileLog, FileRefused, Record
from dashboard.readers.registry import Parsed


def read_xlsx(content: Content, log: FileLog) -> Parsed:
    """The registry's reader for Excel .xlsx."""
    return Parsed(_xlsx_records(content.data, log))


def _refusal(error: workbook.Refused) -> FileRefused:
    """The load report's reason: a passed limit as it is, anything else as an unreadable file."""
    if isinstance(error, workbook.TooBig):
        return FileRefused(str(error))
    return FileRefused(
        f"not a readable Excel .xlsx file ({error}): save it again from Excel as .xlsx, or export CSV"
    )


def _xlsx_records(data: bytes | bytearray, log: FileLog) -> list[Record]:
    try:
        book = workbook.Workbook(
            data,
            max_bytes=limits.MAX_INPUT_BYTES,
            max_ratio=limits.MAX_COMPRESSION_RATIO,
            size_text=_size,
        )
    except workbook.Refused as error:
        raise _refusal(error) from None
    sheet = "papers" if "papers" in book.sheets else next(iter(book.sheets))
    records: list[Record] = []
    header: list[str] | None = None
    position = 0
    try:
        strings = book.shared_strings()
        for number, cells in book.rows(sheet, strings):
            if not any(str(value).strip() for value in cells.values()):
                continue
            if header is None:
                width = max(cells)
                header = [str(cells.get(column, "")).strip() for column in range(1, width + 1)]
                _require_abstract_column(header)
                continue
            position += 1
            values = {
                name: cells.get(column)
                for column, name in enumerate(header, start=1)
                if name and column in cells
            }
            beyond = [column for column in cells if column > len(header)]
            if beyond:
                log.warn(
                    f"row {number}",
                    f"cells right of the last header column ignored ({max(beyond)} > {len(header)})",
                )
            records.append(Record(f"row {number}", position, values))
    except workbook.Refused as error:
        raise _refusal(error) from None
    if header is None:
        raise FileRefused("the sheet is empty (put the papers on the first sheet or one named papers)")
    return records

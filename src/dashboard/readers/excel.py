"""Excel ``.xlsx`` workbooks: the sheet named ``papers``, else the first; formulas never evaluated."""

from __future__ import annotations

import io
import zipfile

from dashboard.readers import limits
from dashboard.readers.bounded import _too_large
from dashboard.readers.fields import _require_abstract_column
from dashboard.readers.report import _Log, _Record, _Refused


def _xlsx_records(data: bytes | bytearray, log: _Log) -> list[_Record]:
    import openpyxl

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            size = sum(info.file_size for info in archive.infolist())
        if size > limits.MAX_INPUT_BYTES:
            raise _Refused(_too_large(size, " once unzipped"))
        # data_only: formulas give their cached value and are never evaluated
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except _Refused:
        raise
    except Exception as error:  # zipfile/openpyxl/lxml raise many types for bad bytes
        raise _Refused(
            f"not a readable Excel .xlsx file ({type(error).__name__}: {str(error)[:200]}): "
            "save it again from Excel as .xlsx, or export CSV"
        ) from None
    try:
        sheet = workbook["papers"] if "papers" in workbook.sheetnames else workbook.worksheets[0]
        records: list[_Record] = []
        header: list[str] | None = None
        position = 0
        for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
            if not any(cell is not None and str(cell).strip() for cell in row):
                continue
            if header is None:
                header = ["" if cell is None else str(cell).strip() for cell in row]
                _require_abstract_column(header)
                continue
            position += 1
            values = {name: cell for name, cell in zip(header, row, strict=False) if name}
            if any(cell is not None for cell in row[len(header) :]):
                log.warn(
                    f"row {number}",
                    f"cells right of the last header column ignored ({len(row)} > {len(header)})",
                )
            records.append(_Record(f"row {number}", position, values))
    except _Refused:
        raise
    except Exception as error:  # a damaged sheet fails while rows are read
        raise _Refused(
            f"not a readable Excel .xlsx file ({type(error).__name__}: {str(error)[:200]}): "
            "save it again from Excel as .xlsx, or export CSV"
        ) from None
    finally:
        workbook.close()
    if header is None:
        raise _Refused("the sheet is empty (put the papers on the first sheet or one named papers)")
    return records

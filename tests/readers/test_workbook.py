"""Hostile .xlsx workbooks, generated here, against the streaming reader `dashboard.readers.workbook`.

Each one (ratio bomb, shared-strings flood, declared-dimension lie, deeply nested XML, entity
expansion, external entity) is refused, or read without padding, in well under a second and far
below 200 MB; a good workbook reads like openpyxl reads it. Memory is tracemalloc's peak; the time
bound is the issue's "within 1 s", checked generously (a refusal comes before the part is read).
"""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from support.measured import in_child, measured

from dashboard.readers import workbook
from dashboard.readers.bounded import _size

MiB = 1 << 20
MAIN = b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
CONTENT_TYPES = (
    b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    b'<Default Extension="xml" ContentType="application/xml"/></Types>'
)
WORKBOOK = (
    b'<?xml version="1.0"?><workbook ' + MAIN + b' xmlns:r="http://schemas.openxmlformats.org/'
    b'officeDocument/2006/relationships"><sheets><sheet name="papers" sheetId="1" r:id="rId1"/>'
    b"</sheets></workbook>"
)
WORKBOOK_RELS = (
    b'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
    b'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
    b'2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>'
)


def _book(sheet: bytes, shared: bytes | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("xl/workbook.xml", WORKBOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", WORKBOOK_RELS)
        archive.writestr("xl/worksheets/sheet1.xml", sheet)
        if shared is not None:
            archive.writestr("xl/sharedStrings.xml", shared)
    return buffer.getvalue()


def _cell(reference: str, text: str) -> bytes:
    return b'<c r="%s" t="inlineStr"><is><t>%s</t></is></c>' % (reference.encode(), text.encode())


def _sheet(rows: bytes, before: bytes = b"", dimension: bytes = b"") -> bytes:
    return (
        b'<?xml version="1.0"?>' + before + b"<worksheet " + MAIN + b">" + dimension
        + b"<sheetData>" + rows + b"</sheetData></worksheet>"
    )  # fmt: skip


HEADER = b'<row r="1">' + _cell("A1", "title") + _cell("B1", "abstract") + b"</row>"


def _rows(n: int = 2) -> bytes:
    return b"".join(
        b'<row r="%d">' % r + _cell(f"A{r}", f"Paper {r}") + _cell(f"B{r}", f"We study graphs number {r}.")
        + b"</row>"
        for r in range(2, 2 + n)
    )  # fmt: skip


def good() -> bytes:
    return _book(_sheet(HEADER + _rows()))


def ratio_bomb() -> bytes:
    """16 MiB of tiny shared strings in about 16 kB (the issue's was 60 million strings, 412:1)."""
    body = b"<si><t>a</t></si>" * (16 * MiB // 17)
    return _book(_sheet(HEADER + _rows()), b'<?xml version="1.0"?><sst ' + MAIN + b">" + body + b"</sst>")


def strings_flood(n: int = workbook.MAX_SHARED_STRINGS + 1, declared: bool = True) -> bytes:
    """More shared strings than the limit, each different, compressing well under the ratio limit."""
    body = b"".join(b"<si><t>%07x</t></si>" % i for i in range(n))
    count = b' count="%d" uniqueCount="%d"' % (n, n) if declared else b""
    shared = b'<?xml version="1.0"?><sst ' + MAIN + count + b">" + body + b"</sst>"
    return _book(_sheet(HEADER + _rows()), shared)


def dimension_lie() -> bytes:
    """1.7 kB declaring A1:XFD1048576, one cell in the last row and column (openpyxl padded every row)."""
    far = b'<row r="1048576">' + _cell("XFD1048576", "x") + b"</row>"
    return _book(_sheet(HEADER + _rows() + far, dimension=b'<dimension ref="A1:XFD1048576"/>'))


def deep_xml(levels: int = 100_000) -> bytes:
    return _book(_sheet(HEADER + b'<row r="2">' + b"<x>" * levels + b"</x>" * levels + b"</row>"))


LAUGHS = (
    b'<!DOCTYPE worksheet [<!ENTITY a "aaaaaaaaaa">'
    + b"".join(b'<!ENTITY %c "%s">' % (98 + i, b"&%c;" % (97 + i) * 10) for i in range(9))
    + b"]>"
)


def entity_expansion() -> bytes:
    return _book(_sheet(HEADER + b'<row r="2">' + _cell("A2", "T") + _cell("B2", "&j;") + b"</row>", LAUGHS))


def external_entity() -> bytes:
    doctype = b'<!DOCTYPE worksheet [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    return _book(_sheet(HEADER + b'<row r="2">' + _cell("A2", "T") + _cell("B2", "&x;") + b"</row>", doctype))


HOSTILE: dict[str, tuple[Callable[[], bytes], str]] = {
    "ratio-bomb": (ratio_bomb, "compression ratio above 100:1"),
    "shared-strings-flood": (strings_flood, "shared strings, more than the 1,000,000 a workbook may have"),
    "deeply-nested-xml": (deep_xml, "nests XML more than 64 levels deep"),
    "entity-expansion": (entity_expansion, "declares a document type (<!DOCTYPE>)"),
    "external-entity": (external_entity, "declares a document type (<!DOCTYPE>)"),
}


def _read(data: bytes) -> list[tuple[int, dict[int, object]]]:
    book = workbook.Workbook(data, max_bytes=1 << 30, max_ratio=100, size_text=_size)
    return list(book.rows("papers", book.shared_strings()))


@pytest.mark.parametrize("case", list(HOSTILE))
@in_child
def test_a_hostile_workbook_is_refused_quickly_in_little_memory(case: str) -> None:
    make, reason = HOSTILE[case]
    data = make()
    with measured() as cost, pytest.raises(workbook.Refused, match=None) as refused:
        _read(data)
    assert reason in str(refused.value), str(refused.value)
    assert cost.seconds < 1.0  # generous: each is refused before the part is read
    assert cost.peak_bytes < 200 * MiB


def test_a_flood_that_hides_its_count_is_refused_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workbook, "MAX_SHARED_STRINGS", 20_000)
    with pytest.raises(workbook.Refused, match="20,001 shared strings, more than the 20,000"):
        _read(strings_flood(50_000, declared=False))


@in_child
def test_a_declared_dimension_is_never_trusted() -> None:
    with measured() as cost:
        rows = _read(dimension_lie())
    assert [number for number, _ in rows] == [1, 2, 3, 1_048_576]
    assert rows[-1][1] == {16_384: "x"}  # one cell, not a row of 16,384
    assert cost.seconds < 1.0 and cost.peak_bytes < 200 * MiB


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (b'<row r="1048577">' + _cell("A1048577", "x") + b"</row>", "row 1,048,577 is past Excel's last row"),
        (b'<row r="2"><c r="XFE2" t="inlineStr"><is><t>x</t></is></c></row>', "column 16,385 is past"),
    ],
)
def test_rows_and_columns_past_excels_own_limits_are_refused(rows: bytes, message: str) -> None:
    with pytest.raises(workbook.Refused, match=message):
        _read(_book(_sheet(HEADER + rows)))


def test_a_part_that_is_not_xml_or_a_file_that_is_not_a_zip_is_refused() -> None:
    with pytest.raises(workbook.Refused, match="not well-formed XML"):
        _read(_book(b"<worksheet><sheetData><row>"))
    with pytest.raises(workbook.Refused, match="not a zip archive"):
        _read(b"PK\x03\x04" + b"\0" * 100)


def test_a_good_workbook_reads_as_openpyxl_reads_it() -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["not", "this"])
    sheet = book.create_sheet("papers")
    sheet.append(["title", "abstract", "year", "score", "accepted"])
    sheet.append(["T1", "We study graphs.", 2024, 0.5, True])
    sheet.append(["T2", "=1+1", 2025, None, False])  # a formula without a cached value
    sheet.append([])
    sheet.append(["T3 \u00e9\u4e2d", 'Text with <tags> & "quotes"', 2026, -3, None])
    buffer = io.BytesIO()
    book.save(buffer)
    data = buffer.getvalue()
    opened = workbook.Workbook(data, max_bytes=1 << 30, max_ratio=100, size_text=_size)
    assert list(opened.sheets) == ["Sheet", "papers"]
    ours = [
        [row.get(column) for column in range(1, 6)]
        for _, row in opened.rows("papers", opened.shared_strings())
    ]
    theirs = [
        list(values)
        for values in openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)[
            "papers"
        ].iter_rows(values_only=True)
        if any(v is not None for v in values)
    ]
    assert ours == theirs


def test_a_load_names_each_hostile_workbook_and_reads_every_other_file(tmp_path: Path) -> None:
    # The corpus reader goes through this module: each hostile file is one skipped file with its
    # reason, and the good workbook, the lying one (read without padding) and a JSONL file all load.
    from dashboard import corpus

    for case, (make, _reason) in HOSTILE.items():
        (tmp_path / f"{case}.xlsx").write_bytes(make())
    (tmp_path / "good.xlsx").write_bytes(good())
    (tmp_path / "dimension-lie.xlsx").write_bytes(dimension_lie())
    (tmp_path / "more.jsonl").write_text('{"title": "Other", "abstract": "We study trees here."}\n')
    started = time.perf_counter()
    result = corpus.load([tmp_path])
    seconds = time.perf_counter() - started
    problems = result.report.skipped
    skipped = {Path(p.source).name: p.message for p in problems if not p.place}  # whole files
    # the lie's one far cell is a record without fields: skipped where it is, after 2 good rows
    assert [(p.source, p.place) for p in problems if p.place] == [("dimension-lie.xlsx", "row 1048576")]
    assert set(skipped) == {f"{case}.xlsx" for case in HOSTILE}
    for case, (_make, reason) in HOSTILE.items():
        assert reason in skipped[f"{case}.xlsx"], skipped[f"{case}.xlsx"]
    assert sorted(result.papers["title"]) == ["Other", "Paper 2", "Paper 2", "Paper 3", "Paper 3"]
    assert seconds < 30  # the whole folder: each refusal stops at its limit (generous on a busy machine)

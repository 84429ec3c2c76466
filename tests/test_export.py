"""Exports: every format, formula quoting (OWASP CSV injection), Excel limits, and read-back by corpus."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard import corpus, export
from dashboard.schema import CORE_COLUMNS


def table(**columns: list) -> pd.DataFrame:
    base = {
        "id": ["a", "b"],
        "title": ['=HYPERLINK("http://evil")', "Plain title"],
        "year": pd.array([2024, None], dtype="Int64"),
        "authors": [["Ann", "Bob"], []],
        "links": [[{"url": "https://github.com/a/b", "kind": "code"}], []],
        "n_words": [12, 0],
        "x": [0.5, float("nan")],
        "flag": [True, False],
    }
    base.update(columns)
    return pd.DataFrame(base)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-based methods", "'-based methods"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tTab", "'\tTab"),
        ("\rReturn", "'\rReturn"),
        ("'=already quoted", "''=already quoted"),
        ("''-two quotes", "'''-two quotes"),
        ("'plain quote", "'plain quote"),
        ("plain", "plain"),
        ("a=b", "a=b"),
        ("", ""),
        (" =leading space", " =leading space"),
    ],
)
def test_neutralise_cell(text: str, expected: str) -> None:
    assert export.neutralise_cell(text) == expected


def csv_rows(data: bytes) -> list[list[str]]:
    assert data.startswith(b"\xef\xbb\xbf")  # BOM, for Excel
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def test_csv_quotes_formulas_and_writes_lists_as_json() -> None:
    rows = csv_rows(export.to_bytes(table(), "csv"))
    assert rows[0] == ["id", "title", "year", "authors", "links", "n_words", "x", "flag"]
    assert rows[1] == [
        "a",
        '\'=HYPERLINK("http://evil")',
        "2024",
        '["Ann", "Bob"]',
        '[{"url": "https://github.com/a/b", "kind": "code"}]',
        "12",
        "0.5",
        "True",
    ]
    assert rows[2] == ["b", "Plain title", "", "[]", "[]", "0", "", "False"]


def test_csv_raw_keeps_values() -> None:
    rows = csv_rows(export.to_bytes(table(), "csv", neutralise=False))
    assert rows[1][1] == '=HYPERLINK("http://evil")'


def test_negative_numbers_are_numbers_not_quoted_text() -> None:
    rows = csv_rows(export.to_bytes(table(n_words=[-1, 3]), "csv"))
    assert [row[5] for row in rows[1:]] == ["-1", "3"]


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_json_formats_keep_lists_and_values(fmt: str) -> None:
    data = export.to_bytes(table(), fmt).decode("utf-8")
    records = json.loads(data) if fmt == "json" else [json.loads(line) for line in data.splitlines()]
    assert records[0] == {
        "id": "a",
        "title": '=HYPERLINK("http://evil")',  # never changed: JSON is not a spreadsheet
        "year": 2024,
        "authors": ["Ann", "Bob"],
        "links": [{"url": "https://github.com/a/b", "kind": "code"}],
        "n_words": 12,
        "x": 0.5,
        "flag": True,
    }
    assert records[1]["year"] is None and records[1]["x"] is None


def test_json_of_an_empty_table() -> None:
    assert json.loads(export.to_bytes(table().iloc[:0], "json")) == []
    assert export.to_bytes(table().iloc[:0], "jsonl") == b""


def test_parquet_keeps_types() -> None:
    back = pd.read_parquet(io.BytesIO(export.to_bytes(table(), "parquet")))
    assert back["authors"].map(list).tolist() == [["Ann", "Bob"], []]
    assert back["links"].iloc[0].tolist() == [{"url": "https://github.com/a/b", "kind": "code"}]
    assert back["year"].tolist()[0] == 2024 and pd.isna(back["year"].tolist()[1])


def test_parquet_falls_back_to_json_text_for_mixed_columns() -> None:
    back = pd.read_parquet(io.BytesIO(export.to_bytes(table(odd=[[1, "a"], {"k": 2}]), "parquet")))
    assert back["odd"].tolist() == ['[1, "a"]', '{"k": 2}']


def xlsx_sheets(data: bytes) -> dict[str, list[tuple]]:
    import openpyxl

    workbook = openpyxl.load_workbook(io.BytesIO(data))
    return {sheet.title: list(sheet.iter_rows(values_only=True)) for sheet in workbook.worksheets}


def test_xlsx_quotes_formulas_and_stores_raw_formulas_as_text() -> None:
    import openpyxl

    sheets = xlsx_sheets(export.to_bytes(table(), "xlsx"))
    assert list(sheets) == ["papers"]
    assert sheets["papers"][1][:4] == ("a", '\'=HYPERLINK("http://evil")', 2024, '["Ann", "Bob"]')
    raw = export.to_bytes(table(), "xlsx", neutralise=False)
    cell = openpyxl.load_workbook(io.BytesIO(raw))["papers"]["B2"]
    assert cell.value == '=HYPERLINK("http://evil")'
    assert cell.data_type == "s"  # text, not a formula, even raw


def test_xlsx_strips_illegal_characters_and_caps_long_cells_with_notes() -> None:
    long = "x" * 40_000
    sheets = xlsx_sheets(export.to_bytes(table(title=["bell\x07 and \x1bescape", long]), "xlsx"))
    assert sheets["papers"][1][1] == "bell and escape"
    assert len(sheets["papers"][2][1]) == export.EXCEL_CELL_LIMIT
    notes = sheets["notes"]
    assert notes[0] == ("row", "column", "note")
    assert notes[1][:2] == (2, "title") and "control characters removed" in notes[1][2]
    assert notes[2][:2] == (3, "title") and "40,000 characters cut to 32,767" in notes[2][2]


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("a.csv", "csv"),
        ("b.JSON", "json"),
        ("c.jsonl", "jsonl"),
        ("d.ndjson", "jsonl"),
        ("e.xlsx", "xlsx"),
        ("f.parquet", "parquet"),
    ],
)
def test_format_of(name: str, fmt: str) -> None:
    assert export.format_of(name) == fmt


@pytest.mark.parametrize("name", ["a.txt", "b", "c.xls", "d.csv.gz"])
def test_format_of_unknown_extension(name: str) -> None:
    with pytest.raises(ValueError, match="cannot tell the format"):
        export.format_of(name)


def test_unknown_format_and_mime_types() -> None:
    with pytest.raises(ValueError, match="unknown export format"):
        export.to_bytes(table(), "docx")
    assert set(export.MIME_TYPES) == set(export.EXPORT_FORMATS)


def test_write_is_atomic_and_by_extension(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    export.write(table(), target)
    assert [json.loads(line)["id"] for line in target.read_text().splitlines()] == ["a", "b"]
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]  # no temporary file left behind
    with pytest.raises(OSError):
        export.write(table(), tmp_path / "missing" / "out.csv")
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


# ------------------------------------------------------------------------- read back by the corpus

TRICKY_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff\u2028\u2029\x85")
    | st.sampled_from(
        ["=", "+", "-", "@", "'", "\t", "\n", "\r", "\x00", "\x1b", "\x85", ",", '"', ";", "[", "]", "{"]
    ),
    min_size=1,
    max_size=40,
).filter(lambda s: s.strip())
RECORD = st.fixed_dictionaries(
    {
        "title": st.one_of(st.just(""), TRICKY_TEXT),
        "abstract": TRICKY_TEXT,
        "authors": st.lists(TRICKY_TEXT.filter(lambda s: ";" not in s), max_size=3),
        "year": st.one_of(st.none(), st.integers(1990, 2030)),
        "venue": st.sampled_from(["", "ICML", "NeurIPS", "ICLR"]),
    }
)


def _comparable(papers: pd.DataFrame) -> pd.DataFrame:
    columns = list(CORE_COLUMNS)
    frame = papers[columns].reset_index(drop=True).copy()
    frame["year"] = frame["year"].astype("Int64")
    for name in frame.columns:
        if frame[name].dtype == object:
            frame[name] = frame[name].map(lambda v: json.dumps(export._json_value(v), sort_keys=True))
    return frame.astype(str)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(RECORD, min_size=1, max_size=5), fmt=st.sampled_from(export.EXPORT_FORMATS))
def test_export_then_load_gives_the_same_table(records: list[dict], fmt: str) -> None:
    # keep ids distinct and abstracts distinct so the comparison is one to one
    for n, record in enumerate(records):
        record["id"] = f"p{n}"
        record["abstract"] = f"{record['abstract']} ({n})"
    first = corpus.load_uploads([("in.json", json.dumps(records).encode())])
    assert len(first.papers) == len(records)
    back = corpus.load_uploads([(f"out.{fmt}", export.to_bytes(first.papers, fmt))])
    assert back.report.papers == len(records), back.report.to_frame()
    pd.testing.assert_frame_equal(_comparable(back.papers), _comparable(first.papers))


def test_export_then_load_the_seeds_in_every_format(seeds_dir: Path) -> None:
    papers = corpus.load([seeds_dir]).papers
    for fmt in export.EXPORT_FORMATS:
        back = corpus.load_uploads([(f"seeds.{fmt}", export.to_bytes(papers, fmt))])
        assert not back.report.skipped, fmt
        pd.testing.assert_frame_equal(_comparable(back.papers), _comparable(papers), obj=fmt)

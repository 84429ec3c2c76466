"""Corpus readers: every format, the seed layout's header rules, ids, the load report, and bad input.

Most tests read with ``derive=False`` (the readers alone); the tests of the full table go through
`dashboard.text.enrich`. Hostile files are generated in tmp_path / memory at test time, never committed.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard import corpus
from dashboard.schema import CORE_COLUMNS
from dashboard.screen import visible


def read(name: str, data: bytes | str, **kwargs) -> corpus.LoadResult:
    """Load one uploaded file without the derived columns."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return corpus.load_uploads([(name, data)], derive=False, **kwargs)


def only_file(result: corpus.LoadResult) -> corpus.FileReport:
    assert len(result.report.files) == 1
    return result.report.files[0]


ABSTRACT_A = "We propose Alpha, a method for graphs. It works well on QM9."
ABSTRACT_B = "Diffusion models are studied here. We show they sample fast."
GOOD = ("good.txt", f"ICML 2026 Papers\n\n{ABSTRACT_A}\n\n{ABSTRACT_B}\n".encode())


# --------------------------------------------------------------------------------- the seed layout

SEED_LAYOUT_CASES = [
    # (file text, expected venue, expected year, expected abstracts)
    pytest.param(
        f"ICML 2026 Papers\n\n{ABSTRACT_A}\n\n{ABSTRACT_B}\n",
        "ICML",
        2026,
        [ABSTRACT_A, ABSTRACT_B],
        id="header",
    ),
    pytest.param(f"ICML 2026 论文列表\n\n{ABSTRACT_A}\n", "ICML", 2026, [ABSTRACT_A], id="chinese-header"),
    pytest.param(
        f"NeurIPS 2024 accepted papers\n\n{ABSTRACT_A}\n", "NeurIPS", 2024, [ABSTRACT_A], id="neurips"
    ),
    pytest.param(f"ACML 2023\n\n{ABSTRACT_A}\n", "ACML", 2023, [ABSTRACT_A], id="acronym-venue"),
    pytest.param(f"Accepted papers\n\n{ABSTRACT_A}\n", "", None, [ABSTRACT_A], id="header-no-venue"),
    pytest.param(f"ICML 2021-2023 Papers\n\n{ABSTRACT_A}\n", "ICML", None, [ABSTRACT_A], id="year-range"),
    pytest.param(f"# ICLR 2025 Papers\n\n{ABSTRACT_A}\n", "ICLR", 2025, [ABSTRACT_A], id="markdown-header"),
    pytest.param(f"{ABSTRACT_A}\n\n{ABSTRACT_B}\n", "", None, [ABSTRACT_A, ABSTRACT_B], id="no-header"),
    pytest.param("We study cats\n", "", None, ["We study cats"], id="lone-short-abstract-kept"),
    pytest.param(
        f"ICML 2026 Papers\n{ABSTRACT_A}\n\n{ABSTRACT_B}",
        "ICML",
        2026,
        [ABSTRACT_A, ABSTRACT_B],
        id="glued-header",
    ),
    pytest.param(
        "Contrastive learning (CRL) underpins many modern\nfoundation models and works.\n\nSecond one.",
        "",
        None,
        ["Contrastive learning (CRL) underpins many modern foundation models and works.", "Second one."],
        id="wrapped-first-line-not-a-header",
    ),
    pytest.param(
        f"\ufeffICML 2026 Papers\r\n\r\n{ABSTRACT_A}   \r\n\r\n\r\n\r\n{ABSTRACT_B}\t\r\n",
        "ICML",
        2026,
        [ABSTRACT_A, ABSTRACT_B],
        id="bom-crlf-trailing-spaces-many-blank-lines",
    ),
    pytest.param(
        "ICML 2026 Papers\n\nWe propose a\n  wrapped abstract   \nover three lines.\n \n\t\nNext.",
        "ICML",
        2026,
        ["We propose a wrapped abstract over three lines.", "Next."],
        id="wrapped-paragraph-and-whitespace-only-lines",
    ),
    pytest.param(
        "ICML 2026 Papers\r\rOld Mac line endings.\r\rSecond.",
        "ICML",
        2026,
        ["Old Mac line endings.", "Second."],
        id="cr-only",
    ),
]


@pytest.mark.parametrize(("text", "venue", "year", "abstracts"), SEED_LAYOUT_CASES)
def test_seed_layout(text: str, venue: str, year: int | None, abstracts: list[str]) -> None:
    result = read("corpus.txt", text)
    papers = result.papers
    assert papers["abstract"].tolist() == abstracts
    assert set(papers["venue"]) == {venue}
    assert papers["year"].isna().all() if year is None else (papers["year"] == year).all()
    assert not result.report.skipped


@pytest.mark.parametrize(
    ("header", "venue", "year"),
    [
        ("ICML 2026 Papers", "ICML", 2026),
        ("ICML 2026 论文列表", "ICML", 2026),
        ("NeurIPS 2024 accepted papers", "NeurIPS", 2024),
        ("Neural Information Processing Systems 2019", "NeurIPS", 2019),
        ("NIPS 2017", "NeurIPS", 2017),
        ("ICLR.cc/2026/Conference", "ICLR", 2026),
        ("Submitted to ICLR 2026", "ICLR", 2026),
        ("AAAI-24 papers", "AAAI", None),
        ("ICML2022", "ICML", 2022),
        ("Papers 2020", "", 2020),
        ("MLSys 2024 accepted papers", "MLSys", 2024),
    ],
)
def test_venue_and_year_from_a_header(header: str, venue: str, year: int | None) -> None:
    assert corpus.venue_and_year(header) == (venue, year)


@pytest.mark.parametrize(
    ("text", "titles", "abstracts"),
    [
        (
            "# ICML 2026 Papers\n\n## Alpha\n\nFirst.\n\n## Beta\nSecond.\n",
            ["Alpha", "Beta"],
            ["First.", "Second."],
        ),
        ("## Alpha\n\nFirst.\n\nSecond, untitled.\n", ["Alpha", ""], ["First.", "Second, untitled."]),
        ("### Alpha\n\n### Beta\n\nFirst.\n", ["Beta"], ["First."]),
    ],
)
def test_markdown_headings_are_titles(text: str, titles: list[str], abstracts: list[str]) -> None:
    result = read("list.md", text)
    assert result.papers["title"].tolist() == titles
    assert result.papers["abstract"].tolist() == abstracts
    assert result.papers["position"].tolist() == list(range(1, len(abstracts) + 1))
    as_text = read("list.txt", text).papers  # outside markdown a heading line is just text
    assert len(as_text) >= len(abstracts)


def test_ids_do_not_shift_when_a_paragraph_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "MAX_ABSTRACT_CHARS", 20)
    papers = read("a.txt", "Short one.\n\nThis paragraph is far too long.\n\nShort two.").papers
    assert papers["id"].tolist() == ["a-1", "a-3"]


def test_extensionless_file_that_only_looks_like_json_is_text() -> None:
    result = read("notes", "[Draft] We study cats.\n\nSecond abstract.")
    assert result.papers["abstract"].tolist() == ["[Draft] We study cats.", "Second abstract."]
    assert "read as text" in result.report.warnings[0].message


def test_seed_position_id_and_source() -> None:
    papers = read("icml_2026.txt", GOOD[1]).papers
    assert papers["id"].tolist() == ["icml_2026-1", "icml_2026-2"]
    assert papers["source"].tolist() == ["icml_2026.txt", "icml_2026.txt"]
    assert papers["position"].tolist() == [1, 2]
    assert papers["title"].tolist() == ["", ""]  # derived later by enrich


def test_merged_paragraph_warning() -> None:
    long_a, long_b = "A" + " word" * 80 + ".", "B" + " word" * 80 + "."
    result = read("merged.txt", f"ICML 2026 Papers\n\n{long_a}\n{long_b}\n\n{ABSTRACT_A}\n")
    assert len(result.papers) == 2
    (warning,) = result.report.warnings
    assert warning.place == "paragraph 1 (line 3)"
    assert "2 abstracts merged" in warning.message


def test_seeds_folder(seeds_dir: Path) -> None:
    result = corpus.load([seeds_dir], derive=False)
    assert len(result.papers) == 57
    assert [f.papers for f in result.report.files] == [19, 19, 19]
    assert set(result.papers["venue"]) == {"ICML"} and set(result.papers["year"]) == {2026}
    assert not result.report.skipped and not result.report.warnings
    assert result.papers["id"].is_unique


# ------------------------------------------------------------------------------- record formats

RECORDS = [
    {"id": "p1", "title": "Alpha", "abstract": ABSTRACT_A, "authors": ["Ann One", "Bob Two"], "year": 2024},
    {"id": "p2", "title": "Beta", "abstract": ABSTRACT_B, "authors": ["Cy Three"], "year": 2024},
]


def _csv(rows: list[dict], delimiter: str = ",") -> bytes:
    frame = pd.DataFrame(rows)
    for column in frame:
        if frame[column].map(lambda v: isinstance(v, list)).any():
            frame[column] = frame[column].map(json.dumps)
    return frame.to_csv(index=False, sep=delimiter).encode()


def _parquet(rows: list[dict]) -> bytes:
    buffer = io.BytesIO()
    pd.DataFrame(rows).to_parquet(buffer, index=False)
    return buffer.getvalue()


def _xlsx(rows: list[list], sheet: str = "Sheet1") -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    worksheet = workbook.active
    worksheet.title = sheet
    for row in rows:
        worksheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


RECORD_FORMAT_CASES = [
    pytest.param("r.json", json.dumps(RECORDS).encode(), id="json-list"),
    pytest.param("r.json", json.dumps({"papers": RECORDS}).encode(), id="json-papers"),
    pytest.param("r.json", json.dumps({"meta": {"n": 2}, "data": RECORDS}).encode(), id="json-data"),
    pytest.param(
        "r.json",
        json.dumps({r["id"]: {k: v for k, v in r.items() if k != "id"} for r in RECORDS}).encode(),
        id="json-dict-of-records",
    ),
    pytest.param("r.jsonl", "\n".join(json.dumps(r) for r in RECORDS).encode(), id="jsonl"),
    pytest.param(
        "r.ndjson", ("\n\n".join(json.dumps(r) for r in RECORDS) + "\n").encode(), id="ndjson-blank-lines"
    ),
    pytest.param("r.json.gz", gzip.compress(json.dumps(RECORDS).encode()), id="json-gz"),
    pytest.param(
        "r.jsonl.gz", gzip.compress("\n".join(json.dumps(r) for r in RECORDS).encode()), id="jsonl-gz"
    ),
    pytest.param("r.json", "\n".join(json.dumps(r) for r in RECORDS).encode(), id="jsonl-named-json"),
    pytest.param("r.csv", _csv(RECORDS), id="csv"),
    pytest.param("r.csv", _csv(RECORDS, ";"), id="csv-semicolon"),
    pytest.param("r.tsv", _csv(RECORDS, "\t"), id="tsv"),
    pytest.param("r.csv.gz", gzip.compress(_csv(RECORDS)), id="csv-gz"),
    pytest.param("r.parquet", _parquet(RECORDS), id="parquet"),
    pytest.param(
        "r.xlsx",
        _xlsx(
            [["ID", "Title", "Abstract", "Authors", "Year"]]
            + [[r["id"], r["title"], r["abstract"], ", ".join(r["authors"]), r["year"]] for r in RECORDS]
        ),
        id="xlsx",
    ),
    pytest.param(
        "r",
        json.dumps(RECORDS).encode(),
        id="json-without-extension",
    ),
]


@pytest.mark.parametrize(("name", "data"), RECORD_FORMAT_CASES)
def test_record_formats(name: str, data: bytes) -> None:
    result = read(name, data)
    papers = result.papers
    assert papers["id"].tolist() == ["p1", "p2"]
    assert papers["title"].tolist() == ["Alpha", "Beta"]
    assert papers["abstract"].tolist() == [ABSTRACT_A, ABSTRACT_B]
    assert papers["authors"].tolist() == [["Ann One", "Bob Two"], ["Cy Three"]]
    assert papers["year"].tolist() == [2024, 2024]
    assert papers["position"].tolist() == [1, 2]
    assert not result.report.skipped


FIELD_MAPPING_CASES = [
    # (record, expected column values)
    ({"Title": "T", "Abstract": "A."}, {"title": "T", "abstract": "A."}),
    ({"paper_title": "T", "summary": "S."}, {"title": "T", "abstract": "S."}),
    ({"abstract_text": "S.", "paper_id": 17}, {"abstract": "S.", "id": "17"}),
    (
        {"abstract": "A.", "Link": "https://x.org/p", "PDF": "https://x.org/p.pdf"},
        {"url": "https://x.org/p", "pdf_url": "https://x.org/p.pdf"},
    ),
    ({"abstract": "A.", "github": "https://github.com/a/b"}, {"code_url": "https://github.com/a/b"}),
    (
        {"abstract": "A.", "code": "https://gitlab.com/a/b", "repo": "https://github.com/x/y"},
        {"code_url": "https://gitlab.com/a/b"},
    ),
    (
        {"abstract": "A.", "authors": "Ann One, Bob Two and Cy Three"},
        {"authors": ["Ann One", "Bob Two", "Cy Three"]},
    ),
    ({"abstract": "A.", "authors": "One, Ann; Two, Bob"}, {"authors": ["One, Ann", "Two, Bob"]}),
    ({"abstract": "A.", "authors": [{"name": "Ann"}, {"name": "Bob"}]}, {"authors": ["Ann", "Bob"]}),
    ({"abstract": "A.", "keywords": "graphs, diffusion"}, {"keywords": ["graphs", "diffusion"]}),
    ({"abstract": "A.", "keywords": ["a; b; c"]}, {"keywords": ["a", "b", "c"]}),
    ({"abstract": "A.", "Conference": "ICLR 2026"}, {"venue": "ICLR", "year": 2026}),
    (
        {"abstract": "A.", "venue": "Journal of Cats 2019", "year": "2020"},
        {"venue": "Journal of Cats", "year": 2020},
    ),
    ({"abstract": "A.", "year": "2021-06-01"}, {"year": 2021}),
    ({"abstract": "A.", "year": "soon"}, {"year": None}),
    ({"abstract": "A.", "forum": "abc123"}, {"id": "abc123"}),
    (
        {"abstract": "A.", "forum": "https://openreview.net/forum?id=abc"},
        {"url": "https://openreview.net/forum?id=abc", "id": "r-1"},
    ),
    (
        {
            "abstract": "A.",
            "labels": {"primary_area": "optimization", "decision": "Accept", "keywords": ["k1"]},
        },
        {"primary_area": "optimization", "decision": "Accept", "keywords": ["k1"]},
    ),
    ({"abstract": "A.", "decision": "Oral", "labels": {"decision": "Poster"}}, {"decision": "Oral"}),
    ({"abstract": "A.", "title": {"value": "Wrapped"}}, {"title": "Wrapped"}),
    ({"abstract": "A.", "id": "", "paper_id": "x9"}, {"id": "x9"}),
    ({"abstract": "  A.  ", "title": " T "}, {"abstract": "A.", "title": "T"}),
    (
        {"abstract": "A\x00B\x1b[31m.\tC\nD\r\nE\rF\x85", "title": "\x08T"},
        {"abstract": "A B [31m.\tC\nD\nE\nF", "title": "T"},
    ),
]


@pytest.mark.parametrize(("record", "expected"), FIELD_MAPPING_CASES)
def test_field_mapping(record: dict, expected: dict) -> None:
    papers = read("r.json", json.dumps([record]).encode()).papers
    row = papers.iloc[0]
    for column, value in expected.items():
        actual = row[column]
        if value is None:
            assert pd.isna(actual)
        else:
            assert actual == value, column


def openreview_note(number: int, venue: str, area: str, **content: dict) -> dict:
    note_id = f"note{number}"
    return {
        "id": note_id,
        "forum": note_id,
        "number": number,
        "cdate": 1758370688811,  # 2025-09-20: the year must come from the venue id, not this
        "domain": "ICLR.cc/2026/Conference",
        "content": {
            "title": {"value": f"Title {number}"},
            "abstract": {"value": f"Abstract number {number}."},
            "authors": {"value": ["Ann", "Bob"]},
            "keywords": {"value": ["graphs; diffusion"]},
            "pdf": {"value": f"/pdf/{number}.pdf"},
            "primary_area": {"value": area},
            "venue": {"value": venue},
            "venueid": {"value": "ICLR.cc/2026/Conference"},
            **content,
        },
    }


def test_openreview_api_v2_notes() -> None:
    notes = [
        openreview_note(1, "ICLR 2026 Poster", "optimization"),
        openreview_note(
            2, "Submitted to ICLR 2026", "generative models", code={"value": "https://github.com/a/b"}
        ),
    ]
    result = read("paper_info_api_response.json", json.dumps(notes).encode())
    papers = result.papers
    assert papers["id"].tolist() == ["note1", "note2"]
    assert papers["title"].tolist() == ["Title 1", "Title 2"]
    assert papers["url"].tolist() == [
        "https://openreview.net/forum?id=note1",
        "https://openreview.net/forum?id=note2",
    ]
    assert papers["pdf_url"].tolist() == [
        "https://openreview.net/pdf/1.pdf",
        "https://openreview.net/pdf/2.pdf",
    ]
    assert papers["decision"].tolist() == ["ICLR 2026 Poster", "Submitted to ICLR 2026"]
    assert papers["primary_area"].tolist() == ["optimization", "generative models"]
    assert papers["keywords"].tolist() == [["graphs", "diffusion"]] * 2
    assert papers["code_url"].tolist() == ["", "https://github.com/a/b"]
    assert set(papers["venue"]) == {"ICLR"} and set(papers["year"]) == {2026}


def test_openreview_v1_notes_and_object_holding_notes() -> None:
    note = {"id": "n1", "forum": "n1", "cdate": 1600000000000, "content": {"title": "T", "abstract": "A."}}
    papers = read("notes.json", json.dumps({"notes": [note], "count": 1}).encode()).papers
    assert papers[["id", "title", "abstract"]].iloc[0].tolist() == ["n1", "T", "A."]
    assert papers["year"].tolist() == [2020]  # from cdate when nothing else names a year


def test_list_of_strings_are_abstracts() -> None:
    papers = read("a.json", json.dumps([ABSTRACT_A, ABSTRACT_B]).encode()).papers
    assert papers["abstract"].tolist() == [ABSTRACT_A, ABSTRACT_B]
    assert papers["id"].tolist() == ["a-1", "a-2"]


def test_xlsx_prefers_a_papers_sheet_and_reads_formula_cells_as_values() -> None:
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.active.append(["not", "this"])
    sheet = workbook.create_sheet("papers")
    sheet.append(["title", "abstract"])
    sheet.append(["T", "=1+1"])  # a formula: read its cached value (none here), never evaluated
    sheet.append(["U", ABSTRACT_A])
    buffer = io.BytesIO()
    workbook.save(buffer)
    result = read("book.xlsx", buffer.getvalue())
    assert result.papers["title"].tolist() == ["T", "U"]
    assert result.papers["abstract"].tolist() == ["", ABSTRACT_A]
    assert [w.place for w in result.report.warnings] == ["row 2"]  # empty abstract, kept: it has a title


# ------------------------------------------------------------------------------------ ids, folders


def test_ids_unique_across_a_load() -> None:
    records = [
        {"id": "x", "abstract": "One."},
        {"id": "x", "abstract": "Two."},
        {"id": "x-2", "abstract": "Three."},
    ]
    result = corpus.load_uploads(
        [("a.json", json.dumps(records).encode()), ("a.txt", b"First.\n\nSecond."), ("sub/a.txt", b"Third.")],
        derive=False,
    )
    ids = result.papers["id"].tolist()
    assert ids == ["x", "x-2", "x-2-2", "a-1", "a-2", "a-1-2"]
    assert result.papers["id"].is_unique
    messages = [str(w) for w in result.report.warnings]
    assert "a.json record 2: id 'x' already used (a.json record 1): this paper is 'x-2'" in messages
    assert any(m.startswith("a.txt paragraph 1 (line 1): id 'a-1' already used") for m in messages)


def test_folder_reads_supported_files_sorted_and_reports_the_rest(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("Second file abstract.")
    (tmp_path / "a.jsonl").write_text(json.dumps({"abstract": "First file abstract."}))
    (tmp_path / ".hidden.txt").write_text("Hidden.")
    (tmp_path / "notes.docx").write_bytes(b"PK\x03\x04")
    (tmp_path / "README.txt").write_text("This folder holds abstracts.")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.txt").write_text("Nested.")
    result = corpus.load([tmp_path], derive=False)
    assert result.papers["source"].tolist() == ["a.jsonl", "b.txt"]
    assert not result.report.skipped
    places = {w.place: w.message for w in result.report.warnings}
    assert set(places) == {"notes.docx", "README.txt", "sub"}
    assert "unsupported file type" in places["notes.docx"]
    assert "documentation" in places["README.txt"]
    assert "subfolder" in places["sub"]


def test_several_paths_and_a_single_path(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("One.")
    (tmp_path / "b.txt").write_text("Two.")
    both = corpus.load([tmp_path / "a.txt", tmp_path / "b.txt"], derive=False)
    assert both.papers["abstract"].tolist() == ["One.", "Two."]
    single = corpus.load(tmp_path / "a.txt", derive=False)
    assert single.papers["abstract"].tolist() == ["One."]


def test_upload_names_are_labels_only() -> None:
    result = read("../../etc/passwd.txt", b"An abstract.")
    assert result.papers["source"].tolist() == ["passwd.txt"]
    assert read("C:\\Users\\me\\x.txt", b"An abstract.").papers["source"].tolist() == ["x.txt"]
    assert read("", b"An abstract.").papers["source"].tolist() == ["upload-1"]


# ---------------------------------------------------------------------------------------- bad input


def _gzip_bomb(mebibytes: int, byte: bytes = b" ") -> bytes:
    # concatenated gzip members: a valid .gz that expands 1000:1, cheap to build
    return gzip.compress(byte * (1 << 20), compresslevel=9) * mebibytes


BAD_INPUT_CASES = [
    # (file name, bytes, severity, place, words in the message)
    ("empty.txt", b"", "skipped", "", "empty file"),
    ("blank.json", b"   \n\n  ", "skipped", "", "empty file"),
    ("header_only.txt", b"NeurIPS 2024 accepted papers\n\n", "skipped", "", "only a header line"),
    ("binary.txt", bytes(range(256)) * 64, "skipped", "", "binary file"),
    ("paper.txt", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "skipped", "", "looks like a PDF"),
    (
        "cp1252.txt",
        "Na\u00efve Bayes \u2013 r\u00e9sum\u00e9.".encode("cp1252"),
        "warning",
        "",
        "read as cp1252",
    ),
    ("latin1.txt", b"Caf\xe9 \x81 abstract.", "warning", "", "read as latin-1"),
    (
        "cp1252.jsonl",
        b'{"abstract": "Fine."}\n{"abstract": "Caf\xe9 au lait."}\n',
        "warning",
        "line 2",
        "read as cp1252",
    ),
    ("utf16.txt", "ICML 2026 Papers\n\nAn abstract.".encode("utf-16"), "warning", "", "UTF-16"),
    ("nocol.csv", b"title,body\nT,B\n", "skipped", "", "no abstract column"),
    (
        "extra.csv",
        b"title,abstract\nT,A.\nU,B.,extra\nV,C.\n",
        "skipped",
        "line 3",
        "3 fields but the header has 2",
    ),
    ("numbers.json", b"[1, 2, 3]", "skipped", "", "not paper records"),
    ("object.json", b'{"count": 3, "name": "x"}', "skipped", "", "not paper records"),
    ("string.json", b'"just text"', "skipped", "", "not paper records"),
    ("broken.json", b'[{"abstract": "x"}', "skipped", "", "invalid JSON at line 1"),
    (
        "mixed.json",
        b'[{"abstract": "A."}, 7]',
        "skipped",
        "record 2",
        "a number where a paper record was expected",
    ),
    ("fields.json", b'[{"abstract": "A."}, {"foo": 1}]', "skipped", "record 2", "no title or abstract"),
    (
        "controls.json",
        b'[{"abstract": "A."}, {"title": "\\b", "abstract": "\\u0000"}]',
        "skipped",
        "record 2",
        "no title or abstract",
    ),
    ("lines.jsonl", b'{"abstract": "A."}\n{"abstract": \n', "skipped", "line 2", "invalid JSON"),
    (
        "trunc.jsonl.gz",
        gzip.compress(b'{"abstract": "A."}\n' * 2000 + bytes(range(32, 127)) * 400)[:-40],
        "warning",
        "",
        "truncated",
    ),
    ("notgzip.json.gz", b"\x1f\x8b" + b"garbage" * 10, "skipped", "", "not a valid gzip file"),
    ("bomb.txt.gz", lambda: _gzip_bomb(1100), "skipped", "", "decompression bomb"),
    ("zeros.jsonl.gz", lambda: _gzip_bomb(1100, b"\0"), "skipped", "", "decompression bomb"),
    ("deep.json", b"[" * 200_000 + b"]" * 200_000, "skipped", "", "nested more than 64 levels"),
    (
        "deep.jsonl",
        b'{"abstract": "A."}\n' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"\n",
        "skipped",
        "line 2",
        "nested more than 64",
    ),
    ("blank_lines.txt", lambda: b"\n" * 200_000, "skipped", "", "only blank lines"),
    ("words.txt", lambda: b"word\n" * 1_000_000, "skipped", "paragraph 1 (line 1)", "over 1,000,000 lines"),
    (
        "huge.txt",
        lambda: b"ICML 2026 Papers\n\n" + b"word " * (10 << 20) + b"\n\nA real abstract.\n",
        "skipped",
        "paragraph 1 (line 3)",
        "more than the 100,000",
    ),
    (
        "long.json",
        json.dumps([{"abstract": "A."}, {"abstract": "x" * 100_001}]).encode(),
        "skipped",
        "record 2",
        "more than the 100,000",
    ),
    (
        "title.json",
        json.dumps([{"abstract": "A.", "title": "t" * 6000}]).encode(),
        "warning",
        "record 1",
        "title is 6,000 characters",
    ),
    (
        "dupes.txt",
        b"Same abstract.\n\nSame   abstract.\n",
        "warning",
        "paragraph 2 (line 3)",
        "same abstract as dupes.txt paragraph 1",
    ),
    ("empty_abstract.json", b'[{"title": "T", "abstract": ""}]', "warning", "record 1", "empty abstract"),
    ("corrupt.xlsx", b"PK\x03\x04" + b"\0" * 100, "skipped", "", "not a readable Excel"),
    ("corrupt.parquet", b"PAR1" + b"\0" * 100, "skipped", "", "not a readable Parquet"),
    ("slides.pptx", b"PK\x03\x04", "skipped", "", "unsupported file type"),
]


@pytest.mark.parametrize(
    ("name", "data", "severity", "place", "words"), BAD_INPUT_CASES, ids=[c[0] for c in BAD_INPUT_CASES]
)
def test_bad_input_is_reported_and_the_rest_still_loads(
    name: str, data: bytes | Callable[[], bytes], severity: str, place: str, words: str
) -> None:
    if callable(data):  # the big ones are made when the test runs, not when tests are collected
        data = data()
    result = corpus.load_uploads(
        [GOOD, (name, data), ("good.jsonl", b'{"abstract": "From JSON Lines."}')], derive=False
    )
    good, bad, jsonl = result.report.files
    problems = bad.skipped if severity == "skipped" else bad.warnings
    assert any(p.source == name and p.place == place and words in p.message for p in problems), problems
    assert (good.papers, jsonl.papers) == (2, 1)
    assert not good.skipped and not jsonl.skipped
    assert result.papers["abstract"].iloc[:2].tolist() == [ABSTRACT_A, ABSTRACT_B]
    assert "From JSON Lines." in result.papers["abstract"].tolist()


@pytest.mark.parametrize("missing", ["nope.txt", "nope.docx", "nope"])
def test_missing_path_is_skipped(missing: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("One.")
    result = corpus.load([tmp_path / missing, tmp_path / "a.txt"], derive=False)
    (problem,) = result.report.skipped
    assert (problem.source, problem.place) == (missing, "")
    assert problem.message == f"no such file or folder: {tmp_path / missing}"
    assert [f.format for f in result.report.files] == ["missing", "text"]
    assert result.papers["abstract"].tolist() == ["One."]


def test_truncated_gzip_keeps_what_came_before() -> None:
    lines = b"".join(
        json.dumps({"abstract": f"Abstract {i} " + "x" * (i % 97)}).encode() + b"\n" for i in range(3000)
    )
    data = gzip.compress(lines)
    result = read("cut.jsonl.gz", data[: len(data) // 2])
    report = only_file(result)
    assert 0 < report.papers < 3000
    assert any("truncated" in w.message for w in report.warnings)
    assert len(report.skipped) <= 1  # at most the one record cut in half
    assert result.papers["abstract"].iloc[0] == "Abstract 0"


def test_size_limits_are_module_constants(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "MAX_INPUT_BYTES", 1000)
    result = corpus.load_uploads(
        [("big.txt", b"x. " * 500), ("big.jsonl.gz", gzip.compress(b"y" * 2000))], derive=False
    )
    big, gz = result.report.files
    assert "above the 1000 bytes limit" in big.skipped[0].message
    assert "decompresses to more than the 1000 bytes limit" in gz.skipped[0].message
    monkeypatch.setattr(corpus, "MAX_ABSTRACT_CHARS", 10)
    assert read("a.txt", b"short.\n\nthis one is too long.").papers["abstract"].tolist() == ["short."]


def test_problem_lists_are_capped_with_a_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "MAX_PROBLEMS_PER_FILE", 5)
    result = read("bad.jsonl", b"{oops\n" * 12 + b'{"abstract": "fine."}\n')
    report = only_file(result)
    assert report.papers == 1
    assert len(report.skipped) == 6
    assert report.skipped[-1].message == "... and 7 more skipped"
    assert report.n_skipped == 12
    assert result.report.summary() == "1 paper from 1 file; 12 skipped"


# ------------------------------------------------------------------------------------------- report


def test_report_summary_and_frame() -> None:
    result = corpus.load_uploads([GOOD, ("bad.json", b"[1]"), ("dupes.txt", b"Same.\n\nSame.")], derive=False)
    report = result.report
    assert report.papers == 4
    assert report.summary() == "4 papers from 3 files; 1 skipped; 1 warning"
    frame = report.to_frame()
    assert frame.columns.tolist() == ["source", "severity", "place", "message"]
    assert frame[["source", "severity", "place"]].values.tolist() == [
        ["bad.json", "skipped", ""],
        ["dupes.txt", "warning", "paragraph 2 (line 3)"],
    ]
    assert [f.format for f in report.files] == ["text", "json", "text"]
    assert str(report.skipped[0]).startswith("bad.json: JSON holds a list of 1 values")


def test_empty_load() -> None:
    result = corpus.load_uploads([], derive=False)
    assert len(result.papers) == 0
    assert result.report.summary() == "0 papers from 0 files"


# ------------------------------------------------------------------------------------------- digests


def test_digests_follow_names_and_contents(tmp_path: Path) -> None:
    files = [("a.txt", b"One."), ("b.txt", b"Two.")]
    assert corpus.digest_uploads(files) == corpus.digest_uploads(list(files))
    assert corpus.digest_uploads(files) != corpus.digest_uploads([("a.txt", b"One!"), ("b.txt", b"Two.")])
    assert corpus.digest_uploads(files) != corpus.digest_uploads([("c.txt", b"One."), ("b.txt", b"Two.")])
    assert corpus.digest_uploads([("a", b"bc")]) != corpus.digest_uploads([("ab", b"c")])
    for name, data in files:
        (tmp_path / name).write_bytes(data)
    before = corpus.digest_paths([tmp_path])
    assert before == corpus.digest_paths([tmp_path / "a.txt", tmp_path / "b.txt"])
    (tmp_path / "b.txt").write_bytes(b"Changed.")
    assert corpus.digest_paths([tmp_path]) != before
    assert len(before) == 64


# ---------------------------------------------------------------------------------- the full table


def test_full_table_has_the_schema_columns(seeds_dir: Path) -> None:
    papers = corpus.load([seeds_dir]).papers
    assert list(papers.columns[: len(CORE_COLUMNS)]) == list(CORE_COLUMNS)
    assert len(papers) == 57
    assert papers["title"].str.len().gt(0).all()
    assert papers["title_is_derived"].all()


def test_full_table_of_an_empty_or_failed_load() -> None:
    papers = corpus.load_uploads([("x.json", b"[1]")]).papers
    assert len(papers) == 0
    assert set(CORE_COLUMNS) <= set(papers.columns)


# ------------------------------------------------------------------------------------- properties

SAFE_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="\ufeff"),
    min_size=1,
    max_size=60,
).filter(lambda s: visible(s).strip())  # text a reader can see (invisible characters are removed)
NAMES = st.sampled_from(
    ["a.txt", "b.md", "c", "d.json", "e.jsonl", "f.csv", "g.tsv", "h.parquet", "i.xlsx", "j.json.gz", "k.zip"]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAMES, data=st.binary(max_size=2000))
def test_load_uploads_never_raises_on_bytes(name: str, data: bytes) -> None:
    result = corpus.load_uploads([(name, data)])
    assert len(result.papers) == result.report.papers


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAMES, text=st.text(max_size=2000))
def test_load_uploads_never_raises_on_text(name: str, text: str) -> None:
    result = corpus.load_uploads([(name, text.encode("utf-8", "surrogatepass"))])
    assert len(result.papers) == result.report.papers


@settings(max_examples=100, deadline=None)
@given(
    records=st.lists(
        st.dictionaries(
            st.sampled_from(
                [
                    "title",
                    "abstract",
                    "Abstract",
                    "summary",
                    "id",
                    "year",
                    "authors",
                    "labels",
                    "content",
                    "url",
                    "venue",
                ]
            ),
            st.recursive(
                st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
                lambda children: (
                    st.lists(children, max_size=3)
                    | st.dictionaries(st.text(max_size=5), children, max_size=3)
                ),
                max_leaves=8,
            ),
        ),
        max_size=8,
    ),
    fmt=st.sampled_from(["json", "jsonl"]),
)
def test_arbitrary_json_records_never_raise(records: list, fmt: str) -> None:
    data = json.dumps(records) if fmt == "json" else "\n".join(json.dumps(r) for r in records)
    result = corpus.load_uploads([(f"r.{fmt}", data.encode())])
    assert len(result.papers) == result.report.papers


@settings(max_examples=150, deadline=None)
@given(
    paragraphs=st.lists(st.lists(SAFE_TEXT, min_size=1, max_size=3), min_size=1, max_size=12),
    separators=st.lists(
        st.sampled_from(["\n\n", "\n\n\n", "\n  \n", "\r\n\r\n", "\n\t\n\n"]), min_size=12, max_size=12
    ),
    header=st.sampled_from(
        ["ICML 2026 Papers", "ICML 2026 论文列表", "NeurIPS 2024 accepted papers", "KDD 2023"]
    ),
)
def test_papers_are_the_non_empty_paragraphs_after_the_header(
    paragraphs: list[list[str]], separators: list[str], header: str
) -> None:
    text = header
    for lines, separator in zip(paragraphs, separators, strict=False):
        text += separator + "\n".join(lines)
    result = read("corpus.txt", text)
    expected = [visible(" ".join(line.strip() for line in lines)) for lines in paragraphs]
    assert result.papers["abstract"].tolist() == expected
    assert result.papers["position"].tolist() == list(range(1, len(paragraphs) + 1))


def test_warnings_past_the_kept_ones_are_counted_without_their_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A million equal paragraphs formatted a duplicate-abstract message for each (issue 56)."""
    from dashboard.readers import load_report

    made: list[str] = []
    real_warn = load_report.FileLog.warn

    def warn(self: load_report.FileLog, place: str, message: object) -> None:
        real_warn(self, place, (lambda: made.append(place) or message()) if callable(message) else message)

    monkeypatch.setattr(load_report.FileLog, "warn", warn)
    path = tmp_path / "same.txt"
    path.write_text("# One word a paragraph\n\n" + "\n\n".join(["w"] * 500) + "\n", encoding="utf-8")
    report = corpus.load([path]).report.files[0]
    kept = load_report.limits.MAX_PROBLEMS_PER_FILE
    assert report.n_warnings == 499 and len(made) == kept  # 499 duplicates; only the kept ones written
    assert report.warnings[0].message.startswith("same abstract as same.txt paragraph 1")
    assert report.warnings[-1].message == f"... and {499 - kept:,} more warnings"

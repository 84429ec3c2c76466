"""ACL Anthology XML (`dashboard.readers.acl_anthology`), end to end, and the registry it came in through.

The fixtures (tests/fixtures/formats/2023.acl.xml, P19.xml) are written from the documented schema of
acl-org/acl-anthology's data/xml files, with invented texts. Hostile XML is generated here: it must be
refused by the shared hardened parser (`dashboard.readers.safexml`), named with its file and line.
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dashboard import corpus
from dashboard.readers import registry

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "formats"
ACL = FIXTURES / "2023.acl.xml"
HEAD = b"<?xml version='1.0' encoding='UTF-8'?>\n"


def paper_xml(number: int, title: str, abstract: str | None = None, extra: str = "") -> str:
    body = f"<title>{title}</title><author><first>Ann</first><last>One</last></author>"
    if abstract is not None:
        body += f"<abstract>{abstract}</abstract>"
    return f'<paper id="{number}">{body}{extra}</paper>\n'


def collection(papers: str, *, collection_id: str = "2021.emnlp", meta: str = "") -> bytes:
    return (
        HEAD
        + (
            f'<collection id="{collection_id}">\n<volume id="main">\n<meta>{meta}</meta>\n{papers}</volume>\n'
            "</collection>\n"
        ).encode()
    )


def upload(name: str, data: bytes) -> corpus.LoadResult:
    return corpus.load_uploads([(name, data)])


def papers_of(result: corpus.LoadResult) -> pd.DataFrame:
    return result.papers.set_index("id")


# --------------------------------------------------------------------- the schema's fields


def test_each_paper_is_read_with_its_fields() -> None:
    result = corpus.load([ACL])
    papers = papers_of(result)
    assert list(papers.index) == ["2023.acl-long.1", "2023.acl-long.2", "2023.acl-short.3"]  # no front matter
    first = papers.loc["2023.acl-long.1"]
    assert first["title"] == "SparseGraph: Message Passing for NER"  # <fixed-case> kept as its text
    assert list(first["authors"]) == ["Ann One", "Bob Two", "Cy Three"]
    assert list(first["affiliations"]) == ["Uni A", "Lab B"]
    assert (first["venue"], first["year"]) == ("ACL", 2023)
    assert first["paper_url"] == "https://aclanthology.org/2023.acl-long.1"
    assert first["pdf_url"] == "https://aclanthology.org/2023.acl-long.1.pdf"
    assert (first["code_url"], first["code_status"]) == ("https://github.com/ann/sparsegraph", "released")
    # markup inside the abstract: <i> as its text, <tex-math> as $...$, rendered in abstract_clean
    assert "study sparse message passing" in first["abstract"]
    assert "$O(n \\log n)$" in first["abstract"]
    assert "O(n log n)" in first["abstract_clean"] and "$" not in first["abstract_clean"]
    assert result.report.files[0].format == "acl-anthology"
    assert result.report.files[0].venue_year_from == {"record": 3}


def test_a_paper_without_a_url_gets_the_id_the_anthology_gives_it() -> None:
    short = papers_of(corpus.load([ACL])).loc["2023.acl-short.3"]
    assert short["title"] == "Short and Bold: Tokenisation for Code-Switched Text"
    assert list(short["authors"]) == ["Eve Five", "Mononym"]  # a <last> alone is the whole name
    assert short["paper_url"] == "https://aclanthology.org/2023.acl-short.3"


def test_a_paper_without_an_abstract_is_kept_with_a_warning_as_in_every_format() -> None:
    result = corpus.load([ACL])
    paper = papers_of(result).loc["2023.acl-long.2"]
    assert not paper["has_abstract"] and paper["title"] == "A Paper Without an Abstract"
    assert [(w.place, w.message) for w in result.report.warnings] == [
        ("paper 2023.acl-long.2 (line 29)", "empty abstract (kept: it has a title)")
    ]


def test_an_old_collection_takes_its_venue_from_its_id_letter_and_its_year_from_the_meta() -> None:
    paper = papers_of(corpus.load([FIXTURES / "P19.xml"])).loc["P19-1001"]
    assert (paper["venue"], paper["year"]) == ("ACL", 2019)
    assert paper["paper_url"] == "https://aclanthology.org/P19-1001"


@pytest.mark.parametrize(
    ("collection_id", "meta", "venue", "year"),
    [
        ("2021.emnlp", "<year>2021</year><venue>emnlp</venue>", "EMNLP", 2021),
        # a workshop: its own venue, not the "ws" umbrella; a name that is not the id upper-cased
        ("2022.bionlp", "<year>2022</year><venue>ws</venue><venue>bionlp</venue>", "BioNLP", 2022),
        # no <year> in the meta: the collection id's
        ("2020.findings", "<venue>findings</venue>", "Findings", 2020),
        # no <venue>: the booktitle names it
        ("2019.x", "<booktitle>Empirical Methods in Natural Language Processing</booktitle>", "EMNLP", 2019),
    ],
)  # fmt: skip
def test_venue_and_year_come_from_the_volume_then_the_collection_id(
    collection_id: str, meta: str, venue: str, year: int
) -> None:
    data = collection(paper_xml(1, "T", "We study X."), collection_id=collection_id, meta=meta)
    paper = upload("volume.xml", data).papers.iloc[0]
    assert (paper["venue"], paper["year"]) == (venue, year)


def test_old_workshop_ids_are_built_as_the_anthology_builds_them() -> None:
    data = HEAD + b'<collection id="W19"><volume id="12"><meta><year>2019</year></meta>'
    data += paper_xml(3, "Workshop paper", "We study Y.").encode() + b"</volume></collection>"
    assert upload("W19.xml", data).papers["id"].tolist() == ["W19-1203"]


def test_gzip_and_utf16_files_read_the_same() -> None:
    plain = corpus.load([ACL]).papers[["id", "title", "abstract"]]
    zipped = upload("2023.acl.xml.gz", gzip.compress(ACL.read_bytes()))
    assert zipped.report.files[0].format == "acl-anthology.gz"
    pd.testing.assert_frame_equal(zipped.papers[["id", "title", "abstract"]], plain)
    text = ACL.read_text(encoding="utf-8").replace("encoding='UTF-8'", "encoding='UTF-16'")
    utf16 = upload("2023.acl.xml", text.encode("utf-16"))
    pd.testing.assert_frame_equal(utf16.papers[["id", "title", "abstract"]], plain)


# --------------------------------------------------------------------- hostile and broken files


def test_an_external_entity_is_refused_and_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    data = (
        HEAD
        + (
            f'<!DOCTYPE collection [<!ENTITY x SYSTEM "file://{secret}">]>\n'
            '<collection id="2023.acl"><volume id="long"><meta/>'
            '<paper id="1"><title>T</title><abstract>&x;</abstract></paper></volume></collection>'
        ).encode()
    )
    result = upload("xxe.xml", data)
    assert result.report.papers == 0
    (problem,) = result.report.skipped
    assert problem.source == "xxe.xml"
    assert "declares a document type (<!DOCTYPE>), which no Anthology file has: refused" in problem.message
    assert "(line 2)" in problem.message
    assert "TOP-SECRET-VALUE" not in str(result.papers.to_dict()) + str(result.report.to_frame().to_dict())


def test_billion_laughs_is_refused_before_an_entity_is_expanded() -> None:
    entities = (
        '<!ENTITY a "'
        + "a" * 100
        + '">'
        + "".join(f'<!ENTITY {chr(98 + n)} "{("&" + chr(97 + n) + ";") * 10}">' for n in range(9))
    )
    data = (
        HEAD
        + (
            f"<!DOCTYPE collection [{entities}]>"
            '<collection id="2023.acl"><volume id="long"><meta/>'
            '<paper id="1"><title>T</title><abstract>&j;</abstract></paper></volume></collection>'
        ).encode()
    )
    result = upload("laughs.xml", data)
    assert result.report.papers == 0
    assert "declares a document type" in result.report.skipped[0].message


def test_nesting_past_the_depth_limit_is_refused() -> None:
    data = collection(paper_xml(1, "T", "<i>" * 80 + "deep" + "</i>" * 80))
    result = upload("deep.xml", data)
    assert result.report.papers == 0
    assert "nests XML more than 64 levels deep: refused" in result.report.skipped[0].message


def test_malformed_xml_keeps_the_papers_before_it_and_names_the_line() -> None:
    good = paper_xml(1, "Good paper", "We study graphs.")
    broken = '<paper id="2"><title>Broken</titel></paper>\n'
    result = upload("cut.xml", collection(good + broken + paper_xml(3, "After", "We study images.")))
    assert result.papers["title"].tolist() == ["Good paper"]
    (problem,) = result.report.skipped
    assert (problem.source, problem.place) == ("cut.xml", "line 6")
    assert problem.message.startswith("the file is not well-formed XML (mismatched tag: line 6")
    assert problem.message.endswith("the papers before it are kept, none after")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"<rss><channel/></rss>", "not an ACL Anthology file: its root element is <rss>"),
        (b"this is not XML at all", "the file is not well-formed XML (syntax error: line 1"),
        (b"%PDF-1.7 not xml", "binary file (looks like a PDF)"),
        (b"<collection id='x'></collection>", "no papers found in the file"),
    ],
)
def test_a_file_that_is_not_an_anthology_file_is_refused_saying_why(data: bytes, message: str) -> None:
    result = upload("other.xml", data)
    assert result.report.papers == 0
    assert [p.source for p in result.report.skipped] == ["other.xml"]
    assert message in result.report.skipped[0].message


def test_a_paper_with_neither_title_nor_abstract_is_skipped_by_its_place() -> None:
    data = collection(
        '<paper id="1"><author><last>One</last></author></paper>\n' + paper_xml(2, "Kept", "X.")
    )
    result = upload("2021.emnlp.xml", data)
    assert result.papers["id"].tolist() == ["2021.emnlp-main.2"]
    assert [(p.place, p.message) for p in result.report.skipped] == [
        ("paper 2021.emnlp-main.1 (line 5)", "no title or abstract")
    ]


# --------------------------------------------------------------------- the registry and the seams


def test_every_registry_entry_names_a_reader_that_exists() -> None:
    for entry in registry.FORMATS.values():
        module_name, function_name = entry.reader.split(":")
        module = __import__(module_name, fromlist=[function_name])
        assert callable(getattr(module, function_name)), entry.name
    suffixes = [suffix for entry in registry.FORMATS.values() for suffix in entry.suffixes]
    assert len(suffixes) == len(set(suffixes))  # one format per ending


def test_the_lists_people_read_are_written_from_the_registry() -> None:
    from dashboard.cli.main import build_parser

    names = registry.format_names()
    assert all(entry.label in names for entry in registry.FORMATS.values())
    assert names.endswith(" or ACL Anthology XML")
    parse_help = build_parser()._subparsers._group_actions[0].choices["parse"].format_help()  # type: ignore[union-attr]
    flat = " ".join(parse_help.split())
    assert all(suffix in flat for entry in registry.FORMATS.values() for suffix in entry.suffixes if suffix)
    binary = upload("x.txt", b"\x00\x01binary")
    assert binary.report.skipped[0].message.endswith(names)
    folder = corpus.load([ROOT / "docs" / "reference"])  # a folder of .md: read, nothing refused
    assert not any("unsupported" in p.message for p in folder.report.skipped)
    assert ".xml" in corpus.SUPPORTED_SUFFIXES


def test_the_cli_parses_an_anthology_file(tmp_path: Path) -> None:
    out = tmp_path / "papers.csv"
    done = subprocess.run(
        [sys.executable, "-m", "dashboard.cli.main", "parse", str(ACL), "--out", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "3 papers from 1 file" in done.stderr
    assert pd.read_csv(out)["id"].tolist() == ["2023.acl-long.1", "2023.acl-long.2", "2023.acl-short.3"]


def test_the_app_reads_an_uploaded_anthology_file(monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.switch_page("src/dashboard/app_pages/papers.py")
    at.run()
    uploader = at.sidebar.get("file_uploader")[0]
    assert registry.format_names_sentence() in uploader.proto.help
    uploader.set_value(("2023.acl.xml", ACL.read_bytes(), "application/xml"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    counts = [
        m.value for m in at.sidebar.markdown if re.fullmatch(r"\*\*[\d,]+ of [\d,]+ papers\*\*", m.value)
    ]
    assert counts == ["**3 of 3 papers**"]
    assert sorted(at.main.dataframe[0].value["title"]) == [
        "A Paper Without an Abstract",
        "Short and Bold: Tokenisation for Code-Switched Text",
        "SparseGraph: Message Passing for NER",
    ]

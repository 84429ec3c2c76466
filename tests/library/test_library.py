"""The library store: lists, notes and tags in a real SQLite file; exports read back; migrations;
corrupt and locked files; ids surviving a re-parse; 20 writers at once; topic names; the CLI."""

from __future__ import annotations

import io
import multiprocessing
import os
import sqlite3
from pathlib import Path

import bibtexparser
import pandas as pd
import pytest
from bibtexparser import middlewares
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard import corpus
from dashboard.cli import main as cli
from dashboard.library import store as library
from dashboard.library.store import Library, LibraryError

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def seeds() -> pd.DataFrame:
    return corpus.load([REPO / "seeds"]).papers


def papers_with_metadata() -> pd.DataFrame:
    """Papers with every field an export carries, and the characters BibTeX must escape."""
    return pd.DataFrame(
        {
            "id": ["p1", "p2", "p3"],
            "title": ["Graphs & 50% of nets_v2", "Müller's {Robust} $x$ Learning", "Graphs for all"],
            "abstract": ["We study graphs # here.", "A robust method.", "Graphs, again."],
            "authors": [["Ada Lovelace", "Alan Turing"], ["Jörg Müller"], ["Ada Lovelace"]],
            "venue": ["ICML", "NeurIPS", ""],
            "year": pd.array([2024, 2023, None], dtype="Int64"),
            "url": ["https://example.org/a%20b_c?x=1&y=2", "https://example.org/2", ""],
        }
    )


# --------------------------------------------------------------------- lists, notes, tags


def test_lists_notes_tags_move_merge_rename(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite"
    papers = papers_with_metadata()
    with Library.open(path) as lib:
        assert lib.add("to read", papers) == 3
        assert lib.add("to read", papers.head(2)) == 0  # already there
        first = library.fingerprint(papers.title[0], papers.abstract[0])
        lib.set_note(first, "read section 3")
        assert lib.set_tags(first, ["gnn", " later ", "gnn"]) == ["gnn", "later"]
        lib.set_read(first)
        assert lib.move([first], "to read", "cite") == 1
        lib.add("review", papers.tail(1))
        assert lib.merge_lists(["review"], "cite") == 1
        lib.rename_list("cite", "to cite")
        with pytest.raises(LibraryError, match="already a list"):
            lib.rename_list("to cite", "to read")
    with Library.open(path) as lib:  # a new session: everything is still there
        assert [(s.name, s.size) for s in lib.lists()] == [("to cite", 2), ("to read", 2)]
        cite = lib.entries("to cite")
        row = cite.set_index("fingerprint").loc[first]
        assert (row["note"], row["tags"], row["read"]) == ("read section 3", ["gnn", "later"], True)
        assert list(lib.entries(tag="gnn")["fingerprint"]) == [first]
        assert lib.tags() == ["gnn", "later"]
        lib.delete_list("to cite")
        assert lib.list_names() == ["to read"]
        with pytest.raises(LibraryError, match='no list "to cite"'):
            lib.entries("to cite")


def test_blank_and_long_names_are_refused() -> None:
    with Library.open(":memory:") as lib:
        with pytest.raises(LibraryError, match="cannot be empty"):
            lib.create_list("   ")
        with pytest.raises(LibraryError, match="at most"):
            lib.create_list("x" * 500)
        assert lib.create_list("  to   read ") == "to read"


# --------------------------------------------------------------------- exports


def test_bibtex_is_read_back_by_bibtexparser_with_the_same_fields() -> None:
    papers = papers_with_metadata()
    with Library.open(":memory:") as lib:
        lib.add("L", papers)
        first = library.fingerprint(papers.title[0], papers.abstract[0])
        lib.set_note(first, "Compare with #2 & the 10% baseline")
        lib.set_tags(first, ["graphs", "to cite"])
        entries = lib.entries("L")
    text = library.export_list(entries, "bibtex")
    parsed = bibtexparser.parse_string(
        text, append_middleware=[middlewares.LatexDecodingMiddleware(), middlewares.SeparateCoAuthors()]
    )
    assert not parsed.failed_blocks
    raw = bibtexparser.parse_string(text)  # the URL is read as written (LaTeX decoding would eat a %)
    assert len(parsed.entries) == 3
    keys = [e.key for e in parsed.entries]
    assert len(set(keys)) == 3 and keys == library.bibtex_keys(entries)
    for entry, raw_entry, paper in zip(parsed.entries, raw.entries, papers.to_dict("records"), strict=True):
        fields = {f.key: f.value for f in entry.fields}
        assert fields["title"].strip("{}") == paper["title"]
        assert fields["author"] == paper["authors"]
        assert fields["abstract"] == paper["abstract"]
        assert fields.get("booktitle", "") == paper["venue"]
        assert fields.get("year", "") == ("" if pd.isna(paper["year"]) else str(paper["year"]))
        assert raw_entry.fields_dict["url"].value if paper["url"] else "url" not in raw_entry.fields_dict
        if paper["url"]:
            assert raw_entry.fields_dict["url"].value == paper["url"]
        assert entry.entry_type == ("inproceedings" if paper["venue"] else "misc")
    first_fields = {f.key: f.value for f in parsed.entries[0].fields}
    assert first_fields["note"] == "Compare with #2 & the 10% baseline"
    assert first_fields["keywords"] == "graphs, to cite"


def test_bibtex_keys_are_stable_and_unique() -> None:
    papers = papers_with_metadata()
    twin = papers.iloc[[0]].assign(id="p9", abstract="Another abstract with the same title.")
    with Library.open(":memory:") as lib:
        lib.add("L", pd.concat([papers, twin]))
        entries = lib.entries("L")
    keys = library.bibtex_keys(entries)
    assert len(set(keys)) == len(keys)
    assert keys[1] == "muller2023muller" and keys[2] == "lovelacegraphs"
    assert sorted(keys[0:1] + keys[3:]) == ["lovelace2024graphsa", "lovelace2024graphsb"]
    # The same paper keeps its key whatever order the list is in.
    reordered = entries.iloc[::-1].reset_index(drop=True)
    assert dict(zip(reordered["fingerprint"], library.bibtex_keys(reordered), strict=True)) == dict(
        zip(entries["fingerprint"], keys, strict=True)
    )


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=60))
def test_bibtex_escaping_round_trips_any_text(text: str) -> None:
    assert library.bib_unescape(library._bib_value(text)) == " ".join(text.split())


@pytest.mark.parametrize("with_corpus", [True, False])
def test_export_then_import_gives_the_same_list(with_corpus: bool, seeds: pd.DataFrame) -> None:
    papers = pd.concat([seeds.head(12), papers_with_metadata()], ignore_index=True)
    with Library.open(":memory:") as lib:
        lib.add("mine", papers)
        paper = library.fingerprint(papers.title[3], papers.abstract[3])
        lib.set_note(paper, "a note with {braces} and \\commands")
        lib.set_tags(paper, ["x", "y z"])
        before = lib.entries("mine")
    text = library.export_list(before, "bibtex")
    lookup = library.CorpusLookup(papers) if with_corpus else None
    with Library.open(":memory:") as other:
        result = library.import_bibtex(other, text, "mine", lookup)
        after = other.entries("mine")
    assert result.added == len(papers) and result.unmatched == () and result.problems == ()
    assert list(after["fingerprint"]) == list(before["fingerprint"])
    columns = ["title", "authors", "venue", "year", "url", "note", "tags"]
    pd.testing.assert_frame_equal(after[columns], before[columns])


def test_import_reports_unmatched_entries_and_keeps_them(seeds: pd.DataFrame) -> None:
    text = (
        library.export_list(_entries_of(seeds.head(2)), "bibtex")
        + "@misc{ghost, title = {A paper this corpus does not have}, note = {from my old list}}\n"
        + "@article{broken, title = {unterminated\n"
    )
    with Library.open(":memory:") as lib:
        result = library.import_bibtex(lib, text, "cited", library.CorpusLookup(seeds), source="refs.bib")
        entries = lib.entries("cited")
    assert result.matched == 2 and result.unmatched == ("A paper this corpus does not have",)
    assert any("refs.bib" in p for p in result.problems)
    assert len(entries) == 3 and entries["note"].iloc[2] == "from my old list"


def _entries_of(papers: pd.DataFrame) -> pd.DataFrame:
    with Library.open(":memory:") as lib:
        lib.add("tmp", papers)
        return lib.entries("tmp")


def test_csv_ris_markdown_hold_every_paper() -> None:
    papers = papers_with_metadata()
    entries = _entries_of(papers)
    table = pd.read_csv(io.StringIO(library.export_list(entries, "csv")))
    assert list(table["title"]) == list(papers["title"])
    assert list(table["authors"].fillna("")) == ["Ada Lovelace; Alan Turing", "Jörg Müller", "Ada Lovelace"]
    ris = library.export_list(entries, "ris")
    assert ris.count("TY  - ") == 3 and ris.count("ER  - ") == 3
    assert "AU  - Alan Turing" in ris and "PY  - 2024" in ris and "T2  - NeurIPS" in ris
    markdown = library.export_list(entries, "md")
    assert markdown.count("\n- [ ] ") == 3
    assert "[Graphs & 50% of nets\\_v2](<https://example.org/a%20b_c?x=1&y=2>)" in markdown


# --------------------------------------------------------------------- surviving a new corpus


def test_lists_survive_a_reparse_with_new_ids_and_order(seeds: pd.DataFrame, tmp_path: Path) -> None:
    with Library.open(tmp_path / "lib.sqlite") as lib:
        lib.add("to read", seeds.iloc[[3, 10, 20]])
        before = lib.entries("to read")
        known = lib.corpus_ids()
    # The same papers from another file: other ids (positions), other order, re-spaced abstracts.
    other = (
        seeds.iloc[::-1]
        .reset_index(drop=True)
        .assign(
            id=lambda df: [f"export-{n}" for n in range(len(df))],
            abstract=lambda df: df["abstract"].map(lambda a: "  " + a.replace(" ", "\n ") + " "),
        )
    )
    resolved = library.resolve(before, library.CorpusLookup(other), known)
    assert list(resolved["found"]) == ["content"] * 3
    assert list(other["title"].iloc[resolved["row"]]) == list(before["title"])
    # Ids kept by the library find papers whose text a new parser changed (same title).
    retitled = seeds.assign(abstract=seeds["abstract"] + " (revised)")
    resolved = library.resolve(before, library.CorpusLookup(retitled), known)
    assert list(resolved["found"]) == ["id"] * 3 and list(resolved["row"]) == [3, 10, 20]


def test_a_paper_missing_from_the_corpus_is_kept_not_lost(seeds: pd.DataFrame) -> None:
    with Library.open(":memory:") as lib:
        lib.add("to read", seeds.iloc[[0, 1]])
        smaller = seeds.iloc[1:].reset_index(drop=True)
        resolved = library.resolve(lib.entries("to read"), library.CorpusLookup(smaller), lib.corpus_ids())
        assert list(resolved["found"]) == ["missing", "id"]
        assert list(resolved["row"]) == [-1, 0]
        assert len(lib.entries("to read")) == 2
    mask = library.member_mask(len(smaller), resolved["row"])
    assert mask.sum() == 1 and mask[0]


def test_ids_survive_a_rebuilt_index(tmp_path: Path) -> None:
    from dashboard.index import build_index, open_index

    source = tmp_path / "papers.jsonl"
    papers_with_metadata().assign(year=[2024, 2023, 2022]).to_json(source, orient="records", lines=True)
    extra = tmp_path / "more.jsonl"
    pd.DataFrame(
        {"title": ["Another paper"], "abstract": ["Entirely different words about vision."]}
    ).to_json(extra, orient="records", lines=True)
    build_index([source], tmp_path / "index", n_topics=2, workers=1)
    first = open_index(tmp_path / "index").papers
    with Library.open(":memory:") as lib:
        lib.add("L", first.iloc[[0, 2]])
        # Rebuilt from the files in another order and with another file: rows and ids move.
        build_index([extra, source], tmp_path / "index", n_topics=2, workers=1)
        rebuilt = open_index(tmp_path / "index").papers
        resolved = library.resolve(lib.entries("L"), library.CorpusLookup(rebuilt), lib.corpus_ids())
    assert (resolved["row"] >= 0).all()
    assert list(rebuilt["title"].iloc[resolved["row"]]) == list(first["title"].iloc[[0, 2]])


# --------------------------------------------------------------------- broken, locked, old, newer files


def test_a_corrupt_file_gives_a_clear_message_and_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite"
    path.write_bytes(b"this is not a database\n" * 100)
    before = path.read_bytes()
    with pytest.raises(LibraryError) as error:
        Library.open(path)
    assert str(path) in str(error.value) and "not a database" in str(error.value)
    assert path.read_bytes() == before


def test_a_locked_library_refuses_writes_with_a_message_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite"
    papers = papers_with_metadata()
    with Library.open(path) as lib:
        lib.add("L", papers.head(1))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another program writing, for longer than we wait
    try:
        with Library.open(path, timeout=0.2) as lib:
            assert len(lib.entries("L")) == 1  # reading still works (WAL)
            with pytest.raises(LibraryError, match="locked"):
                lib.add("L", papers.tail(2))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with Library.open(path) as lib:
        assert len(lib.entries("L")) == 1
        assert lib.add("L", papers.tail(2)) == 2


def test_a_file_locked_before_it_is_a_library_cannot_be_opened(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(LibraryError, match=r"locked.*another program"):
            Library.open(path, timeout=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_an_older_library_is_migrated_with_its_lists(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    assert library.migrate(db, target=1) == 1
    paper = library.fingerprint("Old paper", "Its abstract.")
    db.execute("INSERT INTO lists (name, created_at) VALUES ('kept', '2025-01-01')")
    db.execute(
        "INSERT INTO papers (fingerprint, corpus_id, title_key, title, note, added_at) "
        "VALUES (?, 'old-1', 'old paper', 'Old paper', 'my note', '2025-01-01')",
        (paper,),
    )
    db.execute("INSERT INTO entries VALUES (1, 1, '2025-01-01')")
    db.close()
    with Library.open(path) as lib:
        assert library.schema_version(lib._db) == library.SCHEMA_VERSION == 3
        entries = lib.entries("kept")
        assert list(entries["note"]) == ["my note"] and list(entries["tags"]) == [[]]
        assert lib.corpus_ids() == {paper: ["old-1"]}
        lib.set_tags(paper, ["now possible"])


def test_a_newer_library_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    Library.open(path).close()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("INSERT INTO schema_version VALUES (99, 'later')")
    db.close()
    with pytest.raises(LibraryError, match="newer"):
        Library.open(path)


# --------------------------------------------------------------------- concurrent sessions


def _session(path: str, n: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    papers = pd.DataFrame(
        {
            "id": [f"s{n}-{k}" for k in range(25)],
            "title": [f"Paper {n}.{k}" for k in range(25)],
            "abstract": "",
        }
    )
    lib = Library.open(path, timeout=60)
    barrier.wait()
    lib.add(f"session {n}", papers)
    for k in range(0, 25, 5):  # many small transactions interleaving with the others'
        lib.add("shared", papers.iloc[k : k + 5])
        lib.set_note(library.fingerprint(f"Paper {n}.{k}", ""), f"note {n}.{k}")
    lib.close()


def test_twenty_sessions_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "library.sqlite")
    Library.open(path).close()
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(20)
    workers = [context.Process(target=_session, args=(path, n, barrier)) for n in range(20)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [w.exitcode for w in workers] == [0] * 20
    with Library.open(path) as lib:
        sizes = {s.name: s.size for s in lib.lists()}
        shared = lib.entries("shared")
    assert sizes["shared"] == 500 and all(sizes[f"session {n}"] == 25 for n in range(20))
    assert shared["note"].ne("").sum() == 100


# --------------------------------------------------------------------- topic names


def test_topic_names_come_back_on_a_new_fit_and_lost_ones_are_reported() -> None:
    with Library.open(":memory:") as lib:
        lib.rename_topic("seeds", ["graph", "node", "edge", "gnn", "message"], "Graph learning")
        lib.rename_topic("seeds", ["image", "diffusion", "pixel"], "Images")
        lib.merge_topics(
            "seeds", [["text", "token", "language"], ["speech", "audio", "language"]], "Language"
        )
        lib.rename_topic("seeds", ["robot", "control", "policy"], "Robots")
        new_fit = {
            4: ["node", "graph", "gnn", "edge", "molecule"],  # the graph topic under another number
            0: ["diffusion", "image", "pixel", "noise"],
            1: ["language", "token", "text"],
            2: ["audio", "speech", "language"],
            3: ["protein", "fold", "structure"],
        }
        names, missing = lib.apply_topic_names("seeds", new_fit)
        assert names == {4: "Graph learning", 0: "Images", 1: "Language", 2: "Language"}
        assert missing == ["Robots"]
        assert lib.apply_topic_names("other corpus", new_fit) == ({}, [])
        lib.rename_topic("seeds", ["diffusion", "image", "pixel", "noise"], "Generative images")
        assert lib.apply_topic_names("seeds", new_fit)[0][0] == "Generative images"
        assert lib.forget_topic_name("seeds", "Robots") == 1


# --------------------------------------------------------------------- where the library lives


@pytest.mark.parametrize(
    ("argv", "environ", "expected"),
    [
        (["--library", "none"], {}, ("off", None)),
        (["--corpus", "x", "--library=session"], {}, ("session", None)),
        (["--library", "/tmp/l.sqlite"], {"PAPER_DASHBOARD_LIBRARY": "none"}, ("file", "/tmp/l.sqlite")),
        ([], {"PAPER_DASHBOARD_LIBRARY": "off"}, ("off", None)),
        ([], {"PAPER_DASHBOARD_LIBRARY": "/srv/lib.sqlite"}, ("file", "/srv/lib.sqlite")),
        ([], {"XDG_DATA_HOME": "/data", "HOME": "/home/u"}, ("file", "/data/paper-dashboard/library.sqlite")),
        ([], {"HOME": "/home/u"}, ("file", "/home/u/.local/share/paper-dashboard/library.sqlite")),
    ],
)
def test_location(argv: list[str], environ: dict[str, str], expected: tuple[str, str | None]) -> None:
    where = library.location_from(argv, environ)
    if where.path is not None and "XDG_DATA_HOME" not in environ and "PAPER_DASHBOARD_LIBRARY" not in environ:
        assert where.path == library.default_path(environ)
    assert (where.mode, None if where.path is None else str(where.path)) in (
        expected,
        (expected[0], str(library.default_path(environ))),
    )


# --------------------------------------------------------------------- the CLI


def test_cli_lists_show_export_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "library.sqlite"
    papers = papers_with_metadata()
    with Library.open(path) as lib:
        lib.add("to read", papers)
    assert cli.main(["library", "lists", "--library", str(path)]) == 0
    assert "3  to read" in capsys.readouterr().out
    assert cli.main(["library", "--library", str(path), "show", "to read"]) == 0
    assert "Müller's {Robust} $x$ Learning  (NeurIPS 2023)" in capsys.readouterr().out
    out = tmp_path / "to-read.bib"
    assert (
        cli.main(
            ["library", "export", "to read", "--format", "bibtex", "--out", str(out), "--library", str(path)]
        )
        == 0
    )
    assert out.read_text().count("@") == 3
    corpus_file = tmp_path / "corpus.jsonl"
    papers.iloc[[0]].to_json(corpus_file, orient="records", lines=True)
    code = cli.main(
        [
            "library",
            "import",
            str(out),
            "--list",
            "back",
            "--corpus",
            str(corpus_file),
            "--library",
            str(path),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1 and "1 matched to the corpus; 2 unmatched" in captured.out
    assert "not in this corpus: Graphs for all" in captured.err
    assert cli.main(["library", "show", "nope", "--library", str(path)]) == 2
    assert 'no list "nope"' in capsys.readouterr().err
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"garbage" * 50)
    assert cli.main(["library", "lists", "--library", str(broken)]) == 2
    assert "not a database" in capsys.readouterr().err


def test_list_members_for_code_outside_the_app(seeds: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    with Library.open(Path(os.environ["PAPER_DASHBOARD_LIBRARY"])) as lib:
        lib.add("mine", seeds.iloc[[4, 9]])
    members, notices = library.list_members(["mine", "gone"], seeds)
    assert list(members.nonzero()[0]) == [4, 9] and notices == ['reading list: no "gone" in the library']
    monkeypatch.setenv("PAPER_DASHBOARD_LIBRARY", "none")
    members, notices = library.list_members(["mine"], seeds)
    assert not members.any() and "no library (off)" in notices[0]

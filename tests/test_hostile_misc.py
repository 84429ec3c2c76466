"""Hostile inputs on the surfaces round 2 added (issue 56, items 5-9): a crash shows visitors nothing of
the server, BibTeX imports run in the upload worker within its limits, outputs never overwrite inputs,
a foreign library is refused untouched, exports write only web links, terminal output is clean."""

from __future__ import annotations

import contextlib
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.browser import CHROMIUM
from support.server import running_app

from dashboard.cli import common as cli_common

# --------------------------------------------------------------------------- 6. a crash in the browser

CRASHING_SCRIPT = """
import streamlit as st

st.write("before the crash")
open("/srv/pd-secret-place/settings-{marker}.toml").read()  # FileNotFoundError naming a server path
"""


@pytest.fixture
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's Chromium at {CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        yield chromium
        chromium.close()


@pytest.mark.browser
def test_a_page_exception_shows_no_traceback_path_or_outside_link(browser: object, tmp_path: Path) -> None:
    # The repo's .streamlit/config.toml applies: the server runs from the repo root, as the app does.
    script = tmp_path / "crashing_page.py"
    script.write_text(textwrap.dedent(CRASHING_SCRIPT.format(marker="x7")))
    with running_app(script=str(script)) as url:
        context = browser.new_context()  # type: ignore[attr-defined]
        page = context.new_page()
        page.goto(url)
        error = page.locator('[data-testid="stException"]')
        error.wait_for(timeout=60_000)
        page.wait_for_function(
            "() => document.querySelector('[data-testid=stApp]').dataset.testScriptState === 'notRunning'"
        )
        shown = page.locator('[data-testid="stApp"]').inner_text()
        html = error.inner_html()
        links = [a.get_attribute("href") or "" for a in page.locator('[data-testid="stApp"] a').all()]
        context.close()
    assert "before the crash" in shown  # the page did run, and did crash
    for leak in ("Traceback", "crashing_page.py", "/srv/pd-secret-place", "settings-x7", "FileNotFoundError"):
        assert leak not in shown and leak not in html
    assert str(tmp_path) not in shown and str(tmp_path) not in html
    outside = [
        href for href in links if href.startswith(("http://", "https://")) and not href.startswith(url)
    ]
    assert outside == []


# --------------------------------------------------------------------------- 5. BibTeX import


HOSTILE_BIBTEX = {
    "superscript year": "@misc{a, title={A title}, year={²}}\n",
    "25-digit year": "@misc{a, title={A title}, year={" + "9" * 25 + "}}\n",
    "4,400-digit year": "@misc{a, title={A title}, year={" + "9" * 4400 + "}}\n",
    "3,000 nested textbf": "@misc{a, title={" + "\\textbf{" * 3000 + "x" + "}" * 3000 + "}}\n",
}


@pytest.mark.parametrize("name", list(HOSTILE_BIBTEX))
def test_a_hostile_bibtex_entry_is_imported_never_raised(name: str) -> None:
    from dashboard.library import store as library
    from dashboard.library.store import Library

    with Library.open(":memory:") as lib:
        result = library.import_bibtex(lib, HOSTILE_BIBTEX[name], "L", None, source="refs.bib")
        entries = lib.entries("L")
    assert result.added == 1 and len(entries) == 1
    assert entries["year"].isna().all()  # not a year: none, never a crash or an overflow


def test_both_bibtex_paths_share_one_reader_and_its_year() -> None:
    from dashboard import corpus
    from dashboard.library import store as library
    from dashboard.readers.bibtex import bib_year

    text = (
        '@misc{k, title={{BERT} in M{\\"u}nchen}, author={Devlin, Jacob and Chang, Ming-Wei}, year={2019}}\n'
    )
    records, problems = library.read_bibtex(text, "refs.bib")
    papers = corpus.load_uploads([("refs.bib", text.encode())]).papers
    assert problems == [] and records[0]["year"] == 2019 == int(papers["year"].iat[0])
    assert records[0]["authors"] == ["Jacob Devlin", "Ming-Wei Chang"] == list(papers["authors"].iat[0])
    assert records[0]["title"] == "BERT in München" == papers["title"].iat[0]
    assert [bib_year(y) for y in ("2024", "²", "9" * 25, "2024a", "")] == [2024, None, None, None, None]


def test_a_bibtex_upload_is_read_in_the_worker_within_the_upload_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dashboard.library import store as library
    from dashboard.server import uploads, worker

    text = "".join(f"@misc{{k{n}, title={{Paper {n}}}, year={{2020}}}}\n" for n in range(5))
    settings = uploads.current_settings()
    read, _ = worker.run(
        library.read_bibtex_upload, "refs.bib", text.encode(), settings, timeout=60, memory_bytes=2 << 30
    )
    assert [r["title"] for r in read.records] == [f"Paper {n}" for n in range(5)] and not read.refused
    settings["dashboard.server.uploads"]["MAX_UPLOAD_PAPERS"] = 3
    read, _ = worker.run(
        library.read_bibtex_upload, "refs.bib", text.encode(), settings, timeout=60, memory_bytes=2 << 30
    )
    assert (
        read.records == [] and "refs.bib: 5 entries" in read.refused and "MAX_UPLOAD_PAPERS" in read.refused
    )
    monkeypatch.setattr(uploads, "MAX_UPLOAD_BYTES", 100)
    read = library.read_bibtex_upload("refs.bib", text.encode())
    assert read.records == [] and "MAX_UPLOAD_BYTES" in read.refused


def test_a_bibtex_import_counts_against_the_sessions_upload_totals_in_the_worker() -> None:
    from dashboard.library import store as library
    from dashboard.server import uploads, worker

    data = "".join(f"@misc{{k{n}, title={{Paper {n}}}}}\n" for n in range(5)).encode()
    settings = uploads.current_settings()
    settings["dashboard.server.uploads"].update(MAX_SESSION_PAPERS=7, MAX_SESSION_BYTES=len(data) + 100)

    def read(before: uploads.SessionTotals) -> library.BibtexRead:
        result, _ = worker.run(
            library.read_bibtex_upload, "refs.bib", data, settings, before, timeout=60, memory_bytes=2 << 30
        )
        return result

    assert len(read(uploads.SessionTotals(bytes=100, papers=2)).records) == 5  # at the limits: read
    over_papers = read(uploads.SessionTotals(bytes=0, papers=3))
    assert over_papers.records == [] and over_papers.refused == (
        "refs.bib: 5 entries, and 3 papers uploaded or imported in this session before it, above the "
        "limit of 7 papers per session (dashboard.server.uploads.MAX_SESSION_PAPERS); import a smaller "
        "file (a new session, after a reload, counts from nothing)"
    )
    over_bytes = read(uploads.SessionTotals(bytes=101, papers=0))
    assert over_bytes.records == [] and over_bytes.refused.startswith("refs.bib: ")
    assert "MAX_SESSION_BYTES" in over_bytes.refused


def test_a_corpus_upload_after_imports_counts_them_against_the_session_totals() -> None:
    """The other way round: BibTeX already imported this session counts when corpus files are uploaded."""
    from dashboard.server import uploads
    from dashboard.sources import UploadSource

    files = [
        (
            "a.jsonl",
            "".join(f'{{"title": "T{n}", "abstract": "An abstract {n}."}}\n' for n in range(4)).encode(),
        )
    ]
    limits = {"MAX_SESSION_PAPERS": 10, "MAX_SESSION_BYTES": len(files[0][1]) + 50}
    saved = {name: getattr(uploads, name) for name in limits}
    try:
        for name, value in limits.items():
            setattr(uploads, name, value)
        assert uploads.check_files([("a.jsonl", len(files[0][1]))], [0], uploads.SessionTotals(50, 0)) is None
        refused = uploads.check_files([("a.jsonl", len(files[0][1]))], [0], uploads.SessionTotals(51, 0))
        assert refused is not None and "MAX_SESSION_BYTES" in refused
        fits, _ = UploadSource(files, [0], uploads.SessionTotals(0, 6)).prepare(2)
        assert not fits.refused and len(fits.result.papers) == 4
        over, _ = UploadSource(files, [0], uploads.SessionTotals(0, 7)).prepare(2)
        assert over.refused and "MAX_SESSION_PAPERS" in over.refused and "11" in over.refused
    finally:
        for name, value in saved.items():
            setattr(uploads, name, value)


def _import_twice_script() -> None:
    import pandas as pd
    import streamlit as st

    from dashboard.ui import keys
    from dashboard.ui import library as library_ui

    class Upload:
        name = "refs.bib"

        def getvalue(self) -> bytes:
            return "".join(f"@misc{{k{n}, title={{Paper {n}}}}}\n" for n in range(5)).encode()

    st.session_state[keys.LIBRARY_IMPORT_FILE] = Upload()
    st.session_state.pop(keys.LIBRARY_NOTICE, None)
    library_ui._import("digest", pd.DataFrame({"id": [], "title": [], "abstract": []}), None)
    st.write(st.session_state.get(keys.LIBRARY_NOTICE) or "imported")


def test_the_library_page_counts_each_import_and_the_sessions_corpus_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from streamlit.testing.v1 import AppTest

    from dashboard.server import uploads
    from dashboard.ui import keys
    from dashboard.ui.data import HeldUpload

    monkeypatch.setattr(uploads, "MAX_SESSION_PAPERS", 7)
    at = AppTest.from_function(_import_twice_script, default_timeout=120).run()
    assert not at.exception and at.markdown[-1].value == "imported"
    assert at.session_state[keys.LIBRARY_IMPORTED].papers == 5
    at.run()  # the same five entries again: ten papers in this session, above seven
    assert not at.exception
    assert at.markdown[-1].value.startswith("The file was not imported: refs.bib: 5 entries, and 5 papers")
    assert "MAX_SESSION_PAPERS" in at.markdown[-1].value

    monkeypatch.setattr(uploads, "MAX_SESSION_PAPERS", 1000)
    monkeypatch.setattr(uploads, "MAX_SESSION_BYTES", 1000)
    at = AppTest.from_function(_import_twice_script, default_timeout=120)
    at.session_state[keys.UPLOADS] = HeldUpload("d" * 64, ("corpus.csv",), (990,), ("f1",), (0,))
    at.run()  # the corpus files this session holds count too
    assert (
        not at.exception
        and at.markdown[-1].value.startswith("The file was not imported: refs.bib: ")
        and "MAX_SESSION_BYTES" in at.markdown[-1].value
    )


# --------------------------------------------------------------------------- 7. outputs over inputs

CORPUS_LINES = (
    '{"title": "A paper", "abstract": "About code at https://github.com/a/b."}\n'
    '{"title": "B paper", "abstract": "Another abstract."}\n'
)


@pytest.mark.parametrize(
    "argv",
    [
        ["check-code", "{dir}/c.jsonl", "--offline", "--out", "{dir}/c.jsonl"],
        ["parse", "{dir}/c.jsonl", "--out", "{dir}/c.jsonl"],
        ["parse", "{dir}", "--out", "{dir}/c.jsonl"],
        ["search", "{dir}/c.jsonl", "paper", "--out", "{dir}/c.jsonl"],
        ["library", "export", "to read", "--format", "csv", "--out", "{dir}/lib.sqlite"],
        ["parse", "{dir}/c.jsonl", "--out", "{dir}/cache.csv"],
    ],
    ids=["check-code", "parse", "parse-folder", "search", "library-export", "sqlite-named-csv"],
)
def test_an_output_over_an_input_or_a_database_is_refused_unless_forced(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dashboard.cli import main as cli
    from dashboard.library.store import Library

    (tmp_path / "c.jsonl").write_text(CORPUS_LINES)
    with Library.open(tmp_path / "lib.sqlite") as lib:
        lib.create_list("to read")
    Library.open(tmp_path / "cache.csv").close()  # a SQLite file, whatever its name says
    monkeypatch.setenv("PAPER_DASHBOARD_LIBRARY", str(tmp_path / "lib.sqlite"))
    monkeypatch.setenv("PAPER_DASHBOARD_CACHE", str(tmp_path / "repos.sqlite"))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    args = [a.format(dir=tmp_path) for a in argv]
    assert cli.main(args) == cli_common.EXIT_USAGE
    assert "give --force to replace it" in capsys.readouterr().err
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and p.name in before}
    assert after == before  # nothing was touched
    # the user asked for it
    assert cli.main([*args, "--force"]) in (cli_common.EXIT_OK, cli_common.EXIT_SKIPPED)


def test_outputs_are_written_through_a_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from dashboard import export

    target = tmp_path / "out.md"
    target.write_text("the old file")
    renamed: list[tuple[str, str]] = []
    real_replace = os.replace

    def replace(source: str, destination: str) -> None:
        renamed.append((Path(source).name, Path(destination).name))
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", replace)
    export.write_file(target, "the new file")
    assert (
        target.read_text() == "the new file" and renamed[0][1] == "out.md" and renamed[0][0].endswith(".part")
    )
    assert [p.name for p in tmp_path.iterdir()] == ["out.md"]


# --------------------------------------------------------------------------- 8. other files


def test_a_non_utf8_file_name_in_a_folder_is_reported_and_the_rest_read(tmp_path: Path) -> None:
    import os

    from dashboard import corpus

    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "good.txt").write_text("An abstract about graphs.\n\nAn abstract about vision.\n")
    with open(os.path.join(os.fsencode(folder), b"bad\xff\xfe.txt"), "wb") as handle:
        handle.write(b"An abstract about language models.\n")
    result = corpus.load([folder])
    assert len(result.papers) == 3  # the good file and the badly named one are both read
    warning = [str(p) for p in result.report.warnings if "not UTF-8" in str(p)]
    assert warning and "bad\ufffd\ufffd.txt" in warning[0]
    assert all("\udcff" not in source for source in result.papers["source"])


def _foreign(path: Path) -> Path:
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
    db.commit()
    db.close()
    return path


def _newer(path: Path) -> Path:
    import sqlite3

    from dashboard.library.store import Library

    Library.open(path).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO schema_version VALUES (99, 'later')")
    db.commit()
    db.close()
    return path


def _repository_cache(path: Path) -> Path:
    from dashboard.repocheck import store

    store.Store.open(path).close()
    return path


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (_foreign, "not a Paper Dashboard library"),
        (_newer, "newer Paper Dashboard (schema 99"),
        (_repository_cache, "the repository cache of check-code, not a library"),
    ],
    ids=["foreign", "schema-99", "repository-cache"],
)
def test_a_file_that_is_not_this_library_is_refused_and_never_changed(
    make: object,
    said: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import hashlib
    import sqlite3

    from dashboard.cli import main as cli
    from dashboard.library.store import Library, LibraryError

    path = make(tmp_path / "given.sqlite")  # type: ignore[operator]
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(LibraryError, match="left as it is") as refused:
        Library.open(path)
    assert said in str(refused.value) and str(path) in str(refused.value)
    monkeypatch.setenv("PAPER_DASHBOARD_LIBRARY", str(path))
    assert cli.main(["library", "lists"]) != 0
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone() == mode


# --------------------------------------------------------------------------- 9. smaller ones


def test_every_sqlite_store_waits_and_retries_alike(tmp_path: Path) -> None:
    import sqlite3
    import threading

    from dashboard.library import store as library
    from dashboard.library.store import Library
    from dashboard.repocheck import store
    from dashboard.system import sqlite as sqlitepolicy

    assert (
        store.BUSY_TIMEOUT_MS == int(library.BUSY_TIMEOUT_S * 1000) == int(sqlitepolicy.BUSY_TIMEOUT_S * 1000)
    )
    path = tmp_path / "library.sqlite"
    Library.open(path).close()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another writer, holding the lock longer than the busy timeout
    threading.Timer(0.3, lambda: holder.execute("ROLLBACK")).start()
    try:
        with Library.open(path, timeout=0.05) as lib:
            assert lib.create_list("waited") == "waited"  # retried until the lock was free, not refused
    finally:
        holder.close()
    cache = store.Store.open(tmp_path / "repos.sqlite")
    cache.close()
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "done"

    assert sqlitepolicy.with_retries(flaky) == "done" and len(calls) == 3
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        sqlitepolicy.with_retries(lambda: sqlite3.connect(":memory:").execute("SELECT * FROM absent"))


HOSTILE_PAPER = {
    "id": "p1",
    "title": "Nice [title](javascript:alert(1))\n## Injected heading <img src=x onerror=alert(1)>",
    "abstract": "An abstract.",
    "authors": ["Eve\n# Also a heading"],
    "venue": "ICML",
    "year": 2024,
    "url": "javascript:alert(document.cookie)",
}


def _hostile_entries(url: str) -> object:
    import pandas as pd

    from dashboard.library.store import Library

    with Library.open(":memory:") as lib:
        lib.add("L", pd.DataFrame([{**HOSTILE_PAPER, "url": url}]))
        return lib.entries("L")


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(document.cookie)",
        " JaVaScRiPt:alert(1)",
        "data:text/html,x",
        "https://x.org/a>)\n# h",
    ],
)
def test_markdown_and_ris_exports_link_only_http_and_escape_markdown(url: str) -> None:
    from dashboard.library import store as library

    entries = _hostile_entries(url)
    markdown = library.export_list(entries, "md")
    ris = library.export_list(entries, "ris")
    bib = library.export_list(entries, "bibtex")
    lines = markdown.splitlines()
    assert [line for line in lines if line.startswith("#")] == ["## L"]  # no injected heading
    assert re.search(r"(?<!\\)<img", markdown) is None  # HTML shown as text, escaped
    assert re.findall(r"(?<!\\)\]\((?!<https://)", markdown) == []  # the only link is an http(s) one
    assert [line for line in ris.splitlines() if line.startswith("UR  - ") and "https://" not in line] == []
    assert [
        line for line in bib.splitlines() if line.strip().startswith("url") and "https://" not in line
    ] == []
    if url.startswith("https://"):
        assert "(<https://x.org/a%3E)%0A#%20h>)" in markdown  # percent-encoded: it cannot end the link


def test_library_show_prints_no_terminal_controls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pandas as pd

    from dashboard.cli import main as cli
    from dashboard.library.store import Library

    path = tmp_path / "lib.sqlite"
    hostile = "Title \x1b[2J\x1b]0;pwned\x07 with\x00 NUL and \u202eevil.exe"
    with Library.open(path) as lib:
        lib.add("L", pd.DataFrame([{"id": "p", "title": hostile, "abstract": "a", "venue": "V\x1b[31m"}]))
        paper = lib.entries("L")["fingerprint"].iat[0]
        lib.set_note(paper, "note \x1b[1A\u202e")
        lib.set_tags(paper, ["t\x1bag"])
    monkeypatch.setenv("PAPER_DASHBOARD_LIBRARY", str(path))
    assert cli.main(["library", "show", "L"]) == 0
    assert cli.main(["library", "lists"]) == 0
    out = capsys.readouterr().out
    assert "Title" in out and "evil.exe" in out and "note" in out
    for bad in ("\x1b", "\x00", "\x07", "\u202e"):
        assert bad not in out


@pytest.mark.parametrize("kind", ["a library", "a foreign file"])
def test_the_library_page_never_shows_the_server_path(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from dashboard.library.store import Library

    folder = tmp_path / "srv-secret-folder"
    folder.mkdir()
    path = folder / "library.sqlite"
    if kind == "a library":
        Library.open(path).close()
    else:
        _foreign(path)
    monkeypatch.setenv("PAPER_DASHBOARD_LIBRARY", str(path))
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=180)
    at.switch_page("src/dashboard/app_pages/library.py")
    at.run()
    assert not at.exception
    shown = "\n".join(
        str(getattr(element, "value", ""))
        for kind_ in ("caption", "warning", "markdown", "error")
        for element in at.get(kind_)
    )
    assert "srv-secret-folder" not in shown and str(tmp_path) not in shown
    assert (
        ("Kept on this server" in shown)
        if kind == "a library"
        else ("not a Paper Dashboard library" in shown)
    )


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ("http://127.0.0.1:8787", "http:// is the dashboard's address"),
        ("local:100000", "from 1 to"),
        ("local:0", "from 1 to"),
        ("tcp://127.0.0.1:99999", "a port from 1 to 65535"),
        ("tcp://:8786", "a port from 1 to 65535"),
    ],
)
def test_a_bad_dask_address_is_refused_before_anything_starts(
    address: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dashboard.cli import main as cli

    (tmp_path / "c.jsonl").write_text(CORPUS_LINES)
    with pytest.raises(SystemExit) as stopped:
        cli.main(["index", str(tmp_path / "c.jsonl"), "--out", str(tmp_path / "idx"), "--dask", address])
    assert stopped.value.code == cli_common.EXIT_USAGE
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    assert not (tmp_path / "idx").exists()


@pytest.mark.parametrize("answer", [b"", b"SSH-2.0-OpenSSH_9.6\r\n"], ids=["silent web server", "ssh banner"])
def test_a_service_that_is_not_a_dask_scheduler_is_refused_clearly(answer: bytes) -> None:
    import socket
    import threading

    from dashboard.index import IndexBuildError
    from dashboard.index import distributed as daskbuild

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        connection, _ = server.accept()
        with connection, contextlib.suppress(OSError):  # the client may reset it on leaving
            if answer:
                connection.sendall(answer)
            connection.recv(1)  # hold the connection until the client goes

    threading.Thread(target=serve, daemon=True).start()
    try:
        with pytest.raises(IndexBuildError, match="not a Dask scheduler|no Dask scheduler answered"):
            daskbuild.probe_scheduler(f"tcp://127.0.0.1:{port}", timeout=1.0)
    finally:
        server.close()

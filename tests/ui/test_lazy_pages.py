"""What a switch to Links & code, Terms and Papers no longer draws until asked (issue 49, item 3).

The tables of Links & code lie below its charts, out of sight as the page opens: each is an expander
that says what it holds and how many rows, drawn only while open, its download beside it either way.
The Papers table sends a first page of rows, ten of them in sight, and "Show more" adds the rest.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.apptest import app, assert_no_exception, count_line
from support.synthetic import trend_papers

from dashboard.ui import keys

LINK_SECTIONS = {
    keys.LINKS_REPOS_OPEN: "repo_state",
    keys.LINKS_WAITING_OPEN: "years_ago",
    keys.LINKS_ALL_OPEN: "kind",
    keys.LINKS_ACCOUNTS_OPEN: "url",
    keys.LINKS_PROMISED_OPEN: "title",
    keys.LINKS_SHARED_OPEN: "titles",
}
# Every kind of row: a repository two papers share, a promise without a link, an account page only
# (three links: each paper's own, once).
LINKS_CSV = (
    b"title,abstract\n"
    b"One,We propose FooNet. Code at https://github.com/org/foo.\n"
    b"Two,We extend FooNet. Code at https://github.com/org/foo.\n"
    b"Three,We propose BarNet; code will be released upon acceptance.\n"
    b"Four,We propose BazNet. See https://github.com/someone for more.\n"
)


@pytest.fixture(autouse=True)
def _seeds_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPER_DASHBOARD_CORPUS", raising=False)
    monkeypatch.setattr("sys.argv", ["app.py"])


def test_the_links_tables_are_drawn_only_once_their_expanders_are_opened() -> None:
    at = app("links")
    at.sidebar.get("file_uploader")[0].set_value(("links.csv", LINKS_CSV, "text/csv")).run()
    assert_no_exception(at)
    labels = [e.label for e in at.main.expander]
    assert "All links (3)" in labels, labels
    assert "Repositories shared by several papers (1)" in labels
    assert "Code promised, no link (1)" in labels
    assert any(label.startswith("Papers with their repository (2)") for label in labels), labels
    assert not at.main.dataframe, "no table is drawn on arrival"
    downloads = [b.proto.label for b in at.main.get("download_button")]
    assert "Download 3 links as CSV" in downloads  # the downloads stay beside the closed tables
    assert "Download 2 papers with their repository as CSV" in downloads
    assert "Code promised, or a repository without code yet (1)" in labels  # the promise of Three
    for key, column in LINK_SECTIONS.items():
        at.session_state[key] = True
        at.run()
        assert_no_exception(at)
        assert any(column in d.value.columns for d in at.main.dataframe), (key, column)
    assert len(at.main.dataframe) == len(LINK_SECTIONS)
    assert at.main.get("download_button")  # the same downloads, open or not
    assert "Download 3 links as CSV" in [b.proto.label for b in at.main.get("download_button")]


def test_the_papers_table_sends_a_first_page_and_show_more_adds_the_rest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Ten rows are in sight: a switch to Papers sends the first 100 rows, not a thousand; the count
    line, the caption and the download still say every paper, and "Show more" adds the others."""
    path = tmp_path / "three-hundred.jsonl"
    trend_papers(per_venue_year=30).drop(columns=["topic"]).to_json(path, orient="records", lines=True)
    monkeypatch.setattr("sys.argv", ["app.py", "--corpus", str(path)])
    at = app("papers")
    assert_no_exception(at)
    shown, total = count_line(at)
    assert shown == total == 300
    assert len(at.main.dataframe[0].value) == 100
    assert any("The first 100 of 300 papers" in c.value for c in at.main.caption)
    assert "Download 300 papers as CSV" in [b.proto.label for b in at.main.get("download_button")]
    (more,) = [b for b in at.main.button if b.label.startswith("Show 200 more")]
    assert "(100 of 300 shown)" in more.label
    more.click().run()
    assert_no_exception(at)
    assert len(at.main.dataframe[0].value) == 300


def test_the_first_word_cloud_is_drawn_here_until_the_helper_is_ready(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A first visit to Terms does not start the helper process and wait for it (a forkserver and its
    imports): it draws the cloud itself; once the helper is ready, the cloud goes there."""
    from dashboard.server import worker
    from dashboard.ui import data

    started: list[object] = []

    def no_start(*args: object, **kwargs: object) -> object:
        started.append(args)
        raise AssertionError("the page started the helper")

    monkeypatch.setattr(worker, "_started_helper", no_start)
    monkeypatch.setattr(worker, "helper_ready", lambda: False)
    at = app("terms")
    assert_no_exception(at)
    assert at.main.get("image"), "the cloud is drawn"
    assert not started
    sent: list[object] = []
    real = data.word_cloud

    def to_helper(*args: object, **kwargs: object) -> object:
        sent.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(worker, "helper_ready", lambda: True)
    monkeypatch.setattr(worker, "in_helper", lambda job, *a, imports=(), **k: job(*a, **k))
    monkeypatch.setattr(data, "word_cloud", to_helper)
    at.run()
    assert_no_exception(at)
    assert sent and at.main.get("image")


def test_the_helper_starts_after_at_most_a_while_however_busy_the_server() -> None:
    """`warmup.Visits.wait_idle` waits for a pause in the runs, but not for ever: a server whose pages
    run all the time still gets its helper."""
    import threading

    from dashboard.ui import warmup

    visits = warmup.Visits()
    with visits.run():
        pass
    busy = threading.Event()

    def run_for_ever() -> None:
        with visits.run():
            busy.set()
            threading.Event().wait(30)

    threading.Thread(target=run_for_ever, daemon=True).start()
    busy.wait(10)
    waiter = threading.Thread(target=visits.wait_idle, args=(3600.0, 0.2), daemon=True)
    waiter.start()
    waiter.join(20)
    assert not waiter.is_alive()  # returned although a run is going on and none paused for an hour
    never = threading.Thread(target=visits.wait_idle, args=(3600.0,), daemon=True)
    never.start()
    never.join(0.5)
    assert never.is_alive()  # without at_most it still waits for the pause


def test_keyword_in_context_is_drawn_once_opened_or_when_the_url_names_a_term() -> None:
    def kwic_tables(at: object) -> list[object]:
        return [d for d in at.main.dataframe if "match" in d.value.columns]  # type: ignore[attr-defined]

    at = app("terms")
    assert_no_exception(at)
    (box,) = [e for e in at.main.expander if e.label.startswith("Keyword in context")]
    assert "(or another term)" in box.label  # it names the term it would show
    assert not kwic_tables(at) and not [w for w in at.main.text_input if w.key == keys.TERMS_KWIC]
    at.session_state[keys.TERMS_KWIC_OPEN] = True
    at.run()
    assert_no_exception(at)
    assert kwic_tables(at) and [w for w in at.main.text_input if w.key == keys.TERMS_KWIC]
    linked = app("terms", {"term": "diffusion"})  # a shared link to a term's lines shows them at once
    assert_no_exception(linked)
    (table,) = kwic_tables(linked)
    assert table.value["match"].str.lower().str.startswith("diffusion").all()  # type: ignore[attr-defined]

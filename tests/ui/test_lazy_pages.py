"""What a switch to Links & code, Terms and Papers no longer draws until asked (issue 49, item 3).

The tables of Links & code lie below its charts, out of sight as the page opens: each is an expander
that says what it holds and how many rows, drawn only while open, its download beside it either way.
"""

from __future__ import annotations

import pytest
from support.apptest import app, assert_no_exception

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

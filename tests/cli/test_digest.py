"""``paper-dashboard digest``: what is new since the library's seen versions, as Markdown or HTML."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from dashboard import corpus
from dashboard.cli import main as cli
from dashboard.filters import Filters
from dashboard.library import searches
from dashboard.library.store import Library

REPO = Path(__file__).resolve().parents[2]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exit_:  # argparse: usage errors
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def split(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Version 1 (two seed files) marked seen in a library with two saved searches; version 2 (all)."""
    first, second = tmp_path / "v1", tmp_path / "v2"
    first.mkdir()
    second.mkdir()
    for n, path in enumerate(sorted((REPO / "seeds").glob("*.txt"))):
        if n < 2:
            shutil.copy(path, first / path.name)
        shutil.copy(path, second / path.name)
    library = tmp_path / "lib.sqlite"
    with Library.open(library) as lib:
        searches.save_search(lib, "everything", Filters())
        searches.save_search(lib, "learning", Filters(q="learning"))
        searches.mark_seen(lib, corpus.digest_paths([first]), corpus.load([first]).papers, label="v1")
    return first, second, library


def _new_titles(first: Path, second: Path, filters: Filters) -> list[str]:
    old, new = corpus.load([first]).papers, corpus.load([second]).papers
    chosen = new[~new["id"].isin(old["id"]) & filters.mask(new)]
    return chosen["title"].tolist()


def test_markdown_lists_exactly_the_new_papers_of_each_saved_search(split, capsys) -> None:
    first, second, library = split
    code, out, err = run(["digest", str(second), "--library", str(library), "--top", "100"], capsys)
    assert code == 0, err
    assert out.startswith("# New since ")
    sections = dict(re.findall(r"^## Saved search: (\w+)\n\n(.*?)(?=^## |\Z)", out, flags=re.M | re.S))
    assert set(sections) == {"everything", "learning"}
    for name, filters in (("everything", Filters()), ("learning", Filters(q="learning"))):
        bullets = [line for line in sections[name].splitlines() if line.startswith("- ")]
        expected = _new_titles(first, second, filters)
        assert len(bullets) == len(expected) > 0, name
        assert f"{len(expected)} new papers" in sections[name]
    assert "Reading lists' recommendations are not included" in out  # the library has no lists


def test_html_out_then_mark_seen_then_nothing_is_new(split, tmp_path: Path, capsys) -> None:
    _, second, library = split
    page = tmp_path / "new.html"
    code, _, err = run(
        ["digest", str(second), "--library", str(library), "--out", str(page), "--mark-seen"], capsys
    )
    assert code == 0, err
    assert "marked this version seen" in err
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "<h2>Saved search: learning</h2>" in text
    assert "<script" not in text
    code, out, _ = run(["digest", str(second), "--library", str(library)], capsys)
    assert code == 0 and "0 of the 57 papers" in out and "no new papers" in out


def test_since_a_day_before_anything_was_seen_lists_every_paper(split, capsys) -> None:
    _, second, library = split
    code, out, _ = run(["digest", str(second), "--library", str(library), "--since", "2000-01-01"], capsys)
    assert code == 0 and "57 of the 57 papers" in out


def test_reading_lists_get_their_recommendations(split, capsys) -> None:
    first, second, library = split
    with Library.open(library) as lib:
        lib.add("to read", corpus.load([first]).papers.head(4))
    code, out, err = run(["digest", str(second), "--library", str(library), "--top", "3"], capsys)
    assert code == 0, err
    assert "## Reading list: to read" in out and "  - why: " in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--since", "last week"], "expected a date as YYYY-MM-DD"),
        (["--out", "digest.pdf"], "expected a .md or .html file"),
    ],
)
def test_usage_errors_say_what_is_wrong(split, extra: list[str], message: str, capsys) -> None:
    _, second, library = split
    code, _, err = run(["digest", str(second), "--library", str(library), *extra], capsys)
    assert code == 2 and message in err


def test_a_missing_library_is_not_created(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "typo.sqlite"
    code, _, err = run(["digest", str(REPO / "seeds"), "--library", str(missing)], capsys)
    assert code == 2 and "no library at" in err and not missing.exists()

"""Saved searches and seen corpus versions in the library file, and "new since last time" on a corpus
split into two versions (`dashboard.library.searches`, `dashboard.library.digest`)."""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard import corpus
from dashboard.filters import Filters
from dashboard.library import digest as digests
from dashboard.library import searches
from dashboard.library import store as library
from dashboard.library.store import Library, LibraryError

REPO = Path(__file__).resolve().parents[2]
SEEDS = sorted((REPO / "seeds").glob("*.txt"))

SAVED = {
    "everything": Filters(),
    "learning": Filters(q="learning"),
    "graphs not video": Filters(q='graph -"video"'),
    "a venue and year": Filters(venue=("ICML",), year=(2026,)),
    "long abstracts": Filters(words=(150, None)),
}


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Version 1: the first two seed files; version 2: all three (the first two unchanged)."""
    root = tmp_path_factory.mktemp("versions")
    first, second = root / "v1", root / "v2"
    first.mkdir()
    second.mkdir()
    for n, path in enumerate(SEEDS):
        if n < 2:
            shutil.copy(path, first / path.name)
        shutil.copy(path, second / path.name)
    return first, second


def _load(path: Path) -> pd.DataFrame:
    return corpus.load([path]).papers


# --------------------------------------------------------------------- saved searches


@pytest.mark.parametrize("name", list(SAVED))
def test_a_saved_search_reads_back_equal(name: str) -> None:
    with Library.open(":memory:") as lib:
        searches.save_search(lib, name, SAVED[name])
        [kept] = searches.saved_searches(lib)
        assert (kept.name, kept.filters) == (name, SAVED[name])
        assert kept.query == searches.filters_to_query(SAVED[name])


@settings(max_examples=60, deadline=None)
@given(
    q=st.text(max_size=40),
    venue=st.lists(st.text(min_size=1, max_size=12), max_size=3),
    year=st.lists(st.integers(1990, 2030), max_size=3),
    words=st.tuples(st.none() | st.integers(0, 500), st.none() | st.integers(0, 500)),
)
def test_any_filters_survive_the_query_string(q: str, venue: list[str], year: list[int], words) -> None:
    filters = Filters(q=q, venue=tuple(venue), year=tuple(year), words=words)
    assert searches.filters_from_query(searches.filters_to_query(filters))[0] == filters


def test_saving_under_a_name_replaces_and_delete_forgets() -> None:
    with Library.open(":memory:") as lib:
        searches.save_search(lib, "  graphs ", Filters(q="graph"))
        searches.save_search(lib, "graphs", Filters(q="graph neural"))
        assert [(s.name, s.filters.q) for s in searches.saved_searches(lib)] == [("graphs", "graph neural")]
        assert searches.delete_search(lib, "graphs") is True
        assert searches.delete_search(lib, "graphs") is False
        with pytest.raises(LibraryError, match="empty"):
            searches.save_search(lib, "  ", Filters())


# --------------------------------------------------------------------- they last


def test_saved_searches_and_seen_versions_survive_a_restart(tmp_path: Path, versions) -> None:
    path = tmp_path / "library.sqlite"
    papers = _load(versions[0])
    with Library.open(path) as lib:
        searches.save_search(lib, "learning", SAVED["learning"])
        first = searches.mark_seen(lib, "digest-v1", papers, label="v1")
    with Library.open(path) as lib:  # the same file, reopened
        assert [(s.name, s.filters) for s in searches.saved_searches(lib)] == [
            ("learning", SAVED["learning"])
        ]
        assert searches.versions(lib) == [first]
        assert searches.is_seen(lib, "digest-v1")
        assert searches.seen(lib).mask(papers).all()


def test_a_second_process_reads_what_the_first_wrote(tmp_path: Path, versions) -> None:
    path = tmp_path / "library.sqlite"
    with Library.open(path) as lib:
        searches.save_search(lib, "graphs", Filters(q="graph", year=(2026,)))
        searches.mark_seen(lib, "digest-v1", _load(versions[0]), label="v1")
    code = (
        "import sys\n"
        "from dashboard.library.store import Library\n"
        "from dashboard.library import searches\n"
        "with Library.open(sys.argv[1]) as lib:\n"
        "    s = searches.saved_searches(lib)[0]\n"
        "    v = searches.versions(lib)[0]\n"
        "    print(s.name, s.query, v.digest, v.papers, len(searches.seen(lib).ids))\n"
        "    searches.save_search(lib, 'from the child', s.filters)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["graphs", "q=graph&year=2026", "digest-v1", "38", "38"]
    with Library.open(path) as lib:
        assert [s.name for s in searches.saved_searches(lib)] == ["from the child", "graphs"]


def test_a_library_of_schema_2_opens_keeps_its_lists_and_gains_the_new_tables(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    assert library.migrate(db, target=2) == 2
    db.execute("INSERT INTO lists (name, created_at) VALUES ('kept', '2025-01-01')")
    db.close()
    with Library.open(path) as lib:
        assert library.schema_version(lib._db) == library.SCHEMA_VERSION
        assert lib.list_names() == ["kept"]
        assert searches.saved_searches(lib) == [] and searches.versions(lib) == []
        searches.save_search(lib, "now possible", Filters(q="graph"))
        searches.mark_seen(lib, "d", pd.DataFrame({"id": ["a"], "title": ["A title"]}))
    with Library.open(path) as lib:
        assert [s.name for s in searches.saved_searches(lib)] == ["now possible"]


def test_a_foreign_database_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE saved_searches (x TEXT)")
    db.close()
    before = path.read_bytes()
    with pytest.raises(LibraryError, match="not a Paper Dashboard library"):
        Library.open(path)
    assert path.read_bytes() == before


# --------------------------------------------------------------------- the same paper across versions


def test_a_version_keeps_only_what_no_earlier_version_had() -> None:
    one = pd.DataFrame({"id": ["a", "b"], "title": ["Alpha paper", "Beta paper"]})
    two = pd.DataFrame({"id": ["a", "b", "c"], "title": ["Alpha paper", "Beta paper", "Gamma paper"]})
    with Library.open(":memory:") as lib:
        assert searches.mark_seen(lib, "v1", one).new == 2
        assert searches.mark_seen(lib, "v2", two).new == 1
        again = searches.mark_seen(lib, "v2", two)
        assert [v.digest for v in searches.versions(lib)] == ["v1", "v2"] and again.new == 1
        assert searches.seen(lib).ids == {"a", "b", "c"}


def test_the_same_title_under_a_new_id_counts_as_seen() -> None:
    before = pd.DataFrame({"id": ["old-id-1", "old-id-2"], "title": ["Graph Networks, Revisited", "Other"]})
    after = pd.DataFrame(
        {"id": ["new-id-9", "new-id-10"], "title": ["graph networks: revisited!", "A paper never seen"]}
    )
    with Library.open(":memory:") as lib:
        searches.mark_seen(lib, "v1", before)
        assert searches.seen(lib).mask(after).tolist() == [True, False]
        rows, _ = digests.new_rows(lib, after)
        assert rows.tolist() == [1]


def test_the_same_id_counts_as_seen_when_the_title_was_re_cleaned() -> None:
    before = pd.DataFrame({"id": ["2401.00001"], "title": ["$\\alpha$-Nets"], "position": [1]})
    after = pd.DataFrame({"id": ["2401.00001"], "title": ["α-Nets for all"], "position": [1]})
    with Library.open(":memory:") as lib:
        searches.mark_seen(lib, "v1", before)
        assert searches.seen(lib).mask(after).tolist() == [True]


def test_a_positional_id_does_not_hide_a_new_paper_that_took_its_place() -> None:
    """``notes-1`` names the first abstract of notes.txt: a paper inserted before it takes the id."""
    before = pd.DataFrame({"id": ["notes-1"], "title": ["Old paper"], "position": [1]})
    after = pd.DataFrame(
        {"id": ["notes-1", "notes-2"], "title": ["Inserted paper", "Old paper"], "position": [1, 2]}
    )
    with Library.open(":memory:") as lib:
        searches.mark_seen(lib, "v1", before)
        assert searches.seen(lib).mask(after).tolist() == [False, True]


def test_a_paper_without_a_title_is_known_by_its_id_only() -> None:
    before = pd.DataFrame({"id": ["x1"], "title": [""]})
    after = pd.DataFrame({"id": ["x1", "x2"], "title": ["", "   "]})
    with Library.open(":memory:") as lib:
        searches.mark_seen(lib, "v1", before)
        assert searches.seen(lib).mask(after).tolist() == [True, False]


# --------------------------------------------------------------------- the digest of two versions


def _expected(papers: pd.DataFrame, second: np.ndarray, filters: Filters) -> list[int]:
    passing = filters.mask(papers).to_numpy(dtype=bool)
    return [int(r) for r in np.flatnonzero(passing & second)]


def test_the_digest_lists_exactly_the_second_versions_papers_per_saved_search(versions) -> None:
    first, second = _load(versions[0]), _load(versions[1])
    added = ~second["id"].isin(first["id"]).to_numpy()
    assert 0 < added.sum() < len(second)  # the split is real: some papers new, some not
    with Library.open(":memory:") as lib:
        for name, filters in SAVED.items():
            searches.save_search(lib, name, filters)
        searches.mark_seen(lib, "v1", first, label="v1")
        result = digests.new_since(lib, "v2", second, top=len(second))
    assert result.n_new == int(added.sum()) and result.since is not None and result.since.label == "v1"
    assert not result.lists_included
    by_name = {section.name: section for section in result.sections}
    assert set(by_name) == set(SAVED)
    for name, filters in SAVED.items():
        expected = _expected(second, added, filters)
        assert list(by_name[name].rows) == expected, name
        assert by_name[name].total == len(expected)
    assert len(by_name["everything"].rows) == int(added.sum())
    assert 0 < len(by_name["learning"].rows) < int(added.sum())


def test_once_marked_seen_nothing_is_new_and_since_looks_back(versions) -> None:
    first, second = _load(versions[0]), _load(versions[1])
    with Library.open(":memory:") as lib:
        searches.save_search(lib, "everything", Filters())
        searches.mark_seen(lib, "v1", first)
        searches.mark_seen(lib, "v2", second)
        now = digests.new_since(lib, "v2", second)
        assert now.n_new == 0 and now.sections[0].rows == ()
        assert any("marked seen" in note for note in now.notes)
        yesterday = dt.date.today() - dt.timedelta(days=1)
        assert digests.new_since(lib, "v2", second, before=yesterday).n_new == len(second)


def test_a_reading_list_gets_its_recommended_new_papers(versions) -> None:
    first, second = _load(versions[0]), _load(versions[1])
    with Library.open(":memory:") as lib:
        lib.add("mine", second.head(3))
        searches.mark_seen(lib, "v1", first)
        asked: list[tuple[list[int], int]] = []

        def recommender(list_rows: np.ndarray, candidates: np.ndarray) -> list[tuple[int, str]]:
            asked.append((list_rows.tolist(), len(candidates)))
            return [(int(row), f"because {row}") for row in candidates[::-1]]

        result = digests.new_since(lib, "v2", second, recommender=recommender, top=5)
    [section] = result.sections
    assert asked == [([0, 1, 2], len(second) - 3)]
    new = set(np.flatnonzero(~second["id"].isin(first["id"]).to_numpy()).tolist())
    assert section.kind == "list" and len(section.rows) == 5 and set(section.rows) <= new
    assert list(section.reasons) == [f"because {row}" for row in section.rows]


def test_the_recommender_of_an_analysis_ranks_and_explains(versions) -> None:
    from dashboard.analytics.analysis import analyze

    second = _load(versions[1])
    fitted = analyze(second, n_topics=4)
    rank = digests.recommender(fitted, fitted.papers)
    ranked = rank(np.arange(4), np.arange(4, len(second)))
    assert {row for row, _ in ranked} <= set(range(4, len(second))) and ranked
    assert all(why for _, why in ranked)


# --------------------------------------------------------------------- written down, escaped

HOSTILE = pd.DataFrame(
    {
        "id": ["h1"],
        "title": ['<script>alert(1)</script> **bold** [x](javascript:y) # "q"'],
        "authors": [["Ada <b>Lovelace</b>", "Bob *Star*"]],
        "venue": ["ICML"],
        "year": pd.array([2024], dtype="Int64"),
        "url": ['https://example.org/a"><img src=x onerror=alert(1)>'],
    }
)


def _hostile_digest() -> digests.Digest:
    with Library.open(":memory:") as lib:
        searches.save_search(lib, "<b>mine</b>", Filters())
        return digests.new_since(lib, "v", HOSTILE, recommender=None)


def test_markdown_escapes_titles_and_keeps_links_http() -> None:
    text = digests.to_markdown(_hostile_digest(), HOSTILE)
    assert "<script>" not in text and "\\<script\\>" in text
    assert "\\*\\*bold\\*\\*" in text and "\\[x\\]\\(javascript:y\\)" in text
    assert "(<https://example.org/a%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E>)" in text
    assert "\\<b\\>mine\\</b\\>" in text


def test_html_escapes_every_corpus_text() -> None:
    page = digests.to_html(_hostile_digest(), HOSTILE)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>" not in page and "&lt;b&gt;Lovelace&lt;/b&gt;" in page
    assert (
        "<img" not in page
        and 'href="https://example.org/a%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E"' in page
    )


@pytest.mark.corpora
def test_iclr_halves_by_their_own_ids(corpora_dir: Path, tmp_path: Path) -> None:
    """A real export with its own ids: half of ICLR 1k seen, the whole of it opened."""
    lines = (corpora_dir / "iclr2026-openreview-1k" / "papers.jsonl").read_text(encoding="utf-8").splitlines()
    half = tmp_path / "half.jsonl"
    half.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")
    first = _load(half)
    whole = _load(corpora_dir / "iclr2026-openreview-1k" / "papers.jsonl")
    with Library.open(tmp_path / "lib.sqlite") as lib:
        searches.save_search(lib, "diffusion", Filters(q="diffusion"))
        searches.mark_seen(lib, "half", first)
        result = digests.new_since(lib, "whole", whole, top=len(whole))
    added = ~whole["id"].isin(first["id"]).to_numpy()
    assert result.n_new == int(added.sum()) == len(whole) - len(first)
    assert list(result.sections[0].rows) == _expected(whole, added, Filters(q="diffusion"))
